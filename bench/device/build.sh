#!/usr/bin/env bash
# Run ON THE DEVICE machine (after pack.sh here and with ".device" carried): configures and
# builds tilekit for the H200 (sm_90) into build-device/, using the carried dependencies.
# Extra arguments go to CMake (e.g. -DKokkos_ROOT=/tmp/kokkos-install).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
deps=$root/.device/deps
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
lib=$deps/lib/x86_64-linux-gnu
if [ -f "$lib/libopenblas.so.0.xz" ] && [ ! -f "$lib/libopenblas.so.0" ]; then
  xz -dc "$lib/libopenblas.so.0.xz" >"$lib/libopenblas.so.0" && ln -sf libopenblas.so.0 "$lib/libopenblas.so"
fi
cmake -S "$root" -B "$root/build-device" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$deps" -DCMAKE_CUDA_ARCHITECTURES=90 -DTILEKIT_ENABLE_CUDA=ON \
  -DTILEKIT_ENABLE_HIP=OFF -DTILEKIT_GTEST_SOURCE="$root/.device/googletest" \
  -DBLAS_LIBRARIES="$deps/lib/x86_64-linux-gnu/libopenblas.so" -DOpenBLAS_DIR=/nonexistent "$@"
cmake --build "$root/build-device" -j "$(nproc)"
