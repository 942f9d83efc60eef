#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root: round 2's H200 checks in two calls of the
# device tool (each on a fresh machine, so each builds first), every stage under a time limit so
# that the call ends inside the tool's 10 minutes and returns what it has.
#   call A: bash bench/device/round2.sh A   build (before and after), conformance, tile layer tests,
#           examples, tiled before/after, DMMA (bench/device/dgemm.sh: sass, tests, perf, compare)
#   call B: bash bench/device/round2.sh B   build (before and after), hardening tests, roofline
#           ceilings and compare, ncu DRAM bytes of the gemm kernels (PMPP's ratios), plugins, GPU
#           campaign, compute-sanitizer over the tile layer's kernels and the DMMA gemm
#   call C: bash bench/device/round2.sh C   build (before and after), tiled before/after (two
#           rounds, one invocation each), the kokkos campaign and the tile tests under initcheck
#           after the fixes call B asked for
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
# This tree into build-device/ and the one before the tile layer (.final/before) beside it, at once.
build_both() {
  ln -sfn "$root/.device" .final/before/.device
  stage build "$1" bash -c "bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF ${kk[*]} >$w/build-after.log 2>&1 &
    (cd .final/before && bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF ${kk[*]}) >$w/build-before.log 2>&1 & wait;
    ls -la $A/tilekit .final/before/build-device/tilekit"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$w/gpu.txt" 2>&1

if [ "$call" = D ]; then
  # The last minutes of device time: the gemm and conv2d tiled rows again after two fixes
  # (register-staged lane-grid loads; the Kokkos lane worked out once per tile).
  build_both 200
  stage tests 30 "$A/tests/tilekit_tests" --gtest_filter='*/cuda_tiled*:*/kokkos_tiled*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED) ' "$w/tests.log" >>"$w/summary.txt"
  stage speed 60 bash bench/tiled_before_after.sh .final/before/build-device/tilekit "$A/tilekit" cuda,kokkos 1 -- \
    "gemm --size 4096" "conv2d --size 8192 --k 5"
  cat "$w/speed.log" >>"$w/summary.txt"
elif [ "$call" = C ]; then
  build_both 300
  stage campaign 60 bash -c "$A/tests/tilekit_campaign --backend kokkos --cases 10000 --seed 1 &&
    $A/tests/tilekit_campaign --backend cuda --cases 10000 --seed 2"
  grep -E "^campaign" "$w/campaign.log" >>"$w/summary.txt"
  stage initcheck 60 compute-sanitizer --tool initcheck --error-exitcode 9 "$A/tests/tilekit_tile_tests_cuda" --gtest_brief=1
  tail -3 "$w/initcheck.log" >>"$w/summary.txt"
  cases=("gemm --size 4096" "transpose --size 8192" "conv2d --size 8192 --k 5")
  stage speed1 120 bash bench/tiled_before_after.sh .final/before/build-device/tilekit "$A/tilekit" cuda,kokkos 1 -- "${cases[@]}"
  cat "$w/speed1.log" >>"$w/summary.txt"
  stage speed2 $((330 - ($(date +%s) - t0))) env FIRST=after bash bench/tiled_before_after.sh .final/before/build-device/tilekit \
    "$A/tilekit" cuda,kokkos 1 -- "${cases[@]}"
  cat "$w/speed2.log" >>"$w/summary.txt"
elif [ "$call" = A ]; then
  build_both 300
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
  # One call left in the session's device time: build both trees, then in order of need.
  build_both 300
  "$A/tilekit" info >"$w/info.txt" 2>&1
  stage hardening 60 "$A/tests/tilekit_tests" --gtest_filter='*Hardening*:*Concurren*' --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$w/hardening.log" >>"$w/summary.txt"
  stage speed 170 bash bench/tiled_before_after.sh .final/before/build-device/tilekit "$A/tilekit" cuda,kokkos 3 -- \
    "gemm --size 4096" "transpose --size 8192" "conv2d --size 8192 --k 5" "conv2d --size 8192 --k 3"
  cat "$w/speed.log" >>"$w/summary.txt"
  mkdir -p "$w/roofline"
  stage ceilings 60 "$A/tilekit" roofline --backends cuda,kokkos
  stage roofline 120 "$A/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 5 \
    --json "$w/roofline/h200-roofline.json" --csv "$w/roofline/h200-roofline.csv" --plot "$w/roofline/h200-roofline.svg"
  # PMPP's compute-to-global-memory-access ratios, counted: DRAM bytes of the naive gemm and the
  # 16x16 and 32x32 tiled ones at 4096^3 (3 x 64 MiB, past the 60 MB L2).
  for c in "naive" "tiled --tile 16,16,16" "tiled --tile 32,32,32"; do
    stage "ncu-gemm-${c// /_}" 60 ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      "$A/tilekit" run gemm --size 4096 --backend cuda --variant $c --reps 1 --traffic
  done
  stage plugins 45 env OUT="$w/plugins" bash scripts/gpu-plugin-check.sh "$A"
  stage campaign 90 bash -c "$A/tests/tilekit_campaign --backend cuda --cases 10000 --seed 1 &&
    $A/tests/tilekit_campaign --backend kokkos --cases 10000 --seed 1"
  tail -4 "$w/campaign.log" >>"$w/summary.txt"
  # compute-sanitizer over what this round changed: the tiled variants (now the tile layer's
  # kernels) on cuda and kokkos, and the DMMA double gemm; eight at a time.
  {
    for be in cuda kokkos; do
      for tool in memcheck racecheck synccheck initcheck; do
        for d in float double; do
          for c in "gemm --m 67 --n 45 --k 33" "gemm --m 64 --n 64 --k 64 --tile 16,16,16" "transpose --m 67 --n 45" \
                   "transpose --m 68 --n 44" "conv2d --m 67 --n 45 --filter 5" "conv2d --m 131 --n 68 --filter 9" \
                   "conv2d --m 37 --n 44 --filter 17"; do
            echo "compute-sanitizer --tool $tool --error-exitcode 9 $A/tilekit run $c --backend $be --variant tiled --dtype $d --reps 1"
          done
        done
      done
    done
    for tool in memcheck racecheck synccheck initcheck; do
      for c in "--m 67 --n 45 --k 33" "--m 131 --n 260 --k 37 --tile 128,128,16" "--m 129 --n 66 --k 18 --tile 64,64,16"; do
        echo "compute-sanitizer --tool $tool --error-exitcode 9 $A/tilekit run gemm $c --backend cuda --variant optimized --dtype double --reps 1"
      done
      echo "compute-sanitizer --tool $tool --error-exitcode 9 $A/tests/tilekit_tile_tests_cuda --gtest_brief=1"
    done
  } >"$w/sanitize.list"
  cat >"$w/san1.sh" <<'ONE'
o=$(mktemp); eval "$1" >"$o" 2>&1; rc=$?; echo "rc=$rc $1"; [ $rc -eq 0 ] || tail -6 "$o"; rm -f "$o"
ONE
  stage sanitize $((575 - ($(date +%s) - t0))) bash -c "xargs -P 8 -d '\n' -n 1 bash $w/san1.sh <$w/sanitize.list"
  echo "compute-sanitizer: $(grep -c '^rc=' "$w/sanitize.log") of $(wc -l <"$w/sanitize.list") runs done, $(grep -c '^rc=0 ' "$w/sanitize.log") clean" >>"$w/summary.txt"
  grep -A4 '^rc=[^0]' "$w/sanitize.log" | head -40 >>"$w/summary.txt"
fi
cat "$w/summary.txt"
