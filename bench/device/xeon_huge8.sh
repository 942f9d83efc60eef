#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 8, fourth call): the 16-core Xeon host
# with host matrices on transparent huge pages (the default since session 8) against 4 KiB pages
# (TILEKIT_HUGE_PAGES=0), alternating, three rounds: openmp optimized transpose 8192^2 beside the
# memcpy peer, SGEMM 2048 beside OpenBLAS (SkylakeX kernel). A CPU-only build first.
#   bash bench/device/xeon_huge8.sh OUT_FILE
set -uo pipefail
out=${1:?OUT_FILE}
bash bench/device/build.sh -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_OPENMP=ON -DTILEKIT_ENABLE_KOKKOS=OFF >"$out.build.log" 2>&1 ||
  { echo "build failed" >"$out"; exit 1; }
export LD_LIBRARY_PATH=$PWD/.device/deps/lib/x86_64-linux-gnu OPENBLAS_CORETYPE=SKYLAKEX
cd build-device
fig() {
  local unit=GFLOP/s a
  for a in "$@"; do [ "$a" = transpose ] && unit=GB/s; done
  "$@" 2>&1 | tail -1 | grep -oE "[0-9.]+ $unit" | head -1 | cut -d' ' -f1
}
tr=(./tilekit run transpose --backend openmp --size 8192 --reps 10)
gemm=(./tilekit run gemm --backend openmp --size 2048 --reps 10)
{
  echo "# $(grep -m1 'model name' /proc/cpuinfo), $(nproc) CPUs; THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
  for r in 1 2 3; do
    echo "round $r: transpose GB/s huge $(fig "${tr[@]}" --variant optimized)" \
      "| 4k $(fig env TILEKIT_HUGE_PAGES=0 "${tr[@]}" --variant optimized) | memcpy $(fig "${tr[@]}" --peer)" \
      " --  sgemm GFLOP/s huge $(fig "${gemm[@]}" --variant optimized)" \
      "| 4k $(fig env TILEKIT_HUGE_PAGES=0 "${gemm[@]}" --variant optimized) | OpenBLAS $(fig "${gemm[@]}" --peer)"
  done
} >"$out" 2>&1
