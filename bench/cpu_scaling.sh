#!/usr/bin/env bash
# CPU scaling of the openmp backend's optimized SGEMM against OpenBLAS (and numpy, when
# present), for a many-core host such as the GPU machine's.
#
#   bench/cpu_scaling.sh TILEKIT_BINARY OUT_DIR
#
# For each N in $SIZES (default "2048 4096") and each thread count in $THREADS (default
# "1 2 4 8 16"), runs `tilekit run gemm --backend openmp --variant optimized` and its OpenBLAS
# peer (`--peer`) with OMP_NUM_THREADS set, each verified against tilekit's double-precision
# reference and timed as the median of $REPS (default 5) runs after a warm-up; then, if a python
# with numpy is found ($PYTHON, python3 on the PATH, /usr/bin/python3), times numpy's float32
# matmul (a @ b) the same way with OPENBLAS_NUM_THREADS and OMP_NUM_THREADS set. Prints one table
# per N (threads, GFLOP/s, parallel efficiency against the first thread count, % of OpenBLAS,
# numpy GFLOP/s, verified optimized/peer) and writes OUT_DIR/cpu_scaling.json plus
# the raw rows (OUT_DIR/cpu_scaling_rows.jsonl). Threads are pinned one per core
# (OMP_PLACES=cores, OMP_PROC_BIND=close) unless those are set already.
#
# Cost: each `tilekit run` first computes its double-precision reference on one core (about 3 s
# at N = 2048 and 25 s at N = 4096 on a Zen 4 core), so the default sweep takes about 6 minutes,
# five of them at N = 4096 (SIZES=2048 alone: under a minute).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
tilekit=$1
out=$2
[[ -x $tilekit ]] || { echo "cpu_scaling: $tilekit is not an executable" >&2; exit 2; }
mkdir -p "$out"
sizes=${SIZES:-"2048 4096"}
threads=${THREADS:-"1 2 4 8 16"}
reps=${REPS:-5}
export OMP_PLACES=${OMP_PLACES:-cores} OMP_PROC_BIND=${OMP_PROC_BIND:-close}
rows=$out/cpu_scaling_rows.jsonl
: > "$rows"

# The value of a numeric field in one line of JSON ("gflops":123.4 -> 123.4).
field() { sed -n "s/.*\"$1\": *\([-0-9.eE+]*\).*/\1/p" <<< "$2"; }
# True (prints the field) for a boolean field that is true.
verified() { grep -q '"verified":true' <<< "$1" && echo true || echo false; }

# The first Python that has numpy: $PYTHON, python3 on the PATH, the system's.
have_numpy=false
for py in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$py" > /dev/null && "$py" -c 'import numpy' 2> /dev/null; then
    have_numpy=true
    break
  fi
done
numpy_time() {  # numpy_time N THREADS -> one JSON line
  OPENBLAS_NUM_THREADS=$2 OMP_NUM_THREADS=$2 MKL_NUM_THREADS=$2 "$py" - "$1" "$reps" << 'PY'
import json, sys, time
import numpy as np
n, reps = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(42)
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
c = a @ b  # warm-up: thread pool start, page faults
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    c = a @ b
    times.append(time.perf_counter() - t0)
times.sort()
med = times[len(times) // 2] if len(times) % 2 else 0.5 * (times[len(times) // 2 - 1] + times[len(times) // 2])
print(json.dumps({"numpy": np.__version__, "n": n, "seconds": med, "gflops": 2.0 * n ** 3 / med * 1e-9}))
PY
}

cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
echo "cpu_scaling: $cpu, $(nproc) logical CPUs; OMP_PLACES=$OMP_PLACES OMP_PROC_BIND=$OMP_PROC_BIND; reps $reps"
if $have_numpy; then
  echo "cpu_scaling: numpy $("$py" -c 'import numpy; print(numpy.__version__)') from $py"
else
  echo "cpu_scaling: no python3 with numpy found: no numpy column"
fi

json_rows=""
for n in $sizes; do
  base="" base_t=""
  printf '\nSGEMM N = %s (float32)\n' "$n"
  printf '%8s %12s %11s %12s %10s %12s %8s\n' threads "GFLOP/s" efficiency "OpenBLAS" "% OpenBLAS" "numpy" verified
  for t in $threads; do
    opt=$(OMP_NUM_THREADS=$t "$tilekit" run gemm --backend openmp --variant optimized --size "$n" --reps "$reps" --json || true)
    peer=$(OMP_NUM_THREADS=$t "$tilekit" run gemm --backend openmp --peer --size "$n" --reps "$reps" --json || true)
    [[ -n $opt ]] && echo "$opt" >> "$rows"
    [[ -n $peer ]] && echo "$peer" >> "$rows"
    g=$(field gflops "$opt"); gp=$(field gflops "$peer")
    g=${g:-0}; gp=${gp:-0}
    [[ -z $base ]] && base=$g base_t=$t
    ok="$(verified "$opt")/$(verified "$peer")"
    np=0
    if $have_numpy; then
      npj=$(numpy_time "$n" "$t" || true)
      [[ -n $npj ]] && echo "$npj" >> "$rows"
      np=$(field gflops "$npj"); np=${np:-0}
    fi
    # Efficiency against the first thread count of the sweep (1 by default): per-thread rate
    # over the per-thread rate there.
    read -r eff pct < <(awk -v g="$g" -v b="$base" -v t="$t" -v bt="$base_t" -v p="$gp" \
      'BEGIN { printf "%.3f %.1f\n", (b > 0 ? (g / t) / (b / bt) : 0), (p > 0 ? 100 * g / p : 0) }')
    printf '%8s %12.1f %10.0f%% %12.1f %9s%% %12s %8s\n' "$t" "$g" "$(awk -v e="$eff" 'BEGIN{print 100*e}')" "$gp" "$pct" \
      "$($have_numpy && printf '%.1f' "$np" || echo -)" "$ok"
    json_rows+="${json_rows:+,
}    {\"n\": $n, \"threads\": $t, \"optimized_gflops\": $g, \"openblas_gflops\": $gp, \"numpy_gflops\": $($have_numpy && echo "$np" || echo null), \"parallel_efficiency\": $eff, \"percent_of_openblas\": $pct, \"verified\": \"$ok\"}"
  done
done

cat > "$out/cpu_scaling.json" << JSON
{
  "cpu": "$cpu",
  "logical_cpus": $(nproc),
  "omp_places": "$OMP_PLACES",
  "omp_proc_bind": "$OMP_PROC_BIND",
  "reps": $reps,
  "efficiency_definition": "(GFLOP/s(t) / t) / (GFLOP/s(t0) / t0) of the optimized variant, t0 the first thread count (1)",
  "rows": [
$json_rows
  ],
  "raw_rows": "cpu_scaling_rows.jsonl"
}
JSON
echo
echo "cpu_scaling: wrote $out/cpu_scaling.json and $rows"
