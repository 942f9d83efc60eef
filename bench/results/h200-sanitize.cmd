# compute-sanitizer (CUDA 13.0) on the H200, 2026-11-21, git commit c7796a9 (binaries built here for
# sm_90 and carried, as in h200-compare-8192.cmd):
#   B=.final bash backends/cuda/scripts/h200_check.sh tests odd sanitize
# The sanitize stage runs, for each tool in memcheck racecheck synccheck initcheck, each dtype and
# each tiled/optimized case listed in the script (odd shapes: element-wise paths; multiples of 4:
# 16-byte paths with partial tiles; explicit tiles; conv filters past the unrolled sizes):
#   compute-sanitizer --tool <tool> --error-exitcode 9 .final/tilekit run <op> --m .. --n .. [--k ..] [--tile ..] \
#       --backend cuda --variant <v> --dtype <d> --reps 1
# Result: 176 runs, 132 "ERROR SUMMARY: 0 errors", 44 "RACECHECK SUMMARY: 0 hazards", every run exit 0 and verified.
# The odd stage in the same call (55 runs of every variant on odd shapes, k = 0, 1x1x1, conv R = 1, 7, 17, 31): all verified.
