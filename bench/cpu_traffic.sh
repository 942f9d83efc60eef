#!/usr/bin/env bash
# The CPU side of the traffic table: last-level cache misses counted by valgrind's cache
# simulator (cachegrind's model, run through callgrind, whose --toggle-collect counts inside the
# kernel's functions alone; valgrind is a Debian package), against PMPP's predicted traffic (`tilekit run
# --traffic`). The last level is simulated at 1 MiB so that small problems (a few MiB) already
# stream from "memory"; cachegrind simulates one thread, so the openmp kernel runs on one.
# Usage: bench/cpu_traffic.sh BUILD_DIR OUT_DIR  (writes OUT_DIR/cpu-traffic.md and .jsonl, or the
# rows to $BENCH_ROWS when bench/run.py runs it: suite traffic)
#
# Bytes per call = (DLmr + DLmw) x 64 (line fills of reads and writes) / 2 calls (the warm-up and
# the one timed repetition). Cachegrind does not simulate write-backs: the written lines go back
# to memory too (about the output's bytes more), so "measured" here is read traffic plus the
# write-allocate fills.
set -euo pipefail
b=$(cd "${1:?usage: cpu_traffic.sh BUILD_DIR OUT_DIR}" && pwd)
out=${2:?usage: cpu_traffic.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
# Under bench/run.py the rows go straight to its file (kept if the step is stopped at its limit).
rows=${BENCH_ROWS:-$out/cpu-traffic.jsonl}
: >"$rows"
ll=1048576
# The pattern names the backend's entry point for the operation (its kernels are its callees;
# the OpenMP outlined functions of the openmp kernels are not matched by their own names).
measure() {  # measure FUNCTION-PATTERN ARGS...
  local pattern=$1; shift
  local cg; cg=$(mktemp)
  local json
  json=$(OMP_NUM_THREADS=1 valgrind --tool=callgrind --cache-sim=yes --LL=$ll,16,64 --callgrind-out-file="$cg" \
           --toggle-collect="$pattern" "$b/tilekit" run "$@" --reps 1 --json --traffic 2>/dev/null)
  python3 - "$cg" "$json" "$pattern" >>"$rows" <<'PY'
import json, sys
events = summary = None
for line in open(sys.argv[1]):
    if line.startswith("events:"): events = line.split()[1:]
    if line.startswith("summary:"): summary = [int(x) for x in line.split()[1:]]
summary += [0] * (len(events) - len(summary))  # trailing zero counts are left out
c = dict(zip(events, summary))
row = json.loads(sys.argv[2])
row["measured_read"] = (c["DLmr"] + c["DLmw"]) * 64 / 2  # line fills, per call
row["measured_write"] = 0.0                               # write-backs: not simulated
row["counter"] = f"valgrind cache simulation: LL misses x 64 B (LL {1 << 20} B), inside {sys.argv[3]}"
print(json.dumps(row))
PY
  rm -f "$cg"
}
for op in gemm transpose conv2d; do
  size=$([ $op = gemm ] && echo 384 || echo 1024)
  measure "*SerialBackend::${op}*" $op --backend serial --variant naive --size $size
  measure "*SerialBackend::${op}*" $op --backend serial --variant tiled --size $size
  measure "*OpenmpBackend::${op}*" $op --backend openmp --variant optimized --size $size
done
measure "*SerialBackend::gemm*" gemm --backend serial --variant tiled --size 384 --tile 16,16,16
measure "*SerialBackend::gemm*" gemm --backend serial --variant tiled --size 384 --tile 32,32,32
# Past the simulated LL for the naive gemm too (B alone, 2.25 MiB, no longer fits).
measure "*SerialBackend::gemm*" gemm --backend serial --variant naive --size 768
{
  echo "# Main-memory traffic per call on the CPU: PMPP's model against valgrind's cache simulation (LL 1 MiB)"
  echo
  echo "command: bash bench/cpu_traffic.sh $1 $2   ($(valgrind --version), $(date -u +%FT%TZ))"
  echo
  python3 "$(dirname "$0")/traffic_table.py" "$rows"
} >"$out/cpu-traffic.md"
cat "$out/cpu-traffic.md"
