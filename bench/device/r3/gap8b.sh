#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 8, the lead, second call): the cuda
# kernels' SASS beside call 1's kokkos SASS (naive gemm and conv2d, tiled conv2d), and the kokkos
# naive gemm with its four taps' loads issued before their FMAs (TILEKIT_KOKKOS_NAIVE_LOOP=batch4)
# against plain and cuda, alternating, two rounds; ncu's stall counters and conformance and
# memcheck for batch4.
#   bash bench/device/r3/gap8b.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" gap8b "$@"
t=$build/tests/tilekit_tests
for f in $(find "$build" -maxdepth 3 \( -name 'tilekit' -o -name 'libtilekit*' \) -type f); do
  cuobjdump -sass "$f" 2>/dev/null | awk '
    /Function : /{p = ($0 ~ /gemm_naive_kernelIf|conv2d_naive_kernelIf|tile_entry.*Conv2dTiledIf/)}
    p'
done | gzip >"$out/sass-cuda.txt.gz"
log "sass: $(zcat "$out/sass-cuda.txt.gz" | grep -c 'Function : ') functions"
step conformance-batch4.txt 40 env TILEKIT_KOKKOS_NAIVE_LOOP=batch4 "$t" --gtest_filter='*Gemm*kokkos_naive*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-batch4.txt" | sed "s/^/batch4: /" >>"$out/summary.txt"
step memcheck-batch4.txt 90 env TILEKIT_KOKKOS_NAIVE_LOOP=batch4 compute-sanitizer --tool memcheck --error-exitcode 9 "$t" \
  --gtest_filter='*Gemm*kokkos_naive_float*' --gtest_brief=1
grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/memcheck-batch4.txt" | sed "s/^/memcheck batch4: /" >>"$out/summary.txt"
m=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,launch__registers_per_thread
for s in long_scoreboard lg_throttle dispatch_stall wait not_selected; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in "team batch4" "mdrange batch4"; do
  set -- $v
  step ncu-$1-$2.txt 40 env TILEKIT_KOKKOS_NAIVE=$1 TILEKIT_KOKKOS_NAIVE_LOOP=$2 ncu --clock-control none \
    --kernel-name-base demangled -k regex:gemm_naive -c 1 --metrics $m "$build/tilekit" run gemm --size 4096 \
    --variant naive --backend kokkos --reps 1
  echo "== ncu $1 $2" >>"$out/summary.txt"
  grep -E '^    [a-z_0-9]+__' "$out/ncu-$1-$2.txt" | sed 's/  */ /g' >>"$out/summary.txt"
done
for round in 1 2; do
  for b in cuda kokkos-mdrange-plain kokkos-mdrange-batch4 kokkos-team-batch4; do
    IFS=- read -r be mode loop <<<"$b"
    step gemm-$b.txt 60 env TILEKIT_KOKKOS_NAIVE=${mode:-mdrange} TILEKIT_KOKKOS_NAIVE_LOOP=${loop:-plain} \
      "$build/tilekit" run gemm --size 8192 --variant naive --backend $be --reps 5
    grep -E "^gemm " "$out/gemm-$b.txt" | tail -1 | cut -c1-110 | sed "s/^/$b round $round: /" >>"$out/summary.txt"
  done
done
