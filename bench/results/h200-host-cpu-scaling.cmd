# The GPU machine's 16-core host CPU (Intel Xeon, model 207, KVM, 2 MiB L2/core, 300 MiB L3), device call 2 of session 3,
# 2026-11-23. Tree: the lead's merge e96e22a (includes r3-xeon up to 48f6c16: shared-panel driver with A prefetch ON, the
# default then; `nopf` is the variant without it, the default from the commit after these results).
bash bench/device/pack.sh                                                # here; carried as .device
bash bench/device/round3.sh build sgemm conv kokkosgpu xeon cputiled     # on the device (lead); its xeon stage is:
XEON_BUDGET=115 bash bench/device/r3/xeon.sh build-device $OUT/xeon      # -> call2/xeon/{scaling.jsonl,variants.jsonl,fma.txt,transpose.txt,summary.txt}
python3 bench/results/h200-host-cpu-scaling-ingest.py call2/xeon call2                            # here: builds h200-host-cpu-scaling.{txt,json} from those files
# Another pipeline (build before probe tiled roofline sanitize) ran in the same device call; the stage log shows the host at
# 0-2% busy (/proc/stat over 0.3 s) before every step, yet the host ran at about 60-70% of round 1's per-core speed
# (1-thread FMA chains 178 GFLOP/s here, round 1's SGEMM alone 215; numpy at 16 threads 1108-1252 against round 1's 2614-2796),
# and its all-core FMA rate per core was 58% of its 1-core rate (1670 GFLOP/s on 16 threads).
# Peers: OpenBLAS = Debian's 0.3.21 in its own process (tilekit sets OPENBLAS_CORETYPE=SKYLAKEX), numpy 2.5.2's bundled OpenBLAS;
# both without OMP_PROC_BIND/OMP_PLACES (see backends/openmp/NOTES.md); ours with OMP_PLACES=cores OMP_PROC_BIND=close.
