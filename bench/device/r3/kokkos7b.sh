#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 7, the lead, second call): whether
# the kokkos transpose's gap to the cuda kernel is the matrices' alignment (kokkos_malloc's
# pointers are 128 bytes past a 256-byte boundary; TILEKIT_KOKKOS_ALIGN = kokkos | 256 | 4096),
# with ncu on both backends' kernels; the sm_90 gemm under each alignment beside cuda's; then the
# conformance suite on cuda and kokkos under the new defaults.
#   bash bench/device/r3/kokkos7b.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkos7b "$@"
t=$build/tests/tilekit_tests
step conformance-align-kokkos.txt 40 env TILEKIT_KOKKOS_ALIGN=kokkos "$t" --gtest_filter='*Transpose*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-align-kokkos.txt" | sed "s/^/align kokkos: /" >>"$out/summary.txt"
for s in "kokkos 1 off" "256 1 off" "4096 1 off" "256 2 on" "kokkos 1 off"; do
  set -- $s
  n=$(echo $s | tr ' ' -)
  step transpose-$n.txt 25 env TILEKIT_KOKKOS_ALIGN=$1 TILEKIT_KOKKOS_TRANSPOSE_TILES=$2 TILEKIT_KOKKOS_TRANSPOSE_PIPE=$3 \
    "$build/tilekit" compare transpose --backends cuda,kokkos --size 8192 --reps 20
  grep -E "^transpose .*(optimized|memcpy)" "$out/transpose-$n.txt" | sed "s/^/$n: /" >>"$out/summary.txt"
done
for round in 1 2; do
  for b in cuda kokkos-kokkos kokkos-256; do
    step gemm-$b.txt 40 env TILEKIT_KOKKOS_ALIGN=${b#kokkos-} "$build/tilekit" run gemm --size 8192 \
      --backend ${b%%-*} --variant optimized --reps 10
    grep -E "^gemm " "$out/gemm-$b.txt" | tail -1 | cut -c1-120 | sed "s/^/$b round $round: /" >>"$out/summary.txt"
  done
done
m=gpu__time_duration.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
ncu_one() {  # ncu_one NAME BACKEND ALIGN
  step ncu-$1.txt 30 env TILEKIT_KOKKOS_ALIGN=$3 ncu --clock-control none --kernel-name-base demangled -k regex:'ranspose' -c 1 \
    --metrics $m "$build/tilekit" run transpose --size 8192 --backend $2 --variant optimized --reps 1
}
ncu_one cuda cuda 256
ncu_one kokkos-align-kokkos kokkos kokkos
ncu_one kokkos-align-256 kokkos 256
for f in "$out"/ncu-*.txt; do
  echo "== $(basename "$f")" >>"$out/summary.txt"
  grep -E '^    [a-z_]+__' "$f" | sed 's/  */ /g' >>"$out/summary.txt"
done
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
# compute-sanitizer's four tools over the kernels this session changed: the kokkos optimized
# transpose (one tile a team, and two with the next tile's loads in flight) and the sm_90 gemm
# with the barrier instruction (cub at every size, so that the small cases run it).
for tool in memcheck synccheck racecheck initcheck; do
  step sanitize-$tool.txt 60 compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
    --gtest_filter='*Transpose*kokkos_optimized*' --gtest_brief=1
  step sanitize-$tool.txt 60 env TILEKIT_KOKKOS_TRANSPOSE_TILES=2 TILEKIT_KOKKOS_TRANSPOSE_PIPE=on compute-sanitizer \
    --tool $tool --error-exitcode 9 "$t" --gtest_filter='*Transpose*kokkos_optimized*' --gtest_brief=1
  step sanitize-$tool.txt 90 env TILEKIT_KOKKOS_SGEMM=cub compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
    --gtest_filter='*Gemm*kokkos_optimized_float*' --gtest_brief=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/sanitize-$tool.txt" | sed "s/^/$tool: /" >>"$out/summary.txt"
done
