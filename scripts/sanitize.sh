#!/usr/bin/env bash
# The host backends (serial, openmp, and kokkos when Debian's Kokkos is installed) built with
# AddressSanitizer and UndefinedBehaviorSanitizer, no recovery, in build-sanitize/: runs the
# conformance suite, a short randomized campaign and a CLI smoke run under them. Any report
# fails the run. Usage: sanitize.sh [extra CMake arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=$root/build-sanitize
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
mkdir -p "$b"
launcher=()
if command -v ccache >/dev/null; then export CCACHE_BASEDIR=$root; launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$b" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_HIP=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" "$@" \
  >"$b/configure.log" 2>&1 || { cat "$b/configure.log"; exit 1; }
grep -E "tilekit backends" "$b/configure.log" || true
# Only what runs below: the suite (with its fake plugins), the campaign and the program. The tile
# layer's and examples' programs are not run under the sanitizers here and are the slowest to compile.
cmake --build "$b" -j "$(nproc)" --target tilekit_tests tilekit_campaign tilekit_cli
# libgomp's and Kokkos' thread pools are left to the process's end: leaks there are not ours.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
echo "== sanitizers: conformance suite"
"$b/tests/tilekit_tests" --gtest_brief=1
if [ -x "$b/tests/blas/tilekit_blas_tests" ]; then
  echo "== sanitizers: libtilekit_blas (views of the caller's memory; the copies a GPU call makes)"
  TILEKIT_BLAS_BACKEND=serial "$b/tests/blas/tilekit_blas_tests" --gtest_brief=1
  TILEKIT_BLAS_BACKEND=serial TILEKIT_BLAS_STAGE=always "$b/tests/blas/tilekit_blas_tests" --gtest_brief=1
fi
echo "== sanitizers: campaign"
bash "$root/scripts/campaign.sh" "$b" "${SANITIZE_CASES:-1000}"
echo "== sanitizers: CLI smoke run"
T=$b/tilekit
"$T" info >/dev/null
# The roofline's ceilings (large copies, FMA chains) once, with gemm; the other operations without.
"$T" compare gemm --size 67 --reps 1 --json "$b/smoke-gemm.json" >/dev/null
for op in transpose conv2d; do
  "$T" compare "$op" --size 67 --reps 1 --no-roofline --json "$b/smoke-$op.json" >/dev/null
done
"$T" run gemm --m 37 --n 29 --k 41 --reps 2 --json >/dev/null
# Hostile input under the sanitizers too: each must exit with its code, not a report.
for args in "run gemm --size 99999999999999999999" "run transpose --m 1 --n 3000000000" "run gemm --size 1000000" \
            "compare --size -1" "run conv2d --size 8 --filter 4"; do
  set +e; "$T" $args >/dev/null 2>"$b/smoke.err"; rc=$?; set -e
  if [ "$rc" -ne 2 ] && [ "$rc" -ne 3 ]; then echo "tilekit $args: exit $rc"; cat "$b/smoke.err"; exit 1; fi
done
echo "sanitizers: clean"
