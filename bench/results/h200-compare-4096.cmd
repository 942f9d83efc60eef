# Measured on the device machine (one NVIDIA H200, driver 580.159.04, CUDA 13.0), 2026-11-21,
# git commit c7796a9 (the kernels of that tree; binaries built here for sm_90 and carried):
#   cmake -S . -B build-conv -G Ninja -DTILEKIT_ENABLE_HIP=OFF -DTILEKIT_ENABLE_KOKKOS=OFF \
#         -DTILEKIT_ENABLE_OPENMP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 && ninja -C build-conv
#   mkdir -p .final/tests .final/lib && cp build-conv/tilekit .final/ && cp build-conv/tests/tilekit_tests .final/tests/ &&
#   cp -L /lib/x86_64-linux-gnu/libgomp.so.1 .final/lib/ && bash bench/device/pack.sh
# then on the device, with .device and .final carried (the compare stage runs both sizes):
#   export LD_LIBRARY_PATH=$PWD/.final/lib:$PWD/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64
#   B=.final bash backends/cuda/scripts/h200_check.sh info compare
# which for this file runs:
.final/tilekit compare gemm transpose conv2d --backends cuda --size 4096 --json h200-compare-4096.json
