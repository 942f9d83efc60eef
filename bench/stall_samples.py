#!/usr/bin/env python3
"""Totals of ncu's per-instruction warp-state samples (the source page of a report with the
SourceCounters section, exported by `ncu -i REP --page source --csv --print-source sass`):
instructions executed, stall samples by reason, and the opcodes that carry the main reasons.
  python3 bench/stall_samples.py FILE.csv[.gz] [FILE...]
"""
import collections, csv, gzip, re, sys

REASONS = ["stall_wait", "stall_dispatch", "stall_short_sb", "stall_long_sb", "stall_math", "stall_barrier"]


def summarize(path):
    opener = gzip.open if path.endswith(".gz") else open
    rows = list(csv.reader(opener(path, "rt")))
    header = rows[1]  # rows[0] names the kernel
    col = {h: i for i, h in enumerate(header)}
    stalls = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    total, by_op, executed = collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter()
    for r in rows[2:]:
        m = re.match(r"(@!?U?P\w+\s+)?([A-Z0-9_]+)", r[col["Source"]].strip())
        op = m.group(2) if m else "?"
        executed[op] += int(r[col["Instructions Executed"]] or 0)
        for s in stalls:
            v = int(r[col[s]] or 0)
            total[s] += v
            by_op[op][s] += v
    samples = sum(total.values())
    print(f"{path}: {rows[0][1][:100]}")
    print(f"  warp instructions executed {sum(executed.values()):,}, stall samples {samples:,}")
    for s, v in total.most_common():
        if v:
            print(f"  {s:20s} {v:8d}  {100 * v / samples:5.1f}%")
    print("  opcodes executed: " + ", ".join(f"{o} {e / 1e6:.1f}M" for o, e in executed.most_common(8)))
    for s in REASONS:
        top = sorted(by_op.items(), key=lambda kv: -kv[1][s])[:5]
        print(f"  {s} on: " + ", ".join(f"{o} {c[s]}" for o, c in top if c[s]))


for p in sys.argv[1:]:
    summarize(p)
