# 2-core AMD EPYC (Zen 4) development machine, 2026-11-23 19:15-19:21 UTC, build of commit 4a5b49f (configured as
# cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_HIP=OFF
#   -DTILEKIT_ENABLE_KOKKOS=OFF -DTILEKIT_ENABLE_OPENMP=ON; binaries copied aside so later builds could not change them).
# Loop: wait until the host was <= 35% busy over 3 s (it was 1% each time), then one round; the first 10 rounds kept.
./tilekit_openmp_gemm_bench 2048 5 new grid peer            # OMP_NUM_THREADS unset = 2; variants alternate per run
for t in 2 1; do
  OMP_NUM_THREADS=$t ./tilekit run transpose --backend openmp --variant optimized --size 8192 --reps 5 --json
  OMP_NUM_THREADS=$t ./tilekit run transpose --backend openmp --peer --size 8192 --reps 5 --json
done
# Table: openmp-cpu-2core-round3.txt (computed from the rows in openmp-cpu-2core-round3.jsonl).
