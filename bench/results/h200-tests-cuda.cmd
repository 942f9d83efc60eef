# Conformance suite on the H200, 2026-11-21, git commit 8cb4648421f8ff306a2618ea6f27389ca67d580c:
#   build-device/tests/tilekit_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*'
