#!/usr/bin/env bash
# Run ON THE DEVICE (an NVIDIA GPU with Nsight Compute): the DRAM traffic of every cuda
# operation x variant, measured by ncu, against what PMPP's model predicts (`tilekit run
# --traffic`), at sizes well past the 60 MB L2 of an H200, plus PMPP's own claim for the tiled
# gemm (compute-to-global-memory-access ratio 0.25 FLOP/B naive, x16 with 16x16 tiles, x32 with
# 32x32). Usage: traffic.sh BUILD_DIR [OUT_DIR]; writes OUT_DIR/traffic.md (the table),
# traffic.jsonl (the rows) and traffic.log (ncu's own output), or the rows to $BENCH_ROWS
# when bench/run.py runs it (suite traffic; bench/report.py makes bench/results/traffic-DEVICE.md
# from them).
#
# Each run is `tilekit run ... --reps 1`: one warm-up call and one timed call, so the kernel
# launches twice; ncu profiles every kernel of the process and the bytes per call are the sum
# over kernels / 2. --clock-control none: the GPU keeps its own clocks, as in every other run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=$(cd "${1:?usage: traffic.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-.}}
mkdir -p "$out"
lib=$root/.device/deps/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
# Under bench/run.py the rows go straight to its file (kept if the step is stopped at its limit).
rows=${BENCH_ROWS:-$out/traffic.jsonl}
: >"$rows"
: >"$out/traffic.log"

measure() {  # measure ARGS...: one `tilekit run` under ncu, one JSON row appended to $rows
  local csv; csv=$(mktemp)
  local json
  json=$("$ncu" --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw \
           --print-units base --log-file "$csv" "$b/tilekit" run "$@" --backend cuda --reps 1 --json --traffic)
  cat "$csv" >>"$out/traffic.log"
  python3 - "$csv" "$json" >>"$rows" <<'PY'
import csv, json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]  # ncu's CSV rows (its notes start with ==)
table = list(csv.reader(lines))
head, data = table[0], table[2:]  # second row: units (bytes, with --print-units base)
ri, wi = head.index("dram__bytes_read.sum"), head.index("dram__bytes_write.sum")
num = lambda s: float(s.replace(",", "")) if s else 0.0
row = json.loads(sys.argv[2])
calls = 2  # the warm-up and the one timed repetition
row["measured_read"] = sum(num(d[ri]) for d in data) / calls
row["measured_write"] = sum(num(d[wi]) for d in data) / calls
row["kernels_profiled"] = len(data)
row["counter"] = "ncu dram__bytes_read.sum + dram__bytes_write.sum"
print(json.dumps(row))
PY
  rm -f "$csv"
}

# Every operation x variant at sizes past the L2 (gemm: 3 x 64 MiB; transpose, conv2d: 2 x 256 MiB).
for v in naive tiled optimized; do
  measure gemm --variant "$v" --size 4096
  measure transpose --variant "$v" --size 8192
  measure conv2d --variant "$v" --size 8192  # R = 5
done
# PMPP Fig. 5.13 with its own tile sizes: the ratio should go 0.25 -> 4 -> 8 FLOP/B.
measure gemm --variant tiled --size 4096 --tile 16,16,16
measure gemm --variant tiled --size 4096 --tile 32,32,32

{
  echo "# DRAM traffic per call: PMPP's model against ncu, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  echo
  echo "git commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || cut -c1-7 "$root/.device/commit" 2>/dev/null), $(date -u +%FT%TZ)"
  echo "command: bash bench/device/traffic.sh $1 (ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum)"
  echo
  python3 "$root/bench/traffic_table.py" "$rows"
} >"$out/traffic.md"
cat "$out/traffic.md"
