# The H200's measured ceilings and the comparison on its roofline (cuda and kokkos, float, 8192),
# 2026-11-23, device tool, bench/device/round2.sh B (build: bench/device/build.sh with Kokkos 4.6.99
# + CUDA, TILEKIT_KOKKOS_PLUGIN=OFF):
#   build-device/tilekit roofline --backends cuda,kokkos                          -> h200-ceilings.txt
#   build-device/tilekit compare gemm transpose conv2d --backends cuda,kokkos --size 8192 --reps 5 \
#     --json h200-roofline.json --csv h200-roofline.csv --plot h200-roofline.svg   -> h200-roofline.txt
#   rsvg-convert -w 1400 -o h200-roofline.png h200-roofline.svg                    (here)
# Two rows of that run stand above their roof: kokkos' *memcpy peer (119-120%: the kokkos ceiling was
# its parallel_for copy alone; it is now the faster of that and deep_copy, the peer's own copy), and,
# in the DMMA double gemm of call A (142%), the double ceiling was the DFMA rate (it is now the FP64
# tensor cores' rate where the GPU has them: 66.8 TFLOP/s measured, h200-ceilings.txt).
