# Session 8 (2026-11-26), NVIDIA H200, three device calls, each a fresh machine: Kokkos 4.6.99 built from the
# fetched upstream source (patched for CUDA 13, not committed), then the tree at the commit named in each summary:
#   bash bench/device/pack.sh   (here, before each call; carry .device .kokkos .kokkos-src)
#   R3_build=320 R3_<stage>=<s> bash bench/device/round3.sh build <stage>
# call 1: stage gap8  (commit b02195c) -> gap8-summary.txt, kokkos-naive-gemm-plain-sass.txt
# call 2: stage gap8b (commit 31e16d6) -> gap8b-summary.txt
# call 3: stage final8 (commit 6ab97ed) -> final8-summary.txt, final8-8192.json
#   (in 6ab97ed the kokkos naive conv2d walked its rows by pointer: 0.80 of cuda at R = 5, slower than the
#    original loop's 0.85 in calls 1 and 2; reverted after the call, so conv2d naive rows of final8 are that
#    reverted code, every other row is the committed tree)
