# device tool (nvidia-h200), commit 4bc3020: the final stage of
#   R3_build=300 R3_sanitize5=200 bash bench/device/round3.sh build sanitize5 final
# i.e. build-device/tests/tilekit_tests --gtest_filter='*cuda*:*kokkos*' then
#   build-device/tilekit compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10
