# H200 figures of the kokkos backend, measured 2026-11-21 ~06:51 UTC on the nvidia-h200 device machine
# (one NVIDIA H200, sm_90, 1980 MHz SM clock as found; CUDA 13.0, g++ 13, CMake 4.4).
# Code: git commit dd13360 (backends/kokkos as measured; the next commit only turns a run-time branch
# on a template constant into if constexpr, silencing nvcc's 'division by zero' warning; same kernels).
#
# Kokkos 4.6.99 (the patched source in .kokkos-src, never committed) was configured on the device with
#   -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=<src>/bin/nvcc_wrapper -DKokkos_ENABLE_CUDA=ON
#   -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_HOPPER90=ON -DCMAKE_INSTALL_PREFIX=/tmp/kokkos
# (the carried source lacks example/ and benchmarks/, which Kokkos' CMake adds unconditionally: empty
#  CMakeLists.txt stubs were created in a copy). tilekit was then built and measured with:
bash bench/device/build.sh -DKokkos_ROOT=/tmp/kokkos -DTILEKIT_ENABLE_KOKKOS=ON -DTILEKIT_ENABLE_OPENMP=OFF -DTILEKIT_KOKKOS_PTXAS_VERBOSE=ON
./build-device/tests/tilekit_tests --gtest_filter='*kokkos*'   # all kokkos tests passed on the GPU
./build-device/tilekit compare gemm --backends cuda,kokkos --size 4096 --json bench/results/kokkos-h200.json
./build-device/tilekit compare gemm --backends cuda,kokkos --size 4096 --dtype double --no-peers   # -> kokkos-h200-more.txt
./build-device/tilekit compare transpose conv2d --backends cuda,kokkos --size 8192               # -> kokkos-h200-more.txt
./build-device/tilekit compare gemm --backends cuda,kokkos --size 4096 --no-peers               # repeat, -> kokkos-h200-more.txt
