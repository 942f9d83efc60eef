#!/usr/bin/env bash
# Run ON THE GPU machine after `bash bench/device/build.sh -DTILEKIT_ENABLE_KOKKOS=ON
# -DKokkos_ROOT=... -DTILEKIT_BUILD_SWEEPS=ON` (build-device/ with the cuda and kokkos backends and
# the sweep kernels): the kokkos backend's naive conv2d and gemm against the cuda backend's, each
# candidate form in ONE `tilekit compare` process with both backends (same inputs, same GPU state),
# so kokkos time / cuda time is measured side by side (docs/design/kokkos-naive-gemm.md):
#   conv2d 8192^2, R = 3 and 5, float and double: kokkos.naive.launch = team (the default) | mdrange
#   gemm 4096^3 and 8192^3, float and double:    kokkos.naive.loop = plain (the default) | batch4
# Target: kokkos naive >= 0.95 of cuda's speed (cuda ms / kokkos ms) for every default row.
# Usage: bash bench/device/kokkos_naive_ab.sh [BUILD_DIR] [OUT_DIR]   (defaults build-device, $OUT or .)
# Prints a table and one `RESULT {json}` line per row (bench/run.py); writes OUT_DIR/kokkos-naive-ab.txt
# and each run's JSON. Exits non-zero (and says which run) if any run fails or does not verify.
# For a dry run of the script itself on a CPU build: AB_REF=serial AB_CONV_SIZE=96 AB_GEMM_SIZES="64 96"
# AB_CONV_TUNES=kokkos.naive.launch=auto AB_GEMM_TUNES=kokkos.naive.loop=plain (the reference
# backend, the sizes and the candidates; the defaults are the measurement's).
set -uo pipefail
ref=${AB_REF:-cuda}
conv_size=${AB_CONV_SIZE:-8192}
gemm_sizes=${AB_GEMM_SIZES:-4096 8192}
conv_tunes=${AB_CONV_TUNES:-kokkos.naive.launch=team kokkos.naive.launch=mdrange}
gemm_tunes=${AB_GEMM_TUNES:-kokkos.naive.loop=plain kokkos.naive.loop=batch4}
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$root/build-device}" && pwd)
mkdir -p "${2:-${OUT:-.}}"
out=$(cd "${2:-${OUT:-.}}" && pwd)
lib=$root/.device/deps/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$B/tilekit
[ -x "$T" ] || { echo "FAIL: no $T (build first)" >&2; exit 2; }
# The sweep value must run (a build without -DTILEKIT_BUILD_SWEEPS=ON refuses it), on a kokkos GPU space.
if [[ " $gemm_tunes " == *" kokkos.naive.loop=batch4 "* ]] && ! probe=$("$T" run gemm --backend kokkos --variant naive --size 100 --reps 1 --json --tune kokkos.naive.loop=batch4 2>&1); then
  echo "FAIL: $T cannot run the kokkos naive gemm with kokkos.naive.loop=batch4 (kokkos and sweeps ON?):" >&2
  echo "$probe" | tail -5 >&2
  exit 2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1 | tee "$out/kokkos-naive-ab.txt"
git -C "$root" rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' | tee -a "$out/kokkos-naive-ab.txt"

failed=0
n=0
# one LABEL TUNE COMPARE-ARGS...: one compare process (cuda and kokkos), its naive rows -> a ratio
one() {
  local label=$1 tune=$2 rc
  shift 2
  n=$((n + 1))
  local json=$out/ab-$n.json t0=$(date +%s)
  "$T" compare "$@" --backends "$ref",kokkos --no-peers --no-roofline --tune "$tune" --json "$json" \
    >"$out/ab-$n.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$json" ]; then
    echo "FAIL: run $n ($label, $tune): tilekit compare $* exited $rc" | tee -a "$out/kokkos-naive-ab.txt" >&2
    tail -25 "$out/ab-$n.log" >&2
    failed=1
    return
  fi
  python3 - "$json" "$label" "$tune" "$(($(date +%s) - t0))" "$ref" <<'PY' | tee -a "$out/kokkos-naive-ab.txt"
import json, sys
j = json.load(open(sys.argv[1])); label, tune, secs, ref = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
rows = {(r["backend"], r["variant"]): r for r in j["rows"] if not r.get("peer")}
c, k = rows[(ref, "naive")], rows[("kokkos", "naive")]
bad = [f'{b} {v}' for (b, v), r in rows.items() if not r["verified"]]
ratio = c["seconds"] / k["seconds"]
print(f'{label:<26} {tune:<28} {ref} {c["seconds"] * 1e3:9.4f} ms  kokkos {k["seconds"] * 1e3:9.4f} ms  '
      f'kokkos/{ref} speed {ratio:6.3f}  ({secs} s){"  UNVERIFIED: " + ", ".join(bad) if bad else ""}')
print(f'{"":<26} kokkos naive launch: {k.get("launch", "")}')
print("RESULT " + json.dumps({"suite": "kokkos-naive-ab", "case": label, "tune": tune, "reference": ref,
                              "reference_ms": c["seconds"] * 1e3,
                              "kokkos_ms": k["seconds"] * 1e3, "kokkos_speed_over_reference": ratio,
                              "device": k.get("device", ""), "launch": k.get("launch", ""),
                              "verified": not bad}))
sys.exit(1 if bad else 0)
PY
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
}

for dt in float double; do
  for r in 5 3; do
    for t in $conv_tunes; do
      one "conv2d $dt $conv_size R=$r" "$t" conv2d --size "$conv_size" --filter "$r" --dtype "$dt" --reps 10
    done
  done
  for s in $gemm_sizes; do
    reps=10
    [ "$s" -eq 8192 ] && reps=5
    for t in $gemm_tunes; do
      one "gemm $dt $s" "$t" gemm --size "$s" --dtype "$dt" --reps "$reps"
    done
  done
done
if [ $failed -ne 0 ]; then
  echo "FAIL: at least one run failed or did not verify (above; logs in $out)" >&2
  exit 1
fi
echo "all $n runs verified"
