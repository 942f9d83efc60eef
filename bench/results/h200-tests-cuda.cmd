# Conformance suite on the H200, 2026-11-21, git commit 1e11244 (binaries built here, carried):
#   .final/tests/tilekit_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*'     (h200_check.sh's tests stage)
# (Commit 39d5f99 after it changes only the AMD branch of the optimized conv2d kernel: the sm_90 ptxas
# output of every kernel is identical, bench/results/cuda-resource-usage.txt.)
# Result: 158 passed (the skips are naive variants, which take no tile).
