#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 7, the lead): the kokkos optimized
# transpose with several tiles a team (TILEKIT_KOKKOS_TRANSPOSE_TILES, _PIPE) and the barrier
# instruction in place of Kokkos' team_barrier() (TILEKIT_KOKKOS_BARRIER), against the cuda
# kernel in the same process at 8192; the kokkos sm_90 gemm under both barriers beside cuda's.
# The conformance cases of every kernel a setting selects pass first.
#   bash bench/device/r3/kokkos7.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkos7 "$@"
t=$build/tests/tilekit_tests
kk() {  # kk "TILES PIPE BARRIER": the environment of one setting
  set -- $1
  echo TILEKIT_KOKKOS_TRANSPOSE_TILES=$1 TILEKIT_KOKKOS_TRANSPOSE_PIPE=$2 TILEKIT_KOKKOS_BARRIER=$3
}
for s in "1 off team" "3 off block" "3 on block" "4 on team"; do
  n=$(echo $s | tr ' ' -)
  step conformance-$n.txt 40 env $(kk "$s") TILEKIT_KOKKOS_SGEMM=cub "$t" \
    --gtest_filter='*Transpose*kokkos*:*Gemm*kokkos_optimized_float*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-$n.txt" | sed "s/^/$n: /" >>"$out/summary.txt"
done
for s in "1 off team" "1 off block" "2 off block" "4 off block" "8 off block" "2 on block" "4 on block" "8 on block"; do
  n=$(echo $s | tr ' ' -)
  step transpose-$n.txt 25 env $(kk "$s") "$build/tilekit" compare transpose --backends cuda,kokkos --size 8192 --reps 20
  grep -E "^transpose .*(optimized|memcpy)" "$out/transpose-$n.txt" | sed "s/^/$n: /" >>"$out/summary.txt"
done
for round in 1 2; do
  for b in cuda kokkos-block kokkos-team; do
    step gemm-$b.txt 40 env TILEKIT_KOKKOS_BARRIER=${b#kokkos-} "$build/tilekit" run gemm --size 8192 \
      --backend ${b%-*} --variant optimized --reps 10
    grep -E "TFLOP|GFLOP|median" "$out/gemm-$b.txt" | tail -1 | sed "s/^/gemm $b round $round: /" >>"$out/summary.txt"
  done
done
m=gpu__time_duration.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
step ncu-transpose-cuda.txt 30 ncu --clock-control none -k regex:'ranspose' -c 1 --metrics $m \
  "$build/tilekit" run transpose --size 8192 --backend cuda --variant optimized --reps 1
for s in "1 off team" "4 off block" "4 on block"; do
  n=$(echo $s | tr ' ' -)
  step ncu-transpose-$n.txt 30 env $(kk "$s") ncu --clock-control none -k regex:'ranspose' -c 1 --metrics $m \
    "$build/tilekit" run transpose --size 8192 --backend kokkos --variant optimized --reps 1
done
for f in "$out"/ncu-*.txt; do
  echo "== $(basename "$f")" >>"$out/summary.txt"
  grep -E '^    [a-z_]+__|^    launch' "$f" | sed 's/  */ /g' >>"$out/summary.txt"
done
