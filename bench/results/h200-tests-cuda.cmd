# Conformance suite on the H200, 2026-11-21, git commit 748bc471effe083fc76169bc0ae593e8661186ad:
#   build-device/tests/tilekit_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*'
