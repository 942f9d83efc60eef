# The commands of h200-conv2d-tiled-3.txt (H200, driver 580.159.04, CUDA 13.0, 2026-11-21).
# Binaries built here for sm_90 (cmake -S . -B build-conv -G Ninja -DTILEKIT_ENABLE_HIP=OFF
# -DTILEKIT_ENABLE_KOKKOS=OFF -DTILEKIT_ENABLE_OPENMP=OFF -DCMAKE_CUDA_ARCHITECTURES=90), copied with
# libgomp into .final/ (as in h200-compare-8192.cmd), bash bench/device/pack.sh, then on the device
# with .device and .final carried, LD_LIBRARY_PATH=$PWD/.final/lib:$PWD/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64.
#
# Part A: .final/old/tilekit built from commit 1242677, .final/tilekit from the experiment tree
# (uncommitted; its kernel code differs from 1242677 by the modes named in the .txt header):
m() { TILEKIT_CONV_TILED=$2 timeout 10 $1 run conv2d --backend cuda --variant tiled --size 8192 --reps 20 "${@:3}" 2>&1 | sed "s#^#$1 $2 $3 $4 $5 $6 $7 | #" | cut -c1-200; }
P() { timeout 10 .final/tilekit run conv2d --backend cuda --peer --size 8192 --k 5 --reps 20 2>&1 | cut -c1-140; }
P
for rep in 1 2; do
  for b in .final/old/tilekit .final/tilekit; do m $b "" --k 5; m $b regs8 --k 5; m $b cvec8 --k 5; done
  m .final/tilekit cvec8p --k 5; m .final/tilekit cvec8p --k 5 --tile 128 64
  timeout 10 .final/old/tilekit run conv2d --backend cuda --variant optimized --size 8192 --k 5 --reps 20 2>&1 | cut -c1-140
  P
done
for r in 1 3 7; do for v in "" regs8 async8 cvec8 cvec8p; do m .final/tilekit "$v" --k $r; done; done
for v in "" regs8 async16 vec8 cvec8 cvec16 cvec8p; do m .final/tilekit "$v" --k 5 --dtype double; done
for t in "32 32" "128 32" "64 32"; do timeout 10 .final/tilekit run conv2d --backend cuda --variant optimized --size 8192 --k 5 --reps 20 --tile $t 2>&1 | cut -c1-140; done
m .final/tilekit cvec16 --k 5 ; m .final/tilekit cvec8 --k 5 --tile 128 64; m .final/tilekit cvec8 --k 5 --tile 32 64
P
timeout 20 .final/tilekit compare conv2d --backends cuda --size 8192 --filter 5
#
# Part B: commit 1e11244:
#   B=.final bash backends/cuda/scripts/h200_check.sh info tests compare conv odd      (the conv stage)
