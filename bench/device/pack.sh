#!/usr/bin/env bash
# Run HERE (Debian), before a device call: copies the Debian-packaged dependencies the GPU
# machine lacks (it has no package registry) into .device/ (git-ignored), laid out as an
# install prefix CMake can search. Carry ".device" in the device call, then run build.sh there.
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=$root/.device
rm -rf "$out" && mkdir -p "$out/deps/include" "$out/deps/lib/x86_64-linux-gnu/cmake" "$out/deps/share/cmake"
multi=/usr/lib/x86_64-linux-gnu
cp -r /usr/include/fmt /usr/include/CLI /usr/include/nlohmann /usr/include/hwy "$out/deps/include/"
cp -P $multi/libhwy.so* "$out/deps/lib/x86_64-linux-gnu/"  # Highway: the openmp backend's SIMD dispatch
cp -r $multi/cmake/fmt "$out/deps/lib/x86_64-linux-gnu/cmake/"
cp -P $multi/libfmt.so* "$out/deps/lib/x86_64-linux-gnu/"
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$out/deps/share/cmake/"
# OpenBLAS (the CPU peer) with its Fortran runtime, which the GPU machine's image may lack.
ob=$multi/openblas-pthread
cp "$ob"/openblas_config.h /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h "$out/deps/include/" 2>/dev/null ||
  cp -L /usr/include/x86_64-linux-gnu/cblas.h /usr/include/x86_64-linux-gnu/openblas_config.h "$out/deps/include/"
cp -L /usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h "$out/deps/include/" 2>/dev/null || true
# Compressed: the working tree that travels to the device is limited to 64 MiB; build.sh unpacks it.
xz -T2 -6 -c $ob/libopenblasp-r0.3.21.so >"$out/deps/lib/x86_64-linux-gnu/libopenblas.so.0.xz"
cp -L $multi/libgfortran.so.5 $multi/libquadmath.so.0 "$out/deps/lib/x86_64-linux-gnu/"
cp -r /usr/src/googletest "$out/googletest"
# What the device builds (its copy of the tree has no usable git): bench/run.py records these.
git -C "$root" rev-parse HEAD >"$out/commit"
git -C "$root" describe --always --dirty --abbrev=12 >"$out/describe"
du -sh "$out"
