# device tool (kind nvidia-h200; each machine fresh: Kokkos 4.6.99 from the fetched upstream source, patched for
# CUDA 13 as the developers' guide says, built there first into build-kokkos/install, never committed):
#   cmake -S .kokkos-src -B build-kokkos/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=$PWD/.kokkos-src/bin/nvcc_wrapper \
#     -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_HOPPER90=ON -DCMAKE_INSTALL_PREFIX=/tmp/kokkos-install
#   cmake --build build-kokkos/b -j16 --target install
# then (carry .device .kokkos .kokkos-src; bash bench/device/pack.sh here first):
# call 2+3, commit 82ba918: R3_build=450 bash bench/device/round3.sh build; R3_kokkosconv=330 R3_xeon=150 bash bench/device/round3.sh kokkosconv xeon
# call 5+6, commit 7021ac8: R3_build=500 bash bench/device/round3.sh build; R3_kokkosgemm=400 bash bench/device/round3.sh kokkosgemm
# call 7,   commit 3b2bca0: R3_build=330 R3_kokkosgemm2=240 bash bench/device/round3.sh build kokkosgemm2
# call 11,  commit fd5a3a0: R3_build=330 R3_kokkosgemm2=120 R3_final6=110 bash bench/device/round3.sh build kokkosgemm2 final6
#   (final6's part is h200-final-r6.txt / h200-final-r6-8192.json; SASS of both gemm kernels: h200-kokkos-r6-sass-gemm-call11.txt.gz)
