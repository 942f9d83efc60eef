# Session 9 (2026-11-26), six device calls, each a fresh machine; every one landed on an NVIDIA H100
# 80GB HBM3 (driver 580.159.04, CUDA 13.0; gpu.txt). Kokkos 4.6.99 built from the fetched upstream
# source (patched for CUDA 13, not committed), then the tree at the commit named in each summary:
#   bash bench/device/pack.sh   (here, before each call; carry .device .kokkos .kokkos-src)
#   R3_build=320 R3_<stage>=<s> bash bench/device/round3.sh build <stage>
# call 1: stage gap9    (commit d452e0a) -> gap9-summary.txt, src-sgemm-cub3efzb.csv.gz (round 4's loop,
#         then named cub3efz), src-sgemm-cublas.csv.gz, src-conv-*.csv.gz
# call 2: stage final9  (commit 56811f0) -> final9-summary.txt, src-sgemm-cub3efz-steady.csv.gz
# call 3: stage spread9 (commit bd34398) -> spread9-summary.txt, src-sgemm-cub3efzs.csv.gz
# call 4: stage final9b (commit a1f11b8) -> final9b-summary.txt (default cub3efzs)
# call 6: stage naive9  (commit d51866e) -> naive9-summary.txt (the kokkos naive gemm at 2048/4096/8192)
# call 5: stage final9c (commit 2daed55) -> final9c-summary.txt, final9c-{8192,4096,8192-r3}.json
#         (default dual3efzs: the committed tree's code)
# Stall samples per reason and opcode: python3 bench/stall_samples.py bench/results/h100-r9/src-*.csv.gz
# (After the calls, the stages' shared lines moved into stage.sh's final_compare and gemm_row; the
# scripts as run are those of the commits named above.)
