#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 6, the lead): the session's final
# tree verified before it is timed. The conformance suite on cuda and kokkos under the defaults,
# then compute-sanitizer's memcheck, synccheck and racecheck over what the session changed: the
# kokkos optimized conv2d (window copied line by line, the new default) and the kokkos sm_90
# float gemm (cub forced at every size so the small cases run it).
#   bash bench/device/r3/verify6.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" verify6 "$@"
t=$build/tests/tilekit_tests
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
for tool in memcheck synccheck racecheck; do
  step sanitize-$tool.txt 60 compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
    --gtest_filter='*Conv2d*kokkos_optimized_float*' --gtest_brief=1
  step sanitize-$tool.txt 60 env TILEKIT_KOKKOS_SGEMM=cub compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
    --gtest_filter='*Gemm*kokkos_optimized_float*' --gtest_brief=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/sanitize-$tool.txt" | sed "s/^/$tool: /" >>"$out/summary.txt"
done
