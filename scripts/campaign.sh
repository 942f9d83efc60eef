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
status=0
for b in "$@"; do
  echo "== campaign: $cases cases on $b (seed ${SEED:-1})"
  # Each backend's cases come from their own seed range, so a failure names its backend.
  "$prog" --backend "$b" --cases "$cases" --seed "${SEED:-1}" || status=1
done
exit $status
