#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 9, fifth call): the final tree, with
# dual3efzs the float gemm's default on sm_90 (call 4: 98% of cuBLAS at 4096, 99.5% at 8192;
# cub3efzs 97-98%, cub3efz 91-93% in the same rounds). The conformance suite on cuda and kokkos,
# then the final compare of both backends at 8192 and the gemm at 4096, one process each.
#   bash bench/device/r3/final9c.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" final9c "$@"
t=$build/tests/tilekit_tests
tk=$build/tilekit
step conformance.txt 150 "$t" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/conformance.txt" >>"$out/summary.txt"
final_compare
step final-4096.txt 60 "$tk" compare gemm --backends cuda,kokkos --size 4096 --reps 10 --json "$out/final-4096.json"
grep -E "^gemm " "$out/final-4096.txt" >>"$out/summary.txt"
step conv-3.txt 60 "$tk" compare conv2d --backends cuda,kokkos --size 8192 --k 3 --reps 10 --json "$out/final-8192-r3.json"
grep -E "^conv2d " "$out/conv-3.txt" >>"$out/summary.txt"
