#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 4, the lead): the tiled gemm through
# block walks (tile::block_walk). Tests of the layer and the tiled conformance cases on cuda and
# kokkos, the tiled gemm timed on both at 4096, and ncu's instruction and stall counts of one
# launch each (the hand-written kernel's are in the probe stage).
#
#   bash bench/device/r3/walk.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" walk "$@"
step tile-tests-cuda.txt 30 "$build/tests/tilekit_tile_tests_cuda" --gtest_brief=1
step tile-tests.txt 30 "$build/tests/tilekit_tile_tests" --gtest_brief=1
step conformance.txt 60 "$build/tests/tilekit_tests" --gtest_filter='*cuda*tiled*:*kokkos*tiled*' --gtest_brief=1
grep -hE '^\[  (PASSED|FAILED) ' "$out"/tile-tests*.txt "$out/conformance.txt" >>"$out/summary.txt"
for b in cuda kokkos; do
  for i in 1 2 3; do
    step timings.jsonl 30 "$build/tilekit" run gemm --size 4096 --backend $b --variant tiled --json
  done
done
grep -o '"backend": *"[a-z]*"\|"seconds": *[0-9.e-]*' "$out/timings.jsonl" | paste - - >>"$out/summary.txt"
m=smsp__inst_executed.sum,gpu__time_duration.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,launch__registers_per_thread,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active
for b in cuda kokkos; do
  step ncu-$b.txt 60 ncu --clock-control none --kernel-name-base demangled -k regex:GemmTiled -c 1 --metrics $m \
    "$build/tilekit" run gemm --size 4096 --backend $b --variant tiled --reps 1
done
grep -hE 'inst_executed|duration|registers|block_size|stalled' "$out"/ncu-*.txt >>"$out/summary.txt"
# conv2d tiled (R = 5, 8192^2, float): the layer's kernel against the hand-written one before it.
before=$root/.final/before/build-device/tilekit
m2=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
for which in after before; do
  bin=$build/tilekit
  [ $which = before ] && bin=$before
  [ -x "$bin" ] || continue
  step ncu-conv-$which.txt 60 ncu --clock-control none --kernel-name-base demangled -k regex:'Conv2dTiled|conv2d_tiled_kernel' -c 1 --metrics $m2 \
    "$bin" run conv2d --size 8192 --k 5 --backend cuda --variant tiled --reps 1
done
grep -hE 'Conv|conv|inst_executed|duration|registers|stalled|dram|wavefronts|issue_active' "$out"/ncu-conv-*.txt >>"$out/summary.txt"
