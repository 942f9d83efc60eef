# H200 figures of the kokkos backend's optimized gemm (GemmBlock) after porting the CUDA backend's 4x8 warp
# patches and 16-deep K step, measured 2026-11-21 ~07:43 UTC on the nvidia-h200 device machine (one NVIDIA H200,
# sm_90, 1980 MHz max SM clock; CUDA 13.0). One device call, 24.5 s. kokkos-h200-optimized.txt is its output,
# kokkos-h200-optimized.json the first compare's rows.
# Code: git dae1095 plus this commit's backends/kokkos, except that during the run the automatic float tile was
# 128x128x16 (the compare rows' kokkos optimized = 16-deep, patch). This commit makes 128x128x8 (patch) automatic,
# the best measured (the TILEKIT_KOKKOS_BLOCK=patch --tile 128,128,8 row: 37467 GFLOP/s). backends/gpu was the working
# tree of that moment (another helper's then uncommitted conv2d/AMD changes, since committed in 4bbc4aa; gemm.cu, gemm.cuh and the gemm
# tile choice unchanged since dae1095).
# Binaries built on the dev machine (Debian 12, g++ 12, nvcc 13.0, -DCMAKE_CUDA_ARCHITECTURES=90) against Kokkos
# 4.6.99 (Cuda+Serial, HOPPER90; never committed) and carried to the device:
#   cmake -S . -B build-kkdev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTILEKIT_ENABLE_CUDA=ON \
#     -DTILEKIT_ENABLE_HIP=OFF -DKokkos_ROOT=<install> -DTILEKIT_ENABLE_KOKKOS=ON -DTILEKIT_ENABLE_OPENMP=OFF \
#     -DTILEKIT_KOKKOS_PTXAS_VERBOSE=ON -DCMAKE_PREFIX_PATH=<bench/device/pack.sh deps>
# Then, on the device:
tilekit_tests --gtest_filter='*kokkos*'                                                  # 158 passed on the GPU
tilekit compare gemm --backends cuda,kokkos --size 4096 --json kokkos-h200-optimized.json
tilekit compare gemm --backends cuda,kokkos --size 4096 --no-peers                       # repeat
for s in "strip 128,128,16" "patch 128,128,8" "strip 128,128,8" "patch 128,128,16"; do set -- $s
  TILEKIT_KOKKOS_BLOCK=$1 tilekit run gemm --backend kokkos --variant optimized --size 4096 --reps 20 --tile $2
done
tilekit compare gemm --backends cuda,kokkos --size 4096 --dtype double --no-peers         # double: patch, 64x64x8
cuobjdump -sass gemm.cpp.o   # instruction counts of the GemmBlock kernels (in NOTES.md)
# After this run, TILEKIT_KOKKOS_BLOCK=vstore (explicit 16-byte scratch stores of B, NOTES.md) was added: not measured.
