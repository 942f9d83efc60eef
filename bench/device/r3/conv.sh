#!/usr/bin/env bash
# Round 4, conv (issue #15: the cuda backend's optimized conv2d at 8192^2 float >= 90% of the
# memcpy-equivalent bytes at R = 3 and 5). Run on the device machine from the repository root:
#   bash bench/device/r3/conv.sh BUILD_DIR OUT_DIR        (CONV_BUDGET_S, default 85 s)
# Sweeps TILEKIT_CONV_OPT (backends/gpu/tile_choice.hpp) in one build: conformance of cuda
# conv2d under each option, compute-sanitizer memcheck + racecheck of the new kernels on odd
# shapes, ncu on the default (aligned) at R = 5 (sections, then the memory-throughput
# breakdown), `tilekit compare conv2d` at R = 5 per option and R = 3 for the best (memcpy peer
# in the same process). Every step has its own timeout; nothing stops the script (no set -e);
# steps that would start past the budget are skipped and say so in summary.txt.
set -uo pipefail
B=${1:?BUILD_DIR}
O=${2:?OUT_DIR}
mkdir -p "$O"
export PATH=/usr/local/cuda/bin:$PATH
# The dependencies the device call carries (as bench/device/r3/stage.sh sets them).
export LD_LIBRARY_PATH=$PWD/.device/deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$B/tilekit
t0=$(date +%s)
budget=${CONV_BUDGET_S:-85}
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$O/summary.txt"; }
left() { echo $((budget - ($(date +%s) - t0))); }
step() {  # step NAME SECONDS COMMAND...: output in NAME.txt, status in summary.txt
  local name=$1 secs=$2 s rc
  shift 2
  if [ "$(left)" -lt 3 ]; then
    log "$name: skipped (time)"
    return
  fi
  [ "$secs" -gt "$(left)" ] && secs=$(left)
  s=$(date +%s)
  timeout "$secs" "$@" >"$O/$name.txt" 2>&1
  rc=$?
  log "$name: rc=$rc in $(($(date +%s) - s)) s"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$O/gpu.txt" 2>&1
git log --oneline -1 >"$O/commit.txt" 2>&1

# 1. Conformance of cuda conv2d (optimized; the tiled rows as a control) under each option.
tests="*Conformance.Conv2d*/cuda_*:*Conformance.RepeatedRuns*/cuda_optimized*:TileChoiceDevices.ConvOptimized*"
for o in ${CONV_TEST_OPTS:-aligned aligned-lines aligned-split-pf aligned-tma aligned64-lines-split aligned128-tma}; do
  step "tests-$o" 15 env TILEKIT_CONV_OPT=$o "$B/tests/tilekit_tests" --gtest_filter="$tests" --gtest_brief=1
  grep -E "PASSED|FAILED" "$O/tests-$o.txt" | head -3 >>"$O/summary.txt"
done

# 2. compute-sanitizer on what is new: the split kernel (two cp.async groups, a named barrier)
#    with the line-ordered window copy and the L2 prefetch; the TMA kernel (bulk tensor copy,
#    mbarrier); partial tiles, float and double.
san() {  # san TOOL OPT DTYPE M N K
  step "san-$1-$2-$3-$4x$5-r$6" 20 env TILEKIT_CONV_OPT=$2 compute-sanitizer --tool "$1" --error-exitcode 9 \
    "$T" run conv2d --backend cuda --variant optimized --dtype "$3" --m "$4" --n "$5" --k "$6" --reps 1
}
for tool in memcheck racecheck; do
  san $tool aligned-lines-split-pf float 300 260 5
  san $tool aligned-tma-pf double 517 132 3
done
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$O"/san-*.txt >>"$O/summary.txt" 2>/dev/null

# ncu on the default (aligned) at R = 5: which unit limits, how busy (the stage output keeps
# the text; small): sections plus the breakdowns of the memory and SM throughput (every
# sub-unit's % of peak).
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
ncu_run() {  # ncu_run NAME OPT K
  step "ncu-$1" 30 env TILEKIT_CONV_OPT=$2 "$NCU" --clock-control none -k regex:conv2d_optimized -c 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy \
    --section LaunchStats \
    --metrics breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed \
    "$T" run conv2d --backend cuda --variant optimized --size 8192 --k $3 --reps 1
}
ncu_run k5-aligned aligned 5

# 3. compare per option (memcpy peer in each run); JSON beside the table. R = 5 (all options),
#    then R = 3 for aligned and the best, then ncu on the best.
ratios() {
  python3 - "$O" >"$O/ratios.txt" 2>&1 <<'PY'
import glob, json, os, sys
out = sys.argv[1]
best = {}
for f in sorted(glob.glob(os.path.join(out, "compare-k*-*.json"))):
    name = os.path.basename(f)[len("compare-"):-len(".json")]
    k, opt = name.split("-", 1)
    try:
        rows = json.load(open(f))["rows"]
    except Exception as e:
        print(name, "unreadable:", e); continue
    opt_row = next((r for r in rows if r.get("variant") == "optimized" and not r.get("peer")), None)
    peer = next((r for r in rows if r.get("peer")), None)
    tiled = next((r for r in rows if r.get("variant") == "tiled" and not r.get("peer")), None)
    if not opt_row or not peer:
        print(name, "missing rows"); continue
    ratio = opt_row["gbps"] / peer["gbps"]
    print(f"{k} {opt:16s} optimized {opt_row['gbps']:7.1f} GB/s  memcpy {peer['gbps']:7.1f}  {100*ratio:5.1f}%"
          f"  tiled {100*tiled['gbps']/peer['gbps'] if tiled else 0:5.1f}%  verified={opt_row.get('verified')}"
          f"  launch: {opt_row.get('launch')}")
    if k == "k5" and opt != "tile" and opt_row.get("verified") and ratio > best.get("r", 0):
        best = {"r": ratio, "opt": opt}
open(os.path.join(out, "best.txt"), "w").write(best.get("opt", "aligned") + "\n")
PY
}
cmpk() {  # cmpk K OPT
  step "compare-k$1-$2" 20 env TILEKIT_CONV_OPT=$2 "$T" compare conv2d --backends cuda --size 8192 --k $1 \
    --json "$O/compare-k$1-$2.json"
}
for o in ${CONV_OPTS5:-aligned aligned-lines aligned-pf aligned-tma aligned64 aligned-split}; do cmpk 5 $o; done
for o in ${CONV_OPTS5B:-aligned-lines-pf aligned-tma-pf aligned64-lines aligned-lines-split aligned128}; do cmpk 5 $o; done
ratios
best=$(cat "$O/best.txt" 2>/dev/null || echo aligned)
for o in $(echo aligned "$best" | tr ' ' '\n' | awk '!seen[$0]++'); do cmpk 3 $o; done
[ "$best" != aligned ] && ncu_run "k5-$best" "$best" 5
grep -hE "Duration|Throughput|Busy|Pipe|Issued Ipc|No Eligible|Registers Per|Achieved Occupancy|Stall|sum|pct" \
  "$O"/ncu-*.txt 2>/dev/null | head -80 >"$O/ncu-digest.txt"

ratios
cat "$O/ratios.txt" >>"$O/summary.txt"
log "done"
