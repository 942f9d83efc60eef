#!/usr/bin/env bash
# Regenerates bench/results/cuda-resource-usage.txt: what ptxas makes of every kernel of
# backends/gpu for sm_90 (registers, static shared memory, stack, spills). Needs nvcc, no GPU.
# Usage: backends/cuda/scripts/resource_usage.sh [build dir with include/tilekit/version.hpp]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-cuda}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
out=$root/bench/results/cuda-resource-usage.txt
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmd="$NVCC -std=c++17 -O3 -DNDEBUG -arch=sm_90 -Xptxas -v --expt-relaxed-constexpr -Iinclude -I$build/include -Ibackends -c backends/gpu/<op>.cu"
for op in gemm transpose conv2d; do
  ${cmd//<op>/$op} -o "$tmp/$op.o" 2>&1 | c++filt >"$tmp/$op.txt" &
done
wait
{
  echo "# ptxas resource usage of the cuda backend's kernels (sm_90), $(date -u +%F)"
  echo "# git $(git rev-parse --short HEAD)$(git diff --quiet -- backends/gpu backends/common/gpu || echo ' (GPU sources modified)'), $($NVCC --version | tail -1)"
  echo "# command, for <op> in gemm transpose conv2d:"
  echo "#   $cmd"
  echo "# Static shared memory only (dynamic shared memory is sized at launch: tilekit info / run print it)."
  echo
  python3 backends/cuda/scripts/ptxas_summary.py "$tmp"/gemm.txt "$tmp"/transpose.txt "$tmp"/conv2d.txt
  echo
  echo "# raw ptxas output"
  cat "$tmp"/gemm.txt "$tmp"/transpose.txt "$tmp"/conv2d.txt | grep -E "Compiling entry|Used|spill|bytes stack"
} >"$out"
echo "wrote $out"
