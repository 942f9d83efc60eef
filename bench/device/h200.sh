#!/usr/bin/env bash
# Run ON THE DEVICE: the whole conformance suite, then the side-by-side comparison at the target
# sizes of ../shared/TARGETS.md. Usage: h200.sh BUILD_DIR [OUT_DIR]; BUILD_DIR holds `tilekit` and
# `tests/tilekit_tests` (built there by build.sh, or built here for sm_90 and carried). Writes at
# most 8 files into OUT_DIR (default $OUT), which is what the device tool brings back.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=$(cd "${1:?usage: h200.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$OUT}
lib=$root/.device/deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILEKIT_PROGRAM=$b/tilekit
mkdir -p "$out/json"
{
  echo "git commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || cat "$root/.device/commit" 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv
  "$b/tilekit" info
} >"$out/info.txt" 2>&1

"$b/tests/tilekit_tests" --gtest_brief=1 >"$out/tests.log" 2>&1
echo "conformance suite: exit $? ($(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|tests ran' "$out/tests.log" | tr '\n' ' '))"

backends=${TILEKIT_BACKENDS:-cuda,kokkos}
run() {  # run NAME ARGS...: one comparison, its table appended to compare.txt, its rows to json/NAME.json
  local name=$1; shift
  echo "== tilekit compare $* ==" >>"$out/compare.txt"
  "$b/tilekit" compare "$@" --json "$out/json/$name.json" >>"$out/compare.txt" 2>>"$out/compare.err"
  echo >>"$out/compare.txt"
}
run gemm-4096 gemm --backends "$backends" --size 4096
run gemm-8192 gemm --backends cuda --size 8192 --reps 10
run transpose-8192 transpose --backends "$backends" --size 8192
run conv2d-8192 conv2d --backends "$backends" --size 8192 --filter 5
run conv2d-8192-r3 conv2d --backends cuda --size 8192 --filter 3
run gemm-4096-double gemm --backends "$backends" --size 4096 --dtype double --reps 5 --no-peers
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
rows, context = [], None
for f in sorted((out / "json").glob("*.json")):
    d = json.loads(f.read_text())  # {"context": ..., "rows": [...]} (a bare list before the roofline)
    context = d.get("context", context) if isinstance(d, dict) else context
    for r in d["rows"] if isinstance(d, dict) else d:
        r["run"] = f.stem
        rows.append(r)
(out / "h200-compare.json").write_text(json.dumps({"context": context, "rows": rows}, indent=1) + "\n")
PY
rm -rf "$out/json"
cat "$out/compare.txt"
