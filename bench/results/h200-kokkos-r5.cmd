# device tool (nvidia-h200): call 3, commit 5623f8d: bash bench/device/round3.sh build before walk kokkosgap tiled
#   (bench/device/r3/kokkosgap.sh: ncu of one launch of each optimized transpose / conv2d R = 5, cuda and kokkos)
# call 4, commit ee8ff18: R3_build=330 R3_walk=60 R3_kokkosopt=100 bash bench/device/round3.sh build before walk kokkosopt tiled
#   (bench/device/r3/kokkosopt.sh: compare transpose and conv2d R = 5, 3 with TILEKIT_KOKKOS_CONV_BOUNDS none/occ;
#   the SASS of the float 64x64 vector transposes, cuda then kokkos, is h200-kokkos-r5-sass-transpose.txt.gz)
