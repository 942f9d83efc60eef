#!/usr/bin/env bash
# Run ON THE DEVICE (after pack.sh here, with ".device" carried), once build-device/ holds tilekit
# built with a CUDA Kokkos (backend built in) and the sweep values:
#   bash bench/device/build.sh -DTILEKIT_ENABLE_KOKKOS=ON -DKokkos_ROOT=/tmp/kokkos-install \
#        -DTILEKIT_KOKKOS_PLUGIN=OFF -DTILEKIT_BUILD_SWEEPS=ON
# The kokkos tiled conv2d against the cuda backend's, 8192^2, in one process per comparison
# (`tilekit compare conv2d --backends cuda,kokkos`), for each team layout of kokkos.conv2d.tiled
# (block: cuda's tile in a team of a cuda block's shared memory, the default; fit: the tile
# trimmed beside Kokkos' team-reduction space; reserve: cuda's tile beside it), float R = 3 and 5
# and double R = 5; block and fit again in a second pass, in the other order. Prints a table of kokkos / cuda tiled time
# ratios (above 1: kokkos faster) and RESULT lines; exits 1 when any row fails verification or
# a run fails. Usage: kokkos_tiled_ab.sh [BUILD_DIR [OUT_DIR]] (default build-device/, $OUT).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=$(cd "${1:-$root/build-device}" 2>/dev/null && pwd) || { echo "FAIL: no build directory ${1:-$root/build-device}"; exit 1; }
out=${2:-${OUT:-/tmp/kokkos_tiled_ab}}
mkdir -p "$out"
export LD_LIBRARY_PATH=$root/.device/deps/lib/x86_64-linux-gnu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tk=$b/tilekit
[ -x "$tk" ] || { echo "FAIL: no $tk"; exit 1; }
"$tk" tunings 2>/dev/null | grep -q "kokkos.conv2d.tiled" || { echo "FAIL: $tk has no kokkos.conv2d.tiled tuning (kokkos backend built in?)"; exit 1; }
grep -q "^TILEKIT_BUILD_SWEEPS:BOOL=ON" "$b/CMakeCache.txt" ||
  { echo "FAIL: $b is not a sweep build (fit and reserve need -DTILEKIT_BUILD_SWEEPS=ON)"; exit 1; }

fails=0
run() {  # dtype R layout pass
  local f=$out/$1-r$2-$3-p$4
  timeout 120 "$tk" compare conv2d --backends cuda,kokkos --size 8192 --filter "$2" --dtype "$1" \
    --no-peers --no-roofline --tune "kokkos.conv2d.tiled=$3" --csv "$f.csv" >"$f.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: $1 R=$2 kokkos.conv2d.tiled=$3 pass $4: exit $rc"; tail -n 30 "$f.log"; fails=$((fails + 1)); rm -f "$f.csv"
  fi
}
start=$(date +%s)
for pass in 1 2; do
  layouts="block fit reserve"
  [ $pass = 2 ] && layouts="fit block"  # the contenders again, in the other order
  for cfg in "float 5" "float 3" "double 5"; do
    set -- $cfg
    for l in $layouts; do run "$1" "$2" "$l" "$pass"; done
  done
done

python3 - "$out" <<'EOF' || fails=$((fails + 1))
import csv, glob, json, os, statistics, sys
out = sys.argv[1]
cells, bad = {}, []
for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
    dtype, r, layout, p = os.path.basename(path)[:-4].split("-")
    rows = list(csv.DictReader(open(path)))
    for row in rows:
        if row["verified"] != "true":
            bad.append(f"{os.path.basename(path)}: {row['backend']} {row['variant']} not verified (rel_error {row['rel_error']})")
    t = {row["backend"]: (float(row["seconds"]), row["tile"]) for row in rows if row["variant"] == "tiled"}
    if "cuda" not in t or "kokkos" not in t:
        bad.append(f"{os.path.basename(path)}: no tiled row for both backends")
        continue
    cells.setdefault((dtype, r, layout), []).append((t["cuda"][0], t["kokkos"][0], t["cuda"][1], t["kokkos"][1]))
print(f"{'case':<12} {'layout':<8} {'cuda ms':>9} {'kokkos ms':>10} {'tiles cuda/kokkos':>18}  kokkos/cuda speed (each pass)")
for (dtype, r, layout), v in sorted(cells.items(), key=lambda kv: (kv[0][0], -int(kv[0][1][1:]), kv[0][2])):
    ratios = [c / k for c, k, _, _ in v]
    cm, km = statistics.median(c for c, _, _, _ in v), statistics.median(k for _, k, _, _ in v)
    print(f"{dtype + ' R=' + r[1:]:<12} {layout:<8} {cm * 1e3:>9.4f} {km * 1e3:>10.4f} {v[0][2] + '/' + v[0][3]:>18}  "
          f"{statistics.median(ratios):.3f} ({', '.join(f'{x:.3f}' for x in ratios)})")
    print("RESULT " + json.dumps({"bench": "kokkos_tiled_ab", "op": "conv2d", "n": 8192, "dtype": dtype, "r": int(r[1:]),
                                  "layout": layout, "cuda_ms": round(cm * 1e3, 5), "kokkos_ms": round(km * 1e3, 5),
                                  "ratio": round(statistics.median(ratios), 4), "ratios": [round(x, 4) for x in ratios],
                                  "cuda_tile": v[0][2], "kokkos_tile": v[0][3]}))
for m in bad:
    print("FAIL:", m)
sys.exit(1 if bad or not cells else 0)
EOF
echo "$(( $(date +%s) - start )) s for the runs; the float R=5 block comparison's table:"
grep -E "^conv2d +(cuda|kokkos) +tiled" "$out"/float-r5-block-p1.log 2>/dev/null
[ $fails -eq 0 ] && echo "PASS: every comparison verified" || { echo "FAIL: $fails failure(s); logs in $out"; exit 1; }
