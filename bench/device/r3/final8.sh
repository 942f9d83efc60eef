#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 8, the lead, third call): the
# session's final tree. The kokkos naive gemm now runs as cuda launches it (a 256-thread team per
# 32 x 8 piece of C) with four taps' loads before their FMAs, and the kokkos naive conv2d walks
# the window's and the filter's rows by pointer. The conformance suite on cuda and kokkos,
# compute-sanitizer's memcheck and initcheck over the kokkos naive kernels, then the three
# operations at 8192 on both backends in one process, and the naive kernels alternating with
# cuda's, two rounds (conv2d at R = 5 and 3).
#   bash bench/device/r3/final8.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" final8 "$@"
t=$build/tests/tilekit_tests
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
for tool in memcheck initcheck; do
  step sanitize-$tool.txt 60 compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
    --gtest_filter='*kokkos_naive_float*' --gtest_brief=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/sanitize-$tool.txt" | sed "s/^/$tool: /" >>"$out/summary.txt"
done
step final-8192.txt 100 "$build/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
  --json "$out/final-8192.json"
grep -E "^(gemm|transpose|conv2d) " "$out/final-8192.txt" >>"$out/summary.txt"
for round in 1 2; do
  for op in "gemm --size 8192" "conv2d --size 8192 --k 5" "conv2d --size 8192 --k 3"; do
    for b in cuda kokkos; do
      n=$(echo "$op" | awk '{print $1 "-" $NF}')
      step naive-$n-$b.txt 40 "$build/tilekit" run $op --variant naive --backend $b --reps 5
      grep -E "^${n%%-*} " "$out/naive-$n-$b.txt" | tail -1 | cut -c1-110 | sed "s/^/$b round $round: /" >>"$out/summary.txt"
    done
  done
done
