# Measured on the device machine (one NVIDIA H200, driver 580.159, CUDA 13.0), 2026-11-21
# git commit 8cb4648421f8ff306a2618ea6f27389ca67d580c (last change to backends/gpu, backends/cuda)
bash bench/device/pack.sh                                   # here, then on the device with .device carried:
bash bench/device/build.sh                                  # build-device/, sm_90
build-device/tilekit compare gemm transpose conv2d --backends cuda --size 4096 --json bench/results/h200-compare-4096.json
# (backends/cuda/scripts/h200_check.sh build info compare runs both sizes)
