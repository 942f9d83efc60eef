#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (after bench/device/pack.sh here, with
# ".device" carried): builds build-device/, then checks and times the cuda backend. Writes
# logs to $OUT (or ./h200-out). Stages: build, info, tests, perf, odd, sanitize (default: all).
# B=<dir> uses binaries built elsewhere for sm_90 (<dir>/tilekit, <dir>/tests/tilekit_tests)
# instead of build-device/ (then leave out the build stage).
set -uo pipefail
out=${OUT:-h200-out}
mkdir -p "$out"
stages=${*:-build info tests perf odd sanitize}
export PATH=/usr/local/cuda/bin:$PATH
B=${B:-build-device}
T="$B/tilekit run"
has() { [[ " $stages " == *" $1 "* ]]; }

if has build; then
  bash bench/device/build.sh >"$out/build.log" 2>&1 || { echo "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30; }
  ls -la $B/tilekit $B/tests/tilekit_tests 2>&1
fi
if has info; then $B/tilekit info 2>&1 | tee "$out/info.txt" | sed -n '/\[cuda\]/,$p'; fi
if has tests; then
  timeout 300 $B/tests/tilekit_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*' >"$out/tests.log" 2>&1
  echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]" "$out/tests.log" | head -40
fi
if has perf; then
  {
    for v in naive tiled optimized; do $T gemm --backend cuda --variant $v --size 4096 --reps 10; done
    $T gemm --backend cuda --peer --size 4096 --reps 10
    $T gemm --backend cuda --variant tiled --size 4096 --tile 16,16,16 --reps 10
    $T gemm --backend cuda --variant optimized --size 4096 --tile 128,64,8 --reps 10
    $T gemm --backend cuda --variant optimized --size 8192 --reps 5
    $T gemm --backend cuda --peer --size 8192 --reps 5
    $T transpose --backend cuda --peer --size 8192
    for v in naive tiled; do $T transpose --backend cuda --variant $v --size 8192; done
    for t in 32,32 64,64 32,64 64,32; do $T transpose --backend cuda --variant optimized --size 8192 --tile $t; done
    $T conv2d --backend cuda --peer --size 8192 --k 5
    $T conv2d --backend cuda --variant naive --size 8192 --k 5
    for t in 32,32 16,64 8,128 32,64 64,64; do $T conv2d --backend cuda --variant tiled --size 8192 --k 5 --tile $t; done
    for t in 32,128 64,128 16,128; do $T conv2d --backend cuda --variant optimized --size 8192 --k 5 --tile $t; done
    for v in tiled optimized; do $T gemm --backend cuda --variant $v --size 4096 --dtype double --reps 5; done
    $T gemm --backend cuda --peer --size 4096 --dtype double --reps 5
    for v in tiled optimized; do $T transpose --backend cuda --variant $v --size 8192 --dtype double; done
    for v in tiled optimized; do $T conv2d --backend cuda --variant $v --size 8192 --k 5 --dtype double; done
  } 2>&1 | tee "$out/perf.txt"
fi
if has ncu; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
  prof() { name=$1; kern=$2; shift 2; timeout 120 $NCU --clock-control none -k regex:$kern -c 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
    --section SchedulerStats "$@" >"$out/ncu-$name.txt" 2>&1; echo "ncu $name rc=$?"; }
  prof conv-tiled conv2d_tiled $T conv2d --backend cuda --variant tiled --size 8192 --k 5 --reps 1
  prof conv-opt conv2d_optimized $T conv2d --backend cuda --variant optimized --size 8192 --k 5 --reps 1
  prof gemm-opt gemm_optimized $T gemm --backend cuda --variant optimized --size 4096 --tile 128,128,8 --reps 1
fi
if has compare; then
  for n in 4096 8192; do
    $B/tilekit compare gemm transpose conv2d --backends cuda --size $n --json "$out/h200-compare-$n.json" \
      >"$out/h200-compare-$n.txt" 2>"$out/h200-compare-$n.err"
    echo "compare $n rc=$?"; cat "$out/h200-compare-$n.txt"
  done
fi
if has conv; then
  {
    $T conv2d --backend cuda --peer --size 8192 --k 5
    for r in 1 3 5 7 9; do for v in tiled optimized; do $T conv2d --backend cuda --variant $v --size 8192 --k $r; done; done
    for t in 64,128 16,128; do $T conv2d --backend cuda --variant optimized --size 8192 --k 5 --tile $t; done
    for d in float double; do for r in 9 15 31; do $T conv2d --backend cuda --variant optimized --size 8192 --k $r --dtype $d; done; done
    for r in 1 3 5 7; do for v in tiled optimized; do $T conv2d --backend cuda --variant $v --size 8192 --k $r --dtype double; done; done
    for v in tiled optimized; do $T conv2d --backend cuda --variant $v --size 4096 --k 5; done
    $T conv2d --backend cuda --peer --size 4096 --k 5
    $T conv2d --backend cuda --peer --size 8192 --k 5
  } 2>&1 | sed 's/ (runtime.s calculator)//' | tee "$out/conv.txt"
fi
if has odd; then
  {
    for d in float double; do
      for v in naive tiled optimized; do
        $T gemm --backend cuda --variant $v --m 67 --n 45 --k 33 --dtype $d --reps 1
        $T gemm --backend cuda --variant $v --m 129 --n 260 --k 0 --dtype $d --reps 1
        $T gemm --backend cuda --variant $v --m 1 --n 1 --k 1 --dtype $d --reps 1
        $T transpose --backend cuda --variant $v --m 67 --n 45 --dtype $d --reps 1
        $T transpose --backend cuda --variant $v --m 64 --n 128 --dtype $d --reps 1
        for r in 1 7 17 31; do $T conv2d --backend cuda --variant $v --m 67 --n 45 --k $r --dtype $d --reps 1; done
      done
    done
    $T gemm --backend cuda --variant tiled --m 67 --n 45 --k 333 --tile 32,32,160 --dtype double --reps 1
  } 2>&1 | grep -E "NOT VERIFIED|error|verified" | sed -E 's/: [0-9.]+ ms.*(verified|NOT VERIFIED).*/: \1/' | tee "$out/odd.txt" | grep -cv "NOT" ; grep -E "NOT|error" "$out/odd.txt"
fi
if has sanitize; then
  # Every tiled and optimized kernel under the four compute-sanitizer tools, on shapes that are
  # no multiple of any tile: odd ones (element-wise paths) and multiples of 4 (16-byte vector
  # paths with partial tiles), plus a conv filter past the unrolled sizes. Four at a time.
  mkdir -p "$out/san"
  {
    for tool in memcheck racecheck synccheck initcheck; do
      for d in float double; do
        for vc in "tiled|gemm --m 67 --n 45 --k 33" "tiled|gemm --m 68 --n 44 --k 36" "tiled|gemm --m 67 --n 45 --k 33 --tile 32,16,24" \
                  "optimized|gemm --m 67 --n 45 --k 33" "optimized|gemm --m 68 --n 44 --k 36" \
                  "optimized|gemm --m 131 --n 260 --k 37 --tile 128,128,8" "optimized|gemm --m 260 --n 132 --k 40 --tile 128,64,8" \
                  "tiled|transpose --m 67 --n 45" "tiled|transpose --m 68 --n 44" \
                  "optimized|transpose --m 67 --n 45" "optimized|transpose --m 68 --n 44" "optimized|transpose --m 100 --n 72 --tile 32,64" \
                  "tiled|conv2d --m 67 --n 45 --k 5" "tiled|conv2d --m 67 --n 44 --k 5 --tile 30,32" "tiled|conv2d --m 37 --n 44 --k 17" \
                  "tiled|conv2d --m 131 --n 68 --k 5" "tiled|conv2d --m 131 --n 68 --k 9" \
                  "optimized|conv2d --m 67 --n 45 --k 5" "optimized|conv2d --m 131 --n 68 --k 5" "optimized|conv2d --m 37 --n 44 --k 17" \
                  "optimized|conv2d --m 131 --n 68 --k 13 --tile 64,128" "optimized|conv2d --m 67 --n 44 --k 3 --tile 40,128"; do
          echo "$tool|$B/tilekit run ${vc#*|} --backend cuda --variant ${vc%%|*} --dtype $d --reps 1"
        done
      done
    done
    } >"$out/san/list"
  i=0
  while IFS='|' read -r tool cmd; do
    i=$((i + 1))
    printf '%s\0' "echo '== compute-sanitizer --tool $tool $cmd'; timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $cmd 2>&1 | tail -4; echo \"exit=\${PIPESTATUS[0]}\"" >"$out/san/cmd.$(printf %03d $i)"
  done <"$out/san/list"
  ls "$out"/san/cmd.* | xargs -P 4 -I{} sh -c 'bash -c "$(cat {})" >{}.log 2>&1'
  cat "$out"/san/cmd.*.log >"$out/sanitize.log"
  rm -rf "$out/san"
  echo "sanitizer runs: $(grep -c '^== ' "$out/sanitize.log")"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitize.log" | sort | uniq -c
  grep -E "^exit=" "$out/sanitize.log" | sort | uniq -c
fi
