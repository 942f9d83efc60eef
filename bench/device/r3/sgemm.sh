#!/usr/bin/env bash
# Round 3, sgemm stage (issue 15, SGEMM): the sm_90 float gemm kernels (backends/gpu/gemm_sm90.cuh)
# against gemm.cuh's kernel ("sm80") and cuBLAS, one build sweeping TILEKIT_SGEMM.
# Usage: bash bench/device/r3/sgemm.sh BUILD_DIR OUT_DIR   (run from the repository root; ~150 s)
# Steps, each under its own timeout and skipped when the time is spent (no step fails the others):
#   1. conformance of the cuda float gemm optimized under each TILEKIT_SGEMM value of the sweep
#   2. `tilekit compare gemm --backends cuda --size 4096` per variant (cuBLAS in the same run)
#   3. compare at 8192 for the two best variants at 4096
#   4. ncu of the best variant and of cuBLAS's kernel (its name gives its tile and stages)
#   5. compute-sanitizer memcheck and racecheck of the new kernels on odd shapes
#   6. cuobjdump -res-usage and the SASS instruction mix of the gemm kernels
# SGEMM_VARIANTS overrides the sweep (device call 1 swept all twelve of its build:
# sm80 warp2 warp3 warp4 big3 big4 dual3 dual4 deep3 ddual3 warp3e dual3e).
# Writes small text files into OUT_DIR, and summary.txt.
set -uo pipefail
B=${1:-build-device}
out=${2:-sgemm-out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
budget=${SGEMM_BUDGET:-145}
left() { echo $((start + budget - $(date +%s))); }
# step SECONDS CMD...: runs CMD under min(SECONDS, time left), or skips it when under 5 s remain.
step() {
  local s=$1 l
  shift
  l=$(left)
  if [ "$l" -lt 5 ]; then
    echo "SKIPPED (time spent): $*"
    return 124
  fi
  [ "$s" -gt "$l" ] && s=$l
  timeout "$s" "$@"
}
variants=${SGEMM_VARIANTS:-"sm80 dual3e dual3f dual3ef dual3fu4 dual3efu4 dual3fu8 dual3fu2 warp3f big3f"}
sum=$out/summary.txt
{
  echo "git commit: $(git rev-parse HEAD 2>/dev/null || cat .device/commit 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1
  TILEKIT_SGEMM= $B/tilekit info 2>&1 | grep -E "float gemm|compute capability"
} >"$sum"

# 1. conformance (fast: the float gemm cases of the cuda backend)
# (the optimized variant only: the one TILEKIT_SGEMM changes)
filter='*Conformance.Gemm*/cuda_optimized_float:*Conformance.RepeatedRuns*/cuda_optimized_float'
for v in $variants; do
  TILEKIT_SGEMM=$v step 25 $B/tests/tilekit_tests --gtest_filter="$filter" >"$out/tests-$v.log" 2>&1
  echo "tests $v: rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests-$v.log" | tr '\n' ' ')" | tee -a "$sum"
  grep -E "^\[  FAILED  \]" "$out/tests-$v.log" | head -5 | tee -a "$sum"
done
echo "after tests: $(($(date +%s) - start)) s" >>"$sum"

# 2. 4096 per variant, cuBLAS in the same process; the SM clock and power sampled meanwhile (a
#    kernel at the FFMA peak may run into the power limit: is the clock the same for all?)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 >"$out/clocks-4096.csv" 2>&1 &
smi=$!
for v in $variants; do
  echo "$(date +%Y/%m/%d\ %T.%N | cut -c1-23) start $v" >>"$out/clocks-marks.txt"
  TILEKIT_SGEMM=$v step 20 $B/tilekit compare gemm --backends cuda --size 4096 --reps 10 --json "$out/compare-4096-$v.json" \
    >"$out/compare-4096-$v.txt" 2>&1
  echo "compare 4096 $v: rc=$? $(grep -E 'optimized|cublas' "$out/compare-4096-$v.txt" | awk '{print $3, $6, $9}' | tr '\n' ' ')" |
    tee -a "$sum"
done
kill $smi 2>/dev/null
echo "after compare 4096: $(($(date +%s) - start)) s" >>"$sum"

# 3. 8192 for the two best at 4096
best=$(python3 - "$out" $variants <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
r = []
for v in names:
    try:
        d = json.load(open(f"{out}/compare-4096-{v}.json"))
        rows = d["rows"] if isinstance(d, dict) else d
        r += [(x["gflops"], v) for x in rows if x.get("variant") == "optimized"]
    except Exception:
        pass
print(" ".join(v for _, v in sorted(r, reverse=True)[:2]))
PY
)
echo "best two at 4096: $best" | tee -a "$sum"
for v in $best; do
  TILEKIT_SGEMM=$v step 40 $B/tilekit compare gemm --backends cuda --size 8192 --reps 5 --json "$out/compare-8192-$v.json" \
    >"$out/compare-8192-$v.txt" 2>&1
  echo "compare 8192 $v: rc=$? $(grep -E 'optimized|cublas' "$out/compare-8192-$v.txt" | awk '{print $3, $6, $9}' | tr '\n' ' ')" |
    tee -a "$sum"
done
# 4. ncu of the best variant and of cuBLAS (one launch each at 4096): issue slots, stall reasons,
#    shared wavefronts per shared load; cuBLAS's kernel name and launch say its tile and stages
top=${best%% *}
metrics=smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_ldgsts.sum
sections="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis"
if [ -n "$top" ]; then
  TILEKIT_SGEMM=$top step 30 ncu --kernel-name regex:'gemm_(sm90|optimized)_kernel' --launch-skip 1 --launch-count 1 \
    $sections --metrics $metrics $B/tilekit run gemm --backend cuda --variant optimized --size 4096 --reps 2 \
    >"$out/ncu-$top.txt" 2>&1
  echo "ncu $top: rc=$? $(grep -E 'Issue Slots Busy|No Eligible|Executed Ipc Active|inst_executed.sum|ffma' "$out/ncu-$top.txt" | tr -s ' ' | tr '\n' ';')" | tee -a "$sum"
fi
step 30 ncu --kernel-name regex:'gemm|sgemm|xmma|Kernel' --launch-skip 1 --launch-count 1 $sections --metrics $metrics \
  $B/tilekit run gemm --backend cuda --peer --size 4096 --reps 2 >"$out/ncu-cublas.txt" 2>&1
echo "ncu cublas: rc=$? $(grep -E '^  [a-zA-Z_0-9]+.*\(|Issue Slots Busy|No Eligible|Executed Ipc Active|Registers Per|Block Size|Grid Size|inst_executed.sum|ffma' "$out/ncu-cublas.txt" | tr -s ' ' | tr '\n' ';')" | tee -a "$sum"

# 5. compute-sanitizer on the new kernels: memcheck (out-of-range copies, partial tiles) and
#    racecheck (the stage ring); every run verifies its result too. n is a multiple of 4, so the
#    fast copies run in the interior blocks, the general ones at the edges and in the last,
#    partial K step (device call 1 ran warp3, dual3, big3 on n = 999 and 260: all clean)
for vts in "dual3efu4:memcheck:--m 1000 --n 1000 --k 997" "dual3efu4:racecheck:--m 259 --n 388 --k 75" \
  "dual3ef:memcheck:--m 1000 --n 1000 --k 997" "dual3ef:racecheck:--m 259 --n 388 --k 75" \
  "dual3fu8:memcheck:--m 1000 --n 1000 --k 997" "dual3fu4:racecheck:--m 259 --n 388 --k 75" \
  "dual3f:memcheck:--m 1000 --n 1000 --k 997" "dual3f:racecheck:--m 259 --n 388 --k 75" \
  "big3f:memcheck:--m 1000 --n 1000 --k 997" "big3f:racecheck:--m 300 --n 260 --k 37" \
  "warp3f:memcheck:--m 1000 --n 1000 --k 997" "warp3f:racecheck:--m 259 --n 388 --k 75"; do
  v=${vts%%:*} rest=${vts#*:}
  tool=${rest%%:*} s=${rest#*:}
  log="$out/san-$v-$tool-$(echo $s | tr -d ' -').log"
  TILEKIT_SGEMM=$v step 30 compute-sanitizer --tool $tool --error-exitcode 9 $B/tilekit run gemm --backend cuda \
    --variant optimized $s --reps 1 >"$log" 2>&1
  echo "sanitize $tool $v $s: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|verified|VERIFIED' "$log" | tr '\n' ' ')" |
    tee -a "$sum"
done
echo "after sanitize: $(($(date +%s) - start)) s" >>"$sum"

# 6. registers, spills, shared memory of the compiled kernels
obj=$(find "$B" -path '*tilekit_backend_cuda.dir*' -name 'gemm.cu.o' | head -1)
lib=$(find "$B" -name 'tilekit-cuda*.so' -o -name 'libtilekit*cuda*.so' 2>/dev/null | head -1)
step 15 cuobjdump -res-usage "${obj:-$lib}" 2>&1 | grep -A1 -E "gemm_(sm90|optimized)_kernel" | c++filt >"$out/res-usage.txt"
grep -c "REG" "$out/res-usage.txt" | sed 's/^/res-usage entries: /' >>"$sum"
# SASS instruction mix per gemm kernel (FFMA share of the issue slots), and the SASS of the new ones
step 20 cuobjdump -sass "${obj:-$lib}" 2>/dev/null | awk '
  /Function :/ { f = $3; keep = f ~ /gemm_(sm90|optimized)_kernel/ }
  keep && /^ +\/\*[0-9a-f]+\*\/ / { op = $2; if (op ~ /^@/) op = $3; sub(/\..*/, "", op); sub(/;$/, "", op); n[f" "op]++; tot[f]++ }
  keep && f ~ /gemm_sm90/ { print > "'"$out"'/sm90-sass.txt" }
  END { for (k in n) { split(k, a, " "); if (a[2] ~ /^(FFMA|LDS|LDGSTS|BAR|LDG|STG|STS|IMAD|IADD3|LEA|ISETP|BRA|DEPBAR)$/) print tot[a[1]], k, n[k] } }' |
  sort -k2,2 -k4,4nr | c++filt >"$out/sass-mix.txt"
gzip -f "$out/sm90-sass.txt" 2>/dev/null

echo "total: $(($(date +%s) - start)) s" | tee -a "$sum"
