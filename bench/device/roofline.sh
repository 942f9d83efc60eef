#!/usr/bin/env bash
# Run ON THE DEVICE: the GPU's roofline ceilings, the comparison drawn on them, and the traffic
# table (traffic.sh). Usage: roofline.sh BUILD_DIR [OUT_DIR]; BUILD_DIR holds `tilekit` built with
# the cuda backend (and kokkos, when TILEKIT_BACKENDS names it). Writes into OUT_DIR (default
# $OUT): h200-roofline.{txt,json,csv,svg}, ceilings.txt, and traffic.{md,jsonl,log}.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=$(cd "${1:?usage: roofline.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$OUT}
mkdir -p "$out"
lib=$root/.device/deps/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
backends=${TILEKIT_BACKENDS:-cuda}
{
  echo "git commit: $(cat "$root/.device/commit" 2>/dev/null || git -C "$root" rev-parse HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem --format=csv
  "$b/tilekit" roofline --backends "$backends"
} >"$out/ceilings.txt" 2>&1
cat "$out/ceilings.txt"
# Sizes past the 60 MB L2: every row is held to the memory roof.
"$b/tilekit" compare gemm transpose conv2d --backends "$backends" --size 8192 --reps 10 \
  --json "$out/h200-roofline.json" --csv "$out/h200-roofline.csv" --plot "$out/h200-roofline.svg" \
  >"$out/h200-roofline.txt" 2>"$out/h200-roofline.err"
echo "compare: exit $?"
cat "$out/h200-roofline.txt"
bash "$root/bench/device/traffic.sh" "$b" "$out"
