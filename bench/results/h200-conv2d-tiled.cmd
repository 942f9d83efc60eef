# Tiled conv2d shapes on the H200 (sm_90), 2026-11-21, one device call:
#   bench/device/pack.sh here; then on the device, with .device carried:
#   bash backends/cuda/scripts/conv_tiled_sweep.sh
# The tree measured was commit 02f8319 plus the uncommitted kernel change of the next commit
# in an earlier form that also compiled two columns per thread ("async8x2", "async16x2":
# slower everywhere, removed before committing; the remaining kernels are the same templates).
# In the same call: build (32 s), all 158 cuda conformance tests with the default shape
# (passed), the 12 tiled conv2d conformance tests under each of the five TILEKIT_CONV_TILED
# modes (all passed), and compute-sanitizer memcheck + racecheck on the tiled conv2d in every
# mode, float and double, on 67x45 R=5, 131x68 R=9 and 37x44 R=17: 60 runs, 0 errors,
# 0 hazards (appended to h200-conv2d-tiled.txt).
# Each timed line is:
#   TILEKIT_CONV_TILED=<mode> build-device/tilekit run conv2d --backend cuda --size 8192 --reps 20 --variant tiled --k <R> [--dtype double]
