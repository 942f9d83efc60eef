# openmp backend on the 2-core development machine (AMD EPYC Zen 4, AVX-512, 32 KiB L1d,
# 1 MiB L2 per core, 32 MiB L3; Debian 12, g++ 12, OpenBLAS 0.3.21 pthread "Cooperlake" kernels),
# portable Release build (no -march=native; Highway dispatched AVX3), OMP_NUM_THREADS unset (2).
# Three invocations, each started when the machine had been idle for 3 s (other builds share
# it; runs hit by them were discarded and repeated), merged in this order:
cmake -S . -B build-openmp -G Ninja -DTILEKIT_ENABLE_KOKKOS=OFF -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_HIP=OFF && ninja -C build-openmp tilekit
./build-openmp/tilekit compare gemm --backends openmp --size 2048 --json /tmp/r_gemm.json
./build-openmp/tilekit compare transpose --backends openmp --size 8192 --json /tmp/r_transpose.json
./build-openmp/tilekit compare conv2d --backends openmp --size 2048 --json /tmp/r_conv2d.json
python3 -c 'import json,sys; json.dump(sum((json.load(open(f)) for f in sys.argv[1:]), []), open("bench/results/openmp-cpu-2core.json", "w"), indent=2)' /tmp/r_gemm.json /tmp/r_transpose.json /tmp/r_conv2d.json
