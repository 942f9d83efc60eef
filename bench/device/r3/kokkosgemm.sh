#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 6, the lead): the kokkos float gemm
# on sm_90 running the cuda backend's block body in a Kokkos team (TILEKIT_KOKKOS_SGEMM = sm90 |
# cub | dual | block). Correctness first: the gemm conformance cases under each shape (cub and
# dual forced at every size), the whole kokkos suite under the defaults, compute-sanitizer's
# memcheck, synccheck and racecheck over the forced shapes; then cuda against kokkos (sm90 and the
# former GemmBlock) in one process per size, and the three operations for Pennycook's ratio.
#   bash bench/device/r3/kokkosgemm.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkosgemm "$@"
t=$build/tests/tilekit_tests
for mode in cub dual sm90; do
  step conformance-$mode.txt 30 env TILEKIT_KOKKOS_SGEMM=$mode "$t" --gtest_filter='*Gemm*kokkos_optimized_float*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-$mode.txt" | sed "s/^/sgemm $mode: /" >>"$out/summary.txt"
done
step conformance-kokkos.txt 60 "$t" --gtest_filter='*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-kokkos.txt" | sed "s/^/kokkos (defaults): /" >>"$out/summary.txt"
for tool in memcheck synccheck racecheck; do
  for mode in cub dual; do
    step sanitize.txt 60 env TILEKIT_KOKKOS_SGEMM=$mode compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
      --gtest_filter='*GemmPrimes*kokkos_optimized_float*:*GemmLeadingDimensions*kokkos_optimized_float*:*GemmAlphaBeta*kokkos_optimized_float*' --gtest_brief=1
  done
done
grep -E "ERROR SUMMARY" "$out/sanitize.txt" >>"$out/summary.txt"
for n in 4096 8192; do
  for mode in sm90 block; do
    step gemm-$n-$mode.txt 40 env TILEKIT_KOKKOS_SGEMM=$mode "$build/tilekit" compare gemm --backends cuda,kokkos --size $n --reps 20
    grep -E "^gemm .*(optimized|cuBLAS|cublas)" "$out/gemm-$n-$mode.txt" | sed "s/^/kokkos $mode: /" >>"$out/summary.txt"
  done
done
step final.txt 60 "$build/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
  --json "$out/final.json"
grep -E "^(gemm|transpose|conv2d) " "$out/final.txt" >>"$out/summary.txt"
