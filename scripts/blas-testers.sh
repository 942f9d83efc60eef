#!/usr/bin/env bash
# netlib's level-3 BLAS testers (Debian's libblas-test, BLAS 3.11) on libtilekit_blas:
#
#   scripts/blas-testers.sh <path/to/libtilekit_blas.so> [backend ...]   (default: serial openmp kokkos)
#
# runs xblat3s, xblat3d (Fortran interface) and xscblat3, xdcblat3 (CBLAS, both layouts) with the
# library preloaded, once per backend (TILEKIT_BLAS_BACKEND), on the inputs in tests/blas/ (which
# test SGEMM/DGEMM only, error exits included, N up to 65). The testers exit 0 whatever happens,
# so their reports are read: every line about the GEMM must say PASSED, none may say FAIL, FATAL,
# SUSPECT, NOT DETECTED or ERROR (beyond "ERROR-EXITS"), and the library's own summary line
# (TILEKIT_BLAS_VERBOSE=1) must show that it, on that backend, served at least as many calls as
# the testers report. Exit status: 0 all passed, 1 a failure, 77 libblas-test not installed.
# BLAS_TESTERS_DIR names another directory holding the four testers (a machine without Debian's
# package: copy them, with libgfortran.so.5 and libquadmath.so.0, and put that directory on
# LD_LIBRARY_PATH); where no libblas.so.3 is installed, the library's own tilekit-blas/libblas.so.3
# link stands in for the one the testers are linked against.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if (($# < 1)); then
  echo "usage: $0 <libtilekit_blas.so> [backend ...]" >&2
  exit 2
fi
lib=$(realpath "$1")
shift
backends=("$@")
((${#backends[@]})) || backends=(serial openmp kokkos)
[[ -f $lib ]] || { echo "FAIL: no library at $1" >&2; exit 1; }
multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
bin=${BLAS_TESTERS_DIR:-/usr/lib/$multiarch/blas}
if [[ ! -x $bin/xblat3s ]]; then
  echo "SKIP: netlib's testers are not installed (Debian: apt-get install libblas-test)"
  exit 77
fi
if ! /sbin/ldconfig -p 2>/dev/null | grep -q "libblas.so.3 " && [[ -e $(dirname "$lib")/tilekit-blas/libblas.so.3 ]]; then
  export LD_LIBRARY_PATH=$(dirname "$lib")/tilekit-blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() {
  echo "FAIL [$1 on $2]: $3"
  status=1
}

# tester, input, report file ("-": the tester writes its report on standard output), routine, the
# PASSED lines the report must have.
run() {
  local backend=$1 tester=$2 input=$3 report=$4 routine=$5
  shift 5
  local dir=$tmp/$backend-$tester
  mkdir -p "$dir"
  (cd "$dir" && LD_PRELOAD=$lib TILEKIT_BLAS_BACKEND=$backend TILEKIT_BLAS_VERBOSE=1 \
    "$bin/$tester" <"$root/tests/blas/$input" >stdout 2>stderr)
  local rc=$?
  local out=$dir/stdout
  [[ $report == - ]] || out=$dir/$report
  if ((rc != 0)); then
    fail "$tester" "$backend" "exit status $rc"
    sed 's/^/    /' "$dir/stderr" | tail -5
  fi
  [[ -f $out ]] || { fail "$tester" "$backend" "no report ($out)"; return; }
  grep -q "END OF TESTS" "$out" || fail "$tester" "$backend" "the report does not reach END OF TESTS"
  local want
  for want in "$@"; do
    grep -qF -- "$want" "$out" || fail "$tester" "$backend" "no line '$want'"
  done
  # Every line about the routine: PASSED (the others: WAS NOT TESTED).
  local bad
  bad=$(grep -i -- "$routine" "$out" | grep -v -e "PASSED THE" -e "WAS NOT TESTED")
  [[ -z $bad ]] || fail "$tester" "$backend" "$(echo "$bad" | head -3)"
  bad=$(cat "$out" "$dir/stdout" "$dir/stderr" | grep -v "PASSED THE TESTS OF ERROR-EXITS" |
        grep -E -e "FAIL|FATAL|SUSPECT|NOT DETECTED|ERROR|\*\*\*\*\*" | head -5)
  [[ -z $bad ]] || fail "$tester" "$backend" "$bad"
  # What the testers counted, against what the library says it served, and where.
  local reported served where line
  reported=$(grep -o "( *[0-9]* CALLS)" "$out" | tr -dc '0-9\n' | awk '{s += $1} END {print s + 0}')
  line=$(grep "^tilekit-blas: [0-9]* calls" "$dir/stderr" | tail -1)
  served=$(echo "$line" | sed -n 's/^tilekit-blas: \([0-9]*\) calls.*/\1/p')
  where=$(echo "$line" | sed -n 's/.* on \(.*\)$/\1/p')
  if [[ -z $line ]]; then
    fail "$tester" "$backend" "no tilekit-blas summary line: the preload did not reach the tester's calls"
  elif ((served < reported)) || [[ $where != "$backend" ]]; then
    fail "$tester" "$backend" "the tester reports $reported calls, tilekit served $served on '$where': $line"
  fi
  printf '%-9s %-8s %s | %s\n' "$tester" "$backend" "$(grep -c "PASSED" "$out") PASSED lines, $reported calls checked" "$line"
}

for b in "${backends[@]}"; do
  run "$b" xblat3s sblat3.in sblat3.out SGEMM " SGEMM  PASSED THE TESTS OF ERROR-EXITS" " SGEMM  PASSED THE COMPUTATIONAL TESTS"
  run "$b" xblat3d dblat3.in dblat3.out DGEMM " DGEMM  PASSED THE TESTS OF ERROR-EXITS" " DGEMM  PASSED THE COMPUTATIONAL TESTS"
  run "$b" xscblat3 sin3 - cblas_sgemm " cblas_sgemm  PASSED THE TESTS OF ERROR-EXITS" \
    " cblas_sgemm  PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS" " cblas_sgemm  PASSED THE ROW-MAJOR    COMPUTATIONAL TESTS"
  run "$b" xdcblat3 din3 - cblas_dgemm " cblas_dgemm  PASSED THE TESTS OF ERROR-EXITS" \
    " cblas_dgemm  PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS" " cblas_dgemm  PASSED THE ROW-MAJOR    COMPUTATIONAL TESTS"
done
((status == 0)) && echo "PASS: netlib's level-3 testers, SGEMM/DGEMM and cblas_sgemm/cblas_dgemm, on: ${backends[*]}"
exit $status
