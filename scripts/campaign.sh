#!/usr/bin/env bash
# The randomized campaign at CI scale: CASES seeded cases (default 10000) per backend against
# the double-precision reference, with the counts in the log. Each failure prints its seed and
# a one-command reproduction. Usage: campaign.sh [BUILD_DIR] [CASES] [BACKEND...]
# (default: build/, 10000, every available host backend: serial, openmp, kokkos).
# SEED=<n> picks another campaign (default: 1, so CI is reproducible); on the GPU machine:
#   bash scripts/campaign.sh build-device 10000 cuda
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cases=${2:-10000}
shift $(($# > 2 ? 2 : $#))
prog=$build/tests/tilekit_campaign
[ -x "$prog" ] || { echo "campaign.sh: $prog not built (TILEKIT_BUILD_TESTS=ON builds it)"; exit 2; }
if [ $# -eq 0 ]; then
  compiled=$("$build/tilekit" info | sed -n 's/^compiled backends: //p' | tr -d ',')
  set --
  for b in serial openmp kokkos; do [[ " $compiled " == *" $b "* ]] && set -- "$@" "$b"; done
fi
# Each backend's cases come from their own seed range, so a failure names its backend. Backends
# that run on one thread (serial; kokkos on Debian's Serial space) run two at a time, each with its
# log printed whole when it ends; the others (openmp: all cores) run alone.
status=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
one() {
  echo "== campaign: $cases cases on $1 (seed ${SEED:-1})" >"$logs/$1"
  "$prog" --backend "$1" --cases "$cases" --seed "${SEED:-1}" >>"$logs/$1" 2>&1
}
single=()
parallel=()
for b in "$@"; do
  if [ "$b" = serial ] || { [ "$b" = kokkos ] && "$build/tilekit" info 2>/dev/null | grep -A2 '^\[kokkos\]' | grep -q 'Serial'; }; then
    single+=("$b")
  else
    parallel+=("$b")
  fi
done
while ((${#single[@]})); do
  pids=()
  for b in "${single[@]:0:2}"; do one "$b" & pids+=($!); done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "$logs/${single[$i]}"
  done
  single=("${single[@]:2}")
done
for b in "${parallel[@]}"; do
  one "$b" || status=1
  cat "$logs/$b"
done
exit $status
