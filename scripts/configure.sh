#!/usr/bin/env bash
# Configures and builds tilekit in build/ with every backend this machine can compile
# (TILEKIT_ENABLE_* = AUTO). Extra arguments go to CMake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export CUDACXX=/usr/local/cuda/bin/nvcc  # CMake looks for nvcc on PATH only
fi
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$root/build-configure.log" 2>&1 ||
  { cat "$root/build-configure.log"; exit 1; }
grep -E "tilekit backend|tilekit backends" "$root/build-configure.log" || true
cmake --build "$root/build" -j "$(nproc)"
