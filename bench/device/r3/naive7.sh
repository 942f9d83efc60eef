#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 7, the lead): the kokkos naive
# kernels launched as an MDRangePolicy (the default) or as a league of 256-thread teams, one per
# 32 x 8 piece of the output (TILEKIT_KOKKOS_NAIVE=team: the cuda backend's launch), beside the
# cuda naive kernels, alternating, two rounds; the naive conformance cases under each first.
#   bash bench/device/r3/naive7.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" naive7 "$@"
t=$build/tests/tilekit_tests
for m in mdrange team; do
  step conformance-$m.txt 40 env TILEKIT_KOKKOS_NAIVE=$m "$t" --gtest_filter='*kokkos_naive*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-$m.txt" | sed "s/^/$m: /" >>"$out/summary.txt"
done
for round in 1 2; do
  for op in "gemm --size 8192" "conv2d --size 8192 --k 5" "transpose --size 8192"; do
    for b in cuda kokkos-mdrange kokkos-team; do
      n=$(echo "$op" | cut -d' ' -f1)
      step $n-$b.txt 60 env TILEKIT_KOKKOS_NAIVE=${b#kokkos-} "$build/tilekit" run $op --backend ${b%%-*} --variant naive --reps 5
      grep -E "^$n " "$out/$n-$b.txt" | tail -1 | cut -c1-110 | sed "s/^/$b round $round: /" >>"$out/summary.txt"
    done
  done
done
