# compute-sanitizer (CUDA 13.0) on the H200, 2026-11-21, git commit 8cb4648421f8ff306a2618ea6f27389ca67d580c:
# backends/cuda/scripts/h200_check.sh sanitize runs, for each tool in memcheck racecheck synccheck initcheck,
# each dtype and each tiled/optimized case listed in the script (odd shapes, multiples of 4, explicit tiles,
# a conv filter past the unrolled sizes):
#   compute-sanitizer --tool <tool> --error-exitcode 9 build-device/tilekit run <op> --m .. --n .. [--k ..] [--tile ..] \
#       --backend cuda --variant <v> --dtype <d> --reps 1
# Result: 144 runs, 108 "ERROR SUMMARY: 0 errors", 36 "RACECHECK SUMMARY: 0 hazards", every run exit 0 and verified.
