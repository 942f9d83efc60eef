#!/usr/bin/env bash
# Run ON THE GPU machine (H100/H200), after `bash bench/device/build.sh`: checks and times the
# 3xTF32 float gemm on sm_90's wgmma (backends/common/gpu/gemm_tf32x3_sm90.cuh, the tuning
# cuda.tf32x3.kernel=wgmma under gemm.precision=tf32x3) against the mma.sync kernel and cuBLAS
# SGEMM, in about three minutes:
#   1. the pipeline step by step (1, 3, 4 steps; a hang or failure stops the script after a probe),
#      then the 300^3 plan (what launched, on which device);
#   2. correctness: `tilekit run` over odd shapes (primes, partial tiles, k = 0, alpha/beta, a
#      long k), the conformance suite's gemm cases (ld pads, empty, primes, ...) and 200 campaign
#      cases with the tuning set; every run verified against the double reference;
#   3. compute-sanitizer memcheck (and synccheck) on small shapes;
#   4. the SASS of the wgmma object (HGMMA count);
#   5. timing: `tilekit compare gemm` at 8192^3 (and 4096^3) for wgmma and for mma, each with
#      cuBLAS SGEMM in the same process: GFLOP/s, the ratio to cuBLAS, the relative errors;
#   6. cuda.tf32x3.kernel=auto must plan wgmma here; small and skinny shapes timed under auto and mma.
# Prints `RESULT {json}` lines (the compare rows, the tuning in "tunings"; also appended as plain
# JSON lines to $BENCH_ROWS when bench/run.py sets it) and a summary; exits non-zero when any
# correctness check fails.
# Usage: bash bench/device/tf32x3_wgmma.sh [BUILD_DIR]   (default build-device)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$root/build-device}" && pwd)
T=$B/tilekit
out=${BENCH_OUT:-/tmp/tf32x3_wgmma}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
lib=$root/.device/deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
fail=0
log() { echo "[$(($(date +%s) - t0)) s] $*"; }
bad() { echo "FAIL: $*"; fail=1; }
W="--tune gemm.precision=tf32x3 --tune cuda.tf32x3.kernel=wgmma"
# On a failure: one block on inputs whose wrong values name the element read instead
# (bench/device/tf32x3_wgmma_probe.cu), a hang reported after 5 s.
probe() {
  log "probe (one block, patterned inputs):"
  nvcc -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -I "$root/backends" -I "$root/src" -I "$root/include" \
    -I "$B/include" "$root/bench/device/tf32x3_wgmma_probe.cu" -o "$out/probe" 2>&1 | tail -20 &&
    timeout -k 5 60 "$out/probe" 2>&1 | head -60
}

# ---- 1. the device and the plan
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/device: /'
# First the pipeline's stages one by one, each with a short timeout: one 32-deep step, three
# (every stage once), four (the first reuse: the empty barriers' parity), then the 300^3 plan.
# A hang or a failure here stops the script (everything after would hang or fail the same way).
for s in "1 1 1" "128 128 96" "128 128 128" "300 300 300"; do
  set -- $s
  log "first runs: $s"
  r=$(timeout -k 5 30 "$T" run gemm --backend cuda --variant optimized --dtype float --m $1 --n $2 --k $3 --reps 1 $W --json 2>&1)
  rc=$?
  echo "$r" | tail -3 | cut -c1-1500
  if [ "$rc" != 0 ]; then
    [ "$rc" = 124 ] && echo "TIMED OUT (a hang: the mbarrier protocol or a bulk copy that never completes)"
    bad "first run $s exited $rc: stopping"
    probe
    timeout -k 5 60 compute-sanitizer --tool memcheck "$T" run gemm --backend cuda --variant optimized --dtype float \
      --m $1 --n $2 --k $3 --reps 1 $W 2>&1 | head -40
    exit 1
  fi
done

# ---- 2. correctness
log "odd shapes (tilekit run, verified against the double reference):"
for s in "1 1 1" "67 45 33" "131 260 37" "97 89 83" "129 131 0" "40 30 5" "3 200 65" "128 128 32" "256 384 96" \
         "1000 3 17" "1 513 40" "257 255 129" "1100 140 40" "300 200 4099" "512 512 8192"; do
  set -- $s
  line=$(timeout -k 5 30 "$T" run gemm --backend cuda --variant optimized --dtype float --m $1 --n $2 --k $3 --reps 1 $W --json 2>&1 | tail -1)
  rc=$?
  python3 - "$s" "$line" <<'PY' || fail=1
import json, sys
shape, line = sys.argv[1], sys.argv[2]
try:
    r = json.loads(line)
except ValueError:
    print(f"FAIL {shape}: {line[:400]}"); sys.exit(1)
ok = r.get("verified") is True
print(f"{'ok  ' if ok else 'FAIL'} {shape:>16}: verified={r.get('verified')} rel_error={r.get('rel_error')} tile={r.get('tile')}")
sys.exit(0 if ok else 1)
PY
done
log "conformance gemm cases with the tuning set:"
G='*Conformance.Gemm*'
R='*Conformance.RepeatedRunsAgreeBitwise'
TILEKIT_GEMM_PRECISION=tf32x3 TILEKIT_CUDA_TF32X3_KERNEL=wgmma timeout 120 "$B/tests/tilekit_tests" --gtest_brief=1 \
  --gtest_filter="$G/cuda_optimized_float:$R/cuda_optimized_float" >"$out/tests.log" 2>&1
rc=$?
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|Failure|error" "$out/tests.log" | head -20
[ "$rc" = 0 ] || { bad "conformance (rc=$rc)"; tail -30 "$out/tests.log"; }
log "campaign (200 cases, wgmma):"
TILEKIT_GEMM_PRECISION=tf32x3 TILEKIT_CUDA_TF32X3_KERNEL=wgmma timeout 90 "$B/tests/tilekit_campaign" --backend cuda --op gemm \
  --dtype float --variant optimized --cases 200 --seed 29 >"$out/campaign.log" 2>&1
rc=$?
tail -3 "$out/campaign.log"
[ "$rc" = 0 ] || { bad "campaign (rc=$rc)"; grep -iE "fail|error" "$out/campaign.log" | head -10; }

[ $fail = 0 ] || probe

# ---- 3. compute-sanitizer
log "compute-sanitizer (in parallel):"
i=0
for c in "memcheck|--m 67 --n 45 --k 33" "memcheck|--m 131 --n 260 --k 37" "memcheck|--m 129 --n 131 --k 0" \
         "memcheck|--m 259 --n 388 --k 75" "synccheck|--m 131 --n 260 --k 37"; do
  i=$((i + 1))
  ( tool=${c%%|*}
    timeout -k 5 90 compute-sanitizer --tool "$tool" --error-exitcode 9 "$T" run gemm --backend cuda --variant optimized \
      --dtype float ${c#*|} --reps 1 $W >"$out/san.$i.log" 2>&1
    echo "rc=$? $tool ${c#*|}" >>"$out/san.$i.log" ) &
done
wait
for f in "$out"/san.*.log; do
  st=$(tail -1 "$f")
  echo "${st#* }: ${st%% *}; $(grep -E "ERROR SUMMARY|Invalid|Error" "$f" | head -3 | tr '\n' ' ')"
  [ "${st%% *}" = rc=0 ] || { bad "sanitizer: ${st#* }"; head -30 "$f"; }
done

# ---- 4. SASS: the tensor-core instructions the wgmma kernel became
o=$(find "$B" -name 'gemm_tf32x3_sm90.cu.o' | head -1)
if [ -n "$o" ] && command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$o" | python3 -c '
import re, sys, collections
name, counts = None, collections.defaultdict(collections.Counter)
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1); continue
    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)", line)
    if name and m: counts[name][m.group(1)] += 1
for n, c in counts.items():
    print("sass:", n[:60], sum(c.values()), "instructions:", ", ".join(f"{k} {v}" for k, v in c.most_common(16)))
'
fi

# ---- 5. timing, each kernel with cuBLAS SGEMM in the same process
log "timing:"
for size in 8192 4096; do
  for k in wgmma mma; do
    f=$out/compare-$k-$size.json
    timeout 100 "$T" compare gemm --backends cuda --dtype float --size $size --tune gemm.precision=tf32x3 \
      --tune cuda.tf32x3.kernel=$k --json "$f" >"$out/compare-$k-$size.log" 2>&1
    rc=$?
    grep -E "^gemm +cuda +(optimized|\*cublas)" "$out/compare-$k-$size.log" | sed "s/^/$k $size: /"
    [ "$rc" = 0 ] || { bad "compare $k $size exited $rc"; tail -5 "$out/compare-$k-$size.log"; }
    python3 - "$f" "$k" "$size" "${BENCH_ROWS:-}" <<'PY'
import json, sys
path, kern, size, rows_file = sys.argv[1:5]
try:
    doc = json.load(open(path))
except (OSError, ValueError) as e:
    print(f"no JSON from compare ({kern} {size}): {e}"); sys.exit(0)
rows = doc.get("rows", doc if isinstance(doc, list) else [])
peer = next((r for r in rows if r.get("backend") == "cuda" and r.get("peer")), None)
mine = next((r for r in rows if r.get("backend") == "cuda" and not r.get("peer") and r.get("variant") == "optimized"), None)
out = open(rows_file, "a") if rows_file else None
for r in (mine, peer):
    if r is None: continue
    r = dict(r, tunings={"gemm.precision": "tf32x3", "cuda.tf32x3.kernel": kern})
    print("RESULT " + json.dumps(r))
    if out: out.write(json.dumps(r) + "\n")
if mine and peer and peer.get("gflops"):
    print(f"SUMMARY {kern} {size}^3: {mine['gflops'] / 1000:.1f} TFLOP/s = {mine['gflops'] / peer['gflops']:.3f}x cuBLAS SGEMM "
          f"({peer['gflops'] / 1000:.1f}); rel error {mine.get('rel_error')} vs cuBLAS {peer.get('rel_error')}; "
          f"verified={mine.get('verified')}; {str(mine.get('launch', ''))[:160]}")
PY
  done
done
# ---- 6. the automatic choice: wgmma here (compute capability 9.0, a build for 90) at every size;
# small and skinny problems (fewer 128x128 blocks than SMs, where mma.sync's auto takes 128x64x16)
# timed with both kernels, the evidence for or against a shape rule in auto.
log "auto (gemm.precision=tf32x3 alone) and small or skinny shapes, wgmma against mma.sync:"
for s in "300 300 300" "1024 1024 4096" "2048 1024 2048" "128 4096 4096" "4096 256 4096" "8192 128 8192"; do
  set -- $s
  for k in auto mma; do
    timeout -k 5 60 "$T" run gemm --backend cuda --variant optimized --dtype float --m $1 --n $2 --k $3 --reps 20 \
      --tune gemm.precision=tf32x3 --tune cuda.tf32x3.kernel=$k --json >"$out/small-$k.json" 2>"$out/small-$k.err"
    echo "rc=$?" >>"$out/small-$k.err"
  done
  python3 - "$s" "$out/small-auto.json" "$out/small-mma.json" "${BENCH_ROWS:-}" <<'PY' || { fail=1; tail -3 "$out"/small-*.err; }
import json, sys
shape, fa, fm, rows_file = sys.argv[1:5]
try:
    a, m = json.load(open(fa)), json.load(open(fm))
except (OSError, ValueError) as e:
    print(f"FAIL {shape}: no JSON ({e})"); sys.exit(1)
out = open(rows_file, "a") if rows_file else None
for r, k in ((a, "auto"), (m, "mma")):
    r = dict(r, tunings={"gemm.precision": "tf32x3", "cuda.tf32x3.kernel": k})
    print("RESULT " + json.dumps(r))
    if out: out.write(json.dumps(r) + "\n")
ok = a.get("verified") is True and m.get("verified") is True and "wgmma" in str(a.get("launch", ""))
print(f"{'SMALL' if ok else 'FAIL '} {shape:>16}: auto {a.get('gflops', 0) / 1000:.1f} TFLOP/s ({a.get('tile')}, "
      f"{'wgmma' if 'wgmma' in str(a.get('launch', '')) else 'NOT wgmma'}), mma {m.get('gflops', 0) / 1000:.1f} "
      f"({m.get('tile')}): auto/mma {a.get('gflops', 0) / max(m.get('gflops', 0), 1e-9):.2f}x; "
      f"rel errors {a.get('rel_error')} {m.get('rel_error')}")
sys.exit(0 if ok else 1)
PY
done
log "done: $([ $fail = 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
exit $fail
