#!/usr/bin/env bash
# Round 3, kokkosgpu (issue #15, kokkos item): the kokkos optimized transpose and conv2d rewritten
# in the cuda backend's form (backends/kokkos/NOTES.md, "Round 3"). Run ON THE DEVICE machine from
# the repository root, inside the 90 s the lead gives it (KOKKOSGPU_BUDGET, default 85):
#   bash bench/device/r3/kokkosgpu.sh BUILD_DIR OUT_DIR
# BUILD_DIR: a build with Kokkos-CUDA linked in (TILEKIT_KOKKOS_PLUGIN=OFF) and the cuda backend.
#   1. kokkos conformance of transpose/conv2d (tiled + optimized) under each kernel setting
#   2. compute-sanitizer memcheck of the two new kernels on odd shapes (both paths: vectors with
#      partial tiles, element-wise), default and CUDA-only settings
#   3. `tilekit compare transpose|conv2d --backends cuda,kokkos --size 8192` (conv2d at R = 3, 5)
#      once per kokkos setting (TILEKIT_KOKKOS_TRANSPOSE, TILEKIT_KOKKOS_CONV[_LOAD|_FILTER|_BOUNDS]),
#      the most telling settings first
# Every step has its own timeout and the script stops starting steps near its limit; nothing here
# fails the caller (no set -e). Output: small text/JSON files in OUT_DIR, summary.txt first.
set -uo pipefail
B=$(cd "${1:?usage: kokkosgpu.sh BUILD_DIR OUT_DIR}" && pwd)
O=${2:?usage: kokkosgpu.sh BUILD_DIR OUT_DIR}
mkdir -p "$O"
O=$(cd "$O" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
budget=${KOKKOSGPU_BUDGET:-85}
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$O/summary.txt"; }
left() { echo $((budget - ($(date +%s) - t0))); }
step() {  # step NAME SECONDS COMMAND...: skipped when the budget has no room for it
  local name=$1 secs=$2 s rc
  shift 2
  if [ "$(left)" -lt 4 ]; then log "$name: skipped (budget)"; return; fi
  [ "$secs" -gt "$(left)" ] && secs=$(left)
  s=$(date +%s)
  timeout "$secs" "$@" >"$O/$name.log" 2>&1
  rc=$?
  log "$name: rc=$rc in $(($(date +%s) - s)) s"
}
git log -1 --format='commit %H %s' >"$O/summary.txt" 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >>"$O/summary.txt" 2>&1
timeout 15 "$B/tilekit" info 2>&1 | sed -n '/kokkos/,$p' | head -20 >"$O/info.txt"

# 1. conformance
filter='*Conformance.Transpose*/kokkos_*:*Conformance.Conv2d*/kokkos_*:*Conformance.RepeatedRuns*/kokkos_*'
step tests-default 25 "$B/tests/tilekit_tests" --gtest_filter="$filter" --gtest_brief=1
step tests-cudaonly 25 env TILEKIT_KOKKOS_CONV_LOAD=async TILEKIT_KOKKOS_CONV_FILTER=constant TILEKIT_KOKKOS_CONV_BOUNDS=occ \
  "$B/tests/tilekit_tests" --gtest_filter="$filter" --gtest_brief=1
step tests-old 20 env TILEKIT_KOKKOS_TRANSPOSE=lanes TILEKIT_KOKKOS_CONV=strips \
  "$B/tests/tilekit_tests" --gtest_filter='*Conformance.Transpose*/kokkos_optimized*:*Conformance.Conv2d*/kokkos_optimized*' --gtest_brief=1
for f in tests-default tests-cudaonly tests-old; do
  [ -f "$O/$f.log" ] && echo "  $f: $(grep -E '^\[  (PASSED|FAILED) ' "$O/$f.log" | tr '\n' ' ')" >>"$O/summary.txt"
done

# 2./3. interleaved by priority (the lead gives this stage 90 s): the figures first, then
# memcheck, then the knob sweeps.
cmp() {  # cmp NAME ENV... -- ARGS...: cuda and kokkos in one process (same-run ratios)
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  step "cmp-$name" 20 env "${envs[@]}" "$B/tilekit" compare "$@" --backends cuda,kokkos --json "$O/cmp-$name.json"
  [ -f "$O/cmp-$name.log" ] && grep -E '^(transpose|conv2d|gemm) ' "$O/cmp-$name.log" | grep -E 'optimized|tiled|memcpy|cublas' |
    sed "s/^/  [$name] /" >>"$O/summary.txt"
}
L=TILEKIT_KOKKOS_CONV_LOAD F=TILEKIT_KOKKOS_CONV_FILTER BD=TILEKIT_KOKKOS_CONV_BOUNDS
# defaults (kokkos timed with CUDA events on its stream, as the cuda backend)
cmp t X=1 -- transpose --size 8192
cmp c5 X=1 -- conv2d --size 8192 --k 5
cmp c3 X=1 -- conv2d --size 8192 --k 3
cmp gemm X=1 -- gemm --size 4096
# memcheck: the conformance cases of the two kernels (odd shapes: element-wise paths) with the
# defaults, and whole-vector widths with partial tiles (vector paths) with the CUDA-only settings.
step memcheck-tests 20 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/tilekit_tests" \
  --gtest_filter='*Conformance.Transpose*/kokkos_optimized*:*Conformance.Conv2d*/kokkos_optimized*' --gtest_brief=1
cat >"$O/vec-runs.sh" <<EOS
for d in float double; do
  for s in "transpose --m 68 --n 44" "transpose --m 132 --n 260" "conv2d --m 68 --n 44 --filter 5" "conv2d --m 37 --n 132 --filter 7" "conv2d --m 131 --n 260 --filter 3"; do
    "$B/tilekit" run \$s --backend kokkos --variant optimized --dtype \$d --reps 1 || echo "FAILED: \$s \$d"
  done
done
EOS
step memcheck-vec 20 env $L=async $F=constant $BD=occ compute-sanitizer --tool memcheck --target-processes all \
  --error-exitcode 9 bash "$O/vec-runs.sh"
[ -f "$O/memcheck-tests.log" ] && echo "  memcheck-tests: $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY' "$O/memcheck-tests.log" | tr '\n' ' ')" >>"$O/summary.txt"
[ -f "$O/memcheck-vec.log" ] && echo "  memcheck-vec: $(grep -c ', verified' "$O/memcheck-vec.log") runs verified, $(grep -c FAILED "$O/memcheck-vec.log") failed; $(grep -E 'ERROR SUMMARY' "$O/memcheck-vec.log" | sort | uniq -c | tr '\n' ' ')" >>"$O/summary.txt"
# knobs
cmp c5-async-const $L=async $F=constant -- conv2d --size 8192 --k 5 --reps 10
cmp c3-async-const $L=async $F=constant -- conv2d --size 8192 --k 3 --reps 10
cmp t-hosttimer TILEKIT_KOKKOS_TIMER=host -- transpose --size 8192 --reps 10
cmp c5-regs-occ $BD=occ -- conv2d --size 8192 --k 5 --reps 10
cmp t-lanes TILEKIT_KOKKOS_TRANSPOSE=lanes -- transpose --size 8192 --reps 10
cmp c5-async-regs $L=async -- conv2d --size 8192 --k 5 --reps 10
cmp c5-regs-const $F=constant -- conv2d --size 8192 --k 5 --reps 10
cmp c5-strips TILEKIT_KOKKOS_CONV=strips -- conv2d --size 8192 --k 5 --reps 10
log "done"
