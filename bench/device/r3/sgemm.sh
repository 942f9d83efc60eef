#!/usr/bin/env bash
# sgemm stage (issue 15, SGEMM): the sm_90 float gemm kernels (backends/gpu/gemm_sm90.cuh) against
# the default (dual3ef) and cuBLAS, one build sweeping TILEKIT_SGEMM.
# Usage: bash bench/device/r3/sgemm.sh BUILD_DIR OUT_DIR   (run from the repository root; ~85 s)
# Steps, each under its own timeout and skipped when the time is spent (no step fails the others):
#   1. conformance of the cuda float gemm optimized under each new TILEKIT_SGEMM value
#   2. `tilekit compare gemm --backends cuda --size 4096` per variant (cuBLAS in the same process),
#      dual3ef (the default) among them: only a variant that beats it in the same run may replace it
#   3. ncu: the stall reasons per issued instruction of the best new variant, dual3ef and cuBLAS
#      (one launch each, 4096 x 4096 x 1024: the same grid as 4096, a quarter of the reference),
#      and the per-SASS-instruction stall samples of the best new variant (source page, top rows)
#   4. compare at 8192 for the best new variant and dual3ef, while the time lasts
#      then the SASS of dual3ef, cub3ef, cub3ef2, dual3efz (gzipped) and the control codes of
#      their K loops (backends/cuda/scripts/sass_control.py), then ncu of cuBLAS and dual3ef
# SGEMM_VARIANTS overrides the sweep; SGEMM_BUDGET the time (seconds).
# Writes small text files into OUT_DIR, and summary.txt.
set -uo pipefail
B=${1:-build-device}
out=${2:-sgemm-out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
budget=${SGEMM_BUDGET:-85}
left() { echo $((start + budget - $(date +%s))); }
# step SECONDS CMD...: runs CMD under min(SECONDS, time left), or skips it when under 4 s remain.
step() {
  local s=$1 l
  shift
  l=$(left)
  if [ "$l" -lt 4 ]; then
    echo "SKIPPED (time spent): $*"
    return 124
  fi
  [ "$s" -gt "$l" ] && s=$l
  timeout "$s" "$@"
}
# The variants of round 4 (tile_choice.hpp) and the default they must beat.
new=${SGEMM_NEW:-"cub3ef big3ef cub3f cub3ef2 dual3f2 cub3f2 dual3efz cub3efz dual3ef8"}
variants=${SGEMM_VARIANTS:-"dual3ef $new"}
sum=$out/summary.txt
{
  echo "git commit: $(git rev-parse HEAD 2>/dev/null || cat .device/commit 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1
  TILEKIT_SGEMM= $B/tilekit info 2>&1 | grep -E "float gemm|compute capability"
} >"$sum"

# 1. conformance: the float gemm cases of the cuda backend, optimized (what TILEKIT_SGEMM changes)
filter='*Conformance.Gemm*/cuda_optimized_float:*Conformance.RepeatedRuns*/cuda_optimized_float'
passed=""
for v in $new; do
  TILEKIT_SGEMM=$v step 15 $B/tests/tilekit_tests --gtest_filter="$filter" >"$out/tests-$v.log" 2>&1
  rc=$?
  echo "tests $v: rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests-$v.log" | tr '\n' ' ')" | tee -a "$sum"
  grep -E "^\[  FAILED  \]" "$out/tests-$v.log" | head -5 | tee -a "$sum"
  [ $rc -eq 0 ] && passed="$passed $v"
done
echo "after tests: $(($(date +%s) - start)) s; timed: dual3ef$passed" >>"$sum"

# 2. 4096 per variant that passed, cuBLAS in the same process
row() { grep -E 'optimized|cublas' "$1" | awk '{print $3, $6, $9}' | tr '\n' ' '; }
for v in ${SGEMM_VARIANTS:-dual3ef$passed}; do
  TILEKIT_SGEMM=$v step 12 $B/tilekit compare gemm --backends cuda --size 4096 --reps 10 --json "$out/compare-4096-$v.json" \
    >"$out/compare-4096-$v.txt" 2>&1
  echo "compare 4096 $v: rc=$? $(row "$out/compare-4096-$v.txt")" | tee -a "$sum"
done
echo "after compare 4096: $(($(date +%s) - start)) s" >>"$sum"

# The best new variant at 4096 by its fraction of cuBLAS in its own process.
best=$(python3 - "$out" $passed <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
r = []
for v in names:
    try:
        d = json.load(open(f"{out}/compare-4096-{v}.json"))
        rows = d["rows"] if isinstance(d, dict) else d
        opt = [x["gflops"] for x in rows if x.get("variant") == "optimized" and not x.get("peer")]
        peer = [x["gflops"] for x in rows if x.get("peer")]
        if opt and peer: r.append((opt[0] / peer[0], v))
    except Exception:
        pass
print(max(r)[1] if r else "")
PY
)
echo "best new at 4096: $best" | tee -a "$sum"

# 3. ncu: where the issue slots go. Stall reasons per issued instruction (the WarpStateStats
#    figures: "selected" is the issue itself, "not_selected" another warp issuing), scheduler
#    figures, instruction counts; cuBLAS's kernel under the same metrics.
metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg,smsp__inst_executed_op_shared_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'
shape="--m 4096 --n 4096 --k 1024"
stalls() {  # stalls NAME: one line of the nonzero stall reasons, largest first
  awk '/issue_stalled_.*per_issue_active/ { n = $1; sub(/smsp__average_warps_issue_stalled_/, "", n); sub(/_per_issue_active.ratio/, "", n); v = $NF; if (v + 0 >= 0.01) print v, n }' "$out/ncu-$1.txt" |
    sort -gr | awk '{ printf "%s %s; ", $2, $1 }'
  grep -E 'issue_active.avg.pct|inst_executed.sum ' "$out/ncu-$1.txt" | awk '{ printf "%s %s; ", $1, $NF }'
}
# The best new variant: one profiled launch saved as a report (binary: kept out of OUT_DIR), read
# back as the details page (the metrics above) and as the source page (stall samples per SASS
# instruction: the rows with the most, and the samples summed per opcode).
if [ -n "$best" ]; then
  rep=$(mktemp -d)/src-$best
  TILEKIT_SGEMM=$best step 20 ncu --kernel-name regex:'gemm_sm90_kernel' --launch-skip 1 --launch-count 1 --metrics "$metrics" \
    --section SourceCounters --section WarpStateStats --section SchedulerStats -f -o "$rep" \
    $B/tilekit run gemm --backend cuda --variant optimized $shape --reps 2 >"$out/ncu-run-$best.log" 2>&1
  echo "ncu $best (report): rc=$?" | tee -a "$sum"
  step 10 ncu --import "$rep.ncu-rep" >"$out/ncu-$best.txt" 2>&1
  echo "ncu $best: rc=$? $(stalls $best)" | tee -a "$sum"
  step 10 ncu --import "$rep.ncu-rep" --page source --csv --print-source sass >"$out/src-$best.csv" 2>&1
  echo "source page: rc=$? $(wc -l <"$out/src-$best.csv") lines" | tee -a "$sum"
  python3 - "$out/src-$best.csv" >"$out/src-$best-top.txt" 2>&1 <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if any("Source" == c or "Address" == c for c in r)), None)
if head is None:
    print("no table header found"); print("\n".join(",".join(r) for r in rows[:20])); sys.exit()
h = rows[head]
def col(*names):
    for n in names:
        for i, c in enumerate(h):
            if c.strip().lower() == n.lower(): return i
    for n in names:
        for i, c in enumerate(h):
            if n.lower() in c.lower(): return i
src = col("Source")
samp = col("Warp Stall Sampling (All Samples)", "Warp Stall Sampling")
print("columns:", " | ".join(h))
data = [r for r in rows[head + 1:] if len(r) == len(h)]
def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0
total = sum(num(r[samp]) for r in data) or 1
per_op = collections.Counter()
for r in data:
    op = r[src].split()[0] if r[src].split() else "?"
    if op.startswith("@"): op = r[src].split()[1] if len(r[src].split()) > 1 else op
    per_op[op.split(".")[0]] += num(r[samp])
print(f"samples: {total:.0f}; by opcode:", "; ".join(f"{k} {v / total:.1%}" for k, v in per_op.most_common(12)))
print("top instructions (samples, share, then the row):")
for r in sorted(data, key=lambda r: -num(r[samp]))[:40]:
    print(f"{num(r[samp]):8.0f} {num(r[samp]) / total:6.2%}  " + " | ".join(c.strip() for c in r if c.strip())[:300])
PY
  head -3 "$out/src-$best-top.txt" | cut -c1-400 | tee -a "$sum"
  gzip -f "$out/src-$best.csv" 2>/dev/null
  rm -f "$rep.ncu-rep"
fi
# The SASS of dual3ef, cub3ef, cub3ef2 and dual3efz (gzipped; for reading the schedule offline:
#    where the LDS sit among the FFMAs, reuse flags, the barrier)
obj=$(find "$B" -path '*tilekit_backend_cuda.dir*' -name 'gemm.cu.o' | head -1)
if [ -n "$obj" ]; then
  step 15 cuobjdump -sass "$obj" 2>/dev/null | awk '
    /Function :/ { keep = $3 ~ /gemm_sm90_kernelILi128ELi128ELi16ELi16ELi8ELi3ELi2ELb1ELb1ELi16ELi1ELb[01]E|gemm_sm90_kernelILi256ELi128ELi8ELi16ELi8ELi3ELi1ELb1ELb1ELi8ELi[12]ELb0E/ }
    keep { print }' | gzip >"$out/sm90-sass.txt.gz"
  echo "sass: rc=$? $(zcat "$out/sm90-sass.txt.gz" | grep -c 'Function :') kernels" | tee -a "$sum"
  step 10 python3 backends/cuda/scripts/sass_control.py "$out/sm90-sass.txt.gz" >"$out/sass-control.txt" 2>&1
  grep -E "^_Z|loop:|FFMA stall" "$out/sass-control.txt" | cut -c1-200 | tee -a "$sum"
fi

for v in cublas dual3ef; do
  if [ $v = cublas ]; then what="--peer" sv=""; else what="--variant optimized" sv=$v; fi
  TILEKIT_SGEMM=$sv step 15 ncu --kernel-name regex:'gemm_sm90_kernel|sgemm|xmma' --launch-skip 1 --launch-count 1 --metrics "$metrics" \
    $B/tilekit run gemm --backend cuda $what $shape --reps 2 >"$out/ncu-$v.txt" 2>&1
  echo "ncu $v: rc=$? $(grep -oE 'sm80_xmma[a-z0-9_]*' "$out/ncu-$v.txt" | head -1) $(stalls $v)" | tee -a "$sum"
done
echo "after ncu: $(($(date +%s) - start)) s" >>"$sum"

# 4. 8192: the best new variant and the default, while the time lasts
for v in $best dual3ef; do
  TILEKIT_SGEMM=$v step 20 $B/tilekit compare gemm --backends cuda --size 8192 --reps 5 --json "$out/compare-8192-$v.json" \
    >"$out/compare-8192-$v.txt" 2>&1
  echo "compare 8192 $v: rc=$? $(row "$out/compare-8192-$v.txt")" | tee -a "$sum"
done

echo "total: $(($(date +%s) - start)) s" | tee -a "$sum"
