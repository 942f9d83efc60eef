# device tool (nvidia-h200), commit 8aa8c3f:
#   R3_walk=95 R3_defaults=110 bash bench/device/round3.sh build before walk defaults tiled final
# defaults stage: bench/device/r3/defaults.sh (compute-sanitizer's four tools over the conformance cases of the
# cuda gemm/conv2d optimized kernels the new defaults pick; conv2d R = 3 aligned vs aligned-lines; kokkos
# transpose with the host clock and with events behind the hold).
