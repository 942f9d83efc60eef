#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root: the session-3 H200 work in as few calls of
# the device tool as its time allows. Every stage runs under its own time limit so that the call
# ends inside the tool's 10 minutes and returns what it has; a stage that fails or times out
# does not stop the others.
#   bash bench/device/round3.sh build STAGE...   configure + build into build-device/ (openmp,
#                                                cuda, Kokkos-CUDA linked in) if not built, then
#                                                the stages in order
# Stages:
#   probe      bench/device/probes/gemm_tiled_probe.cu: the tile layer's tiled gemm against the
#              hand-written one, one difference at a time; plain, under ncu, SASS counts
#   before     (with build) the tree before the tile layer, .final/before, built beside it at once
#   tiled      tiled before/after table (bench/tiled_before_after.sh), cuda and kokkos
#   roofline   bench/device/roofline.sh (ceilings, compare --plot, ncu traffic table)
#   sanitize   compute-sanitizer's four tools over the tiled kernels
#   final      the conformance suite on cuda and kokkos and `compare` at 8192 with the merged defaults
#   <name>     a helper's stage: bench/device/r3/<name>.sh BUILD_DIR OUT_DIR
# Carried: .device (bench/device/pack.sh), .kokkos (a Kokkos + CUDA install built on the Debian
# machine from the fetched upstream source, never committed; built for /tmp/kokkos-install), and
# for `before`, .final/before (`git archive 679a6d4`). Results: $OUT/round3-<stages>.tar.gz and
# the summary beside it.
set -uo pipefail
root=$PWD
tag=$(echo "$*" | tr ' ' '-')
w=/tmp/round3/$tag
rm -rf "$w" && mkdir -p "$w"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$w/summary.txt"; }
stage() {  # stage NAME SECONDS COMMAND...: its output in NAME.log, its exit status in the summary
  local name=$1 secs=$2 s
  shift 2
  s=$(date +%s)
  timeout -k 5 "$secs" "$@" >"$w/$name.log" 2>&1
  log "$name: rc=$? in $(($(date +%s) - s)) s"
}
finish() {
  tar -C /tmp/round3 -czf "$OUT/round3-$tag.tar.gz" "$tag"
  cp "$w/summary.txt" "$OUT/summary-$tag.txt"
}
trap finish EXIT
log "commit $(cat .device/commit 2>/dev/null || git rev-parse HEAD 2>/dev/null); stages: $*"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$w/gpu.txt" 2>&1

kk=()
if [ -d .kokkos ]; then
  [ -d /tmp/kokkos-install ] || cp -r .kokkos /tmp/kokkos-install
  # Kokkos linked into libtilekit, not a plugin: the tile-layer programs link Kokkos too, and a
  # static Kokkos must exist once in a process.
  kk=(-DTILEKIT_ENABLE_KOKKOS=ON -DKokkos_ROOT=/tmp/kokkos-install -DTILEKIT_KOKKOS_PLUGIN=OFF)
fi
A=$root/build-device
B=$root/.final/before/build-device

for s in "$@"; do
  left=$((590 - ($(date +%s) - t0)))
  lim() { echo $(($1 < left ? $1 : left)); }
  case $s in
    build)
      if [[ " $* " == *" before "* ]]; then  # both trees at once (16 cores), the before tree's log apart
        ln -sfn "$root/.device" .final/before/.device
        (cd .final/before && bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=OFF "${kk[@]}") >"$w/before.log" 2>&1 &
      fi
      stage build "$(lim "${R3_build:-240}")" bash bench/device/build.sh -DTILEKIT_ENABLE_OPENMP=ON "${kk[@]}"
      wait
      tail -5 "$w/build.log" >>"$w/summary.txt"
      "$A/tilekit" info >"$w/info.txt" 2>&1 ;;
    before)  # built beside build-device by the build stage
      log "before: $(ls "$B/tilekit" 2>&1)" ;;
    probe)
      mkdir -p "$w/probe"
      stage probe "$(lim 100)" bash -c "
        nvcc -O3 -arch=sm_90 -std=c++17 --expt-relaxed-constexpr -Xptxas -v -Iinclude -I$A/include -Ibackends \
          -o $w/probe/gemm_tiled_probe bench/device/probes/gemm_tiled_probe.cu 2>$w/probe/ptxas.txt &&
        $w/probe/gemm_tiled_probe 4096 | tee $w/probe/times.txt &&
        cuobjdump -sass $w/probe/gemm_tiled_probe >$w/probe/sass.txt &&
        for v in old old+vecA layer; do
          ncu --clock-control none --metrics smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,gpu__time_duration.sum \
            $w/probe/gemm_tiled_probe 4096 \$v >$w/probe/ncu-\$v.txt 2>&1
        done"
      rm -f "$w/probe/gemm_tiled_probe"
      cat "$w/probe/times.txt" >>"$w/summary.txt" 2>/dev/null ;;
    tiled)
      stage tiled "$(lim 150)" bash bench/tiled_before_after.sh "$B/tilekit" "$A/tilekit" cuda,kokkos "${ROUNDS:-2}" -- \
        "gemm --size 4096" "transpose --size 8192" "conv2d --size 8192 --k 5" "conv2d --size 8192 --k 3"
      cat "$w/tiled.log" >>"$w/summary.txt" ;;
    roofline)
      stage roofline "$(lim 240)" env TILEKIT_BACKENDS=cuda,kokkos bash bench/device/roofline.sh "$A" "$w/roofline"
      grep -E "^compare|^(cuda|kokkos) " "$w/roofline/h200-roofline.txt" >>"$w/summary.txt" 2>/dev/null ;;
    final)  # the merged tree's defaults: the conformance suite on cuda and kokkos, then one comparison
      stage conformance "$(lim 150)" "$A/tests/tilekit_tests" --gtest_filter='*cuda*:*kokkos*' --gtest_brief=1
      grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$w/conformance.log" >>"$w/summary.txt"
      stage compare "$(lim 150)" "$A/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
        --json "$w/h200-final-8192.json"
      grep -E "^(gemm|transpose|conv2d) " "$w/compare.log" >>"$w/summary.txt" ;;
    sanitize)
      # The tile layer's kernels (its tests, the tiled variants' conformance cases), each tool once.
      stage sanitize "$(lim 90)" bash -c "for tool in memcheck racecheck synccheck initcheck; do
        compute-sanitizer --tool \$tool --error-exitcode 9 $A/tests/tilekit_tile_tests_cuda --gtest_brief=1 2>&1 | tail -2
        echo \"\$tool tile tests: exit \${PIPESTATUS[0]}\"
        compute-sanitizer --tool \$tool --error-exitcode 9 $A/tests/tilekit_tests --gtest_filter='*cuda_tiled_float*' --gtest_brief=1 2>&1 | tail -2
        echo \"\$tool cuda tiled conformance: exit \${PIPESTATUS[0]}\"; done"
      grep -E "exit|ERROR SUMMARY" "$w/sanitize.log" >>"$w/summary.txt" ;;
    *)
      if [ -f "bench/device/r3/$s.sh" ]; then
        mkdir -p "$w/$s"
        # Each helper stage's seconds (R3_<stage>=N overrides), passed to it as its own budget.
        case $s in xeon) secs=120 ;; kokkosgpu) secs=90 ;; cputiled) secs=45 ;; *) secs=110 ;; esac
        v=R3_$s
        secs=$(lim "${!v:-$secs}")
        stage "$s" "$secs" env SGEMM_BUDGET=$((secs - 5)) CONV_BUDGET_S=$((secs - 5)) KOKKOSGPU_BUDGET=$((secs - 5)) \
          XEON_BUDGET=$((secs - 5)) bash "bench/device/r3/$s.sh" "$A" "$w/$s"
      else
        log "$s: no such stage"
      fi ;;
  esac
done
