# The tiled variants before (hand-written per backend, commit 679a6d4) and after (the portable kernels on the tile layer, round 3: branch r3-cputiled at commit a452da8's code), in one run on this machine: 2-core AMD EPYC (CPU family 25, Zen 4, 32 KiB L1d, 1 MiB L2), 2026-11-23 18:51-18:56 UTC, load average 3.4 (other helpers' builds; started after 2 s under 15% busy); medians of 9 alternating rounds, "min ratio" the fastest rounds' ratio.
# Other runs of the same code that day (18:24-18:30, load 1.1-2.1): serial gemm 0.83-1.00x, openmp gemm 0.67-1.10x, openmp transpose 0.96-1.21x; backends/openmp/NOTES.md (round 3) has the process-CPU-time measurements, which the load disturbs less.
# before: git archive 679a6d4, cmake -DCMAKE_BUILD_TYPE=Release -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_HIP=OFF (serial, openmp, Debian's Kokkos 3.4 Serial), ninja tilekit_cli
# after:  the same configuration of this commit
# Round 2's table (commit ddb4290) had serial gemm 1.42x, openmp gemm 1.65x, openmp transpose 1.18x.
bash bench/tiled_before_after.sh BEFORE/tilekit AFTER/tilekit serial,openmp,kokkos 9 -- "gemm --size 1024" "transpose --size 4096" "conv2d --size 2048 --k 5"
