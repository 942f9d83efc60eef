#!/usr/bin/env bash
# SASS instructions per tiled/conv kernel in the built library (after) and the tree before the tile layer:
# run on the device machine from the repository root after round3.sh build before.
for d in build-device .final/before/build-device; do
  for lib in $(find $d -maxdepth 3 -name 'libtilekit*.so' -o -maxdepth 3 -name 'libtilekit*.a' | head -3); do
    echo "== $lib"
    cuobjdump -sass "$lib" 2>/dev/null | awk '/Function :/{n=$3} /^ +\/\*[0-9a-f]{4}\*\//{c[n]++} END{for(k in c) print c[k], k}' | grep -v Kokkos | grep -Ei "conv|gemm_tiled|GemmTiled" | sort -k2 | head -400
  done
done
