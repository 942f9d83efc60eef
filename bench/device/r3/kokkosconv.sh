#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 6, the lead): the kokkos optimized
# conv2d's window layouts (TILEKIT_KOKKOS_CONV_WINDOW = vector | aligned | lines) against the cuda
# backend's kernel in the same process, R = 5 and 3 at 8192, each window's conformance cases
# first; then the three operations once more under the best-guess window for Pennycook's ratio.
#   bash bench/device/r3/kokkosconv.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkosconv "$@"
for win in vector aligned lines; do
  step conformance-$win.txt 30 env TILEKIT_KOKKOS_CONV_WINDOW=$win "$build/tests/tilekit_tests" \
    --gtest_filter='*kokkos*Conv2d*:*Conv2d*kokkos*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-$win.txt" | sed "s/^/window $win: /" >>"$out/summary.txt"
done
for k in 5 3; do
  for win in vector aligned lines; do
    step conv-k$k-$win.txt 25 env TILEKIT_KOKKOS_CONV_WINDOW=$win "$build/tilekit" compare conv2d --backends cuda,kokkos \
      --size 8192 --k $k --reps 20
    grep -E "^conv2d .*(optimized|memcpy)" "$out/conv-k$k-$win.txt" | sed "s/^/window $win: /" >>"$out/summary.txt"
  done
done
step final-lines.txt 60 env TILEKIT_KOKKOS_CONV_WINDOW=lines "$build/tilekit" compare gemm transpose conv2d \
  --backends cuda,kokkos --size 8192 --reps 10
grep -E "^(gemm|transpose|conv2d) .*(optimized|tiled)" "$out/final-lines.txt" >>"$out/summary.txt"
