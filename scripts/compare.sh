#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build, and compare every backend
# this machine has, side by side. Arguments go to `tilekit compare` (e.g. gemm --size 2048).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup-debian.sh"
bash "$root/scripts/configure.sh" >&2  # progress on stderr, the comparison on stdout
"$root/build/tilekit" info | sed -n 1,2p  # sed reads it all: no SIGPIPE under pipefail
exec "$root/build/tilekit" compare "$@"
