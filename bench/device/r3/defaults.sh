#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 5, the lead): the new defaults of
# round 4 (float gemm optimized cub3efz / dual3efz, conv2d optimized aligned-lines) and the timing
# hold (backends/gpu/stream_hold.cuh).
#   1. compute-sanitizer's four tools over the conformance cases of the kernels the defaults now
#      pick (cuda gemm optimized float, cuda conv2d optimized)
#   2. conv2d R = 3 with the old and the new default (R = 5 is in the round's `final` stage)
#   3. the kokkos transpose and the two copy peers with the host clock and with the hold
#
#   bash bench/device/r3/defaults.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" defaults "$@"
cases='*Conformance.Gemm*/cuda_optimized_float:*Conformance.Conv2d*/cuda_optimized*'
for tool in memcheck racecheck synccheck initcheck; do
  step sanitize-$tool.txt 25 compute-sanitizer --tool $tool --error-exitcode 9 \
    "$build/tests/tilekit_tests" --gtest_filter="$cases" --gtest_brief=1
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$out/sanitize-$tool.txt" | sed "s/^/$tool: /" >>"$out/summary.txt"
done
for opt in aligned aligned-lines; do
  step conv-k3-$opt.txt 20 env TILEKIT_CONV_OPT=$opt "$build/tilekit" compare conv2d --backends cuda --size 8192 --k 3 --reps 20
  grep -E "^conv2d .*(optimized|memcpy)" "$out/conv-k3-$opt.txt" | sed "s/^/$opt: /" >>"$out/summary.txt"
done
for timer in host events; do
  step transpose-$timer.txt 25 env TILEKIT_KOKKOS_TIMER=$timer "$build/tilekit" compare transpose --backends cuda,kokkos --size 8192 --reps 20
  grep -E "^transpose .*(optimized|memcpy)" "$out/transpose-$timer.txt" | sed "s/^/kokkos timer $timer: /" >>"$out/summary.txt"
done
