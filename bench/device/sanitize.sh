#!/usr/bin/env bash
# Run ON THE DEVICE machine (H200): compute-sanitizer's memcheck, racecheck, synccheck and
# initcheck over every GPU kernel: `tilekit run` for every op x variant x dtype on shapes that
# are no multiple of any tile (odd: element-wise paths; multiples of 4 with partial tiles: the
# vector paths; explicit tiles; gemm k = 0 and alpha = 0), then the randomized campaign under
# memcheck and initcheck, then >= 10,000 campaign cases per GPU backend without a tool.
#   Usage: bash bench/device/sanitize.sh BUILD_DIR [BACKENDS]   (BACKENDS default: cuda, plus
#   kokkos when it runs on the GPU). TOOLS (default "memcheck racecheck synccheck initcheck")
#   chooses the tools, CASES (default 10000; 0: none) the campaign's cases per backend without a
#   tool. Writes sanitize.log, campaign.log and a summary to $BENCH_OUT (bench/run.py's folder for
#   the step; bench/suites.toml's sanitize suite runs it one tool per step), or ./sanitize-out.
#   Exit 0 only when every run is clean.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:?usage: sanitize.sh BUILD_DIR [BACKENDS]}" && pwd)
out=${BENCH_OUT:-$root/sanitize-out}
tools=${TOOLS:-memcheck racecheck synccheck initcheck}
mkdir -p "$out/san"
lib=$root/.device/deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
if [ -n "${2:-}" ]; then
  backends=${2//,/ }
else
  backends=cuda
  "$B/tilekit" info 2>/dev/null | sed -n '/^\[kokkos\]/,/^\[/p' | grep -q " gpu" && backends="cuda kokkos"
fi

{
  for be in $backends; do
    for tool in $tools; do
      for d in float double; do
        for v in naive tiled optimized; do
          for shape in "gemm --m 67 --n 45 --k 33" "gemm --m 68 --n 44 --k 36" "gemm --m 1 --n 1 --k 1" \
                       "gemm --m 129 --n 260 --k 0" "gemm --m 131 --n 260 --k 37" \
                       "transpose --m 67 --n 45" "transpose --m 68 --n 44" "transpose --m 1 --n 129" \
                       "conv2d --m 67 --n 45 --filter 5" "conv2d --m 131 --n 68 --filter 9" \
                       "conv2d --m 37 --n 44 --filter 17" "conv2d --m 67 --n 44 --filter 31"; do
            echo "$tool|$B/tilekit run $shape --backend $be --variant $v --dtype $d --reps 1"
          done
        done
        # Explicit tiles past the automatic ones (the rejected ones exit 2 and are listed as such),
        # among them the blocks only large problems choose, on shapes with blocks wholly inside C
        # (their steady steps): sm_90's float 128x128x16 and the kokkos team's 256x128x8, the
        # double 64x128x8 block of both backends.
        for vc in "tiled|gemm --m 67 --n 45 --k 33 --tile 32,16,24" "optimized|gemm --m 131 --n 260 --k 37 --tile 128,128,8" \
                  "optimized|gemm --m 260 --n 132 --k 40 --tile 128,64,8" "optimized|transpose --m 100 --n 72 --tile 32,64" \
                  "optimized|gemm --m 300 --n 520 --k 80 --tile 128,128,16" "optimized|gemm --m 520 --n 300 --k 64 --tile 256,128,8" \
                  "optimized|gemm --m 256 --n 384 --k 75 --tile 64,128,8" \
                  "tiled|conv2d --m 67 --n 44 --filter 5 --tile 30,32" "optimized|conv2d --m 131 --n 68 --filter 13 --tile 64,128"; do
          echo "$tool|$B/tilekit run ${vc#*|} --backend $be --variant ${vc%%|*} --dtype $d --reps 1"
        done
      done
      echo "$tool|$B/tilekit run gemm --size 64 --backend $be --peer --reps 1"
    done
    # The campaign's odd shapes, leading dimensions and alpha = 0 / beta = 0 cases, in one process.
    for tool in $tools; do
      case $tool in memcheck | initcheck) echo "$tool|$B/tests/tilekit_campaign --backend $be --cases 300 --seed 11" ;; esac
    done
  done
} >"$out/san/list"

i=0
while IFS='|' read -r tool cmd; do
  i=$((i + 1))
  printf '%s\0' "echo '== compute-sanitizer --tool $tool $cmd'; timeout 900 compute-sanitizer --tool $tool --error-exitcode 9 $cmd 2>&1 | tail -4; echo \"exit=\${PIPESTATUS[0]}\"" >"$out/san/cmd.$(printf %04d $i)"
done <"$out/san/list"
# Four at a time: the tools are single-threaded host-side, the GPU has room.
ls "$out"/san/cmd.???? | xargs -P 4 -I{} sh -c 'bash -c "$(cat {})" >{}.log 2>&1'
cat "$out"/san/cmd.*.log >"$out/sanitize.log"
total=$(grep -c '^exit=' "$out/sanitize.log")
clean=$(grep -c '^exit=0$' "$out/sanitize.log")
usage=$(grep -c '^exit=2$' "$out/sanitize.log")
{
  echo "compute-sanitizer: $total runs, $clean clean, $usage refused as usage (exit 2: a tile the device cannot take)"
  grep -B5 -E '^exit=[^02]' "$out/sanitize.log" | grep -E '^==|ERROR|exit=' | head -60
} | tee "$out/summary.txt"
rm -rf "$out/san"

status=0
[ "$clean" -eq $((total - usage)) ] || status=1
[ "${CASES:-10000}" -gt 0 ] || exit $status
(
  st=0
  for be in $backends; do
    "$B/tests/tilekit_campaign" --backend "$be" --cases "${CASES:-10000}" --seed "${SEED:-1}" || st=1
  done
  exit $st
) 2>&1 | tee "$out/campaign.log" | grep -E "^campaign|FAIL|reproduce" | tee -a "$out/summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
