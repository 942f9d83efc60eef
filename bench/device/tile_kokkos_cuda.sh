#!/usr/bin/env bash
# Run ON THE DEVICE (after pack.sh here, with ".device" carried), once tilekit is built against a
# CUDA Kokkos with the kokkos backend built in (not a plugin), as
#   bash bench/device/build.sh -DTILEKIT_ENABLE_KOKKOS=ON -DKokkos_ROOT=/tmp/kokkos-install \
#        -DTILEKIT_KOKKOS_PLUGIN=OFF -DTILEKIT_ENABLE_OPENMP=ON
# Checks the tile layer as a user of a Kokkos-CUDA tilekit meets it:
#   1. the histogram, scan and reduction examples of that build, compiled by nvcc_wrapper (the
#      _kokkos programs: serial, openmp, kokkos in CUDA space, cuda) and by nvcc (_cuda);
#   2. the build installed into a temporary prefix, and examples/downstream/ configured against
#      the package alone (no TILEKIT_PLUGIN_PATH), built and run twice:
#        a. as docs/tile-kernels.md ("A CUDA Kokkos") tells users: the host compiler, Kokkos'
#           package sending the files of targets that link tilekit::tile_kokkos to nvcc_wrapper;
#        b. with Kokkos' nvcc_wrapper as the project's C++ compiler;
#      each must run its own tile kernel on kokkos (CUDA space), on cuda (nvcc) and on the host
#      backends.
# One PASS or FAIL line a check; exit status 1 when any failed. Logs in OUT_DIR.
# Usage: tile_kokkos_cuda.sh [BUILD_DIR [OUT_DIR]]  (default build-device/, $OUT); KOKKOS_ROOT
# (default /tmp/kokkos-install) is the Kokkos install the build used.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=$(cd "${1:-$root/build-device}" 2>/dev/null && pwd) || { echo "FAIL: no build directory ${1:-$root/build-device}"; exit 1; }
out=${2:-${OUT:-/tmp/tile_kokkos_cuda}}
kokkos=${KOKKOS_ROOT:-/tmp/kokkos-install}
deps=$root/.device/deps
lib=$deps/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
unset TILEKIT_PLUGIN_PATH  # the package must find its own plugins
mkdir -p "$out"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
show() { echo "---- last lines of $1"; tail -n "${2:-25}" "$1"; echo "----"; }

# --- What the build is.
wrapper=$kokkos/bin/nvcc_wrapper
[ -x "$wrapper" ] || { echo "FAIL: no $wrapper (Kokkos with CUDA installed at $kokkos?)"; exit 1; }
cfg=$b/include/tilekit/config.hpp
[ -f "$cfg" ] || { echo "FAIL: $cfg missing: build tilekit first (the build.sh line at the top)"; exit 1; }
backends=$(sed -n 's/^#define TILEKIT_BACKENDS "\(.*\)"/\1/p' "$cfg")
plugins=$(sed -n 's/^#define TILEKIT_PLUGIN_BACKENDS "\(.*\)"/\1/p' "$cfg")
echo "build $b: backends $backends; plugins ${plugins:-none}; Kokkos $(grep -m1 '^Kokkos_DIR:' "$b/CMakeCache.txt" | cut -d= -f2)"
case ",$backends," in *,kokkos,*) ;; *) echo "FAIL: the build has no kokkos backend"; exit 1 ;; esac
case ",$backends," in *,cuda,*) ;; *) echo "FAIL: the build has no cuda backend"; exit 1 ;; esac
case ",$plugins," in *,kokkos,*) echo "FAIL: kokkos is a plugin: configure with -DTILEKIT_KOKKOS_PLUGIN=OFF"; exit 1 ;; esac
grep -q "KOKKOS_ENABLE_CUDA" "$kokkos/include/KokkosCore_config.h" ||
  { echo "FAIL: $kokkos is not a CUDA Kokkos"; exit 1; }
# Everything (install needs every target); nothing to do after build.sh.
cmake --build "$b" -j "$(nproc)" >"$out/build.log" 2>&1 || { show "$out/build.log" 40; echo "FAIL: build"; exit 1; }

# --- 1. The examples, compiled by nvcc_wrapper (kokkos) and nvcc (cuda), on every backend they
# can launch on: each verifies against a plain loop and exits non-zero when one is wrong.
for ex in histogram scan reduction; do
  for v in kokkos cuda; do
    x=$b/tilekit_example_${ex}_$v
    if [ ! -x "$x" ]; then fail "$ex ($v build): $x was not built"; continue; fi
    timeout 300 "$x" >"$out/example-$ex-$v.log" 2>&1
    rc=$?
    grep -E "kokkos|cuda|WRONG|DIFFER|error" "$out/example-$ex-$v.log" | head -12 | sed "s/^/  [$ex $v] /"
    if [ $rc -ne 0 ]; then
      show "$out/example-$ex-$v.log"; fail "$ex ($v build): exit $rc"
    elif [ "$v" = kokkos ] && ! grep -qw kokkos "$out/example-$ex-$v.log"; then
      show "$out/example-$ex-$v.log"; fail "$ex ($v build): kokkos did not run"
    else
      pass "$ex ($v build): exit 0"
    fi
  done
done
"$b/tilekit_example_scan_cuda" --bench 2>&1 | grep '^{' | tee "$out/bench.jsonl"

# --- 2. The installed package, and examples/downstream/ built against it.
tmp=$(mktemp -d /tmp/tile_kokkos_cuda.XXXXXX)
prefix=$tmp/prefix
if cmake --install "$b" --prefix "$prefix" >"$out/install.log" 2>&1; then
  pass "install into $prefix"
else
  show "$out/install.log"; fail "install"; echo "$fails check(s) failed"; exit 1
fi
"$prefix/bin/tilekit" info 2>&1 | grep -A1 -E "^\[(kokkos|cuda)\]" | sed 's/^/  info: /'
"$prefix/bin/tilekit" info 2>&1 | grep -A1 "^\[kokkos\]" | grep -q "Cuda" && pass "the installed kokkos backend runs on Kokkos::Cuda" ||
  fail "the installed kokkos backend is not on Kokkos::Cuda"
components=$(tr , ';' <<<"$backends")

downstream() {  # $1: label, then CMake arguments
  local label=$1 dir=$tmp/downstream-$1
  shift
  echo "== downstream ($label)"
  if ! cmake -S "$root/examples/downstream" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_PREFIX_PATH=$prefix;$deps" "-DTILEKIT_COMPONENTS=$components" \
      -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "$@" >"$out/downstream-$label-cmake.log" 2>&1; then
    show "$out/downstream-$label-cmake.log" 40; fail "downstream ($label): configure"; return
  fi
  grep -E "tilekit |tilekit_|own CUDA|own Kokkos|kokkos_launch_compiler|Kokkos" "$out/downstream-$label-cmake.log" | head -12
  for var in tilekit_INCLUDE_DIR tilekit_PLUGIN_DIR; do
    grep -q "^-- $var=$prefix/" "$out/downstream-$label-cmake.log" || fail "downstream ($label): $var is not in $prefix"
  done
  if ! cmake --build "$dir" -j "$(nproc)" -v >"$out/downstream-$label-build.log" 2>&1; then
    show "$out/downstream-$label-build.log" 40; fail "downstream ($label): build"; return
  fi
  # Which compiler compiled the Kokkos tile kernel: nvcc_wrapper, or the build is not what it claims.
  local kline
  kline=$(grep -E "kokkos_kernel\.cpp" "$out/downstream-$label-build.log" | grep -E "(-o|-c) " | head -1)
  echo "  kokkos_kernel.cpp: ${kline:0:300}"
  # Through Kokkos' launcher, the file goes to nvcc_wrapper when its command has -DKOKKOS_DEPENDENCE
  # (from linking Kokkos); with nvcc_wrapper as the compiler, always.
  if grep -q "nvcc_wrapper" <<<"$kline" && { [ "$label" != launcher ] || grep -q "KOKKOS_DEPENDENCE" <<<"$kline"; }; then
    pass "downstream ($label): kokkos_kernel.cpp compiled by nvcc_wrapper"
  else
    fail "downstream ($label): kokkos_kernel.cpp not compiled by nvcc_wrapper"
  fi
  "$dir/downstream" >"$out/downstream-$label-run.log" 2>&1
  local rc=$?
  sed 's/^/  /' "$out/downstream-$label-run.log"
  [ $rc -eq 0 ] && pass "downstream ($label): exit 0" || fail "downstream ($label): exit $rc"
  local want
  for want in "^kokkos +own tile kernel \(tilekit::tile_kokkos\): ok" "^cuda +own tile kernel \(nvcc\): ok" \
              "^serial +own tile kernel: ok" "^openmp +own tile kernel: ok" "^kokkos +tiled dgemm .*: ok" \
              "^cuda +tiled dgemm .*: ok"; do
    grep -qE "$want" "$out/downstream-$label-run.log" && pass "downstream ($label): /$want/" ||
      fail "downstream ($label): no line /$want/"
  done
}
downstream launcher                                   # docs/tile-kernels.md's way
downstream nvcc_wrapper "-DCMAKE_CXX_COMPILER=$wrapper"  # the whole project through nvcc_wrapper
rm -rf "$tmp"

echo "tile_kokkos_cuda: $fails check(s) failed"
[ $fails -eq 0 ]
