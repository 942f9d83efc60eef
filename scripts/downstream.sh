#!/usr/bin/env bash
# Uses tilekit the way a downstream project does: installs the build (build/ by default, as
# scripts/test.sh leaves it) into a temporary prefix, then, with no TILEKIT_PLUGIN_PATH,
#   - builds examples/downstream/ with find_package(tilekit CONFIG REQUIRED COMPONENTS <all of its
#     backends>), checks that the package's variables point into the prefix, and runs it: its own
#     tile kernel on every backend, and the package's plugins found in the prefix (on a machine
#     without GPUs they load and report why they cannot run, never "not found"),
#   - builds tests/mixed/ (Debug, a .cpp and a .cu sharing an inline function that launches a
#     tile kernel, both link orders) where nvcc and the cuda backend are, and runs both programs,
#   - checks that asking for a backend the package lacks fails at configure time, naming it,
#   - builds the same program with `pkg-config --cflags --libs tilekit` and runs it,
#   - runs the installed `tilekit info`, and, when the cuda plugin is installed, again with the
#     CUDA libraries hidden from the loader: it must list cuda as unavailable with the reason,
#   - packs the build with `cpack -G DEB` and lists the package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
tmp=$(mktemp -d)
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export CUDACXX=/usr/local/cuda/bin/nvcc  # the example compiles its own CUDA tile kernel
fi
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { printf '\n== downstream: %s\n' "$*"; }

step "install $build into a temporary prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
backends=$(sed -n 's/^#define TILEKIT_BACKENDS "\(.*\)"/\1/p' "$prefix/include/tilekit/config.hpp" | tr , ';')
echo "installed backends: $backends"
plugins=$(sed -n 's/^#define TILEKIT_PLUGIN_BACKENDS "\(.*\)"/\1/p' "$prefix/include/tilekit/config.hpp" | tr , ' ')
echo "installed plugins: ${plugins:-none}"
unset TILEKIT_PLUGIN_PATH  # the package must find its own plugins

step "find_package(tilekit CONFIG REQUIRED COMPONENTS $backends)"
cmake -S "$root/examples/downstream" -B "$tmp/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "-DTILEKIT_COMPONENTS=$backends" >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; exit 1; }
grep -E "tilekit |own CUDA|own Kokkos|tilekit_" "$tmp/cmake.log"
for var in tilekit_INCLUDE_DIR tilekit_PLUGIN_DIR; do  # PACKAGE_PREFIX_DIR survives find_dependency
  grep -q "^-- $var=$prefix/" "$tmp/cmake.log" || { echo "FAIL: $var is not in the prefix $prefix"; exit 1; }
done
cmake --build "$tmp/cmake" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
out=$("$tmp/cmake/downstream") || { echo "$out"; echo "FAIL: the downstream program"; exit 1; }
echo "$out"
for p in $plugins; do  # found in the prefix: loaded, or unavailable for a reason of the runtime's
  line=$(grep -E "^$p " <<<"$out" | head -1 || true)
  [ -n "$line" ] || { echo "FAIL: no line for the $p plugin"; exit 1; }
  if grep -q "not found" <<<"$line"; then echo "FAIL: the $p plugin of the prefix was not found"; exit 1; fi
done

if [ -n "${CUDACXX:-}${CMAKE_CUDA_COMPILER:-}" ] || command -v nvcc >/dev/null; then
  case ";$backends;" in *";cuda;"*)
    step "an inline function in a .cpp and a .cu launching a tile kernel (Debug, both link orders)"
    cmake -S "$root/tests/mixed" -B "$tmp/mixed" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_PREFIX_PATH="$prefix" \
      >"$tmp/mixed.log" 2>&1 || { cat "$tmp/mixed.log"; exit 1; }
    cmake --build "$tmp/mixed" >"$tmp/mixed-build.log" 2>&1 || { cat "$tmp/mixed-build.log"; exit 1; }
    "$tmp/mixed/mixed_cpp_first" || { echo "FAIL: mixed_cpp_first"; exit 1; }
    "$tmp/mixed/mixed_cu_first" || { echo "FAIL: mixed_cu_first"; exit 1; }
    ;;
  esac
fi

missing=hip
case ";$backends;" in *";hip;"*) missing=no_such_backend ;; esac
step "a missing component ($missing) must fail at configure time"
if cmake -S "$root/examples/downstream" -B "$tmp/cmake-missing" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
     "-DTILEKIT_COMPONENTS=serial;$missing" >"$tmp/missing.log" 2>&1; then
  echo "FAIL: find_package accepted the component '$missing'"; exit 1
fi
msg=$(tr -s ' \n' '  ' <"$tmp/missing.log")  # CMake wraps the message
grep -o "tilekit at [^ ]* was built without the backend(s) $missing; it has: [^.]*\." <<<"$msg" ||
  { cat "$tmp/missing.log"; echo "FAIL: no clear message for '$missing'"; exit 1; }

step "pkg-config"
export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name tilekit.pc -print -quit)")"
echo "pkg-config --libs tilekit: $(pkg-config --libs tilekit)"
# shellcheck disable=SC2046
g++ -std=c++17 -O1 "$root/examples/downstream/main.cpp" -o "$tmp/downstream-pc" $(pkg-config --cflags --libs tilekit) \
  -Wl,-rpath,"$(pkg-config --variable=libdir tilekit)"  # for a shared libtilekit
"$tmp/downstream-pc" >/dev/null && echo "the pkg-config build runs and verifies"

step "the installed program"
env -u TILEKIT_PLUGIN_PATH "$prefix/bin/tilekit" info | grep -E "^tilekit|^compiled|unavailable|^\[" || true
if [ -n "$(find "$prefix" -name tilekit-cuda.so)" ]; then
  step "the installed program where the CUDA libraries are not on the loader's path"
  # --inhibit-cache: ld.so ignores /etc/ld.so.cache, where the CUDA toolkit registers its lib
  # directory; the system directories still serve everything else. (Run through ld.so, the
  # program is not where /proc/self/exe says: TILEKIT_PLUGIN_PATH names the plugins.)
  out=$(TILEKIT_PLUGIN_PATH=$(dirname "$(find "$prefix" -name tilekit-cuda.so -print -quit)") \
    /lib64/ld-linux-x86-64.so.2 --inhibit-cache "$prefix/bin/tilekit" info)
  echo "$out" | grep "^\[cuda\]"
  echo "$out" | grep -q "^\[cuda\] unavailable: .*libcudart.so.*cannot open shared object file" ||
    { echo "FAIL: cuda is not listed as unavailable with the loader's reason"; exit 1; }
fi

blas=$(find "$prefix" -name 'libtilekit_blas.so' -print -quit)
if [ -n "$blas" ]; then
  step "libtilekit_blas in place of -lblas (the BLAS program links it alone)"
  g++ -O1 "$root/tests/blas/blas_smoke.cpp" -o "$tmp/blas-smoke" -L"$(dirname "$blas")" -ltilekit_blas \
    -Wl,-rpath,"$(dirname "$blas")"
  if readelf -d "$tmp/blas-smoke" | grep -E "NEEDED.*(libblas|openblas)"; then
    echo "FAIL: the program needs another BLAS library"; exit 1
  fi
  out=$(TILEKIT_BLAS_BACKEND=serial TILEKIT_BLAS_VERBOSE=1 "$tmp/blas-smoke" 2>&1)
  echo "$out"
  grep -q "^tilekit-blas: 4 calls (sgemm 2, dgemm 2) on serial$" <<<"$out" || { echo "FAIL: no summary line"; exit 1; }
  [ -L "$(dirname "$blas")/tilekit-blas/libblas.so.3" ] || { echo "FAIL: no tilekit-blas/libblas.so.3 link"; exit 1; }
fi

step "as a subproject (add_subdirectory; serial only, to keep it short)"
mkdir -p "$tmp/parent"
cp "$root/examples/downstream/main.cpp" "$root/examples/downstream/tile_kernel.hpp" "$tmp/parent/"
# tilekit's private include directories (backends/, src/) must not reach the parent's targets.
cat >"$tmp/parent/private_probe.cpp" <<'CPP'
#if __has_include("common/host/host_backend.hpp") || __has_include("plugin.hpp") || __has_include("cli/plot.hpp")
#error "tilekit's private include directories (backends/, src/) reached a parent project's target"
#endif
#include <tilekit/tilekit.hpp>
CPP
cat >"$tmp/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(parent LANGUAGES CXX)
add_subdirectory("$root" tilekit)
foreach(t tilekit_tests tilekit_cli tilekit_quickstart)
  if(TARGET \${t})
    message(FATAL_ERROR "tilekit as a subproject defines \${t}: tests and program must be off")
  endif()
endforeach()
add_executable(app main.cpp private_probe.cpp)
target_link_libraries(app PRIVATE tilekit::tilekit)
CMAKE
cmake -S "$tmp/parent" -B "$tmp/parent/build" -G Ninja -DTILEKIT_ENABLE_OPENMP=OFF -DTILEKIT_ENABLE_KOKKOS=OFF \
  -DTILEKIT_ENABLE_CUDA=OFF -DTILEKIT_ENABLE_HIP=OFF >"$tmp/parent.log" 2>&1 || { cat "$tmp/parent.log"; exit 1; }
if grep -E "^CMAKE_BUILD_TYPE:[A-Z]*=." "$tmp/parent/build/CMakeCache.txt"; then
  echo "FAIL: tilekit set the parent's CMAKE_BUILD_TYPE"; exit 1
fi
cmake --build "$tmp/parent/build" >"$tmp/parent-build.log" 2>&1 || { cat "$tmp/parent-build.log"; exit 1; }
"$tmp/parent/build/app" | head -2

step "cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; exit 1; }
deb=$(find "$tmp/deb" -maxdepth 1 -name '*.deb' -print -quit)
dpkg-deb --info "$deb" | grep -E "Package|Version|Depends"
dpkg-deb --contents "$deb" | awk '{print $6}' | grep -E "bin/tilekit$|libtilekit|tilekitConfig.cmake|tilekit.pc|config.hpp|tilekit-.*\.so|tilekit-blas/libblas.so.3"
echo "downstream: ok"
