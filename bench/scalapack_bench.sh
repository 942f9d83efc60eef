#!/usr/bin/env bash
# PDGEMM on 1, 2 and 4 CPU ranks (1 thread a rank) with tilekit's BLAS under every rank against the
# system BLAS (OpenBLAS through Debian's libblas.so.3 alternative): docs/scalapack.md.
#
#   bench/scalapack_bench.sh BUILD_DIR TILEKIT_BLASLIB
#
# BUILD_DIR holds tilekit_scalapack_gemm (examples/scalapack); TILEKIT_BLASLIB is libtilekit_blas.so.
# Settings (environment): N (default 2048), NB (64), REPS (timed calls a run, 3), ROUNDS (runs a
# configuration, 3), RANKS ("1 2 4"), BACKEND (tilekit's, openmp), DTYPE (double), PANEL (the PBLAS
# panel width, a number or max, through BUILD_DIR/libtilekit_pblas_panel.so, for both BLAS; unset:
# the reference's 32), OUT (JSON lines, default BUILD_DIR/scalapack-bench.jsonl), SHAPES (1, the
# default: afterwards, BUILD_DIR/tilekit_pdgemm_shapes times the local products each rank count's
# PDGEMM makes on the two BLAS in one process, alternating: the BLAS's share of the difference,
# without MPI; 0: not).
# The two BLAS alternate within each round, and each run records the 1-minute load average before
# it: on a shared machine, compare medians and read them next to the load. One JSON line a run
# (the example's, plus op "pdgemm", backend, peer, blas, panel, round, load1: bench/run.py's rows =
# "stdout" takes them); then a table of medians and tilekit's speed relative to the system BLAS
# (time_system / time_tilekit: >= 1 is tilekit faster).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bench/scalapack_bench.sh BUILD_DIR TILEKIT_BLASLIB" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
tk=$(readlink -f "$2")
prog=$build/tilekit_scalapack_gemm
[ -x "$prog" ] || { echo "scalapack_bench: $prog is not built" >&2; exit 2; }
[ -f "$tk" ] || { echo "scalapack_bench: no BLAS library $2" >&2; exit 2; }
N=${N:-2048} NB=${NB:-64} REPS=${REPS:-3} ROUNDS=${ROUNDS:-3} RANKS=${RANKS:-1 2 4}
BACKEND=${BACKEND:-openmp} DTYPE=${DTYPE:-double} PANEL=${PANEL:-}
panel_lib=$build/libtilekit_pblas_panel.so
[ -z "$PANEL" ] || [ -f "$panel_lib" ] || { echo "scalapack_bench: PANEL needs $panel_lib" >&2; exit 2; }
OUT=${OUT:-$build/scalapack-bench.jsonl}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Debian's OpenBLAS 0.3.21 does not recognise every CPU and may fall back to a generic kernel
# (Prescott on this machine's virtual Xeon): name its best core, as tilekit's own peer does
# (docs/measuring.md). The caller's OPENBLAS_CORETYPE wins.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo; then OPENBLAS_CORETYPE=SKYLAKEX; elif grep -qw avx2 /proc/cpuinfo; then OPENBLAS_CORETYPE=HASWELL; fi
fi
cores=$(nproc)
system_blas=$(readlink -f "$(ldconfig -p | awk '/libblas\.so\.3 .*x86-64/ {print $NF; exit}')" 2>/dev/null || echo libblas.so.3)
echo "scalapack_bench: N=$N NB=$NB panel=${PANEL:-32} reps=$REPS rounds=$ROUNDS ranks: $RANKS; system BLAS $system_blas" \
     "(OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-its own choice});" \
     "tilekit $tk ($BACKEND); $cores cores; $(uptime)" >&2
: >"$OUT"

run() {  # ranks blas round
  local np=$1 which=$2 round=$3 bind=(--bind-to core --map-by core) env=(-x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
  [ -n "${OPENBLAS_CORETYPE:-}" ] && env+=(-x "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE")
  ((np > cores)) && bind=(--oversubscribe --bind-to none)
  local preload=""
  [ "$which" = tilekit ] && preload=$tk && env+=(-x "TILEKIT_BLAS_BACKEND=$BACKEND")
  [ -n "$PANEL" ] && preload=${preload:+$preload:}$panel_lib && env+=(-x "TILEKIT_PBLAS_PANEL=$PANEL")
  [ -n "$preload" ] && env+=(-x "LD_PRELOAD=$preload")
  local load line
  load=$(cut -d' ' -f1 /proc/loadavg)
  line=$(mpirun -np "$np" "${bind[@]}" "${env[@]}" "$prog" --n "$N" --nb "$NB" --reps "$REPS" --dtype "$DTYPE" \
           --verify sample | grep -m1 '^{')
  local backend=openblas
  [ "$which" = tilekit ] && backend=$BACKEND
  line="${line%\}}, \"op\": \"pdgemm\", \"backend\": \"$backend\", \"peer\": $([ "$which" = system ] && echo true || echo false), \"blas\": \"$which\", \"panel\": \"${PANEL:-32}\", \"round\": $round, \"load1\": $load}"
  echo "$line" >>"$OUT"
  echo "$line"
}

for ((round = 1; round <= ROUNDS; round++)); do
  for np in $RANKS; do
    if ((round % 2)); then order=(system tilekit); else order=(tilekit system); fi
    for which in "${order[@]}"; do run "$np" "$which" "$round"; done
  done
done

python3 - "$OUT" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [r for r in runs if not r["verified"]]
print(f"\n{'ranks':>5} {'grid':>5} {'system s':>9} {'GF/s':>7} {'tilekit s':>9} {'GF/s':>7} {'tilekit/system':>14} {'load1':>11}")
for np in sorted({r["ranks"] for r in runs}):
    med = {}
    for b in ("system", "tilekit"):
        rs = [r for r in runs if r["ranks"] == np and r["blas"] == b]
        med[b] = (statistics.median(r["seconds"] for r in rs), statistics.median(r["gflops"] for r in rs))
    loads = [r["load1"] for r in runs if r["ranks"] == np]
    grid = next(f'{r["p"]}x{r["q"]}' for r in runs if r["ranks"] == np)
    print(f"{np:>5} {grid:>5} {med['system'][0]:>9.3f} {med['system'][1]:>7.2f} {med['tilekit'][0]:>9.3f} "
          f"{med['tilekit'][1]:>7.2f} {med['system'][0] / med['tilekit'][0]:>14.3f} {min(loads):>5.1f}-{max(loads):<5.1f}")
if bad:
    print(f"{len(bad)} run(s) failed verification", file=sys.stderr)
    sys.exit(1)
EOF

# The local products behind each rank count: rank 0's (the largest share) of the squarest grid the
# example picks, one per panel (a 1x1 grid: one product, whatever the panel).
if [ "${SHAPES:-1}" = 1 ]; then
  shapes_prog=$build/tilekit_pdgemm_shapes
  if [ ! -x "$shapes_prog" ]; then
    echo "scalapack_bench: no $shapes_prog (target tilekit_pdgemm_shapes): the per-shape comparison is skipped" >&2
  else
    for np in $RANKS; do
      shapes=$(python3 - "$N" "$NB" "$np" "${PANEL:-32}" <<'PY'
import sys
n, nb, ranks, panel = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
p = max(d for d in range(1, int(ranks**0.5) + 1) if ranks % d == 0)
q = ranks // p
def share(procs):  # rank 0's rows of n in blocks of nb dealt round-robin over procs
    blocks = -(-n // nb)
    return min(n, -(-blocks // procs) * nb)
m_loc, n_loc = share(p), share(q)
if p * q == 1:
    print(f"{n}x{n}x{n}")
    sys.exit()
# libtilekit_pblas_panel's width: at most K, and below 2^31 bytes a workspace (docs/scalapack.md).
cap = (2**31 - 1) // (8 * max(m_loc, n_loc, share(min(p, q))))
kb = min(n, cap) if panel == "max" else min(int(panel), n, cap)
out = [f"{m_loc}x{n_loc}x{kb}*{n // kb}"]
if n % kb:
    out.append(f"{m_loc}x{n_loc}x{n % kb}")
print(" ".join(out))
PY
)
      echo "
$np rank(s): rank 0's local products (PBLAS panel ${PANEL:-32}), tilekit ($BACKEND) vs the system BLAS, one thread, load $(cut -d' ' -f1 /proc/loadavg):"
      # shellcheck disable=SC2086
      env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TILEKIT_BLAS_BACKEND="$BACKEND" ${OPENBLAS_CORETYPE:+OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE} \
        "$shapes_prog" "$tk" --peer "$system_blas" --dtype "$DTYPE" --reps "$((ROUNDS * 2 + 1))" $shapes | tee -a "$OUT.shapes" | grep -v '^{'
    done
  fi
fi
