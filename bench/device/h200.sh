#!/usr/bin/env bash
# Run ON THE DEVICE after build.sh: the whole conformance suite, the side-by-side comparison at the
# target sizes of ../shared/TARGETS.md, and the host CPU's thread scaling. Writes at most 8 files
# into the folder given (default $OUT), since that is what the device tool brings back.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$OUT}
b=$root/build-device
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out/json"
{
  echo "git commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || cat "$root/.device/commit" 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv
  "$b/tilekit" info
} >"$out/info.txt" 2>&1

"$b/tests/tilekit_tests" --gtest_brief=1 >"$out/tests.log" 2>&1
echo "conformance suite: exit $? ($(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/tests.log" | tr '\n' ' '))"

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
run conv2d-8192-r15 conv2d --backends cuda --size 8192 --filter 15
run gemm-4096-double gemm --backends "$backends" --size 4096 --dtype double --reps 5
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
rows = []
for f in sorted((out / "json").glob("*.json")):
    for r in json.loads(f.read_text()):
        r["run"] = f.stem
        rows.append(r)
(out / "h200-compare.json").write_text(json.dumps(rows, indent=1) + "\n")
PY
rm -rf "$out/json"
cat "$out/compare.txt"

if [ -x "$root/bench/cpu_scaling.sh" ] || [ -f "$root/bench/cpu_scaling.sh" ]; then
  mkdir -p "$out/cpu"
  bash "$root/bench/cpu_scaling.sh" "$b/tilekit" "$out/cpu" >"$out/cpu-scaling.txt" 2>&1
  tail -30 "$out/cpu-scaling.txt"
fi
