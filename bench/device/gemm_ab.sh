#!/usr/bin/env bash
# Run ON THE DEVICE after build-device/ exists (a sweep build: -DTILEKIT_BUILD_SWEEPS=ON):
# alternates cuBLAS and tilekit's optimized gemm configurations, one process each, in rounds, and
# prints the median time of each configuration and its ratio to cuBLAS's median (per size, dtype).
#   bash bench/device/gemm_ab.sh DTYPE "SIZES" ROUNDS "LABEL=ARGS;LABEL=ARGS;..."
# e.g. bash bench/device/gemm_ab.sh double "4096 8192" 3 "auto=;small3=--tune cuda.dgemm.block=small3"
set -euo pipefail
tk=${TK:-build-device/tilekit}
dtype=$1 sizes=$2 rounds=$3 configs=$4
IFS=';' read -r -a cfg <<<"$configs"
for n in $sizes; do
  reps=$((n >= 16384 ? 3 : n >= 8192 ? 10 : 20))
  declare -A times=()
  for ((r = 0; r < rounds; ++r)); do
    line=$("$tk" run gemm --backend cuda --peer --dtype "$dtype" --size "$n" --reps "$reps" --json)
    times[cublas]+="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["seconds"])' "$line") "
    for c in "${cfg[@]}"; do
      label=${c%%=*} args=${c#*=}
      # shellcheck disable=SC2086
      line=$("$tk" run gemm --backend cuda --variant optimized --dtype "$dtype" --size "$n" --reps "$reps" --json $args) || {
        echo "FAIL $label $n: $line"; exit 1; }
      python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(0 if j.get("verified") else 1)' "$line" ||
        { echo "FAIL $label $n not verified: $line"; exit 1; }
      times[$label]+="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["seconds"])' "$line") "
      [ "$r" = 0 ] && echo "  $label $n: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("launch",""))' "$line" | cut -c1-160)"
    done
  done
  for k in "${!times[@]}"; do echo "$k ${times[$k]}"; done | python3 -c '
import sys, statistics as st
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in sys.stdin if l.strip()}
base = st.median(rows["cublas"])
for k, v in sorted(rows.items(), key=lambda kv: st.median(kv[1])):
    print(f"RESULT {sys.argv[1]} {sys.argv[2]} {k:>10}: median {st.median(v)*1e3:9.3f} ms  cuBLAS/this {base/st.median(v):.4f}  ({" ".join(f"{x*1e3:.3f}" for x in v)})")
' "$dtype" "$n"
  unset times
done
