#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 5, the lead): compute-sanitizer
# over what this session changed in the tile layer: the layer's tests on cuda and on kokkos (GPU
# teams with launch bounds, constants in constant memory, the aligned scratch base) and the tiled
# conformance cases of both backends (conv2d's 64x64 tile with fixed rows and lanes).
#   bash bench/device/r3/sanitize5.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" sanitize5 "$@"
for tool in memcheck racecheck synccheck initcheck; do
  for t in tilekit_tile_tests_cuda tilekit_tile_tests; do
    step $tool-$t.txt 25 compute-sanitizer --tool $tool --error-exitcode 9 "$build/tests/$t" --gtest_brief=1
  done
  step $tool-tiled.txt 40 compute-sanitizer --tool $tool --error-exitcode 9 "$build/tests/tilekit_tests" \
    --gtest_filter='*cuda_tiled*:*kokkos_tiled*' --gtest_brief=1
done
for f in "$out"/*-*.txt; do
  echo "$(basename "$f" .txt): $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1) $(grep -hE '^\[  (PASSED|FAILED) ' "$f" | tr '\n' ' ')"
done >>"$out/summary.txt"
