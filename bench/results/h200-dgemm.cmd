# The double optimized gemm on the FP64 tensor cores (backends/gpu/gemm_dmma.cuh), H200, 2026-11-23,
# code at commit 7f5c03a's tree (the dmma merge) built on the device by bench/device/build.sh:
#   bash bench/device/round2.sh A      (device tool, carried: .device .kokkos .final)
# whose dmma stage is: B=build-device bash bench/device/dgemm.sh sass tests perf compare
# -> DMMA SASS per kernel; the conformance suite's cuda double gemm cases under TILEKIT_DMMA=
#    default/m8n8k4/m16n8k16/off (32 passed each); per-shape timings; tilekit compare gemm
#    --backends cuda --dtype double --size 4096 and 8192 with the cuBLAS DGEMM peer.
