#!/usr/bin/env bash
# The tests, from a fresh clone: install what is missing, build every backend this machine can
# compile, and run the conformance suite (GPU cases skip with their reason where no GPU is).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup-debian.sh"
bash "$root/scripts/configure.sh"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)" "$@"
