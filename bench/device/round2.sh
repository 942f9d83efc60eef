#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root: round 2's H200 checks in two calls of the
# device tool (each on a fresh machine, so each builds first), every stage under a time limit so
# that the call ends inside the tool's 10 minutes and returns what it has.
#   call A: bash bench/device/round2.sh A   build (before and after), conformance, tile layer tests,
#           examples, tiled before/after, DMMA (bench/device/dgemm.sh: sass, tests, perf, compare)
#   call B: bash bench/device/round2.sh B   build, compute-sanitizer + GPU campaign (sanitize.sh),
#           roofline + traffic (roofline.sh), plugins (gpu-plugin-check.sh)
# Carried: .device (bench/device/pack.sh), .kokkos (a Kokkos + CUDA install made on the Debian
# machine from the fetched upstream source, never committed; built for /tmp/kokkos-install) and,
# for call A, .final/before (`git archive` of the last commit before the tile layer).
# Everything lands in $OUT/round2-<call>.tar.gz, with summary.txt beside it.
set -uo pipefail
call=${1:?call A or B}
root=$PWD
w=/tmp/round2-$call
rm -rf "$w" && mkdir -p "$w"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$w/summary.txt"; }
stage() {  # stage NAME SECONDS COMMAND...: its output in NAME.log, its exit status in the summary
  local name=$1 secs=$2 s
  shift 2
  s=$(date +%s)
  timeout "$secs" "$@" >"$w/$name.log" 2>&1
  log "$name: rc=$? in $(($(date +%s) - s)) s"
}
finish() {
  tar -C /tmp -czf "$OUT/round2-$call.tar.gz" "round2-$call"
  cp "$w/summary.txt" "$OUT/summary-$call.txt"
}
trap finish EXIT

kk=()
if [ -d .kokkos ]; then
  rm -rf /tmp/kokkos-install && cp -r .kokkos /tmp/kokkos-install
  # Kokkos linked into libtilekit, not a plugin: the tile-layer programs link Kokkos too, and a
  # static Kokkos must exist once in a process.
  kk=(-DTILEKIT_ENABLE_KOKKOS=ON -DKokkos_ROOT=/tmp/kokkos-install -DTILEKIT_KOKKOS_PLUGIN=OFF)
fi
A=$root/build-device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$w/gpu.txt" 2>&1

if [ "$call" = A ]; then
  ln -sfn "$root/.device" .final/before/.device
  stage build 300 bash -c "bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF ${kk[*]} >$w/build-after.log 2>&1 &
    (cd .final/before && bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF ${kk[*]}) >$w/build-before.log 2>&1 & wait;
    ls -la $A/tilekit .final/before/build-device/tilekit"
  cat "$w/build.log" >>"$w/summary.txt"
  "$A/tilekit" info >"$w/info.txt" 2>&1
  stage conformance 200 "$A/tests/tilekit_tests" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$w/conformance.log" >>"$w/summary.txt"
  for t in tilekit_tile_tests_cuda tilekit_tile_tests_kokkos; do
    stage "$t" 60 "$A/tests/$t" --gtest_brief=1
    grep -E '^\[  (PASSED|FAILED) ' "$w/$t.log" >>"$w/summary.txt"
  done
  for e in stencil_cuda stencil_kokkos reduction_cuda reduction_kokkos; do stage "example_$e" 60 "$A/tilekit_example_$e"; done
  stage speed 240 bash bench/tiled_before_after.sh .final/before/build-device/tilekit "$A/tilekit" cuda,kokkos 5 -- \
    "gemm --size 4096" "transpose --size 8192" "conv2d --size 8192 --k 5" "conv2d --size 8192 --k 3" \
    "gemm --size 4096 --dtype double" "conv2d --size 8192 --k 5 --dtype double"
  cat "$w/speed.log" >>"$w/summary.txt"
  stage dgemm $((570 - ($(date +%s) - t0))) env OUT="$w/dgemm" B="$A" bash bench/device/dgemm.sh sass tests perf compare
  tail -30 "$w/dgemm.log" >>"$w/summary.txt"
else
  stage build 240 bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF "${kk[@]}"
  "$A/tilekit" info >"$w/info.txt" 2>&1
  stage plugins 60 env OUT="$w/plugins" bash scripts/gpu-plugin-check.sh "$A"
  stage roofline 200 env TILEKIT_BACKENDS=cuda,kokkos bash bench/device/roofline.sh "$A" "$w/roofline"
  stage sanitize $((570 - ($(date +%s) - t0))) env OUT="$w/sanitize" bash bench/device/sanitize.sh "$A" "cuda kokkos"
  cat "$w/sanitize/summary.txt" >>"$w/summary.txt" 2>/dev/null
fi
cat "$w/summary.txt"
