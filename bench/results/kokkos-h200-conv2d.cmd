# kokkos conv2d on the H200 against the cuda backend in the same run, 2026-11-21, git commit 1b0c43e.
# Built here: tilekit with Kokkos 4.6.99 (CUDA, sm_90; an install built from the fetched Kokkos
# source as DEVELOPERS.md describes, never committed) and the cuda backend:
#   cmake -S . -B build-kkcuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT=<kokkos install> \
#         -DTILEKIT_ENABLE_KOKKOS=ON -DTILEKIT_ENABLE_CUDA=ON -DTILEKIT_ENABLE_OPENMP=OFF \
#         -DTILEKIT_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 && ninja -C build-kkcuda
# (the test binary's post-link gtest discovery fails here for lack of libcuda.so.1; the binary is
# built). Copied to .final/kk/, then on the device with .device and .final carried
# (LD_LIBRARY_PATH=.final/lib:.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64):
.final/kk/tilekit_tests --gtest_filter='*kokkos*' --gtest_brief=1
for r in 5 3 7; do .final/kk/tilekit compare conv2d --backends cuda,kokkos --size 8192 --filter $r; done
.final/kk/tilekit compare conv2d --backends cuda,kokkos --size 8192 --filter 5 --dtype double
# and compute-sanitizer --tool racecheck / memcheck on `tilekit run conv2d --backend kokkos
# --variant tiled|optimized` at 67x45 R=5, 131x68 R=7, 37x44 R=9: 0 hazards, 0 errors.
