#!/usr/bin/env bash
# Rounds of the openmp backend against its peers on this 2-core machine, alternating so that the
# machine's drift (other tenants) falls on both sides; each figure the median of 10 timed runs.
#   bash bench/zen5_rounds.sh sgemm|transpose|huge [ROUNDS] [BUILD_DIR]   (default 10 rounds, build-cpu)
#   sgemm      SGEMM 2048: tilekit, OpenBLAS with its own core choice, OpenBLAS SKYLAKEX
#   transpose  transpose 8192^2: tilekit, the memcpy peer
#   huge       both, tilekit with host matrices on transparent huge pages (default) and without
#              (TILEKIT_HUGE_PAGES=0), peers on huge pages, OpenBLAS SKYLAKEX
# Results: bench/results/zen5-r8.txt.
set -uo pipefail
mode=${1:?sgemm|transpose|huge}
rounds=${2:-10}
cd "${3:-$(dirname "$0")/../build-cpu}"
fig() {  # fig COMMAND...: the GFLOP/s of a gemm line, the GB/s of a transpose line
  local unit=GFLOP/s a
  for a in "$@"; do [ "$a" = transpose ] && unit=GB/s; done
  "$@" 2>&1 | tail -1 | grep -oE "[0-9.]+ $unit" | head -1 | cut -d' ' -f1
}
gemm=(./tilekit run gemm --backend openmp --size 2048 --reps 10)
tr=(./tilekit run transpose --backend openmp --size 8192 --reps 10)
for r in $(seq 1 "$rounds"); do
  case $mode in
    sgemm)
      echo "round $r: tilekit $(fig env -u OPENBLAS_CORETYPE "${gemm[@]}" --variant optimized)" \
        " openblas(auto) $(fig env -u OPENBLAS_CORETYPE "${gemm[@]}" --peer)" \
        " openblas(SKYLAKEX) $(fig env OPENBLAS_CORETYPE=SKYLAKEX "${gemm[@]}" --peer)" ;;
    transpose)
      echo "round $r: tilekit $(fig "${tr[@]}" --variant optimized) GB/s  memcpy $(fig "${tr[@]}" --peer) GB/s" ;;
    huge)
      export OPENBLAS_CORETYPE=SKYLAKEX
      echo "round $r: sgemm GFLOP/s huge $(fig "${gemm[@]}" --variant optimized)" \
        "| 4k $(fig env TILEKIT_HUGE_PAGES=0 "${gemm[@]}" --variant optimized) | OpenBLAS $(fig "${gemm[@]}" --peer)" \
        " --  transpose GB/s huge $(fig "${tr[@]}" --variant optimized)" \
        "| 4k $(fig env TILEKIT_HUGE_PAGES=0 "${tr[@]}" --variant optimized) | memcpy $(fig "${tr[@]}" --peer)" ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
done
