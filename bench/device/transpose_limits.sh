#!/usr/bin/env bash
# Run ON THE DEVICE machine's host CPU (an Intel Xeon), from the repository root, after
# `bash bench/device/build.sh` has built build-device/: what bounds the openmp transpose there
# (docs/design/openmp-transpose-blocks.md), the GPU unused.
#
#   bash bench/device/transpose_limits.sh [BUILD_DIR]     (default build-device)
#
# 1. bench/transpose_limits.cpp (compiled here with g++ -O3 -march=native -fopenmp) at 8192² and
#    4096² floats, 1 and all threads: glibc's memcpy, streaming copies with 32- and 64-byte stores,
#    a copy with the transpose's accesses (tp-pattern), the AVX2 transpose streaming (tp-kernel) and
#    through ordinary stores (tp-kernel-store: below the streaming bound), each the median of 15
#    rounds of its ratio to the faster memcpy of the same round.
# 2. tilekit's openmp optimized transpose, AVX2 forced and not, against its memcpy peer (1 and all
#    threads), float 8192² and 4096², 3 alternating rounds.
# Prints the tables and RESULT lines (bench/kv_rows.py turns them into rows); exits non-zero when a
# transpose computes a wrong result or a program fails. About 2 minutes.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=${1:-$root/build-device}
T=$b/tilekit
[ -x "$T" ] || { echo "no $T: run bench/device/build.sh first" >&2; exit 2; }
fail=0
lscpu | grep -E "Model name|^CPU\(s\)|L2 cache|L3 cache" || true
out=/tmp/transpose_limits
g++ -O3 -march=native -fopenmp "$root/bench/transpose_limits.cpp" -o $out || { echo "FAIL: compiling bench/transpose_limits.cpp" >&2; exit 1; }
for n in 8192 4096; do
  echo "== bench/transpose_limits.cpp n=$n"
  $out $n 15 352 352 memcpy copy-nt32 copy-nt64 tp-pattern tp-kernel tp-kernel-store || { echo "FAIL: transpose_limits n=$n" >&2; fail=1; }
done
all=$(nproc)
for r in 1 2 3; do
  for n in 8192 4096; do
    for th in $all 1; do
      for simd in avx2 auto; do
        line=$(TILEKIT_OPENMP_SIMD=$simd OMP_NUM_THREADS=$th "$T" run transpose --backend openmp --variant optimized --size $n --reps 10 2>&1 | tail -1)
        echo "$line" | grep -q verified || { echo "FAIL: $line" >&2; fail=1; }
        echo "RESULT transpose_openmp round=$r n=$n threads=$th simd=$simd gbs=$(echo "$line" | grep -o '[0-9.]* GB/s' | cut -d' ' -f1)"
      done
      line=$(OMP_NUM_THREADS=$th "$T" run transpose --backend openmp --peer --size $n --reps 10 2>&1 | tail -1)
      echo "$line" | grep -q verified || { echo "FAIL: $line" >&2; fail=1; }
      echo "RESULT transpose_memcpy round=$r n=$n threads=$th gbs=$(echo "$line" | grep -o '[0-9.]* GB/s' | cut -d' ' -f1)"
    done
  done
done
exit $fail
