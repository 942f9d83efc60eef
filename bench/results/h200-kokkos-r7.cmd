# device tool (kind nvidia-h200; each machine fresh: Kokkos 4.6.99 from the fetched upstream source, patched for
# CUDA 13 as the developers' guide says, built there first into build-kokkos/install, never committed):
#   cmake -S .kokkos-src -B build-kokkos/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=$PWD/.kokkos-src/bin/nvcc_wrapper \
#     -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_HOPPER90=ON -DCMAKE_INSTALL_PREFIX=/tmp/kokkos-install
#   cmake --build build-kokkos/b -j16 --target install
# then (carry .device .kokkos .kokkos-src; bash bench/device/pack.sh here first):
# call 1+2, commit b79a655: R3_build=330 bash bench/device/round3.sh build kokkos7 (stage cut at 110 s); R3_kokkos7=400 bash bench/device/round3.sh kokkos7
# call 3,   commit b5d2d79: R3_build=300 R3_kokkos7b=320 bash bench/device/round3.sh build kokkos7b
# call 4,   commit fa76fef: R3_build=300 R3_final7=280 bash bench/device/round3.sh build final7   (h200-final-r7.txt, h200-final-r7-8192.json)
# call 5,   commit 50cc45a: the Xeon host's openmp transpose (h200-host-xeon-transpose-r7.txt; command in that file)
# call 6,   commit f2cedfb: R3_build=300 R3_naive7=250 bash bench/device/round3.sh build naive7
