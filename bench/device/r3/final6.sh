#!/usr/bin/env bash
# Run ON THE DEVICE machine from the repository root (session 6, the lead): the final comparison
# of the session's tree, cuda and kokkos in one process (gemm, transpose, conv2d R = 5 at 8192;
# conv2d R = 3 and gemm 4096 apart), then the host's CPU ceilings (the clock estimate's fix).
#   bash bench/device/r3/final6.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/stage.sh" final6 "$@"
step final-8192.txt 90 "$build/tilekit" compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
  --json "$out/final-8192.json"
grep -E "^(gemm|transpose|conv2d) " "$out/final-8192.txt" >>"$out/summary.txt"
step conv-k3.txt 30 "$build/tilekit" compare conv2d --backends cuda,kokkos --size 8192 --k 3 --reps 20
grep -E "^conv2d .*(optimized|memcpy)" "$out/conv-k3.txt" >>"$out/summary.txt"
step gemm-4096.txt 40 "$build/tilekit" compare gemm --backends cuda,kokkos --size 4096 --reps 20
grep -E "^gemm .*(optimized|cublas)" "$out/gemm-4096.txt" >>"$out/summary.txt"
step roofline-openmp.txt 40 "$build/tilekit" roofline --backends openmp
grep -E "peak|estimate from|WARNING" "$out/roofline-openmp.txt" >>"$out/summary.txt"
