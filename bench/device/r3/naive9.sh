#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 9, sixth call): the kokkos naive gemm
# measured 0.92 of cuda's at 4096 in call 5 (final9c) where it is 1.00 at 8192. Both backends at
# 2048, 4096 and 8192, alternating, two rounds; ncu's memory and stall counters of both at 4096.
#   bash bench/device/r3/naive9.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" naive9 "$@"
tk=$build/tilekit
for round in 1 2; do
  for n in 2048 4096 8192; do
    for b in cuda kokkos; do
      step gemm-$n-$b.txt 40 "$tk" run gemm --size $n --variant naive --backend $b --reps 5
      grep -E "^gemm " "$out/gemm-$n-$b.txt" | tail -1 | cut -c1-100 | sed "s/^/round $round: /" >>"$out/summary.txt"
    done
  done
done
m=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct
m=$m,dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
for s in long_scoreboard lg_throttle wait not_selected selected; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for n in 4096 8192; do
  for b in cuda kokkos; do
    step ncu-$n-$b.txt 60 ncu --clock-control none --kernel-name-base demangled -k regex:gemm_naive -c 1 --metrics $m \
      "$tk" run gemm --size $n --variant naive --backend $b --reps 1
    grep -E '^    [a-z_0-9]+__' "$out/ncu-$n-$b.txt" | sed 's/  */ /g' | sed "s/^/$n $b:/" >>"$out/summary.txt"
  done
done
