#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 5, the lead): where the kokkos
# optimized transpose and conv2d lose to the cuda backend's. One launch of each under ncu (its
# duration, instructions, DRAM throughput, registers, occupancy, stalls), so the kernel's own
# time can be set beside the time `compare` measures between events.
#   bash bench/device/r3/kokkosgap.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkosgap "$@"
m=gpu__time_duration.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio
for b in cuda kokkos; do
  step ncu-transpose-$b.txt 40 ncu --clock-control none --kernel-name-base demangled -k regex:'ranspose' -c 1 --metrics $m \
    "$build/tilekit" run transpose --size 8192 --backend $b --variant optimized --reps 1
  step ncu-conv5-$b.txt 40 ncu --clock-control none --kernel-name-base demangled -k regex:'onv2d' -c 1 --metrics $m \
    "$build/tilekit" run conv2d --size 8192 --k 5 --backend $b --variant optimized --reps 1
done
grep -hE '^  [a-zA-Z_]|duration|inst_executed|dram__|registers|block_size|grid_size|shared_mem|occupancy|warps_active|issue_active|stalled' \
  "$out"/ncu-*.txt >>"$out/summary.txt"
