#!/usr/bin/env bash
# The tiled variants before and after they moved onto the tile layer, in one run on one machine:
#   bench/tiled_before_after.sh BEFORE_TILEKIT AFTER_TILEKIT BACKENDS ROUNDS -- CASE...
# where each CASE is "op args" for `tilekit run` (e.g. "gemm --size 1024"). Every round runs
# each case once with each binary, alternating which goes first, so that a machine's drifting
# load falls on both; the table gives the median over rounds of each binary's time (each time
# itself the median of the run's repetitions) and after / before; "min ratio" is the fastest
# round's after / before (on a machine others load in bursts, the rounds they hit are slower,
# never faster). FIRST=after starts the first
# round with the after binary (to split the rounds over several invocations).
set -euo pipefail
before=${1:?before binary}; after=${2:?after binary}; backends=${3:?backends, comma-separated}; rounds=${4:?rounds}
shift 4
[ "${1:-}" = "--" ] && shift
[ "${FIRST:-before}" = after ] && FIRST_OFFSET=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < rounds; r++)); do
  for b in ${backends//,/ }; do
    i=0
    for c in "$@"; do
      i=$((i + 1))
      if (((r + ${FIRST_OFFSET:-0}) % 2)); then order="after before"; else order="before after"; fi
      for which in $order; do
        bin=$before; [ "$which" = after ] && bin=$after
        # shellcheck disable=SC2086
        "$bin" run $c --backend "$b" --variant tiled --json 2>/dev/null >>"$tmp/$b.$i.$which" || echo '{"seconds": null}' >>"$tmp/$b.$i.$which"
      done
    done
  done
done
python3 - "$tmp" "$backends" "$@" <<'PY'
import json, pathlib, statistics, sys
tmp, backends, cases = pathlib.Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3:]
print(f"{'backend':<8} {'case':<26} {'tile before':<12} {'tile after':<12} {'before ms':>10} {'after ms':>10} {'after/before':>13}  verified  {'min ratio':>9}")
for b in backends:
    for i, c in enumerate(cases, 1):
        rows = {w: [json.loads(l) for l in (tmp / f"{b}.{i}.{w}").read_text().splitlines()] for w in ("before", "after")}
        t = {w: [r["seconds"] for r in rows[w] if r.get("seconds")] for w in rows}
        if not t["before"] or not t["after"]:
            print(f"{b:<8} {c:<26} failed to run"); continue
        mb, ma = statistics.median(t["before"]), statistics.median(t["after"])
        ok = all(r.get("verified") for w in rows for r in rows[w])
        tb, ta = rows["before"][0].get("tile", ""), rows["after"][0].get("tile", "")
        print(f"{b:<8} {c:<26} {tb:<12} {ta:<12} {mb*1e3:>10.3f} {ma*1e3:>10.3f} {ma/mb:>12.2f}x  {'yes' if ok else 'NO':<8}  {min(t['after'])/min(t['before']):>8.2f}x")
PY
