#!/usr/bin/env bash
# ScaLAPACK over OpenMPI with a chosen BLAS under every rank (docs/scalapack.md).
#
#   scripts/scalapack.sh BUILD_DIR [BLASLIB]
#
# BLASLIB is preloaded into every rank (LD_PRELOAD): libtilekit_blas.so for tilekit (a file name
# with tilekit_blas in it; its backend from TILEKIT_BLAS_BACKEND, openmp when unset); empty or
# absent, the ranks use the system BLAS. On 4 ranks (--oversubscribe: fewer cores are fine; 1 thread
# a rank), it runs
#   1. the example, BUILD_DIR/tilekit_scalapack_gemm: pdgemm_ and psgemm_ at small sizes (square
#      and M != N != K), every entry checked, on 2x2 and 1x4 grids, and with PBLAS panels of 7,
#      1000, max and 2^31 - 1 columns (BUILD_DIR/libtilekit_pblas_panel.so preloaded after the BLAS;
#      the last must be lowered below ScaLAPACK's 32-bit workspace limit, with a message);
#      SCALAPACK_LARGE=1 adds a run where that limit binds below K (2 ranks, about 10 GB);
#   2. ScaLAPACK's own PBLAS testers (Debian's scalapack-mpi-test: dpb3tst, spb3tst) on
#      tests/scalapack/P?BLAS3TST.dat (P?GEMM: every transpose pair, shapes of 1, primes, offsets,
#      K = 0, on 2x2, 1x4 and 4x1 grids): every case PASSED, none FAILED or SKIPPED;
#   3. failures that must end the job with a message, not hang it: a grid that does not match the
#      rank count, an illegal NB, an illegal TRANSA (ScaLAPACK's own PBLAS ERROR), one rank of four
#      failing on its own, a PBLAS workspace that overflows ScaLAPACK's 32-bit sizes (P?SYRK at a
#      panel of 2^20, BUILD_DIR/tilekit_scalapack_syrk_wide_panel; the panel library's message),
#      and, with tilekit's BLAS, one rank whose backend cannot be had here.
# With tilekit's BLAS, every rank must also report its tilekit calls (TILEKIT_BLAS_VERBOSE=1) with
# a non-zero count for the precision it ran. Logs: BUILD_DIR/scalapack-logs/<blas>/.
# Exit status: 0 all passed, 1 a check failed, 2 bad usage or something missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/scalapack.sh BUILD_DIR [BLASLIB]" >&2
  exit 2
fi
build=$(cd "$1" 2>/dev/null && pwd) || { echo "scalapack.sh: no build directory $1" >&2; exit 2; }
blas=${2:-}
prog=$build/tilekit_scalapack_gemm
if [ ! -x "$prog" ]; then
  echo "scalapack.sh: $prog is not built (it needs MPI and ScaLAPACK: scripts/setup-debian.sh," \
       "then configure with TILEKIT_BUILD_SCALAPACK_EXAMPLE=ON)" >&2
  exit 2
fi
tilekit=0
if [ -n "$blas" ]; then
  [ -f "$blas" ] || { echo "scalapack.sh: no BLAS library $blas" >&2; exit 2; }
  blas=$(readlink -f "$blas")
  case "$(basename "$blas")" in *tilekit_blas*) tilekit=1 ;; esac
fi
command -v mpirun >/dev/null || { echo "scalapack.sh: no mpirun (Debian: openmpi-bin)" >&2; exit 2; }
testers=${SCALAPACK_TESTERS:-}
if [ -z "$testers" ]; then
  testers=$(dirname "$(dpkg -L scalapack-mpi-test 2>/dev/null | grep -m1 '/openmpi-tests/PBLAS/dpb3tst$')")
fi
if [ ! -x "$testers/dpb3tst" ] || [ ! -x "$testers/spb3tst" ]; then
  echo "scalapack.sh: ScaLAPACK's PBLAS testers (dpb3tst, spb3tst) not found: install Debian's" \
       "scalapack-mpi-test (scripts/setup-debian.sh), or name their folder in SCALAPACK_TESTERS" >&2
  exit 2
fi

name=system-blas
[ -n "$blas" ] && name=$(basename "$blas")
logs=$build/scalapack-logs/$name
rm -rf "$logs" && mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ranks poll while they wait; more ranks than cores then need to yield the core to each other.
export OMPI_MCA_mpi_yield_when_idle=1
ranks=4
# The ranks' environment: given to each application context of a launch (-x does not carry over
# the ':' of an MPMD launch).
backend=${TILEKIT_BLAS_BACKEND:-openmp}
ranks_env() {  # the ranks' environment with LD_PRELOAD=$1 (nothing when empty)
  env=(-x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
  [ -n "$1" ] && env+=(-x "LD_PRELOAD=$1")
  [ "$tilekit" = 1 ] && env+=(-x "TILEKIT_BLAS_BACKEND=$backend" -x TILEKIT_BLAS_VERBOSE=1)
  # A GPU backend's size threshold (0: every call on the GPU), when the caller sets one.
  [ "$tilekit" = 1 ] && [ -n "${TILEKIT_BLAS_GPU_MIN:-}" ] && env+=(-x "TILEKIT_BLAS_GPU_MIN=$TILEKIT_BLAS_GPU_MIN")
  return 0
}
ranks_env "$blas"
mpi=(mpirun --oversubscribe --tag-output)

what="the system's (libblas.so.3)"
[ -n "$blas" ] && what=$blas
[ "$tilekit" = 1 ] && what="$what, tilekit backend $backend"
echo "scalapack.sh: $ranks ranks, BLAS: $what"
failures=0
status() {  # how a job ended
  if [ "$1" = 124 ]; then echo "timed out"; else echo "exit $1"; fi
}
fail() {
  echo "  FAIL: $*"
  failures=$((failures + 1))
}

# Every rank's "tilekit-blas: <N> calls (sgemm <S>, dgemm <D>) on <backend>" line, with a non-zero
# count for the routine (sgemm or dgemm) that the run used.
check_reports() {  # log routine what
  [ "$tilekit" = 1 ] || return 0
  local r line count
  for ((r = 0; r < ranks; r++)); do
    line=$(grep -aE "^\[[0-9]+,$r\]<std(out|err)>:tilekit-blas: " "$1" | tail -n 1)
    count=$(sed -nE "s/.*[(, ]$2 ([0-9]+).*/\1/p" <<<"$line")
    if [ -z "$line" ]; then
      fail "$3: rank $r printed no tilekit-blas line"
    elif [ -z "$count" ] || [ "$count" -eq 0 ]; then
      fail "$3: rank $r ran no $2 on tilekit: ${line#*:}"
    elif ! grep -q " on $backend\$" <<<"$line"; then
      fail "$3: rank $r did not run on $backend: ${line#*:}"
    else
      echo "    rank $r: ${line#*>:}"
    fi
  done
}

# 1. The example, verified.
example() {  # tag routine args...
  local tag=$1 routine=$2 log=$logs/example-$1.log rc
  shift 2
  local label="example $*$note"
  timeout 300 "${mpi[@]}" -np $ranks "${env[@]}" "$prog" "$@" >"$log" 2>&1
  rc=$?
  local json
  json=$(grep -a '<stdout>:{' "$log" | sed 's/^[^{]*//')
  if [ $rc -ne 0 ] || ! grep -q '"verified": true' <<<"$json"; then
    fail "$label: $(status $rc), ${json:-no result} (log: $log)"
    grep -aE 'scalapack_gemm:|PBLAS ERROR|tilekit-blas: [^0-9]|MPI_ABORT' "$log" | head -n 10 | sed 's/^/    /'
  else
    echo "  ok   $label: $(sed -nE 's/.*("rel_error": [^,]*).*("checked_entries": [0-9]*).*/\1, \2/p' <<<"$json")"
  fi
  check_reports "$log" "$routine" "$label"
}
echo "1. the example (pdgemm_/psgemm_, every entry of C checked)"
note=""
example d2x2 dgemm --n 301 --nb 16 --grid 2x2 --reps 2
example d1x4 dgemm --n 250 --nb 32 --grid 1x4 --transa T --reps 2
example s2x2 sgemm --n 256 --nb 24 --grid 2x2 --dtype float --transa T --transb T --reps 2
example d2x2-mk dgemm --n 200 --m 301 --k 77 --nb 16 --grid 2x2 --transa T --reps 1
# PBLAS panel widths other than the reference's 32 (libtilekit_pblas_panel preloaded after the BLAS):
# narrow, wider than a block, as wide as K (max), and one far beyond what ScaLAPACK's 32-bit
# workspace sizes allow (its P?GEMM would crash in dcopy): the library must lower it and say so.
panel_lib=$build/libtilekit_pblas_panel.so
if [ -f "$panel_lib" ]; then
  for width in 7 1000 max 2147483647; do
    ranks_env "${blas:+$blas:}$panel_lib"
    env+=(-x TILEKIT_PBLAS_PANEL=$width)
    note=" (PBLAS panel width $width)"
    example panel$width dgemm --n 301 --nb 16 --grid 2x2 --transb T --reps 1
  done
  if ! grep -aq "tilekit-pblas-panel: panel width 2147483647 lowered to" "$logs/example-panel2147483647.log"; then
    fail "panel width 2147483647: no 'lowered to' message from libtilekit_pblas_panel (log: $logs/example-panel2147483647.log)"
  fi
  # SCALAPACK_LARGE=1: the same limit where it binds below K (2 ranks, about 10 GB, minutes): on a
  # 1x2 grid each rank holds all M = 2621440 rows of C, and this shape takes PDGEMM's
  # C-stationary algorithm, whose panel of A (M x width) would need 2621440 x 128 x 8 bytes > 2^31
  # at the width K = 128 (ScaLAPACK alone crashes in dcopy): the library must lower it to 102.
  if [ "${SCALAPACK_LARGE:-0}" = 1 ]; then
    ranks_env "${blas:+$blas:}$panel_lib"
    env+=(-x TILEKIT_PBLAS_PANEL=128)
    note=" (PBLAS panel width 128, 2 ranks)"
    saved_ranks=$ranks
    ranks=2
    example panel-large dgemm --m 2621440 --k 128 --n 96 --nb 64 --grid 1x2 --reps 1 --verify sample
    ranks=$saved_ranks
    grep -aq "panel width 128 lowered to 102 " "$logs/example-panel-large.log" ||
      fail "panel width 128 at M = 2621440 on 1x2: no 'lowered to 102' message (log: $logs/example-panel-large.log)"
  fi
  ranks_env "$blas"
  note=""
else
  fail "no $panel_lib (target tilekit_pblas_panel)"
fi

# 2. ScaLAPACK's PBLAS testers: the summary line of P?GEMM must read TOTAL = PASSED > 0, 0, 0.
tester() {  # d|s
  local p=${1^^} log=$logs/${1}pb3tst.log rc
  cp "$root/tests/scalapack/P${p}BLAS3TST.dat" "$work/"
  (cd "$work" && timeout 300 "${mpi[@]}" -np $ranks "${env[@]}" "$testers/${1}pb3tst") >"$log" 2>&1
  rc=$?
  local sums
  sums=$(grep -aE "\|  P${p}GEMM +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+" "$log" | tail -n 1 | awk '{print $(NF-3), $(NF-2), $(NF-1), $NF}')
  read -r total passed failed skipped <<<"${sums:-0 0 0 0}"
  if [ $rc -ne 0 ] || [ -z "$sums" ] || [ "$total" -eq 0 ] || [ "$passed" -ne "$total" ] || [ "$failed" -ne 0 ] ||
     [ "$skipped" -ne 0 ]; then
    local counts="no summary line"
    [ -n "$sums" ] && counts="total $total, passed $passed, failed $failed, skipped $skipped"
    fail "${1}pb3tst: $(status $rc), P${p}GEMM $counts (log: $log)"
    grep -aE 'FAILED|SKIPPED|ILLEGAL|ERROR' "$log" | grep -v 'TOTAL TESTS' | sort | uniq -c | head -n 10 | sed 's/^/    /'
  else
    echo "  ok   ${1}pb3tst: P${p}GEMM $total cases PASSED, $failed FAILED, $skipped SKIPPED"
  fi
  check_reports "$log" "${1}gemm" "${1}pb3tst"
}
echo "2. ScaLAPACK's PBLAS testers (P?GEMM)"
tester d
tester s

# 3. Failures end the job, with their message, well before the timeout.
fails_with() {  # tag expected-output-regex mpirun-args...
  local tag=$1 want=$2 log=$logs/error-$1.log rc
  shift 2
  timeout 120 "$@" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then
    fail "$tag: the job hung (killed after 120 s; log: $log)"
  elif [ $rc -eq 0 ]; then
    fail "$tag: the job succeeded (log: $log)"
  elif ! grep -aqE -e "$want" "$log"; then
    fail "$tag: exit $rc, but no message matching '$want' (log: $log)"
  else
    echo "  ok   $tag: exit $rc, $(grep -aEm1 -e "$want" "$log" | sed 's/^\[[0-9,]*\]<std[a-z]*>://')"
  fi
}
echo "3. failures end the job with a message"
fails_with grid 'the grid 3x1 needs 3 ranks, but 4 were started' "${mpi[@]}" -np $ranks "${env[@]}" "$prog" --n 64 --grid 3x1
fails_with nb '--nb must be at least 1' "${mpi[@]}" -np $ranks "${env[@]}" "$prog" --n 64 --nb 0
fails_with transa "PBLAS ERROR 'Illegal TRANSA = X" "${mpi[@]}" -np $ranks "${env[@]}" "$prog" --n 64 --transa X
fails_with one-rank 'rank 3: --nb must be at least 1' \
  "${mpi[@]}" -np $((ranks - 1)) "${env[@]}" "$prog" --n 64 : -np 1 "${env[@]}" "$prog" --n 64 --nb 0
# A PBLAS routine the panel library does not see whole (P?SYRK) with a panel so wide that its
# workspace size overflows ScaLAPACK's 32-bit ints: the library's message, not a crash; one column
# narrower, the product verified.
syrk=$build/tilekit_scalapack_syrk_wide_panel
if [ -x "$syrk" ] && [ -f "$panel_lib" ]; then
  ranks_env "${blas:+$blas:}$panel_lib"
  env+=(-x TILEKIT_PBLAS_PANEL=1048576)
  fails_with syrk-wide-panel "tilekit-pblas-panel: a PBLAS routine asked for a workspace of -2147483648 bytes" \
    "${mpi[@]}" -np $ranks "${env[@]}" "$syrk"
  ranks_env "${blas:+$blas:}$panel_lib"
  env+=(-x TILEKIT_PBLAS_PANEL=1048575)
  if timeout 120 "${mpi[@]}" -np $ranks "${env[@]}" "$syrk" >"$logs/syrk-1048575.log" 2>&1 &&
     grep -aq "syrk_wide_panel: verified" "$logs/syrk-1048575.log"; then
    echo "  ok   syrk-1048575: PDSYRK verified at the widest panel its workspace allows"
  else
    fail "syrk-1048575: PDSYRK at panel width 1048575 (log: $logs/syrk-1048575.log)"
  fi
  ranks_env "$blas"
else
  echo "  skip syrk-wide-panel: no $syrk (built with tilekit's tests)"
fi
if [ "$tilekit" = 1 ]; then
  # One rank of four asks its BLAS for a GPU backend this machine cannot give (a rank's device
  # that cannot be had); the other three are then waiting for it inside pdgemm_.
  gone=${SCALAPACK_UNAVAILABLE_BACKEND:-}
  if [ -z "$gone" ]; then
    if ! ls /dev/nvidia0 >/dev/null 2>&1; then gone=cuda; elif ! ls /dev/kfd >/dev/null 2>&1; then gone=hip; fi
  fi
  if [ -n "$gone" ]; then
    fails_with "one-rank-$gone" "TILEKIT_BLAS_BACKEND=$gone: " "${mpi[@]}" -np $((ranks - 1)) "${env[@]}" "$prog" --n 256 --nb 32 \
      : -np 1 "${env[@]}" env "TILEKIT_BLAS_BACKEND=$gone" TILEKIT_BLAS_GPU_MIN=0 "$prog" --n 256 --nb 32
  fi
fi

if [ $failures -ne 0 ]; then
  echo "scalapack.sh: $failures check(s) FAILED (logs: $logs)"
  exit 1
fi
echo "scalapack.sh: all checks passed (logs: $logs)"
