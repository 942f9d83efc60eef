# Conformance suite on the H200, 2026-11-21, git commit c7796a9 (binaries built here, carried):
#   .final/tests/tilekit_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*'     (h200_check.sh's tests stage)
# Result: 158 passed (the skips are naive variants, which take no tile).
