#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root: the tile layer (issue: portable tile
# kernels) on the H200. Carried: .device (bench/device/pack.sh), .kokkos (a Kokkos + CUDA
# install made on the Debian machine from the fetched upstream source, never committed; built
# for /tmp/kokkos-install, where it is copied back here) and .final/before (`git archive` of the
# commit before the tiled variants moved onto the layer, to time them before and after in one run).
# Stages (default: all): build tests examples speed sanitize. Writes into $OUT.
set -uo pipefail
out=${OUT:-tile-layer-out}
mkdir -p "$out"
stages=${*:-build tests examples speed sanitize}
has() { [[ " $stages " == *" $1 "* ]]; }
root=$PWD
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
kk=()
if [ -d .kokkos ]; then
  rm -rf /tmp/kokkos-install && cp -r .kokkos /tmp/kokkos-install
  kk=(-DTILEKIT_ENABLE_KOKKOS=ON -DKokkos_ROOT=/tmp/kokkos-install)
fi
A=$root/build-device B=$root/.final/before/build-device
log() { echo "[$(date +%T)] $*" | tee -a "$out/summary.txt"; }

if has build; then
  start=$(date +%s)
  ln -sfn "$root/.device" .final/before/.device
  bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF "${kk[@]}" >"$out/build.log" 2>&1 &
  (cd .final/before && bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF "${kk[@]}") >"$out/build-before.log" 2>&1 &
  wait
  log "builds: $(($(date +%s) - start)) s; after: $(ls $A/tilekit 2>&1), before: $(ls $B/tilekit 2>&1)"
  grep -E "error|FAILED" "$out/build.log" "$out/build-before.log" | head -20
  { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; $A/tilekit info; } >"$out/info.txt" 2>&1
fi

if has tests; then
  # The whole conformance suite on the GPU backends (every op x variant x dtype), and the tile
  # layer's own tests compiled by nvcc and by Kokkos.
  timeout 400 $A/tests/tilekit_tests --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1 >"$out/tests-gpu.log" 2>&1
  log "conformance (cuda, kokkos): rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests-gpu.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" "$out/tests-gpu.log" | head -20
  for t in $A/tests/tilekit_tile_tests_cuda $A/tests/tilekit_tile_tests_kokkos; do
    [ -x "$t" ] || continue
    timeout 120 "$t" --gtest_brief=1 >"$out/$(basename "$t").log" 2>&1
    log "$(basename "$t"): rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/$(basename "$t").log" | tr '\n' ' ')"
  done
fi

if has examples; then
  for e in $A/tilekit_example_stencil_cuda $A/tilekit_example_stencil_kokkos $A/tilekit_example_reduction_cuda \
           $A/tilekit_example_reduction_kokkos; do
    [ -x "$e" ] || continue
    timeout 120 "$e" >>"$out/examples.txt" 2>&1
    log "$(basename "$e"): rc=$?"
  done
  cat "$out/examples.txt"
fi

if has speed; then
  # Before and after on one machine in one run, alternating (bench/tiled_before_after.sh).
  bash bench/tiled_before_after.sh $B/tilekit $A/tilekit cuda${kk:+,kokkos} 5 -- \
    "gemm --size 4096" "transpose --size 8192" "conv2d --size 8192 --k 5" "conv2d --size 8192 --k 3" \
    "gemm --size 4096 --dtype double" "conv2d --size 8192 --k 5 --dtype double" >"$out/speed.txt" 2>&1
  log "before/after: rc=$?"
  cat "$out/speed.txt"
fi

if has sanitize; then
  # compute-sanitizer's four tools over the tiled kernels on odd shapes (partial tiles, element
  # and vector loads), both dtypes, and over the tile layer's tests.
  n=0 bad=0
  for tool in memcheck racecheck synccheck initcheck; do
    dtypes="float double"; bs="cuda ${kk:+kokkos}"
    if [ $tool = synccheck ] || [ $tool = initcheck ]; then dtypes=float; bs=cuda; fi
    for d in $dtypes; do
      for c in "gemm --m 67 --n 45 --k 33" "gemm --size 64 --tile 8,8,8" "transpose --m 131 --n 67" \
               "transpose --size 96" "conv2d --m 97 --n 61 --k 5" "conv2d --m 64 --n 128 --k 3" "conv2d --m 33 --n 70 --k 11"; do
        for b in $bs; do
          n=$((n + 1))
          # shellcheck disable=SC2086
          r=$(timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $A/tilekit run $c --backend $b --variant tiled \
              --dtype $d --reps 1 2>&1)
          rc=$?
          if [ $rc -ne 0 ] || ! grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" <<<"$r"; then
            bad=$((bad + 1)); echo "== $tool $c $b $d: rc=$rc"; tail -5 <<<"$r"
          fi
        done
      done
    done
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $A/tests/tilekit_tile_tests_cuda --gtest_brief=1 \
      >"$out/sanitize-tile-tests-$tool.log" 2>&1 || { bad=$((bad + 1)); echo "== $tool tile tests: rc=$?"; tail -5 "$out/sanitize-tile-tests-$tool.log"; }
    n=$((n + 1))
  done >"$out/sanitize.log" 2>&1
  log "compute-sanitizer: $n runs, $bad with findings or failures"
  head -40 "$out/sanitize.log"
fi
cat "$out/summary.txt"
