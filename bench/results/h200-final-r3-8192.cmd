# The merged tree's defaults on the H200 at the end of session 3, commit ed48fb2, device tool (nvidia-h200):
#   bash bench/device/round3.sh build final
# i.e. build-device/tests/tilekit_tests --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1   (388 passed, 8 skipped)
#      build-device/tilekit compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
#        --json h200-final-r3-8192.json                                                  -> h200-final-r3-8192.txt
