#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 9, third call): the SGEMM's steady
# steps, which took cub3efz from 91% to 93-94% of cuBLAS in call 2 (final9), moved the stall from
# the copies' integer chains ("wait": 20.2k -> 7.8k samples) to the first FFMAs after each group
# of fragment reads ("short scoreboard": 26.6k -> 50.2k; cuBLAS 29.9k), and ptxas placed the
# step's nine copies right before the first reads, whose registers then wait on the copies'
# operands (long scoreboard on LDS). Candidates, predicted before this call:
#   cub3efzs   the steady step's copies spread one or two per K index: the reads stop queuing
#              behind the copies; short scoreboard back near 30k: +1.5-3% over cub3efz (95-96%)
#   dual3efzs  the same at 128 x 128 (two blocks an SM): as dual3efz +0-2%
#   cub3ef2    fragments two K indices ahead (round 4: 87%, 8 B of spills), now with the steady
#              loop: more slack between reads and FFMAs, if the spills do not cost it: 92-95%
# Conformance of the new variants, three alternating rounds at 4096 with cuBLAS in each process,
# 8192 once each, ncu's source counters of cub3efzs, memcheck and racecheck of it.
#   bash bench/device/r3/spread9.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" spread9 "$@"
t=$build/tests/tilekit_tests
tk=$build/tilekit
filter='*Conformance.Gemm*/cuda_optimized_float:*Conformance.RepeatedRuns*/cuda_optimized_float'
for v in cub3efzs dual3efzs cub3ef2; do
  TILEKIT_SGEMM=$v step tests-$v.txt 30 "$t" --gtest_filter="$filter" --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests-$v.txt" | sed "s/^/$v: /" >>"$out/summary.txt"
done
for round in 1 2 3; do
  for v in cub3efz cub3efzs cub3ef2 dual3efz dual3efzs cub3efzb; do
    TILEKIT_SGEMM=$v step sgemm-4096-$v-$round.txt 30 "$tk" compare gemm --backends cuda --size 4096 --reps 10
    echo "round $round 4096 $v: $(gemm_row "$out/sgemm-4096-$v-$round.txt")" >>"$out/summary.txt"
  done
done
for v in cub3efz cub3efzs cub3ef2 cub3efzb; do
  TILEKIT_SGEMM=$v step sgemm-8192-$v.txt 40 "$tk" compare gemm --backends cuda --size 8192 --reps 5
  echo "8192 $v: $(gemm_row "$out/sgemm-8192-$v.txt")" >>"$out/summary.txt"
done
TILEKIT_SGEMM=cub3efzs step ncu-sgemm.log 60 ncu --clock-control none --kernel-name-base demangled -k regex:gemm_sm90_kernel \
  -c 1 --section SourceCounters --section WarpStateStats -f -o "$out/rep-sgemm" \
  "$tk" run gemm --size 4096 --variant optimized --backend cuda --reps 1
step src-sgemm-cub3efzs.csv 60 ncu -i "$out/rep-sgemm.ncu-rep" --page source --csv --print-source sass
gzip -f "$out/src-sgemm-cub3efzs.csv"
rm -f "$out/rep-sgemm.ncu-rep"
for tool in memcheck racecheck; do
  for shape in "--m 259 --n 388 --k 75" "--m 512 --n 256 --k 64"; do
    n=$(echo "$shape" | tr -d ' -')
    TILEKIT_SGEMM=cub3efzs step sanitize-$tool-$n.txt 40 compute-sanitizer --tool $tool --error-exitcode 9 "$tk" run gemm \
      $shape --variant optimized --backend cuda --reps 1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified|FAILED" "$out/sanitize-$tool-$n.txt" | cut -c1-100 |
      sed "s/^/cub3efzs $tool $n: /" >>"$out/summary.txt"
  done
done
