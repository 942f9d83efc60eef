#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 9, fourth call): the session's final
# tree. The float gemm's default on sm_90 is now cub3efzs (the steady steps, their copies spread
# over the K indices; call 3: 97% of cuBLAS at 4096, 98% at 8192, where cub3efz measured 91% and
# 93%), stepping down to dual3efzs; the kokkos backend's sm_90 block runs the same body.
# Predicted: kokkos optimized gemm within 2% of cuda's (it ran the same body at 0.944 in session 8,
# 1.003 in call 2 once the copies were out of the conditions).
# The conformance suite on cuda and kokkos (and kokkos' sm_90 block at every size), memcheck and
# racecheck of dual3efzs and of kokkos' block, alternating rounds of cub3efzs / dual3efzs /
# cub3efz, kokkos against cuda at 4096 and 8192, then the final compare at 8192.
#   bash bench/device/r3/final9b.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" final9b "$@"
t=$build/tests/tilekit_tests
tk=$build/tilekit
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
TILEKIT_KOKKOS_SGEMM=cub step tests-kokkos-cub.txt 30 "$t" \
  --gtest_filter='*Conformance.Gemm*/kokkos_optimized_float:*Conformance.RepeatedRuns*/kokkos_optimized_float' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests-kokkos-cub.txt" | sed "s/^/kokkos sm_90 block at every size: /" >>"$out/summary.txt"
for round in 1 2; do
  for n in 4096 8192; do
    for v in cub3efzs dual3efzs cub3efz; do
      TILEKIT_SGEMM=$v step sgemm-$n-$v-$round.txt 40 "$tk" compare gemm --backends cuda --size $n --reps $((n > 4096 ? 5 : 10))
      echo "round $round $n $v: $(gemm_row "$out/sgemm-$n-$v-$round.txt")" >>"$out/summary.txt"
    done
    step gemm-$n-kokkos-$round.txt 40 "$tk" compare gemm --backends cuda,kokkos --size $n --reps $((n > 4096 ? 5 : 10))
    echo "round $round $n cuda,kokkos: $(gemm_row "$out/gemm-$n-kokkos-$round.txt")" >>"$out/summary.txt"
  done
done
final_compare
for tool in memcheck racecheck; do
  for shape in "--m 259 --n 388 --k 75" "--m 512 --n 256 --k 64"; do
    n=$(echo "$shape" | tr -d ' -')
    TILEKIT_SGEMM=dual3efzs step sanitize-$tool-$n-cuda.txt 40 compute-sanitizer --tool $tool --error-exitcode 9 "$tk" \
      run gemm $shape --variant optimized --backend cuda --reps 1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified|FAILED" "$out/sanitize-$tool-$n-cuda.txt" | cut -c1-100 |
      sed "s/^/dual3efzs $tool $n: /" >>"$out/summary.txt"
    TILEKIT_KOKKOS_SGEMM=cub step sanitize-$tool-$n-kokkos.txt 60 compute-sanitizer --tool $tool --error-exitcode 9 "$tk" \
      run gemm $shape --variant optimized --backend kokkos --reps 1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified|FAILED" "$out/sanitize-$tool-$n-kokkos.txt" | cut -c1-100 |
      sed "s/^/kokkos sm_90 block $tool $n: /" >>"$out/summary.txt"
  done
done
