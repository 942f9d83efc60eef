#!/usr/bin/env bash
# libtilekit_blas' figures:
#
#   bench/blas_bench.sh [build-dir] [entry] [numpy] [crossover] [device]   (default: entry numpy)
#
#   entry      the BLAS entry (sgemm_/dgemm_ on heap memory and on tilekit's memory) against
#              tilekit::gemm at 2048 on openmp, in one process, median of 5 after a warm-up,
#              alternating (tilekit_blas_bench); target: BLAS / tilekit >= 0.97.
#   numpy      numpy's a @ b at 4096 (float32 and float64) through tilekit (LD_PRELOAD, openmp)
#              and through OpenBLAS (numpy's libblas.so.3), each in its own process, the
#              processes alternating (3 rounds, the median round), each the median of 5 after a
#              warm-up; same thread count (OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = the CPUs).
#              OpenBLAS twice: with the core type it chooses itself (or OPENBLAS_CORETYPE from the
#              environment), and, where that is not its widest kernel for an AVX-512 CPU (Debian's
#              0.3.21 falls back to Prescott or Haswell on CPUs it does not know), with
#              OPENBLAS_CORETYPE=SKYLAKEX: the library at its best, as `tilekit compare`'s peer.
#   crossover  a GPU machine: sgemm_/dgemm_ from host memory on cuda (TILEKIT_BLAS_GPU_MIN=0: the
#              GPU path with its pinned staging and overlapped tiles) and on openmp (every core)
#              at 256..4096 (CROSSOVER_SIZES), processes alternating between the backends over
#              CROSSOVER_ROUNDS rounds (3), each process passing over every size before timing
#              (a warm-up and the median of 5 per size); per size the median round. The crossover
#              of a dtype: the smallest size from which cuda is faster at every measured size; the
#              larger of the two is what blas.gpu_min's default should be (RESULT blas_gpu_min).
#              JSON rows (op blas-gemm-crossover, blas-crossover, blas-gpu-min) for bench/run.py.
#   device     a GPU machine: at 16384, the host-memory SGEMM/DGEMM through the BLAS as a
#              fraction of tilekit::gemm on device memory (cuda; target >= 0.85).
# Lines starting with RESULT are for the bench driver.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
if (($#)) && [[ -d $1 ]]; then
  build=$(cd "$1" && pwd)
  shift
fi
modes=("$@")
((${#modes[@]})) || modes=(entry numpy)
lib=$build/libtilekit_blas.so
bench=$build/tilekit_blas_bench
[[ -f $lib && -x $bench ]] || { echo "build libtilekit_blas and tilekit_blas_bench in $build first" >&2; exit 2; }
threads=$(nproc)
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $threads CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "OMP_NUM_THREADS=$OMP_NUM_THREADS OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-(unset)}"

py=/usr/bin/python3
numpy_run() {  # <dtype> <n> <reps>: median seconds of a @ b after a warm-up, and the BLAS numpy used
  "$py" - "$@" <<'EOF'
import ctypes, sys, time
import numpy as np
dtype, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n)).astype(dtype)
b = rng.standard_normal((n, n)).astype(dtype)
a @ b
t = []
for _ in range(reps):
    t0 = time.perf_counter()
    a @ b
    t.append(time.perf_counter() - t0)
t.sort()
core = ""
try:
    ob = ctypes.CDLL("libopenblas.so.0")
    ob.openblas_get_corename.restype = ctypes.c_char_p
    core = ob.openblas_get_corename().decode()
except OSError:
    pass
print(f"{t[len(t) // 2]:.6f} {core}")
EOF
}

for mode in "${modes[@]}"; do
  case $mode in
    entry)
      for dt in float double; do "$bench" --backend openmp --size 2048 --reps 5 --dtype "$dt"; done
      ;;
    numpy)
      read -r _ own_core < <(numpy_run float32 64 1)
      wide=""
      if [[ -z ${OPENBLAS_CORETYPE-} ]] && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo &&
         [[ ! ${own_core,,} =~ ^(skylakex|cooperlake|sapphirerapids)$ ]]; then
        wide=SKYLAKEX
      fi
      med() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
      for dt in float32 float64; do
        tk=() ob=() obw=()
        for round in 1 2 3; do
          read -r s _ < <(LD_PRELOAD=$lib TILEKIT_BLAS_BACKEND=openmp numpy_run "$dt" 4096 5)
          tk+=("$s")
          read -r s core < <(numpy_run "$dt" 4096 5)
          ob+=("$s")
          if [[ -n $wide ]]; then
            read -r s wcore < <(OPENBLAS_CORETYPE=$wide numpy_run "$dt" 4096 5)
            obw+=("$s")
          fi
        done
        t_tk=$(med "${tk[@]}")
        report() {  # <label> <core> <seconds>
          awk -v dt="$dt" -v a="$t_tk" -v b="$3" -v core="$2" -v label="$1" 'BEGIN {
            f = 2 * 4096 ^ 3
            printf "numpy a @ b %s 4096: tilekit (openmp) %.3f s %.1f GFLOP/s, OpenBLAS %s (%s) %.3f s %.1f GFLOP/s: tilekit / OpenBLAS speed %.3f\n", dt, a, f / a * 1e-9, label, core, b, f / b * 1e-9, b / a
            printf "RESULT numpy_matmul dtype=%s n=4096 openblas=%s core=%s tilekit_s=%.6f openblas_s=%.6f ratio=%.4f\n", dt, label, core, a, b, b / a }'
        }
        report "as chosen" "$core" "$(med "${ob[@]}")"
        [[ -z $wide ]] || report "widest" "$wcore" "$(med "${obw[@]}")"
      done
      ;;
    crossover)
      # Sizes past 4096 are far on the GPU's side (an H200 host: 13x at 4096 in float).
      sizes=${CROSSOVER_SIZES:-256,384,512,768,1024,1536,2048,3072,4096}
      rounds=${CROSSOVER_ROUNDS:-3}
      tmp=$(mktemp -d)
      for dt in float double; do
        # Processes alternate between the backends; each passes over every size once before timing.
        for ((r = 1; r <= rounds; r++)); do
          for be in cuda openmp; do
            TILEKIT_BLAS_GPU_MIN=0 "$bench" --backend $be --sizes "$sizes" --reps 5 --dtype $dt >"$tmp/$dt.$be.$r" ||
              { cat "$tmp/$dt.$be.$r"; echo "tilekit_blas_bench --backend $be --dtype $dt failed" >&2; exit 1; }
            grep '^RESULT' "$tmp/$dt.$be.$r" | sed "s/\$/ round=$r/"
          done
        done
      done
      # Per size and backend the median of the rounds; the crossover of a dtype: the smallest size
      # from which cuda is faster at that size and every larger one; blas.gpu_min: the larger of the
      # two dtypes' crossovers (none: the GPU never wins at every size from one on).
      python3 - "$tmp" "$rounds" <<'PY'
import glob, json, os, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
rows = {}
for f in glob.glob(os.path.join(tmp, "*.*.*")):
    for line in open(f):
        if line.startswith("{"):
            r = json.loads(line)
            rows.setdefault((r["dtype"], r["backend"], r["n"]), []).append(r)
med = {}
for key, rs in rows.items():
    rs.sort(key=lambda r: r["seconds"])
    m = dict(rs[len(rs) // 2])
    m["rounds"] = len(rs)
    m["round_seconds"] = [r["seconds"] for r in sorted(rs, key=lambda r: r["seconds"])]
    m["verified"] = all(r.get("verified") is not False for r in rs)
    med[key] = m
found = {}
for dt in ("float", "double"):
    ns = sorted(n for (d, b, n) in med if d == dt and b == "cuda" and (d, "openmp", n) in med)
    cross = None
    for n in reversed(ns):
        if med[(dt, "cuda", n)]["seconds"] < med[(dt, "openmp", n)]["seconds"]:
            cross = n
        else:
            break
    found[dt] = cross
    for n in ns:
        g, c = med[(dt, "cuda", n)], med[(dt, "openmp", n)]
        for r, other in ((g, c), (c, g)):
            r.update(op="blas-gemm-crossover", peer=r["backend"] == "openmp", baseline=other["backend"],
                     baseline_seconds=other["seconds"], ratio=round(r["seconds"] / other["seconds"], 4))
            print(json.dumps(r))
    print(f"RESULT blas_crossover dtype={dt} n={cross if cross else 'none'}")
    print(json.dumps({"op": "blas-crossover", "dtype": dt, "backend": "cuda", "baseline": "openmp",
                      "n": cross, "sizes": ns, "rounds": rounds, "metric": "n"}))
gmin = None if None in found.values() else max(found.values())
print(f"RESULT blas_gpu_min n={gmin if gmin else 'none'} (blas.gpu_min's default: src/tunings.cpp, kDefaultGpuMin in blas/settings.hpp, docs/blas.md)")
print(json.dumps({"op": "blas-gpu-min", "backend": "cuda", "baseline": "openmp", "n": gmin,
                  "float": found["float"], "double": found["double"], "metric": "n"}))
PY
      rm -rf "$tmp"
      ;;
    device)
      for dt in float double; do TILEKIT_BLAS_GPU_MIN=0 "$bench" --backend cuda --size 16384 --reps 5 --dtype $dt; done
      ;;
    *) echo "unknown mode '$mode' (entry, numpy, crossover, device)" >&2; exit 2 ;;
  esac
done
