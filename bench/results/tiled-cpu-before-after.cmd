# The tiled variants before (hand-written per backend, commit 679a6d4) and after (the portable kernels on the tile layer, commit ddb4290), in one run on this machine: 2-core AMD EPYC (CPU family 25, Zen 4), 2026-11-23, load average < 1.
# before: git archive 679a6d4, cmake -DCMAKE_BUILD_TYPE=Release -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_HIP=OFF (serial, openmp, Debian's Kokkos 3.4 Serial), ninja tilekit_cli
# after:  the same configuration of this commit
bash bench/tiled_before_after.sh BEFORE/tilekit AFTER/tilekit serial,openmp,kokkos 3 -- "gemm --size 1024" "transpose --size 4096" "conv2d --size 2048 --k 5"
