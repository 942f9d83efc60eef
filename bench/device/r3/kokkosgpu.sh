#!/usr/bin/env bash
# Round 3, kokkosgpu (issue #15, kokkos item): the kokkos optimized transpose and conv2d rewritten
# in the cuda backend's form (backends/kokkos/NOTES.md, "Round 3"). Run ON THE DEVICE machine from
# the repository root, inside 120 s:
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
budget=${KOKKOSGPU_BUDGET:-112}
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

# 2. memcheck: odd shapes (element-wise paths) and whole-vector widths with partial tiles (vector
# paths), both dtypes, R = 3 / 5 / 7, one sanitizer per setting over a shell of tilekit runs.
runs() {
  for d in float double; do
    for s in "transpose --m 67 --n 45" "transpose --m 68 --n 44" "transpose --m 1 --n 129" "transpose --m 132 --n 260" \
             "conv2d --m 67 --n 45 --filter 5" "conv2d --m 68 --n 44 --filter 5" "conv2d --m 131 --n 260 --filter 3" \
             "conv2d --m 37 --n 132 --filter 7"; do
      "$B/tilekit" run $s --backend kokkos --variant optimized --dtype $d --reps 1 || echo "FAILED: $s $d"
    done
  done
}
export -f runs
export B
step memcheck-default 25 compute-sanitizer --tool memcheck --target-processes all --error-exitcode 9 bash -c runs
step memcheck-cudaonly 25 env TILEKIT_KOKKOS_CONV_LOAD=async TILEKIT_KOKKOS_CONV_FILTER=constant \
  compute-sanitizer --tool memcheck --target-processes all --error-exitcode 9 bash -c runs
for f in memcheck-default memcheck-cudaonly; do
  [ -f "$O/$f.log" ] && echo "  $f: $(grep -c ', verified' "$O/$f.log") runs verified, $(grep -c FAILED "$O/$f.log") failed; $(grep -E 'ERROR SUMMARY' "$O/$f.log" | sort | uniq -c | tr '\n' ' ')" >>"$O/summary.txt"
done

# 3. timings, cuda and kokkos in one process per setting (the cuda rows repeat: same-run ratios)
cmp() {  # cmp NAME ENV... -- ARGS...
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  step "cmp-$name" 20 env "${envs[@]}" "$B/tilekit" compare "$@" --backends cuda,kokkos --size 8192 --json "$O/cmp-$name.json"
  [ -f "$O/cmp-$name.log" ] && grep -E '^(transpose|conv2d) ' "$O/cmp-$name.log" | grep -E 'optimized|tiled|memcpy' |
    sed "s/^/  [$name] /" >>"$O/summary.txt"
}
L=TILEKIT_KOKKOS_CONV_LOAD F=TILEKIT_KOKKOS_CONV_FILTER BD=TILEKIT_KOKKOS_CONV_BOUNDS
cmp t-block TILEKIT_KOKKOS_TRANSPOSE=block -- transpose
cmp c5-async-const $L=async $F=constant $BD=none -- conv2d --k 5
cmp c5-regs-regs $L=regs $F=regs $BD=none -- conv2d --k 5
cmp c3-async-const $L=async $F=constant $BD=none -- conv2d --k 3
cmp c3-regs-regs $L=regs $F=regs $BD=none -- conv2d --k 3
# gemm at 4096 (the third operation of the portability figure; kernels not changed here)
step cmp-gemm 20 "$B/tilekit" compare gemm --backends cuda,kokkos --size 4096 --json "$O/cmp-gemm.json"
[ -f "$O/cmp-gemm.log" ] && grep -E '^gemm ' "$O/cmp-gemm.log" | grep -E 'optimized|tiled|cublas' | sed "s/^/  [gemm] /" >>"$O/summary.txt"
cmp c5-async-const-occ $L=async $F=constant $BD=occ -- conv2d --k 5
cmp c5-regs-regs-occ $L=regs $F=regs $BD=occ -- conv2d --k 5
cmp t-lanes TILEKIT_KOKKOS_TRANSPOSE=lanes -- transpose
cmp c5-async-regs $L=async $F=regs $BD=none -- conv2d --k 5
cmp c5-regs-const $L=regs $F=constant $BD=none -- conv2d --k 5
cmp c3-async-const-occ $L=async $F=constant $BD=occ -- conv2d --k 3
cmp c3-regs-regs-occ $L=regs $F=regs $BD=occ -- conv2d --k 3
cmp c5-strips TILEKIT_KOKKOS_CONV=strips -- conv2d --k 5
log "done"
