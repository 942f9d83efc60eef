#!/usr/bin/env bash
# Configures and builds tilekit in build/ with every backend this machine can compile
# (TILEKIT_ENABLE_* = AUTO). Extra arguments go to CMake. Prints what it is doing as it goes
# (finding toolchains, probing hipcc, compiling: minutes on a small machine); the whole
# configure output is in build-configure.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export CUDACXX=/usr/local/cuda/bin/nvcc  # CMake looks for nvcc on PATH only
fi
# ccache (scripts/setup-debian.sh installs it) keeps compiled objects between builds; paths are
# hashed relative to the clone, so another clone of the same sources reuses them too.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$root
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
echo "configure: cmake -S . -B build (full output: build-configure.log)"
set +o pipefail
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" 2>&1 | tee "$root/build-configure.log" |
  grep --line-buffered -E "^-- (tilekit|hipcc|The (CXX|CUDA) compiler identification|Found (OpenMP|CUDAToolkit|GTest)|Configuring done)|Error|error:"
status=${PIPESTATUS[0]}
set -o pipefail
if [ "$status" -ne 0 ]; then
  cat "$root/build-configure.log"
  exit "$status"
fi
jobs=$(nproc)
echo "build: cmake --build build -j $jobs (GPU backends take minutes per file)"
# Ninja prints one line per step when its output is not a terminal; on a terminal it keeps one
# status line. Either way the step names say where the build is.
cmake --build "$root/build" -j "$jobs"
