# The H200's measured ceilings, the comparison on its roofline (cuda and kokkos, float, 8192) and the
# DRAM traffic table, 2026-11-23, device tool (nvidia-h200), commit e96e22a, one call:
#   bash bench/device/round3.sh build before probe tiled roofline sanitize
# whose roofline stage is
#   TILEKIT_BACKENDS=cuda,kokkos bash bench/device/roofline.sh build-device OUT
# i.e. build-device/tilekit roofline --backends cuda,kokkos                        -> h200-ceilings.txt
#      build-device/tilekit compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 10 \
#        --json h200-roofline.json --csv h200-roofline.csv --plot h200-roofline.svg -> h200-roofline.txt
#      bash bench/device/traffic.sh build-device OUT                             -> h200-traffic.md, .jsonl
#      rsvg-convert -w 1400 -o h200-roofline.png h200-roofline.svg                (here)
# (build: bench/device/build.sh with Kokkos 4.6.99 + CUDA linked in, TILEKIT_KOKKOS_PLUGIN=OFF.)
# Highest row: kokkos' *memcpy peer of transpose at 104% of its roof (its ceiling is the faster of
# Kokkos' parallel_for copy and deep_copy, measured once; the peer's own timing varies by a few %).
