#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 5, the lead): the kokkos optimized
# transpose and conv2d against cuda's in one process each (Pennycook's ratio per operation), the
# conv2d register bound (TILEKIT_KOKKOS_CONV_BOUNDS), and the SASS of both transposes.
#   bash bench/device/r3/kokkosopt.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkosopt "$@"
step transpose.txt 25 "$build/tilekit" compare transpose --backends cuda,kokkos --size 8192 --reps 20
grep -E "^transpose .*(optimized|tiled|memcpy)" "$out/transpose.txt" >>"$out/summary.txt"
for k in 5 3; do
  for bounds in none occ; do
    step conv-k$k-$bounds.txt 25 env TILEKIT_KOKKOS_CONV_BOUNDS=$bounds "$build/tilekit" compare conv2d --backends cuda,kokkos \
      --size 8192 --k $k --reps 20
    grep -E "^conv2d .*(optimized|memcpy)" "$out/conv-k$k-$bounds.txt" | sed "s/^/bounds $bounds: /" >>"$out/summary.txt"
  done
done
# The transposes' SASS (cuda plugin and Kokkos in libtilekit), kernels named transpose only.
for lib in "$build"/*.so* "$build/tilekit"; do
  [ -f "$lib" ] || continue
  cuobjdump -sass "$lib" 2>/dev/null | awk '/Function :/{keep = /ranspose/} keep' >>"$out/sass-transpose.txt"
done
gzip -f "$out/sass-transpose.txt"
log "sass: $(ls -la "$out"/sass-transpose.txt.gz 2>&1)"
