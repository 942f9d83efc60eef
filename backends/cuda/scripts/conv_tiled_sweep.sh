#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (after bench/device/pack.sh here, with
# ".device" carried): one call that builds build-device/, checks the tiled conv2d kernel in
# every compiled shape (TILEKIT_CONV_TILED, backends/gpu/conv2d.cu) and times them at 8192^2.
# (The measured run of 2026-11-21 also had the since removed modes async8x2 and async16x2.)
# Logs to $OUT (or ./h200-out); the last lines printed are the summary.
set -uo pipefail
out=${OUT:-h200-out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
B=build-device
T="$B/tilekit run"
modes="regs8 async8 async16"
t0=$SECONDS
rm -rf $B
bash bench/device/build.sh -DTILEKIT_ENABLE_KOKKOS=OFF -DTILEKIT_ENABLE_OPENMP=OFF >"$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
echo "build: $((SECONDS - t0)) s"
export LD_LIBRARY_PATH=$PWD/.device/deps/lib/x86_64-linux-gnu
git rev-parse HEAD >"$out/commit.txt" 2>/dev/null; git status --short >>"$out/commit.txt" 2>/dev/null
{
  $B/tests/tilekit_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*' --gtest_brief=1; echo "all cuda tests (default shape): rc=$?"
  for m in $modes; do
    TILEKIT_CONV_TILED=$m $B/tests/tilekit_tests --gtest_filter='*Conv2d*/cuda_tiled*:*Repeated*/cuda_tiled*' --gtest_brief=1
    echo "conv2d tiled tests, TILEKIT_CONV_TILED=$m: rc=$?"
  done
} >"$out/tests.log" 2>&1
grep -E "rc=|PASSED|FAILED" "$out/tests.log" | tail -16
echo "tests done: $((SECONDS - t0)) s"
# One timed run: full line to sweep.txt, "mode ms GB/s" to stdout.
one() {  # one <mode or -> <tilekit run arguments...>
  local m=$1; shift
  local line
  line=$(TILEKIT_CONV_TILED=${m#-} $T conv2d --backend cuda --size 8192 --reps 20 "$@" 2>&1 | sed 's/ (runtime.s calculator)//')
  echo "mode=$m $* :: $line" >>"$out/sweep.txt"
  echo "$m $* :: $(echo "$line" | grep -oE '[0-9.]+ ms|[0-9.]+ GB/s|NOT VERIFIED|verified' | tr '\n' ' ')"
}
echo "== sweep"
one - --peer --k 5
for pass in 1 2; do for m in $modes; do one $m --variant tiled --k 5; done; done
one - --variant optimized --k 5
echo "sweep R=5 done: $((SECONDS - t0)) s"
# compute-sanitizer on odd shapes, every mode, eight at a time.
mkdir -p /tmp/san
i=0
for m in $modes; do
  for a in "--m 67 --n 45 --k 5" "--m 131 --n 68 --k 9" "--m 37 --n 44 --k 17"; do
    for tool in memcheck racecheck; do
      for d in float double; do
        i=$((i + 1))
        echo "echo '== TILEKIT_CONV_TILED=$m compute-sanitizer --tool $tool conv2d $a --dtype $d'; TILEKIT_CONV_TILED=$m timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $T conv2d --backend cuda --variant tiled $a --dtype $d --reps 1 2>&1 | tail -3; echo \"exit=\${PIPESTATUS[0]}\"" >/tmp/san/cmd.$(printf %03d $i)
      done
    done
  done
done
ls /tmp/san/cmd.* | xargs -P 8 -I{} sh -c 'bash {} >{}.log 2>&1'
cat /tmp/san/cmd.*.log >"$out/sanitize.log"
echo "sanitizer runs: $(grep -c '^== ' "$out/sanitize.log"), done: $((SECONDS - t0)) s"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitize.log" | sort | uniq -c
grep -E "^exit=" "$out/sanitize.log" | sort | uniq -c
obj=$(find $B -name 'conv2d.cu.o' | head -1)
cuobjdump -sass "$obj" | c++filt | xz -1 >"$out/sass-conv2d.txt.xz" 2>&1
echo "== sweep, other R and double"
for r in 3 7; do for m in regs8 async8 async16; do one $m --variant tiled --k $r; done; done
for m in regs8 async8 async16; do one $m --variant tiled --k 5 --dtype double; done
for r in 1 9; do for m in regs8 async8 async16; do one $m --variant tiled --k $r; done; done
one - --variant tiled --k 5 --tile 32,32
one - --variant tiled --k 11
one - --peer --k 5
echo "all done: $((SECONDS - t0)) s"
