#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 6, the lead): the second look at the
# kokkos sm_90 float gemm (the cuda backend's block body in a Kokkos team). Its conformance cases
# (cub forced at every size, then the defaults) and the whole kokkos suite; the comparison in
# the other order (kokkos first: does the second backend of a long run lose clock?); one launch
# of each kernel under ncu (duration, SM clock, registers, shared-memory configuration, issue
# and stalls), so the kernel's own time stands beside the events' time.
#   bash bench/device/r3/kokkosgemm2.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" kokkosgemm2 "$@"
t=$build/tests/tilekit_tests
for mode in cub sm90; do
  step conformance-$mode.txt 30 env TILEKIT_KOKKOS_SGEMM=$mode "$t" --gtest_filter='*Gemm*kokkos_optimized_float*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-$mode.txt" | sed "s/^/sgemm $mode: /" >>"$out/summary.txt"
done
step conformance-kokkos.txt 150 "$t" --gtest_filter='*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-kokkos.txt" | sed "s/^/kokkos (defaults): /" >>"$out/summary.txt"
step gemm-8192-kokkos-first.txt 40 "$build/tilekit" compare gemm --backends kokkos,cuda --size 8192 --reps 20
grep -E "^gemm .*(optimized|cublas)" "$out/gemm-8192-kokkos-first.txt" >>"$out/summary.txt"
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_config_size,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum
for b in cuda kokkos; do
  step ncu-gemm-$b.txt 60 ncu --clock-control none --kernel-name-base demangled -k regex:'gemm_sm90|Sm90Team' -c 1 --metrics $m \
    "$build/tilekit" run gemm --size 8192 --backend $b --variant optimized --reps 1
done
grep -hE '^  [a-zA-Z_]|duration|per_second|inst_executed|registers|block_size|grid_size|shared_mem|occupancy|warps_active|issue_active|stalled|conflicts|sectors' \
  "$out"/ncu-*.txt >>"$out/summary.txt"
# Both kernels' SASS (the cuda plugin, Kokkos in libtilekit) and an opcode count of each.
for lib in "$build"/*.so* "$build"/backends/*/*.so* "$build/tilekit"; do
  [ -f "$lib" ] || continue
  cuobjdump -sass "$lib" 2>/dev/null |
    awk '/Function :/{keep = /Sm90Team/ || /gemm_sm90_kernelILi256ELi128ELi8ELi16ELi8ELi3ELi1ELb1ELb1ELi8ELi1ELb1E/} keep' >>"$out/sass-gemm.txt"
done
awk '/Function :/{f = /Sm90Team/ ? "kokkos" : "cuda"} f && /^ *\/\*[0-9a-f]+\*\/ /{op = $2; if (op ~ /^@/) op = $3; sub(/\..*/, "", op); n[f " " op]++}
     END {for (k in n) print k, n[k]}' "$out/sass-gemm.txt" | sort >"$out/sass-opcodes.txt"
cat "$out/sass-opcodes.txt" >>"$out/summary.txt"
gzip -f "$out/sass-gemm.txt"
