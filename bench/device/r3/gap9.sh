#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 9, first call): where, instruction by
# instruction, the kernels that trail their peer stall.
#  1. ncu's source-level counters (warp-state samples per SASS instruction) of the cuda optimized
#     SGEMM (cub3efz) and of cuBLAS's kernel at 4096, of the tiled and naive conv2d on cuda and
#     kokkos (R = 5, 8192), exported as CSV per instruction;
#  2. the SASS of those kernels;
#  3. the carveout question of the kokkos tiled conv2d: Kokkos adds 8 x (team size + 2) bytes of
#     its own to every team's shared memory, so 8 teams of the 64 x 64 tile need the 196 KiB
#     carveout where cuda's fit 164 KiB (L1 60 against 92 KiB). A tile of 56 x 64 fits 164 KiB on
#     both; 32 x 64 fits 100 KiB on both. Both backends at the three tiles, alternating, two rounds,
#     and the launch's carveout under ncu.
#   bash bench/device/r3/gap9.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" gap9 "$@"
tk=$build/tilekit

src_one() {  # src_one NAME KERNEL_REGEX ARGS...: a report with the source counters, then its CSV
  local name=$1 k=$2
  shift 2
  step ncu-$name.log 60 ncu --clock-control none --kernel-name-base demangled -k regex:"$k" -c 1 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
    --section SchedulerStats -f -o "$out/rep-$name" "$tk" run "$@" --reps 1
  step src-$name.csv 60 ncu -i "$out/rep-$name.ncu-rep" --page source --csv --print-source sass
  step details-$name.txt 30 ncu -i "$out/rep-$name.ncu-rep" --page details
  gzip -f "$out/src-$name.csv"
}
export TILEKIT_KOKKOS_NAIVE=mdrange
src_one sgemm-cub3efz gemm_sm90_kernel gemm --size 4096 --variant optimized --backend cuda
src_one sgemm-cublas 'sm80_xmma|sgemm|xmma' gemm --size 4096 --peer --backend cuda
src_one conv-tiled-cuda Conv2dTiled conv2d --size 8192 --k 5 --variant tiled --backend cuda
src_one conv-tiled-kokkos Conv2dTiled conv2d --size 8192 --k 5 --variant tiled --backend kokkos

cuobjdump -sass "$tk" 2>/dev/null | awk '
  /Function : /{p = ($0 ~ /conv2d_naive|Conv2dTiled|gemm_sm90_kernelILi256ELi128ELi8ELi16ELi8ELi3ELi1ELb1ELb1ELi8ELi1ELb1E/)}
  p' | gzip >"$out/sass.txt.gz"
log "sass: $(zcat "$out/sass.txt.gz" | grep -c 'Function : ') functions"

m=gpu__time_duration.sum,launch__shared_mem_config_size,launch__shared_mem_per_block_dynamic
m=$m,launch__shared_mem_per_block_static,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
for tile in 64,64 56,64 32,64; do
  for b in cuda kokkos; do
    step ncu-carveout-$tile-$b.txt 40 ncu --clock-control none --kernel-name-base demangled -k regex:Conv2dTiled -c 1 \
      --metrics $m "$tk" run conv2d --size 8192 --k 5 --variant tiled --tile $tile --backend $b --reps 1
    grep -E '^    [a-z_0-9]+__' "$out/ncu-carveout-$tile-$b.txt" | sed 's/  */ /g' | sed "s/^/$tile $b:/" >>"$out/summary.txt"
  done
done
for round in 1 2; do
  for tile in 64,64 56,64 32,64; do
    for b in cuda kokkos; do
      step conv-tiled-$tile-$b.txt 40 "$tk" run conv2d --size 8192 --k 5 --variant tiled --tile $tile --backend $b --reps 10
      grep -E "^conv2d " "$out/conv-tiled-$tile-$b.txt" | tail -1 | cut -c1-110 | sed "s/^/round $round tile $tile $b: /" >>"$out/summary.txt"
    done
  done
done
src_one conv-naive-cuda conv2d_naive conv2d --size 8192 --k 5 --variant naive --backend cuda
src_one conv-naive-kokkos conv2d_naive conv2d --size 8192 --k 5 --variant naive --backend kokkos
