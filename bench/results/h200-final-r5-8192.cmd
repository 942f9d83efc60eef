# device tool (nvidia-h200), commit 8aa8c3f: the final stage of
#   R3_walk=95 R3_defaults=110 bash bench/device/round3.sh build before walk defaults tiled final
# i.e. build-device/tests/tilekit_tests --gtest_filter='*cuda*:*kokkos*' then
#   build-device/tilekit compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10
