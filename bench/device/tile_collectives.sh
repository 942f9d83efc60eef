#!/usr/bin/env bash
# Run ON THE DEVICE (after pack.sh here, with ".device" carried): the nvcc versions of the
# tile-layer tests and of the histogram, scan and reduction examples, built for sm_90 in BUILD_DIR
# (default build-device/, where build.sh builds them; configured and built here if missing). Runs
# the tests, then each example's --bench: the tile kernel against a hand-written privatized
# histogram kernel (histogram), cub::BlockScan (block_scan) and cub::BlockReduce (block_reduce)
# on the same data in the same process, one JSON line each (name, backend, n, seconds, baseline,
# baseline_seconds, ratio). Usage: tile_collectives.sh [BUILD_DIR [OUT_DIR]] (OUT_DIR default
# $OUT); writes tests.log, bench.log and bench.jsonl there.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=${1:-$root/build-device}
out=${2:-$OUT}
deps=$root/.device/deps
lib=$deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
targets="tilekit_backend_cuda tilekit_tile_tests_cuda tilekit_example_histogram_cuda tilekit_example_scan_cuda
         tilekit_example_reduction_cuda"
if [ ! -f "$b/build.ninja" ]; then
  cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTILEKIT_ENABLE_CUDA=ON -DTILEKIT_ENABLE_HIP=OFF \
    -DTILEKIT_GTEST_SOURCE="$root/.device/googletest" -DBLAS_LIBRARIES="$lib/libopenblas.so" \
    -DOpenBLAS_DIR=/nonexistent >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
fi
# shellcheck disable=SC2086
cmake --build "$b" -j "$(nproc)" --target $targets >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

"$b/tests/tilekit_tile_tests_cuda" --gtest_brief=1 >"$out/tests.log" 2>&1
echo "tile tests (nvcc build: cuda, serial, openmp): exit $? ($(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/tests.log" | tr '\n' ' '))"

: >"$out/bench.jsonl"
for ex in histogram scan reduction; do
  "$b/tilekit_example_${ex}_cuda" --bench >>"$out/bench.log" 2>&1
  echo "$ex --bench: exit $?"
done
grep '^{' "$out/bench.log" | grep '"backend": "cuda"' | tee "$out/bench.jsonl"
rows=$?  # the exit status: no rows is a failure
# Registers and shared memory of the block-scan kernels, tile layer's and CUB's (the occupancy
# the two get: 256-thread blocks, 8 per SM at 32 registers or fewer).
if command -v cuobjdump >/dev/null; then
  cuobjdump -res-usage "$b/tilekit_example_scan_cuda" 2>/dev/null | grep -A1 -E "BlockScan|cub_block_scan" |
    grep -E "Function|REG" | sed -E 's/^\s+//' | paste - - | sed -E 's/Function ([^:]*):.*(REG:[0-9]+).*(SHARED:[0-9]+).*/\2 \3 \1/'
fi
exit $rows
