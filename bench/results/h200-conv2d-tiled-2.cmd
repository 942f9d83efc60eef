# The commands of h200-conv2d-tiled-2.txt (H200, sm_90, CUDA 13.0, 2026-11-21, one device call, 55 s).
# Tree: the commit that adds this file (its kernel and launcher code is the measured code; the
# parent ea2b136 plus the 16-byte tiled loaders and the vec8/cvec8/cvec16 modes). Built here:
#   cmake -S . -B build-conv -G Ninja -DTILEKIT_ENABLE_HIP=OFF -DTILEKIT_ENABLE_KOKKOS=OFF \
#         -DTILEKIT_ENABLE_OPENMP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 && ninja -C build-conv
#   rm -rf .final2 && mkdir -p .final2/tests .final2/lib && cp build-conv/tilekit .final2/ &&
#   cp build-conv/tests/tilekit_tests .final2/tests/ && cp -L /lib/x86_64-linux-gnu/libgomp.so.1 .final2/lib/ &&
#   bash bench/device/pack.sh
# Then on the device (carry .device and .final2), this command; its log is h200-conv2d-tiled-2.txt:
export LD_LIBRARY_PATH=$PWD/.final2/lib:$PWD/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64 TILEKIT_PROGRAM=$PWD/.final2/tilekit; chmod +x .final2/tilekit .final2/tests/tilekit_tests; T=.final2/tilekit; L=$OUT/log
m() { TILEKIT_CONV_TILED=$1 timeout 8 $T run conv2d --backend cuda --variant tiled --size 8192 --reps 20 "${@:2}" 2>&1 | sed "s/^/$1 /" | cut -c1-200 | tee -a $L; }
for v in regs8 vec8 cvec8 cvec16; do m $v --k 5; done
timeout 8 $T run conv2d --backend cuda --peer --size 8192 --k 5 --reps 20 2>&1 | cut -c1-120 | tee -a $L
for r in 3 7; do for v in regs8 vec8 cvec8 cvec16; do m $v --k $r; done; done
for v in vec8 cvec8; do m $v --k 1; m $v --k 5 --dtype double; done
for v in vec8 cvec8 cvec16; do for s in "67 44 5" "131 68 9" "64 8 3"; do set -- $s; TILEKIT_CONV_TILED=$v timeout 5 $T run conv2d --backend cuda --variant tiled --m $1 --n $2 --k $3 --reps 1 2>&1 | cut -c1-110 | tee -a $L; done; done
TILEKIT_CONV_TILED=cvec8 timeout 20 .final2/tests/tilekit_tests --gtest_filter='*Conv2d*cuda_tiled*' --gtest_brief=1 2>&1 | tail -2 | tee -a $L
for v in cvec8 vec8; do TILEKIT_CONV_TILED=$v timeout 12 compute-sanitizer --tool racecheck $T run conv2d --backend cuda --variant tiled --m 67 --n 44 --k 5 --reps 1 2>&1 | tail -2 | tee -a $L; done
timeout 12 $T compare conv2d --backends cuda --size 8192 --filter 5 2>&1 | tee -a $L
