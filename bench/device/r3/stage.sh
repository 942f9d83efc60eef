# Sourced by the device stage scripts: `source bench/device/r3/stage.sh NAME BUILD_DIR OUT_DIR`
# sets build (absolute), out (OUT_DIR/NAME, created, summary.txt emptied), root, the library path of
# the carried dependencies, and two helpers: `log MESSAGE` (timestamped, into the summary) and
# `step FILE SECONDS COMMAND...` (output appended to FILE, its rc and time logged).
set -uo pipefail
build=$(cd "${2:?BUILD_DIR}" && pwd)
out=${3:?OUT_DIR}/${1:?NAME}
mkdir -p "$out"
root=$PWD
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$out/summary.txt"; }
step() {
  local name=$1 secs=$2 s rc
  shift 2
  s=$(date +%s)
  timeout "$secs" "$@" >>"$out/$name" 2>&1
  rc=$?
  log "$name: rc=$rc in $(($(date +%s) - s)) s: $*"
}
: >"$out/summary.txt"
# final_compare: gemm, transpose and conv2d at 8192 on cuda and kokkos in one process (final-8192.txt
# and .json), their rows into the summary.
final_compare() {
  step final-8192.txt 100 "$build/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
    --json "$out/final-8192.json"
  grep -E "^(gemm|transpose|conv2d) " "$out/final-8192.txt" >>"$out/summary.txt"
}
# gemm_row FILE: the optimized and cuBLAS rows of a `compare gemm` output on one line.
gemm_row() { grep -E 'optimized|cublas' "$1" | awk '{print $2, $3, $6, $9}' | tr '\n' ' '; }
