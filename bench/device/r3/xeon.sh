#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (round 3, helper "xeon"): the openmp
# backend's optimized SGEMM on the 16-core Xeon host, against OpenBLAS in the same process and
# numpy's bundled OpenBLAS (when the machine's python3 has numpy), plus the optimized transpose
# against memcpy. About 80 s on an idle host; every step has its own timeout and the whole a
# budget (XEON_BUDGET seconds, default 140), most important steps first; nothing here stops the
# others. RUN IT WITH THE HOST OTHERWISE IDLE (no build or CPU-heavy stage beside it): its
# figures are per-core rates and scaling; summary.txt logs the host's busy % before each step.
#
#   bash bench/device/r3/xeon.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR must be configured with -DTILEKIT_ENABLE_OPENMP=ON (bench/device/build.sh with it)
# and hold tilekit, tests/tilekit_tests and tilekit_openmp_gemm_bench. Writes into OUT_DIR/xeon:
# summary.txt (what ran, rc, seconds), conformance.txt, info.txt, fma.txt (the FMA ceiling at 1
# and 16 threads: the all-core clock bounds the parallel efficiency), scaling.jsonl (one line
# per size x threads x variant), scaling.txt (the table: GFLOP/s, efficiency, % of both peers),
# variants.jsonl (16-thread alternatives: grids, no stealing, block sizes, the round-1 driver,
# and `prof`: where each thread's time went), transpose.txt.
set -uo pipefail
build=$(cd "${1:?BUILD_DIR}" && pwd)
out=${2:?OUT_DIR}/xeon
mkdir -p "$out"
root=$PWD
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMP_PLACES=${OMP_PLACES:-cores} OMP_PROC_BIND=${OMP_PROC_BIND:-close}
bench=$build/tilekit_openmp_gemm_bench
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$out/summary.txt"; }
budget=${XEON_BUDGET:-140}  # seconds for all steps together (the lead's limit is 150)
step() {  # step NAME SECONDS COMMAND...: output appended to NAME, rc and time in the summary
  local name=$1 secs=$2 s rc left
  shift 2
  s=$(date +%s)
  left=$((budget - (s - t0)))
  if ((left < 3)); then log "$name: skipped (budget spent): $*"; return; fi
  ((secs > left)) && secs=$left
  local busy0
  busy0=$(busy)
  timeout "$secs" "$@" >>"$out/$name" 2>&1
  rc=$?
  log "$name: rc=$rc in $(($(date +%s) - s)) s (host ${busy0}% busy just before): $*"
}
# Percent of the host's CPU time busy over 0.3 s: the timings below are only worth their name
# when nothing else runs (call 1 overlapped another pipeline's -j16 build: 1-thread FMA peak
# 154 GFLOP/s instead of ~215, 16-thread copies at 12 GB/s).
busy() {
  local a b t=0 i
  read -ra a </proc/stat
  sleep 0.3
  read -ra b </proc/stat
  for i in 1 2 3 4 5 6 7 8; do t=$((t + b[i] - a[i])); done
  echo $((t > 0 ? 100 - 100 * (b[4] - a[4]) / t : 0))
}
: >"$out/summary.txt"
log "commit $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown); OMP_PLACES=$OMP_PLACES OMP_PROC_BIND=$OMP_PROC_BIND"

# 1. What the machine is, and correctness of what changed (every openmp case: odd shapes,
#    primes, ld > cols, alpha/beta, beta = 0 over NaN; the default driver, then the round-1 one).
{ lscpu; nproc; cat /proc/loadavg; } >"$out/info.txt" 2>&1
step conformance.txt 30 "$build/tests/tilekit_tests" --gtest_filter='*openmp*' --gtest_brief=1


# 2. The scaling sweep: our default driver, the round-1 driver and OpenBLAS alternating in one
#    process per (N, threads), then numpy's a @ b with the same thread count.
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
if [[ -n $py ]]; then log "numpy $("$py" -c 'import numpy; print(numpy.__version__)') from $py"; else log "numpy: none (no numpy column)"; fi
cat >"$out/numpy_time.py" <<'PY'
import json, sys, time
import numpy as np
n, t, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])  # the caller sets the thread variables
rng = np.random.default_rng(42)
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
c = a @ b
ts = []
for _ in range(reps):
    t0 = time.perf_counter(); c = a @ b; ts.append(time.perf_counter() - t0)
ts.sort()
med = ts[len(ts) // 2] if len(ts) % 2 else 0.5 * (ts[len(ts) // 2 - 1] + ts[len(ts) // 2])
print(json.dumps({"n": n, "threads": t, "variant": "numpy", "numpy": np.__version__, "gflops": round(2.0 * n ** 3 / med * 1e-9, 1),
                  "gflops_best": round(2.0 * n ** 3 / ts[0] * 1e-9, 1), "seconds": ts}))
PY
# OpenBLAS and numpy run in their own processes without OMP_PROC_BIND/OMP_PLACES: libgomp binds
# the initial thread to the first place, and threads a library starts after that (OpenBLAS's
# pool, re-created when tilekit picks its core type; tilekit roofline's std::threads) inherit
# that one core. Our drivers' OpenMP threads are bound one per core by libgomp itself.
sweep() {  # sweep N THREADS REPS: our two drivers alternating, then OpenBLAS, then numpy
  OMP_NUM_THREADS=$2 step scaling.jsonl 30 "$bench" "$1" "$3" new grid
  OMP_NUM_THREADS=$2 step scaling.jsonl 30 env -u OMP_PROC_BIND -u OMP_PLACES "$bench" "$1" "$3" peer
  [[ -n $py ]] && OPENBLAS_NUM_THREADS=$2 OMP_NUM_THREADS=$2 MKL_NUM_THREADS=$2 \
    step scaling.jsonl 20 env -u OMP_PROC_BIND -u OMP_PLACES "$py" "$out/numpy_time.py" "$1" "$2" "$3"
}
# Most important first (the budget may run out): 16 threads, 1 thread, then the rest.
sizes=${XEON_SIZES:-2048 4096}  # (the overrides are for trying the script on a small machine)
for t in ${XEON_THREADS:-16 1}; do
  for n in $sizes; do
    reps=7
    [[ $t == 1 ]] && reps=3
    [[ $n == 4096 && $t == 1 ]] && reps=2
    sweep "$n" "$t" "$reps"
  done
done
# 3. 16-thread alternatives (in one process per size, alternating): no stealing, other grids,
#    other block sizes (ROWS = rows per unit, COLS = the L2 chunk of B, DEPTH = kc).
vt=${XEON_VTHREADS:-16} v1=${XEON_V1:-2048} v2=${XEON_V2:-4096}
OMP_NUM_THREADS=$vt step variants.jsonl 25 "$bench" "$v1" 7 new prof apf staticpack scalarpack nosteal new@4x4 new@2x8 new@1x16 new@8x2 \
  new:256,672,384 new:518,448,256 new:256,1024,384 new:256,672,512
OMP_NUM_THREADS=$vt step variants.jsonl 25 "$bench" "$v2" 5 new prof apf staticpack nosteal new@4x4 new@1x16 new@2x8 new:518,448,256

# 4. The FMA ceiling per thread at 1 and 16 threads (tilekit roofline's Highway FMA chains).
for t in 1 16; do
  echo "== OMP_NUM_THREADS=$t" >>"$out/fma.txt"
  OMP_NUM_THREADS=$t step fma.txt 20 env -u OMP_PROC_BIND -u OMP_PLACES "$build/tilekit" roofline --backends openmp
done

# 5. The other thread counts of the sweep.
for t in ${XEON_MORE_THREADS:-2 4 8}; do
  for n in $sizes; do
    reps=5
    [[ $n == 4096 && $t == 2 ]] && reps=3
    sweep "$n" "$t" "$reps"
  done
done

# 6. The optimized transpose at 8192^2 against memcpy (16 threads, then 1-thread memcpy).
step transpose.txt 20 "$build/tilekit" run transpose --backend openmp --variant optimized --size ${XEON_TSIZE:-8192} --json
step transpose.txt 10 "$build/tilekit" run transpose --backend openmp --peer --size ${XEON_TSIZE:-8192} --json
OMP_NUM_THREADS=1 step transpose.txt 10 "$build/tilekit" run transpose --backend openmp --peer --size ${XEON_TSIZE:-8192} --json

# The table: per N and threads, GFLOP/s of each, efficiency of ours against 1 thread.
if command -v python3 >/dev/null; then
  python3 - "$out/scaling.jsonl" >"$out/scaling.txt" 2>&1 <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    rows[(r["n"], r["threads"], r["variant"])] = r
for key, what in (("gflops", "median"), ("gflops_best", "best run")):
  for n in sorted({k[0] for k in rows}):
    print(f"\nSGEMM N = {n} (float32), {what} of each; efficiency = (GFLOP/s(t) / t) / GFLOP/s(1)")
    ours = ("new", "grid")
    print(f"{'threads':>7}" + "".join(f" {v:>8} {'eff':>5}" for v in ours) + f" {'OpenBLAS':>9} {'numpy':>8} {'new/numpy':>9} {'new/OpenBLAS':>12}  check")
    base = {v: rows.get((n, 1, v), {}).get(key, 0) for v in ours}
    for t in sorted({k[1] for k in rows if k[0] == n}):
        g = {v: rows.get((n, t, v), {}).get(key, 0) for v in ours + ("peer", "numpy")}
        eff = {v: (g[v] / t / base[v] if base[v] else 0) for v in ours}
        pct = lambda a, b: f"{100 * a / b:.0f}%" if b else "-"
        chk = "/".join(rows.get((n, t, v), {}).get("check", "-") for v in ours + ("peer",))
        print(f"{t:>7}" + "".join(f" {g[v]:>8.1f} {100 * eff[v]:>4.0f}%" for v in ours) + f" {g['peer']:>9.1f} "
              f"{g['numpy']:>8.1f} {pct(g['new'], g['numpy']):>9} {pct(g['new'], g['peer']):>12}  {chk}")
PY
  cat "$out/scaling.txt"
fi
log "done"
# The transpose rows as one line: GB/s of each and the kernel's fraction of the faster memcpy.
python3 - "$out/transpose.txt" >>"$out/transpose.txt" 2>&1 <<'PY' || true
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
g = [r.get("gbps", 0) for r in rows]
if len(g) == 3 and max(g[1:]) > 0:
    print(f"transpose 8192^2: optimized {g[0]:.1f} GB/s, memcpy all threads {g[1]:.1f}, 1 thread {g[2]:.1f}: {100 * g[0] / max(g[1:]):.0f}% of the faster copy")
PY
