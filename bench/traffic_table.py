#!/usr/bin/env python3
"""Predicted (PMPP's model, `tilekit run --traffic`) against measured main-memory traffic.

Reads JSON lines, one per run, each the `tilekit run --json --traffic` object plus
"measured_read" and "measured_write" (bytes per call) and "counter" (what measured them), and
prints a Markdown table, with PMPP's compute-to-global-memory-access ratio (FLOP per predicted
byte) beside the ratio the measured bytes give. Used by bench/device/traffic.sh (ncu on the GPU)
and bench/cpu_traffic.sh (cachegrind on the CPU)."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print("| op | backend | variant | tile | compulsory MB | predicted MB | measured MB (read + write) | measured / predicted | FLOP/B predicted | FLOP/B measured |")
print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    meas = r["measured_read"] + r["measured_write"]
    pred = r["predicted_bytes"]
    flops = r["flops"]
    ratio = meas / pred if pred else float("nan")
    flag = " **>2x off**" if ratio > 2 or ratio < 0.5 else ""
    print(f"| {r['op']} {r['m']}x{r['n']}x{r['k']} | {r['backend']} | {r['variant']} | {r['tile']} | "
          f"{r['compulsory_bytes'] / 1e6:.1f} | {pred / 1e6:.1f} | {meas / 1e6:.1f} ({r['measured_read'] / 1e6:.1f} + "
          f"{r['measured_write'] / 1e6:.1f}) | {ratio:.2f}{flag} | "
          f"{flops / pred if pred else 0:.3g} | {flops / meas if meas else 0:.3g} |")
