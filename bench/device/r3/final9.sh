#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 9, second call): the session's tree.
#  - gemm_sm90.cuh: the fast blocks' whole K steps run in a loop of their own, with no condition
#    in the step (cub3efz, the default, and every other fast variant); cub3efzb keeps round 4's
#    loop for A/B. Prediction (gap9: the copies' integer chains at the top of every step held 5%
#    of the warps' stall samples, 3.5x cuBLAS's wait + dispatch samples): +3-5% at 4096 and 8192,
#    92% -> 95-97% of cuBLAS;
#  - the kokkos tiled conv2d's automatic tile 56 x 64 on GPUs (its teams no bigger than cuda's
#    64 x 64 block): 0.934 -> 0.96 of cuda on the H100, more on the H200 (0.85 there).
# Conformance of cuda and kokkos (and the float gemm under cub3efzb and dual3efz), memcheck and
# racecheck of the new loop on shapes with edge blocks and partial K steps, ncu's source counters
# of the new cub3efz, alternating A/B rounds, and the final compare at 8192 on both backends.
#   bash bench/device/r3/final9.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" final9 "$@"
t=$build/tests/tilekit_tests
tk=$build/tilekit
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
filter='*Conformance.Gemm*/cuda_optimized_float:*Conformance.RepeatedRuns*/cuda_optimized_float'
for v in cub3efzb dual3efz; do
  TILEKIT_SGEMM=$v step tests-$v.txt 30 "$t" --gtest_filter="$filter" --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests-$v.txt" | sed "s/^/$v: /" >>"$out/summary.txt"
done
# A/B: the new loop (cub3efz) against round 4's (cub3efzb), cuBLAS in each process.
for round in 1 2 3; do
  for v in cub3efz cub3efzb; do
    TILEKIT_SGEMM=$v step sgemm-4096-$v-$round.txt 30 "$tk" compare gemm --backends cuda --size 4096 --reps 10
    echo "round $round 4096 $v: $(gemm_row "$out/sgemm-4096-$v-$round.txt")" >>"$out/summary.txt"
  done
done
for v in cub3efz cub3efzb; do
  TILEKIT_SGEMM=$v step sgemm-8192-$v.txt 40 "$tk" compare gemm --backends cuda --size 8192 --reps 5
  echo "8192 $v: $(gemm_row "$out/sgemm-8192-$v.txt")" >>"$out/summary.txt"
done
step ncu-sgemm.log 60 ncu --clock-control none --kernel-name-base demangled -k regex:gemm_sm90_kernel -c 1 \
  --section SourceCounters --section WarpStateStats --section SchedulerStats -f -o "$out/rep-sgemm" \
  "$tk" run gemm --size 4096 --variant optimized --backend cuda --reps 1
step src-sgemm.csv 60 ncu -i "$out/rep-sgemm.ncu-rep" --page source --csv --print-source sass
gzip -f "$out/src-sgemm.csv"
rm -f "$out/rep-sgemm.ncu-rep"

# The kokkos tiled conv2d: the new automatic tile (56 x 64) and the old one against cuda's.
for round in 1 2; do
  for k in 5 3; do
    for run in "cuda" "kokkos" "kokkos --tile 64,64"; do
      n=$(echo "$run" | tr -d ' -' | tr ',' 'x')
      step conv-tiled-$k-$n.txt 40 "$tk" run conv2d --size 8192 --k $k --variant tiled --backend $run --reps 10
      grep -E "^conv2d " "$out/conv-tiled-$k-$n.txt" | tail -1 | cut -c1-110 | sed "s/^/round $round R=$k $n: /" >>"$out/summary.txt"
    done
  done
done

final_compare

# Last, while the time lasts: memcheck and racecheck of the new loop (edge blocks, partial K steps).
for tool in memcheck racecheck; do
  for shape in "--m 259 --n 388 --k 75" "--m 512 --n 256 --k 64" "--m 1000 --n 1000 --k 997"; do
    n=$(echo "$shape" | tr -d ' -')
    step sanitize-$tool-$n.txt 40 compute-sanitizer --tool $tool --error-exitcode 9 "$tk" run gemm $shape \
      --variant optimized --backend cuda --reps 1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified|FAILED" "$out/sanitize-$tool-$n.txt" | cut -c1-100 |
      sed "s/^/$tool $n: /" >>"$out/summary.txt"
  done
done

