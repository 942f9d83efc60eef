# H200 figures of the kokkos backend's tiled gemm load phase, measured 2026-11-21 ~07:35 UTC on the nvidia-h200
# device machine (one NVIDIA H200, sm_90, 1980 MHz SM clock as found; CUDA 13.0). One device call.
# Code: backends/kokkos as in the commit that adds this file, plus a third setting measured and then removed
# (TILEKIT_KOKKOS_TILED=direct+occ / ranges+occ: launched through
#  Kokkos::Experimental::prefer(policy, DesiredOccupancy(100)), which sets the kernel's shared-memory carveout:
#  no effect, 8287.2 and 7024.3 GFLOP/s). The default (direct) is the same kernel as measured.
# Kokkos 4.6.99 (the patched source in .kokkos-src, never committed) was built on the dev machine (same nvcc 13.0)
# with -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=<src>/bin/nvcc_wrapper -DKokkos_ENABLE_CUDA=ON
# -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_HOPPER90=ON and carried to the device as an install. Then, there:
bash bench/device/build.sh -DKokkos_ROOT=<install> -DTILEKIT_ENABLE_KOKKOS=ON -DTILEKIT_ENABLE_OPENMP=OFF -DTILEKIT_KOKKOS_PTXAS_VERBOSE=ON
for s in direct ranges direct+occ ranges+occ; do    # direct with --json bench/results/kokkos-h200-tiled.json
  TILEKIT_KOKKOS_TILED=$s ./build-device/tilekit compare gemm --backends cuda,kokkos --size 4096 --no-peers
done
./build-device/tests/tilekit_tests --gtest_filter='*kokkos*'      # 158 passed on the GPU (default = direct)
ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats -c 1 \
    --kernel-name-base mangled -k regex:GemmTeamIfLi1ELb1ELi32 ./build-device/tilekit run gemm --backend kokkos --variant tiled --size 4096 --reps 1
ncu ... -k regex:gemm_tiled_kernel ./build-device/tilekit run gemm --backend cuda --variant tiled --size 4096 --reps 1
for s in direct ranges; do TILEKIT_KOKKOS_TILED=$s ./build-device/tilekit compare gemm --backends cuda,kokkos --size 4096 --no-peers; done  # repeat
for b in cuda kokkos; do ./build-device/tilekit run gemm --backend $b --variant tiled --size 4096 --tile 16,16,16; done
./build-device/tilekit compare gemm --backends cuda,kokkos --size 4096 --dtype double --no-peers
