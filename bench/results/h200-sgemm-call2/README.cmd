# Device call 2 of round 3 (2026-11-23, one NVIDIA H200, driver 580.159.04, CUDA 13.0, SM clock 1980 MHz):
# the merged tree (sgemm commit e0ae0e0 + the other helpers' branches) built by bench/device/build.sh into
# build-device/, then
#   SGEMM_BUDGET=... bash bench/device/r3/sgemm.sh build-device OUT
# (ten TILEKIT_SGEMM values; ncu of dual3ef and of cuBLAS: conformance, compare at 4096, 8192 for the best two, compute-sanitizer).
# Files: summary.txt (the stage's own summary), compare-<size>-<variant>.{txt,json} (tilekit compare gemm
# --backends cuda, cuBLAS in the same process), res-usage.txt (cuobjdump -res-usage), sass-mix.txt
# (instruction counts per gemm kernel, whole kernel).
