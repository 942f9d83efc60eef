# device tool (kind nvidia-h200, ran on an H100), Kokkos built there first as in h200-kokkos-r6.cmd; carry .device .kokkos .kokkos-src:
# call 9,  commit 26eb60e: R3_build=330 R3_verify6=250 bash bench/device/round3.sh build verify6
# call 10, same machine:   R3_final6=300 bash bench/device/round3.sh final6
