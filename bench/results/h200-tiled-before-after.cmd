# The tiled variants before (hand-written per backend, commit 679a6d4) and after (the portable
# kernels on the tile layer), built side by side on the H200 machine in one call, cuda and kokkos
# (Kokkos 4.6.99 + CUDA, sm_90), float:
#   bash bench/device/round2.sh C     then    bash bench/device/round2.sh D
# (device tool, carried .device .kokkos .final; .final/before = git archive 679a6d4), whose speed
# stages run bench/tiled_before_after.sh BEFORE AFTER cuda,kokkos 1 -- "gemm --size 4096"
# "transpose --size 8192" "conv2d --size 8192 --k 5" (each a median of 10 repetitions, device events).
# Session 3 (appended table), device tool (nvidia-h200), commit e96e22a:
#   bash bench/device/round3.sh build before probe tiled roofline sanitize
# whose tiled stage is
#   bash bench/tiled_before_after.sh .final/before/build-device/tilekit build-device/tilekit cuda,kokkos 2 -- \
#     "gemm --size 4096" "transpose --size 8192" "conv2d --size 8192 --k 5" "conv2d --size 8192 --k 3"
# Session 4 (appended table), device tool (nvidia-h200), commit 0652c8a:
#   R3_walk=150 bash bench/device/round3.sh build before probe walk tiled
# (tiled stage as in session 3; the walk stage, bench/device/r3/walk.sh, wrote
# h200-walk-r4.txt: tests, three timings each and ncu of the tiled gemm on cuda and kokkos and of
# the conv2d tiled kernels before and after.)
# Session 5 (three appended tables), device tool (nvidia-h200), commits 8aa8c3f, 5623f8d, ee8ff18:
#   R3_build=330 R3_walk=60 R3_kokkosopt=100 bash bench/device/round3.sh build before walk kokkosopt tiled
# (calls 2 and 3: `build before walk defaults tiled final` and `build before walk kokkosgap tiled`).
# Both trees time kernels the same way from this session on: .final/before is git archive 679a6d4
# with bench/device/before-hold.patch applied (the timing hold of backends/gpu/stream_hold.cuh in
# its cuda backend). The before tree's kokkos backend keeps its host clock around launch + fence
# (it has no events timer), which favours the after column by 6-17 us: nothing beside a 17 ms
# gemm, and the kokkos transpose/conv2d rows are 0.57-0.68x either way. Walk stage: h200-walk-r5.txt.
