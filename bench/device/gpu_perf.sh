#!/usr/bin/env bash
# Run ON THE GPU machine after a build with CUDA (and Kokkos with CUDA for the kokkos rows):
# checks and times the tensor-core gemm kernels in one call of at most ~7 minutes:
#   - the double gemm of the kokkos backend on the FP64 tensor cores (the cuda DMMA block body in a
#     Kokkos team), against cuda's at 4096^3 and 8192^3 (target: >= 0.95 of cuda);
#   - the FP32-accurate float gemm on the TF32 tensor cores (gemm.precision=tf32x3) on cuda and
#     kokkos against cuBLAS SGEMM (pedantic FP32) at 8192^3 (target: >= 1.8x, rel error <= cuBLAS's);
#   - the conformance suite's gemm cases on cuda and kokkos (default and tf32x3), a randomized
#     campaign, compute-sanitizer memcheck and racecheck over the new kernels, the SASS of the new
#     kernels (opcode counts);
#   - a few single runs that separate shape from framework (cuda on the kokkos shapes, the
#     kokkos double gemm's generic block).
# Usage: bash bench/device/gpu_perf.sh BUILD_DIR OUT_DIR   (GPU_PERF_BUDGET=seconds, default 420)
# Writes OUT_DIR/summary.txt (every stage's exit status and headline lines), a log per stage and
# the comparisons as JSON. The most important stages run first; a stage runs under `timeout`
# bounded by what is left of the budget, and one that fails or runs out does not stop the others.
set -uo pipefail
B=$(cd "${1:?usage: gpu_perf.sh BUILD_DIR OUT_DIR}" && pwd)
mkdir -p "${2:?usage: gpu_perf.sh BUILD_DIR OUT_DIR}"
out=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
budget=${GPU_PERF_BUDGET:-420}
t0=$(date +%s)
export PATH=/usr/local/cuda/bin:$PATH
lib=$root/.device/deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$B/tilekit
: >"$out/summary.txt"
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$out/summary.txt"; }
left() { echo $((budget - ($(date +%s) - t0))); }
# stage NAME SECONDS COMMAND...: its output in NAME.log, exit status and time in the summary.
stage() {
  local name=$1 secs=$2 s rem
  shift 2
  rem=$(($(left) - 3))
  if [ "$rem" -lt 10 ]; then
    log "$name: skipped (budget spent)"
    return
  fi
  [ "$secs" -gt "$rem" ] && secs=$rem
  s=$(date +%s)
  timeout -k 5 "$secs" "$@" >"$out/$name.log" 2>&1
  log "$name: rc=$? in $(($(date +%s) - s)) s (limit $secs s)"
}

# The device, and one small run of each new plan (its JSON names the device and the kernel launched;
# `tilekit info` would spend half a minute measuring every backend's ceilings).
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$out/info.txt" 2>&1
for be in cuda kokkos; do
  for c in "float|gemm.precision=tf32x3" "double|gemm.precision=fp32"; do
    echo "$be ${c%%|*} ${c#*|}: $(timeout 60 "$T" run gemm --backend $be --variant optimized --dtype ${c%%|*} --size 300 \
      --reps 1 --tune ${c#*|} --json 2>&1 | tail -1)" >>"$out/info.txt"
  done
done
log "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || cat "$root/.device/commit" 2>/dev/null); $(sed -n 2p "$out/info.txt")"
python3 - "$out/info.txt" <<'PY' | tee -a "$out/summary.txt"
import json, re, sys
for line in open(sys.argv[1]):
    m = re.match(r"(\w+ \w+ \S+): (\{.*\})\s*$", line)
    if not m:
        if re.match(r"\w+ \w+ \S+: ", line): print("plan:", line.strip()[:300])
        continue
    r = json.loads(m.group(2))
    print(f"plan: {m.group(1)}: {r.get('device')}: verified={r.get('verified')} tile {r.get('tile')}; {r.get('launch', '')[:200]}")
PY
# The kokkos rows only where Kokkos runs on the GPU (a host Kokkos would take hours at 8192).
backends=cuda
grep -E '^kokkos .*"device":"Kokkos [^"]*Cuda' "$out/info.txt" >/dev/null && backends=cuda,kokkos
log "backends: $backends"

# ---- the targets (each comparison verifies every row against the double reference)
stage dgemm-4096 60 "$T" compare gemm --backends "$backends" --dtype double --size 4096 --json "$out/dgemm-4096.json"
stage dgemm-8192 90 "$T" compare gemm --backends "$backends" --dtype double --size 8192 --json "$out/dgemm-8192.json"
stage tf32x3-8192 90 "$T" compare gemm --backends "$backends" --dtype float --size 8192 --tune gemm.precision=tf32x3 \
  --json "$out/tf32x3-8192.json"
for f in dgemm-4096 dgemm-8192 tf32x3-8192; do
  grep -E "^gemm +(cuda|kokkos) +(optimized|\*cublas)" "$out/$f.log" | sed "s/^/$f: /" | tee -a "$out/summary.txt"
done
python3 - "$out" >>"$out/summary.txt" 2>&1 <<'PY'
# The ratios the targets name, from the JSON rows (same process, same inputs).
import json, os, sys
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name + ".json")
    if not os.path.exists(p): return []
    j = json.load(open(p))
    return j.get("rows", j if isinstance(j, list) else [])
def pick(rs, backend, variant, peer=False):
    for r in rs:
        if r.get("backend") == backend and bool(r.get("peer")) == peer and (peer or r.get("variant") == variant):
            return r
for name in ("dgemm-4096", "dgemm-8192"):
    rs = rows(name)
    c, k = pick(rs, "cuda", "optimized"), pick(rs, "kokkos", "optimized")
    if c and k and c.get("gflops") and k.get("gflops"):
        print(f"{name}: kokkos/cuda optimized = {k['gflops'] / c['gflops']:.3f} ({k['gflops']:.0f} / {c['gflops']:.0f} GFLOP/s)")
rs = rows("tf32x3-8192")
peer = pick(rs, "cuda", None, peer=True)
for be in ("cuda", "kokkos"):
    r = pick(rs, be, "optimized")
    if r and peer and peer.get("gflops"):
        print(f"tf32x3-8192: {be} optimized / cuBLAS SGEMM = {r['gflops'] / peer['gflops']:.3f} "
              f"({r['gflops']:.0f} / {peer['gflops']:.0f} GFLOP/s); rel error {r.get('rel_error')} vs cuBLAS {peer.get('rel_error')}")
PY

# ---- what the new kernels became (ptxas for the device): opcode counts per kernel, whole function
sass() {
  for o in $(find "$B" \( -name 'gemm.cu.o' -o -name 'gemm_mma.cpp.o' \) -path '*backend*'); do
    cuobjdump -sass "$o" 2>/dev/null
  done | python3 -c '
import re, sys, collections
name, counts = None, collections.defaultdict(collections.Counter)
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1) if re.search(r"tf32x3|Tf32x3|dmma|Dmma", m.group(1)) else None
        continue
    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)", line)
    if name and m:
        counts[name][m.group(1)] += 1
for n, c in counts.items():
    print(n, sum(c.values()), "instructions:", ", ".join(f"{k} {v}" for k, v in c.most_common(24)))
'
}
stage sass 30 bash -c "$(declare -f sass); B='$B' sass"
grep -E "tf32x3|Tf32x3" "$out/sass.log" | cut -c1-400 | sed 's/^/sass: /' | tee -a "$out/summary.txt"

# ---- correctness: the conformance suite's gemm cases, default and under each new choice
G='*Conformance.Gemm*'
R='*Conformance.RepeatedRunsAgreeBitwise'
stage tests-default 100 "$B/tests/tilekit_tests" --gtest_brief=1 \
  --gtest_filter="$G/cuda_*:$G/kokkos_*:$R/cuda_*:$R/kokkos_*:*TileChoiceTf32x3*:*TileChoiceDmma*:*Tuning*"
stage tests-tf32x3 60 env TILEKIT_GEMM_PRECISION=tf32x3 "$B/tests/tilekit_tests" --gtest_brief=1 \
  --gtest_filter="$G/cuda_optimized_float:$G/kokkos_optimized_float:$R/cuda_optimized_float:$R/kokkos_optimized_float"
for f in tests-default tests-tf32x3; do
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$out/$f.log" | sed "s/^/$f: /" | head -12 | tee -a "$out/summary.txt"
done

# ---- compute-sanitizer over the new kernels: odd shapes (4-byte copy paths), partial tiles with
# 16-byte copies, every compiled shape; four at a time.
san() {
  local list=$out/san.list i=0
  : >"$list"
  for tool in memcheck racecheck; do
    for c in "cuda|float|--m 259 --n 388 --k 75|tf32x3" "cuda|float|--m 67 --n 45 --k 33|tf32x3" \
             "cuda|float|--m 131 --n 260 --k 37 --tile 128,128,32|tf32x3" \
             "kokkos|float|--m 259 --n 388 --k 75|tf32x3" "kokkos|float|--m 67 --n 45 --k 33|tf32x3" \
             "kokkos|double|--m 259 --n 388 --k 75|fp32" "kokkos|double|--m 67 --n 45 --k 33|fp32" \
             "cuda|double|--m 131 --n 260 --k 37|fp32"; do
      IFS='|' read -r be dt shape prec <<<"$c"
      [[ ",$backends," == *",$be,"* ]] || continue
      i=$((i + 1))
      echo "echo '== $tool $be $dt $shape gemm.precision=$prec'; compute-sanitizer --tool $tool --error-exitcode 9 $T run gemm --backend $be --variant optimized --dtype $dt $shape --reps 1 --tune gemm.precision=$prec 2>&1 | tail -4; echo \"exit=\${PIPESTATUS[0]}\"" \
        >"$out/san.$(printf %02d $i).sh"
    done
  done
  ls "$out"/san.*.sh | xargs -P 4 -I{} sh -c 'bash {} >{}.log 2>&1'
  cat "$out"/san.*.sh.log
  rm -f "$out"/san.*.sh "$out"/san.*.sh.log "$list"
}
stage sanitize 120 bash -c "$(declare -f san); out='$out' T='$T' backends='$backends' san"
{ echo "sanitize: $(grep -c '^== ' "$out/sanitize.log") runs; $(grep -E '^exit=' "$out/sanitize.log" | sort | uniq -c | tr '\n' ' ')"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitize.log" | sort | uniq -c; } | tee -a "$out/summary.txt"

# ---- the randomized campaign, gemm only: the new kernels at every shape it draws
camp() {
  TILEKIT_GEMM_PRECISION=tf32x3 "$B/tests/tilekit_campaign" --backend cuda --op gemm --dtype float --variant optimized --cases 400 --seed 29
  if [[ $backends == *kokkos* ]]; then
    TILEKIT_GEMM_PRECISION=tf32x3 "$B/tests/tilekit_campaign" --backend kokkos --op gemm --dtype float --variant optimized --cases 400 --seed 29
    "$B/tests/tilekit_campaign" --backend kokkos --op gemm --dtype double --variant optimized --cases 400 --seed 29
  fi
}
stage campaign 75 bash -c "$(declare -f camp); B='$B' backends='$backends' camp"
tail -3 "$out/campaign.log" | sed 's/^/campaign: /' | tee -a "$out/summary.txt"

# ---- shape against framework: single runs (each its own process; compare ratios within a line only)
extras() {
  local r="$T run gemm --variant optimized --reps 10 --json"
  for n in 4096 8192; do
    echo "cuda double ${n} 64x64x16 (3 stages): $($r --backend cuda --dtype double --size $n --tile 64,64,16)"
    [[ $backends == *kokkos* ]] &&
      echo "kokkos double ${n} kokkos.dgemm.kernel=block: $($r --backend kokkos --dtype double --size $n --tune kokkos.dgemm.kernel=block)"
  done
  echo "cuda float 8192 tf32x3 128x64x16: $($r --backend cuda --dtype float --size 8192 --tile 128,64,16 --tune gemm.precision=tf32x3)"
  echo "cuda float 8192 fp32 (default FFMA): $($r --backend cuda --dtype float --size 8192)"
}
stage extras 100 bash -c "$(declare -f extras); T='$T' backends='$backends' extras"
python3 - "$out/extras.log" >>"$out/summary.txt" 2>&1 <<'PY'
import json, re, sys
for line in open(sys.argv[1]):
    m = re.match(r"(.*?): (\{.*\})\s*$", line)
    if not m:
        continue
    r = json.loads(m.group(2))
    print(f"extras: {m.group(1)}: {r.get('gflops', 0):.0f} GFLOP/s, verified={r.get('verified')}, rel {r.get('rel_error')}")
PY
log "done"
