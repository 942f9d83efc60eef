#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 8, the lead, first call): where the
# kokkos kernels that trail cuda's same variant lose. The naive gemm now walks pointers as cuda's
# loop compiles; the others are unchanged. ncu on both backends' kernels of the variants below
# 0.95 (naive gemm and conv2d, tiled conv2d) and of the optimized gemm (0.944), with the issue and
# stall counters; the SASS of those kernels; then kokkos against cuda, alternating, two rounds.
#   bash bench/device/r3/gap8.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" gap8 "$@"
t=$build/tests/tilekit_tests
step conformance-naive.txt 40 "$t" --gtest_filter='*kokkos_naive*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-naive.txt" | sed "s/^/naive: /" >>"$out/summary.txt"

m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
m=$m,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
m=$m,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_config_size
m=$m,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__occupancy_limit_registers
m=$m,launch__occupancy_limit_shared_mem,launch__occupancy_limit_blocks,launch__occupancy_limit_warps
for s in long_scoreboard lg_throttle mio_throttle short_scoreboard wait dispatch_stall barrier not_selected \
  math_pipe_throttle tex_throttle no_instruction branch_resolving selected; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
ncu_one() {  # ncu_one NAME KERNEL_REGEX BACKEND NAIVE_MODE ARGS...
  local name=$1 k=$2 b=$3 mode=$4
  shift 4
  step ncu-$name.txt 40 env TILEKIT_KOKKOS_NAIVE=$mode ncu --clock-control none --kernel-name-base demangled \
    -k regex:"$k" -c 1 --metrics $m "$build/tilekit" run "$@" --backend $b --reps 1
}
ncu_one gemm-naive-cuda gemm_naive cuda mdrange gemm --size 4096 --variant naive
ncu_one gemm-naive-kokkos-mdrange gemm_naive kokkos mdrange gemm --size 4096 --variant naive
ncu_one gemm-naive-kokkos-team gemm_naive kokkos team gemm --size 4096 --variant naive
ncu_one conv-naive-cuda conv2d_naive cuda mdrange conv2d --size 8192 --k 5 --variant naive
ncu_one conv-naive-kokkos-mdrange conv2d_naive kokkos mdrange conv2d --size 8192 --k 5 --variant naive
ncu_one conv-naive-kokkos-team conv2d_naive kokkos team conv2d --size 8192 --k 5 --variant naive
ncu_one conv-tiled-cuda Conv2dTiled cuda mdrange conv2d --size 8192 --k 5 --variant tiled
ncu_one conv-tiled-kokkos Conv2dTiled kokkos mdrange conv2d --size 8192 --k 5 --variant tiled
ncu_one gemm-opt-cuda 'gemm_sm90_kernel|Sm90Team' cuda mdrange gemm --size 4096 --variant optimized
ncu_one gemm-opt-kokkos 'gemm_sm90_kernel|Sm90Team' kokkos mdrange gemm --size 4096 --variant optimized
for f in "$out"/ncu-*.txt; do
  echo "== $(basename "$f")" >>"$out/summary.txt"
  grep -E '^    [a-z_0-9]+__' "$f" | sed 's/  */ /g' >>"$out/summary.txt"
done

# The SASS of the same kernels (float instantiations), for the inner loops side by side.
cuobjdump -sass "$build/tilekit" 2>/dev/null | awk '
  /Function : /{p = ($0 ~ /gemm_naive|conv2d_naive|Conv2dTiled|Sm90Team|gemm_sm90_kernelILi256ELi128ELi8ELi16ELi8ELi3ELi1ELb1ELb1ELi8ELi1ELb1E/)}
  p' | gzip >"$out/sass.txt.gz"
log "sass: $(zcat "$out/sass.txt.gz" | grep -c 'Function : ') functions"

for round in 1 2; do
  for op in "gemm --size 8192 --variant naive" "conv2d --size 8192 --k 5 --variant naive" \
    "conv2d --size 8192 --k 5 --variant tiled" "gemm --size 8192 --variant optimized"; do
    for b in cuda kokkos; do
      n=$(echo "$op" | awk '{print $1 "-" $NF}')
      step $n-$b.txt 60 "$build/tilekit" run $op --backend $b --reps 5
      grep -E "^${n%%-*} " "$out/$n-$b.txt" | tail -1 | cut -c1-120 | sed "s/^/$b round $round: /" >>"$out/summary.txt"
    done
  done
done
