#!/usr/bin/env bash
# On a machine with a GPU: checks the backend plugins of a build (default build-device/, as
# bench/device/build.sh makes it) where their runtime and a device exist:
#   - `tilekit info` lists each plugin backend as available,
#   - the plugin backends' conformance cases and the loader's tests pass,
#   - a short compare on each GPU backend runs, and every program exits 0 with nothing from the
#     runtime's teardown on stderr (plugins are destroyed before their runtime's exit handlers),
#   - the same from an install into a temporary prefix (plugins found in <prefix>/lib/tilekit).
# Writes the logs to $OUT (default ./gpu-plugin-check) and prints a summary.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$root/build-device}" && pwd)
out=${OUT:-$PWD/gpu-plugin-check}
mkdir -p "$out"
fail=0
check() {  # check <name> <command...>: exit 0 and a clean stderr
  local name=$1
  shift
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  if [ $rc -ne 0 ] || grep -qiE "unloading|terminate|segmentation|abort" "$out/$name.err"; then
    echo "FAIL $name (rc $rc): $(tail -3 "$out/$name.err" | tr '\n' ' ')"
    fail=1
  else
    echo "ok   $name"
  fi
}
plugins=$(sed -n 's/^#define TILEKIT_PLUGIN_BACKENDS "\(.*\)"/\1/p' "$B/include/tilekit/config.hpp")
echo "plugin backends of $B: ${plugins:-none}"
check info "$B/tilekit" info
for p in ${plugins//,/ }; do
  if grep -q "^\[$p\] unavailable" "$out/info.out"; then
    echo "FAIL $p is unavailable: $(grep "^\[$p\]" "$out/info.out")"
    fail=1
  fi
  check "tests-$p" "$B/tests/tilekit_tests" "--gtest_filter=*/${p}_*:Plugin.*" --gtest_brief=1
  check "compare-$p" "$B/tilekit" compare gemm transpose conv2d --backends "$p" --size 1024
done
prefix=$(mktemp -d)
cmake --install "$B" --prefix "$prefix" >"$out/install.log" 2>&1 || { echo "FAIL install"; fail=1; }
check installed-info "$prefix/bin/tilekit" info
for p in ${plugins//,/ }; do
  grep -q "^\[$p\] unavailable" "$out/installed-info.out" &&
    { echo "FAIL installed $p: $(grep "^\[$p\]" "$out/installed-info.out")"; fail=1; }
done
rm -rf "$prefix"
[ $fail -eq 0 ] && echo "gpu-plugin-check: ok" || echo "gpu-plugin-check: FAILED (logs in $out)"
exit $fail
