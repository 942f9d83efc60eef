# DRAM bytes of the gemm kernels on the H200, 2026-11-23 (device tool, bench/device/round2.sh B):
#   ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
#       build-device/tilekit run gemm --size 4096 --backend cuda --variant naive --reps 1 --traffic
#   ... --variant tiled --tile 16,16,16 ...   and   ... --variant tiled --tile 32,32,32 ...
# The table (h200-traffic.md) is the mean of the two launches each run makes (warm-up, timed).
# The full op x variant table (bench/device/traffic.sh) did not fit the session's device time.
