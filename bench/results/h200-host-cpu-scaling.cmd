# The GPU machine's 16-core host CPU (Intel Xeon, 1 thread/core, 32 MiB L2, 300 MiB L3), 2026-11-21.
# Working tree at git commit 951fb2725eabbc557fba0ad87ac80c28f65a5fb4 (plus the openmp helper's then-uncommitted edits
# to backends/openmp/{gemm_simd.cpp,optimized.cpp,simd.hpp}).
bash bench/device/pack.sh                                   # here; carried as .device
rm -rf build-device
bash bench/device/build.sh -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_KOKKOS=OFF -DTILEKIT_BUILD_TESTS=OFF -DTILEKIT_ENABLE_OPENMP=ON
bash bench/cpu_scaling.sh build-device/tilekit $OUT/cpu     # table: h200-host-cpu-scaling.txt, rows: .json
# Note: the "OpenBLAS" column is Debian 12's OpenBLAS 0.3.21 carried over; on this Xeon it runs at
# ~44 GFLOP/s per core (it predates this CPU and falls back to a generic kernel), so the anchor
# that counts is the "numpy" column (numpy 2.5.2's bundled OpenBLAS, timed in the same run).
