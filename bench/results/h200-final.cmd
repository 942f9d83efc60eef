# Final verification on the device machine (one NVIDIA H200, driver 580.159, CUDA 13.0), 2026-11-21.
# Binaries built on the Debian machine for sm_90 (same nvcc 13.0), with every backend but hip:
#   Kokkos 4.6.99 + CUDA installed here from the patched upstream snapshot (never committed),
#   cmake -S . -B build-kkdev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
#     -DTILEKIT_ENABLE_CUDA=ON -DTILEKIT_ENABLE_KOKKOS=ON -DKokkos_ROOT=<that install> \
#     -DTILEKIT_ENABLE_OPENMP=ON -DTILEKIT_ENABLE_HIP=OFF && ninja -C build-kkdev tilekit_cli tilekit_tests
#   copied with libgomp into .final/ (git-ignored), carried with .device (bench/device/pack.sh).
#
# Run 1, code at fcc18d5a110d0c4637f626b483011efba9421ebb:
#   bash bench/device/h200.sh .final $OUT
#     -> h200-final-info.txt, h200-final-tests.log (whole suite: serial, openmp on the 16-core
#        host, kokkos on CUDA, cuda: 715 passed, 16 skipped = naive variants take no tile),
#        h200-final-compare.txt / .json (gemm 4096 cuda+kokkos, gemm 8192 cuda, transpose and
#        conv2d 8192 cuda+kokkos, conv2d R=3, double gemm 4096)
#   TILEKIT_KOKKOS_BLOCK=vstore .final/tests/tilekit_tests --gtest_filter='*kokkos*'
#   TILEKIT_KOKKOS_BLOCK={vstore,patch} .final/tilekit run gemm --backend kokkos --variant optimized --size 4096 --reps 20 --tile 128,128,{8,16}
#     -> h200-final-kokkos-vstore.txt (vstore 128x128x16: 41360 GFLOP/s vs cuda optimized 42591)
#   .final/tilekit run conv2d --backend cuda --variant tiled --size 8192 --reps 20 --k {3, 5 --dtype double, 5}
#     -> h200-final-conv2d-tiled.txt
# Run 2, code at 177724ab651172ee1400dd5adedc6f5736006de5 (vstore + 16-deep made the float default):
#   .final/tests/tilekit_tests --gtest_filter='*kokkos*:*cuda*'          -> h200-final-tests-kokkos-cuda.log (316 passed)
#   .final/tilekit compare gemm --backends cuda,kokkos --size 4096 --json  -> h200-final-gemm-4096.{txt,json}
