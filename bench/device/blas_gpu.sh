#!/usr/bin/env bash
# Run ON THE DEVICE machine (one GPU or two), from the repository root, after
# `bash bench/device/build.sh` has built build-device/: libtilekit_blas' GPU path from host memory
# (backends/gpu/host_gemm.hpp, docs/design/blas-gpu-staging.md).
#
#   bash bench/device/blas_gpu.sh [BUILD_DIR] [STAGES]     (BUILD_DIR default build-device)
#   bash bench/device/blas_gpu.sh pack                     (here, before: netlib's testers)
#
# STAGES (default "tests sanitize bench"; "crossover" on request):
#   tests      the engine's fake-device test; libtilekit_blas' own tests with every call on the GPU
#              (TILEKIT_BLAS_BACKEND=cuda, TILEKIT_BLAS_GPU_MIN=0): with the automatic tiles on
#              device 0, and with 7-wide tiles (many tiles, every transpose on the device) over every
#              GPU (both on a 2-GPU machine); netlib's testers the same way (16-wide tiles) when
#              .device/blastest holds them (`pack` below; BLAS_TESTERS_DIR, scripts/blas-testers.sh).
#   sanitize   compute-sanitizer memcheck over a BLAS run of the new path (odd shapes, 64-wide tiles).
#   bench      tilekit_blas_xt_bench: SGEMM and DGEMM at 16384 and 32768 from pageable host memory:
#              tilekit's host path on 1 GPU and on all, cuBLASXt on 1 and on all (block dims 2048 and
#              4096 at 16384, the better one at 32768), tilekit::gemm on device memory (the ceiling).
#              Each the median of 3 after a warm-up, except cuBLASXt after the first size: one run
#              (XT_REPS_LATER), warmed by the first size only (10-25 s a call at 32768 on one GPU).
#              SIZES overrides the sizes (e.g. SIZES=16384), DTYPES the dtypes (float,double); XT=0
#              leaves cuBLASXt out. Also the staging's parts: one thread's and all threads' packing
#              bandwidth, pinned H2D/D2H bandwidth.
#   huge       matrices of 2^31 elements or more through sgemm_/dgemm_ with every call on the GPU
#              (tests/blas/blas_huge.cpp): every offset past 2^31 by the leading dimensions (all
#              GPUs), then dense 50000^3 SGEMM (10 GB a matrix) on all GPUs and on device 0, and a
#              dense 46341^3 DGEMM, A transposed (17 GB a matrix), on all GPUs. Needs about 60 GB of
#              host memory (skipped with less).
#   pack       HERE (Debian, libblas-test installed), not on the device: copies netlib's four level-3
#              testers with libgfortran.so.5 and libquadmath.so.0 into .device/blastest (carry .device).
#   crossover  bench/blas_bench.sh crossover: sgemm_/dgemm_ from host memory on cuda and on openmp at
#              256..4096, alternating processes, 3 rounds; the size from which cuda wins at every
#              larger size is blas.gpu_min's default (docs/blas.md).
# Prints RESULT lines, and JSON rows (lines starting with '{') for bench/run.py from bench and
# crossover; exits non-zero when any check fails (the failing output is printed). About 4 minutes
# for the default stages on one GPU, 5 with crossover.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = pack ]; then
  src=/usr/lib/x86_64-linux-gnu/blas
  [ -x $src/xblat3s ] || { echo "libblas-test is not installed (apt-get install libblas-test)" >&2; exit 2; }
  mkdir -p "$root/.device/blastest"
  cp $src/xblat3s $src/xblat3d $src/xscblat3 $src/xdcblat3 "$root/.device/blastest/"
  for l in libgfortran.so.5 libquadmath.so.0; do cp -L "$(ldconfig -p | awk -v l=$l '$1 == l { print $NF; exit }')" "$root/.device/blastest/"; done
  ls -la "$root/.device/blastest"
  exit 0
fi
B=$(cd "${1:-$root/build-device}" && pwd) || { echo "no build directory ${1:-build-device}" >&2; exit 2; }
stages=${2:-tests sanitize bench}
lib=$root/.device/deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "blas_gpu.sh: $ngpu GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs)"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
failed() {
  echo "FAILED: $*"
  status=1
}
run_logged() {  # <label> <command...>: prints the tail of the output when it fails
  local label=$1 t0=$SECONDS
  shift
  if "$@" >/tmp/blas_gpu.$$ 2>&1; then
    echo "ok   $label ($((SECONDS - t0)) s)"
  else
    failed "$label (exit $?)"
    tail -40 /tmp/blas_gpu.$$
  fi
}

# (devices, tile) pairs: the automatic tiles (one tile at these tests' sizes) on device 0, and
# small tiles (many tiles, every transpose on the device) spread over every GPU.
configs=("0 0" "all 7")

for stage in $stages; do
  case $stage in
    tests)
      run_logged "engine on fake devices" "$B/tests/tilekit_tests" --gtest_filter='HostGemmEngine.*'
      for cfg in "${configs[@]}"; do
        read -r devs tile <<<"$cfg"
        run_logged "blas unit, cuda, devices $devs, tile $tile" env TILEKIT_BLAS_BACKEND=cuda TILEKIT_BLAS_GPU_MIN=0 \
          TILEKIT_BLAS_DEVICES=$devs TILEKIT_BLAS_GPU_TILE=$tile "$B/tests/blas/tilekit_blas_tests"
      done
      # Every call counted on cuda (none fell back to the CPU or the system BLAS).
      out=$(TILEKIT_BLAS_BACKEND=cuda TILEKIT_BLAS_GPU_MIN=0 TILEKIT_BLAS_GPU_TILE=5 TILEKIT_BLAS_VERBOSE=1 \
        "$B/tests/blas/tilekit_blas_smoke" calls 2>&1)
      echo "$out" | grep -q "tilekit-blas: 4 calls (sgemm 2, dgemm 2) on cuda$" && echo "ok   summary: $(echo "$out" | tail -1)" ||
        { failed "smoke on cuda"; echo "$out"; }
      if [ -x "$root/.device/blastest/xblat3s" ]; then
        export BLAS_TESTERS_DIR=$root/.device/blastest
        for cfg in "0 0" "all 16"; do
          read -r devs tile <<<"$cfg"
          LD_LIBRARY_PATH=$BLAS_TESTERS_DIR:$LD_LIBRARY_PATH run_logged "netlib testers, cuda, devices $devs, tile $tile" \
            env TILEKIT_BLAS_GPU_MIN=0 TILEKIT_BLAS_DEVICES=$devs TILEKIT_BLAS_GPU_TILE=$tile \
            bash "$root/scripts/blas-testers.sh" "$B/libtilekit_blas.so" cuda
        done
      else
        echo "skip netlib testers: no .device/blastest (copy Debian's libblas-test testers there, with libgfortran.so.5, libquadmath.so.0)"
      fi
      ;;
    sanitize)
      if command -v compute-sanitizer >/dev/null; then
        run_logged "compute-sanitizer memcheck, blas on cuda, tile 64" env TILEKIT_BLAS_BACKEND=cuda TILEKIT_BLAS_GPU_MIN=0 \
          TILEKIT_BLAS_GPU_TILE=64 compute-sanitizer --tool memcheck --error-exitcode 9 \
          "$B/tests/blas/tilekit_blas_tests" --gtest_filter='Blas.DgemmMatchesTheReference:Blas.KZeroScalesC:Blas.AlphaZeroReadsNeitherAnorB'
      else
        failed "compute-sanitizer not found"
      fi
      ;;
    bench)
      [ -x "$B/tilekit_blas_xt_bench" ] || { failed "no $B/tilekit_blas_xt_bench (cuBLAS not found at build time?)"; continue; }
      t0=$SECONDS
      xt=()
      [ "${XT:-1}" = 0 ] && xt=(--no-xt)
      "$B/tilekit_blas_xt_bench" --probe --sizes "${SIZES:-16384,32768}" --dtypes "${DTYPES:-float,double}" --reps 3 \
        --xt-block-from-first --xt-reps-after-first "${XT_REPS_LATER:-1}" "${xt[@]}" || failed "tilekit_blas_xt_bench (exit $?)"
      echo "bench: $((SECONDS - t0)) s"
      ;;
    crossover)
      bash "$root/bench/blas_bench.sh" "$B" crossover || failed "blas_bench.sh crossover"
      ;;
    huge)
      # <label> <devices> <args...>: passes when the program passes and every call ran on cuda.
      huge() {
        local label=$1 devs=$2 t0=$SECONDS out rc
        shift 2
        out=$(TILEKIT_BLAS_BACKEND=cuda TILEKIT_BLAS_GPU_MIN=0 TILEKIT_BLAS_DEVICES=$devs TILEKIT_BLAS_VERBOSE=1 \
          "$B/tests/blas/tilekit_blas_huge" "$@" 2>&1)
        rc=$?
        echo "$out" | grep -E '^(RESULT|\{)' | sed "s/\"backend\": \"cuda\"/\"backend\": \"cuda\", \"devices\": \"$devs\"/"
        if [ $rc -eq 77 ]; then
          echo "skip $label: $(echo "$out" | head -1)"
        elif [ $rc -eq 0 ] && echo "$out" | grep -qE '^tilekit-blas: [0-9]+ calls \(.*\) on cuda$'; then
          echo "ok   $label ($((SECONDS - t0)) s): $(echo "$out" | grep -E ': ok$' | cut -c1-160 | tr '\n' ' ')"
        else
          failed "$label (exit $rc)"
          echo "$out" | tail -20
        fi
      }
      huge "offsets past 2^31, sgemm_ NT and dgemm_ TN, all GPUs" all strided
      huge "dense SGEMM 50000, all GPUs" all dense float 50000 NN
      huge "dense SGEMM 50000, device 0" 0 dense float 50000 NN
      huge "dense DGEMM 46341, A transposed, all GPUs" all dense double 46341 TN
      ;;
    *) echo "unknown stage '$stage' (tests, sanitize, bench, huge, crossover)" >&2; exit 2 ;;
  esac
done
rm -f /tmp/blas_gpu.$$
((status == 0)) && echo "blas_gpu.sh: all passed" || echo "blas_gpu.sh: FAILURES above"
exit $status
