#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 7, the lead): the session's final
# tree verified, then timed. The conformance suite on cuda and kokkos under the defaults,
# compute-sanitizer's four tools over the kokkos optimized transpose (barrier instruction,
# 256-byte aligned matrices); the three operations at 8192 on both backends in one process, the
# transpose again with kokkos_malloc's own alignment (the before), conv2d R = 3, gemm 4096.
#   bash bench/device/r3/final7.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" final7 "$@"
t=$build/tests/tilekit_tests
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
for tool in memcheck synccheck racecheck initcheck; do
  step sanitize-$tool.txt 60 compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
    --gtest_filter='*Transpose*kokkos_optimized*' --gtest_brief=1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitize-$tool.txt" | sed "s/^/$tool: /" >>"$out/summary.txt"
done
step final-8192.txt 90 "$build/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
  --json "$out/final-8192.json"
grep -E "^(gemm|transpose|conv2d) " "$out/final-8192.txt" >>"$out/summary.txt"
step transpose-align-kokkos.txt 25 env TILEKIT_KOKKOS_ALIGN=kokkos "$build/tilekit" compare transpose \
  --backends cuda,kokkos --size 8192 --reps 20
grep -E "^transpose .*(optimized|memcpy)" "$out/transpose-align-kokkos.txt" | sed "s/^/align kokkos: /" >>"$out/summary.txt"
step conv-k3.txt 30 "$build/tilekit" compare conv2d --backends cuda,kokkos --size 8192 --k 3 --reps 20
grep -E "^conv2d .*(optimized|memcpy)" "$out/conv-k3.txt" >>"$out/summary.txt"
step gemm-4096.txt 40 "$build/tilekit" compare gemm --backends cuda,kokkos --size 4096 --reps 20
grep -E "^gemm .*(optimized|cublas)" "$out/gemm-4096.txt" >>"$out/summary.txt"
