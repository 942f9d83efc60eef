#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (round 3, helper "cputiled"): the portable
# tiled gemm and transpose (backends/portable/) were changed for the CPU executors; their GPU
# code is meant to be unchanged (gemm: same PTX instruction counts) or leaner (transpose: the
# bounds check became loop bounds). This checks them on cuda (and openmp on the Xeon host),
# and times the cuda tiled variants once for comparison with earlier rounds. Limit: 60 s
# (about 45 s: the CLI verifies each timing against a host reference).
#
#   bash bench/device/r3/cputiled.sh BUILD_DIR OUT_DIR
#
# Writes into OUT_DIR/cputiled: summary.txt, conformance-cuda.txt, conformance-openmp.txt,
# tile-tests-cuda.txt, timings.jsonl.
source "$(dirname "$0")/stage.sh" cputiled "$@"
log "commit $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"

# Conformance of the changed kernels (odd shapes, primes, ld > cols, alpha/beta, empty).
step conformance-cuda.txt 20 "$build/tests/tilekit_tests" --gtest_filter='*cuda_tiled*' --gtest_brief=1
log "  $(grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-cuda.txt" | tr '\n' ' ')"
step conformance-openmp.txt 15 "$build/tests/tilekit_tests" --gtest_filter='*openmp_tiled*:*serial_tiled*' --gtest_brief=1
log "  $(grep -E '^\[  (PASSED|FAILED) ' "$out/conformance-openmp.txt" | tr '\n' ' ')"
if [ -x "$build/tests/tilekit_tile_tests_cuda" ]; then
  step tile-tests-cuda.txt 10 "$build/tests/tilekit_tile_tests_cuda" --gtest_brief=1
  log "  $(grep -E '^\[  (PASSED|FAILED) ' "$out/tile-tests-cuda.txt" | tr '\n' ' ')"
fi

# One timing each (the tilekit CLI verifies against its reference too).
# (gemm at 2048: the CLI's double-precision reference takes one host core several seconds.)
for c in "gemm --size 2048" "transpose --size 8192"; do
  # shellcheck disable=SC2086
  step timings.jsonl 12 "$build/tilekit" run $c --backend cuda --variant tiled --json
done
# gemm at 4096 too, the size of the earlier rounds' tables (its reference: ~25 s of one core).
step timings.jsonl 30 "$build/tilekit" run gemm --size 4096 --backend cuda --variant tiled --json
grep -o '"op":"[a-z0-9]*"\|"seconds":[0-9.e-]*\|"verified":[a-z]*\|"tile":"[^"]*"' "$out/timings.jsonl" | tr '\n' ' ' >>"$out/summary.txt"
log "done"
