#!/usr/bin/env python3
"""Regenerates what is made from the results database (bench/results/results.jsonl):

  - README.md's results table: the text between <!-- results:begin --> and <!-- results:end -->,
    one block per device (its name, the rows' dates and commits), the newest row per key;
  - bench/results/roofline-DEVICE.svg: one device's newest comparison on its measured roofline;
  - bench/results/traffic-DEVICE.md: measured against predicted memory traffic per call.

  python3 bench/report.py [--check] [--db FILE] [--readme FILE] [--results-dir DIR] [--variants LIST]

--check writes nothing and exits 1 when any of these files differs from what the database gives
(0 when all are current, 2 on bad usage). Standard library only."""

import argparse
import datetime
import html
import json
import math
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
OPS = {"gemm": 0, "transpose": 1, "conv2d": 2}
DTYPES = {"float": 0, "double": 1}
BACKENDS = {"cuda": 0, "hip": 1, "kokkos": 2, "openmp": 3, "serial": 4}
VARIANTS = {"naive": 0, "tiled": 1, "optimized": 2}
# A backend measured against another one beside the peer (TARGETS.md: kokkos / cuda on a GPU).
REFERENCE = {"kokkos": "cuda"}


def die(msg, code=2):
    print(f"report.py: {msg}", file=sys.stderr)
    sys.exit(code)


def read_db(path):
    rows = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as e:
                        die(f"{path}:{n}: not JSON: {e}", 1)
    except FileNotFoundError:
        die(f"no database at {path}")
    for i, r in enumerate(rows):
        r["_order"] = i
    return rows


def when(r):
    d = r.get("date") or ""
    d = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", d)
    try:
        t = datetime.datetime.fromisoformat(d)
    except ValueError:
        return (0.0, r["_order"])
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return (t.timestamp(), r["_order"])


def day(r):
    d = when(r)[0]
    return datetime.datetime.fromtimestamp(d, datetime.timezone.utc).strftime("%Y-%m-%d") if d else "?"


def commit_of(r):
    c = r.get("describe") or r.get("tilekit_commit") or (r.get("commit") or "")[:12]
    return c or "unknown"


def is_gpu_row(r):
    if r.get("device_kind"):
        return r["device_kind"] == "gpu"
    return r.get("backend") in ("cuda", "hip") or any(
        isinstance(g, dict) and g.get("name") == r.get("device") for g in r.get("gpus") or [])


def clean(name):
    return re.sub(r"\s+", " ", re.sub(r"\((R|TM|tm|r)\)", "", name or "unknown device")).strip()


def physical(name):
    """The device a backend runs on: Kokkos names its execution space first ("Kokkos 4.6.99 Cuda
    on NVIDIA H200")."""
    m = re.match(r"Kokkos .*? on (.+)$", name or "")
    return m.group(1) if m else name


def device_block(r):
    """GPUs by name; CPUs by name and core count (the GPU machine's host and a 2-core machine
    can report the same model name)."""
    # Rows of bench programs that do not name their device are the machine's CPU (the context's model).
    dev = clean(physical(r.get("device") or (None if is_gpu_row(r) else r.get("cpu_model"))))
    if is_gpu_row(r):
        return dev
    n = r.get("num_cpus")
    return f"{dev}, {n} CPUs" if n else dev


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "device"


def threads_of(r):
    t = r.get("omp_num_threads")
    return str(t) if t not in (None, "") else None


def all_cores(r):
    t = threads_of(r)
    return t is None or (r.get("num_cpus") and t == str(r["num_cpus"]))


def key_of(r):
    return (device_block(r), r.get("op"), r.get("dtype"), r.get("m"), r.get("n"), r.get("k"), r.get("backend"),
            r.get("variant"), json.dumps(r.get("tunings_set") or {}, sort_keys=True), threads_of(r))


def newest(rows):
    best = {}
    for r in rows:
        k = key_of(r)
        if k not in best or when(r) >= when(best[k]):
            best[k] = r
    return list(best.values())


# ---------------------------------------------------------------- the README table

def size_text(r):
    m, n, k = r.get("m"), r.get("n"), r.get("k")
    if r.get("op") == "gemm":
        return f"{m}³" if m == n == k else f"{m}×{n}×{k}"
    sq = f"{m}²" if m == n else f"{m}×{n}"
    return f"{sq}, R = {k}" if r.get("op") == "conv2d" else sq


def rate_text(v, metric):
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return "-"
    if metric == "gflops":
        return f"{v / 1000:.1f} TFLOP/s" if v >= 1000 else f"{v:.3g} GFLOP/s"
    return f"{v:.0f} GB/s" if v >= 100 else f"{v:.3g} GB/s"


def pct(x):
    return f"{100 * x:.1f}%" if x < 2 else f"{x:.2f}×"


def reference_fraction(r, by_invocation):
    ref = REFERENCE.get(r.get("backend"))
    if not ref or not is_gpu_row(r):
        return None
    for o in by_invocation.get(r.get("invocation"), []):
        if (o.get("backend") == ref and not o.get("peer") and o.get("variant") == r.get("variant") and
                (o.get("op"), o.get("dtype"), o.get("m"), o.get("n"), o.get("k")) ==
                (r.get("op"), r.get("dtype"), r.get("m"), r.get("n"), r.get("k"))):
            metric = r.get("metric") or ("gflops" if r.get("op") == "gemm" else "gbps")
            mine, theirs = r.get(metric), o.get(metric)
            if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and theirs > 0:
                return ref, mine / theirs
    return None


def portability(rows):
    """Per device, each backend's performance portability (Pennycook et al.'s metric with
    application efficiency): the harmonic mean, over the problems (op, size, dtype, variant,
    threads) two or more backends ran in one process with default tunings, of the backend's rate
    / the fastest backend's there; the newest such measurement per problem. A step run in rounds
    (one process each, every backend in each) keeps the median round's row per backend, from
    different processes: there the fraction is the median over the rounds of the fraction within
    each round's process (round_seconds, in round order). -> {device: (n, {backend: pp})}"""
    usable = [r for r in rows
              if (r.get("kind") == "result" and not r.get("peer") and r.get("op") in OPS and not r.get("tunings_set") and
                  r.get("report", True) is not False and r.get("verified") is not False)]

    def problem(r):
        return (device_block(r), r.get("op"), r.get("dtype"), r.get("m"), r.get("n"), r.get("k"), r.get("variant"),
                threads_of(r))

    def rate(r):
        v = r.get("gflops" if r.get("op") == "gemm" else "gbps")
        return v if isinstance(v, (int, float)) and v > 0 else None

    newest_problem = {}  # problem -> (stamp, {backend: fraction})

    def offer(key, stamp, fractions):
        if len(fractions) >= 2 and (key not in newest_problem or stamp >= newest_problem[key][0]):
            newest_problem[key] = (stamp, fractions)

    # One process: the rows of one invocation.
    by_inv = {}
    for r in usable:
        if not r.get("rounds"):
            by_inv.setdefault(r.get("invocation"), []).append(r)
    for inv in by_inv.values():
        problems = {}
        for r in inv:
            problems.setdefault(problem(r), {})[r.get("backend")] = r
        for key, per_backend in problems.items():
            rates = {b: rate(r) for b, r in per_backend.items()}
            if len(rates) < 2 or None in rates.values():
                continue
            best = max(rates.values())
            offer(key, max(when(r) for r in per_backend.values()), {b: v / best for b, v in rates.items()})

    # Rounds: every backend's time in each round's process.
    by_step = {}
    for r in usable:
        rs = r.get("round_seconds")
        if r.get("rounds") and isinstance(rs, list) and rs and isinstance(r.get("seconds"), (int, float)):
            by_step.setdefault((r.get("run_id"), r.get("suite"), r.get("step"), r.get("member"), problem(r)), {})[
                r.get("backend")] = r
    for (_, _, _, _, key), per_backend in by_step.items():
        lengths = {len(r["round_seconds"]) for r in per_backend.values()}
        if len(per_backend) < 2 or len(lengths) != 1 or any(rate(r) is None for r in per_backend.values()):
            continue
        per_round = {b: [] for b in per_backend}
        for i in range(lengths.pop()):
            # The rate in round i: the row's rate scaled by its median time over that round's time.
            rates = {b: rate(r) * r["seconds"] / r["round_seconds"][i] for b, r in per_backend.items()
                     if r["round_seconds"][i] > 0}
            if len(rates) != len(per_backend):
                continue
            best = max(rates.values())
            for b, v in rates.items():
                per_round[b].append(v / best)
        if all(per_round.values()):
            offer(key, max(when(r) for r in per_backend.values()),
                  {b: statistics.median(f) for b, f in per_round.items()})

    fractions = {}
    for key, (_, per_backend) in newest_problem.items():
        for b, f in per_backend.items():
            fractions.setdefault(key[0], {}).setdefault(b, []).append(f)
    out = {}
    for dev, per_backend in fractions.items():
        n = max(len(f) for f in per_backend.values())
        out[dev] = (n, {b: len(f) / sum(1 / x for x in f) for b, f in per_backend.items()})
    return out


def portability_text(entry):
    n, pp = entry
    backends = sorted(pp, key=lambda b: (BACKENDS.get(b, 9), b))
    return (f" Performance portability over {n} problem{'s' if n != 1 else ''} ({', '.join(backends)}): " +
            ", ".join(f"{b} {pp[b]:.2f}" for b in backends) + ".")


def table_rows(rows, variants):
    chosen = [r for r in rows if r.get("kind") == "result" and r.get("report", True) is not False and not r.get("peer")
              and r.get("op") in OPS and (not variants or r.get("variant") in variants) and all_cores(r)]
    return newest(chosen)


def block_text(name, rows, by_invocation, pp=None):
    rows.sort(key=lambda r: (OPS.get(r.get("op"), 9), DTYPES.get(r.get("dtype"), 9), r.get("m") or 0,
                             r.get("n") or 0, r.get("k") or 0, BACKENDS.get(r.get("backend"), 9), r.get("backend") or "",
                             VARIANTS.get(r.get("variant"), 9), r.get("variant") or "",
                             json.dumps(r.get("tunings_set") or {}, sort_keys=True)))
    days = sorted({day(r) for r in rows})
    commits = {}
    for r in rows:
        commits[commit_of(r)] = commits.get(commit_of(r), 0) + 1
    when_text = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    if len(commits) == 1:
        commit_text = f"commit {next(iter(commits))}"
    else:
        commit_text = "commits " + ", ".join(f"{c} ({n} rows)" for c, n in sorted(commits.items(), key=lambda x: (-x[1], x[0])))
    imported = sum(1 for r in rows if r.get("imported"))
    note = ""
    if imported:
        note = (f"; {'all rows' if imported == len(rows) else f'{imported} rows'} imported from `tilekit compare "
                f"--json` files measured before the bench driver")
    # A shared machine's slow moments show in the load average every row records: say so.
    loads = [r["load_avg"][0] for r in rows if isinstance(r.get("load_avg"), list) and r["load_avg"]]
    cpus = max((r.get("num_cpus") or 0) for r in rows) if rows else 0
    if loads and cpus and max(loads) > 1.5 * cpus:
        note += (f"; measured while the machine was shared (1-minute load average up to {max(loads):.0f} on "
                 f"{cpus} CPUs): re-measure on a quiet machine before reading the fractions")
    out = [f"**{name}**: {when_text}, {commit_text}{note}.{portability_text(pp) if pp else ''}", "",
           "| operation | size | backend | variant | achieved | peer | fraction |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        metric = r.get("metric") or ("gflops" if r.get("op") == "gemm" else "gbps")
        variant = r.get("variant") or "?"
        if r.get("tunings_set"):
            variant += " (" + ", ".join(f"{k}={v}" for k, v in sorted(r["tunings_set"].items())) + ")"
        achieved = rate_text(r.get(metric), metric)
        if r.get("op") == "conv2d" and isinstance(r.get("gflops"), (int, float)) and r["gflops"] > 0:
            achieved += f" ({rate_text(r['gflops'], 'gflops')})"
        if r.get("verified") is False:
            achieved += " (**not verified**)"
        peer = "-"
        if r.get("peer_variant") and isinstance(r.get("peer_value"), (int, float)):
            env = r.get("peer_env") or {}
            how = (", " + ", ".join(f"{k}={v}" for k, v in sorted(env.items()))) if env else ""
            peer = f"{r['peer_variant']}{how}: {rate_text(r['peer_value'], metric)}"
        parts = []
        pf, rf = r.get("peer_fraction"), r.get("roof_fraction")
        if isinstance(pf, (int, float)) and math.isfinite(pf):
            parts.append(pct(pf))
        if isinstance(rf, (int, float)) and math.isfinite(rf):
            parts.append(f"{pct(rf)} of roof" if not parts else f"(roof {pct(rf)})")
        ref = reference_fraction(r, by_invocation)
        if ref:
            parts.append(f"{ref[1]:.2f} of {ref[0]}" if not parts else f"· {ref[1]:.2f} of {ref[0]}")
        out.append(f"| {r.get('op')} {r.get('dtype')} | {size_text(r)} | {r.get('backend')} | {variant} | {achieved} | "
                   f"{peer} | {' '.join(parts) or '-'} |")
    return "\n".join(out)


def readme_block(rows, variants):
    chosen = table_rows(rows, variants)
    by_inv = {}
    for r in rows:
        if r.get("kind") == "result":
            by_inv.setdefault(r.get("invocation"), []).append(r)
    blocks = {}
    for r in chosen:
        blocks.setdefault(device_block(r), []).append(r)
    order = sorted(blocks, key=lambda b: (0 if is_gpu_row(blocks[b][0]) else 1, b))
    parts = [BEGIN,
             "<!-- Generated by `python3 bench/report.py` from bench/results/results.jsonl; edit those, not this. -->",
             "",
             "Per device, the newest measurement of each operation, size, backend and variant "
             f"({', '.join(variants) if variants else 'every variant'}); the peer is the fastest one timed beside it "
             "(cuBLAS, OpenBLAS, the device or host copy of the same bytes), the fraction is achieved / peer, with the "
             "share of the measured roofline and, for kokkos on a GPU, its ratio to cuda in the same process. "
             "Performance portability (Pennycook et al.) is the harmonic mean, over the problems (operation, size, "
             "type, variant, threads) several backends ran in one process with default tunings, of each backend's "
             "rate / the fastest one's there (over several such processes, the median). "
             "`bench/README.md` says how to re-measure.",
             ""]
    if not order:
        parts += ["No results yet.", ""]
    pp = portability(rows)
    for b in order:
        parts += [block_text(b, blocks[b], by_inv, pp.get(b)), ""]
    parts.append(END)
    return "\n".join(parts)


def splice(text, block, path):
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < 0 or j < i or text.count(BEGIN) != 1 or text.count(END) != 1:
        die(f"{path}: needs exactly one {BEGIN} followed by one {END}")
    return text[:i] + block + text[j + len(END):]


# ---------------------------------------------------------------- the roofline plots

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]


def esc(s):
    return html.escape(str(s), quote=True)


class LogAxis:
    def __init__(self, lo, hi, p0, p1):
        self.lo = 10 ** math.floor(math.log10(lo))
        self.hi = 10 ** math.ceil(math.log10(hi))
        if self.hi <= self.lo:
            self.hi = self.lo * 10
        self.p0, self.p1 = p0, p1

    def __call__(self, v):
        return self.p0 + (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo)) * (self.p1 - self.p0)

    def ticks(self):
        v = self.lo
        while v <= self.hi * 1.001:
            yield v
            v *= 10


def tick(v):
    return f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"


def marker(r, x, y, color):
    style = f'fill="{color}" stroke="black" stroke-width="0.8"'
    if r.get("peer"):
        return f'<path d="M{x:.1f},{y - 6:.1f} l6,6 l-6,6 l-6,-6 z" {style}/>'
    if r.get("variant") == "naive":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" {style}/>'
    if r.get("variant") == "tiled":
        return f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" {style}/>'
    return f'<path d="M{x:.1f},{y - 6:.1f} l6,11 l-12,0 z" {style}/>'


def plot_run(rows):
    """One device's rows of one comparison (one process, float) -> the SVG document: the roofs of
    each backend (memory slope up to the ridge point, then the FMA peak; the ceilings measured in
    that process), the FLOP-counting rows on them, the copy-like rows (no FLOPs) on a bandwidth
    strip below, and a legend with each row's figure and share of its roof."""
    r0 = rows[0]
    dtype = r0.get("dtype") or "float"
    roofs = {}
    for r in rows:
        c = r.get("ceilings") or {}
        peak = c.get("gflops_f64" if dtype == "double" else "gflops_f32")
        if r.get("backend") not in roofs and isinstance(peak, (int, float)) and isinstance(c.get("gbps"), (int, float)) \
                and peak > 0 and c["gbps"] > 0:
            roofs[r["backend"]] = (peak, c["gbps"])
    colors = {}
    for r in rows:
        colors.setdefault((r.get("backend"), r.get("op")), PALETTE[len(colors) % len(PALETTE)])
    flop = [r for r in rows if (r.get("gflops") or 0) > 0 and (r.get("gbps") or 0) > 0]
    copy = [r for r in rows if r not in flop and (r.get("gbps") or 0) > 0]
    X0, X1, TOP, BOTTOM, LEGX = 80, 600, 60, 410, 630
    xs = [p / b for p, b in roofs.values()]
    xlo = min([x / 100 for x in xs] + [r["gflops"] / r["gbps"] / 2 for r in flop] or [0.01])
    xhi = max([x * 10 for x in xs] + [r["gflops"] / r["gbps"] * 2 for r in flop] or [100])
    ylo = min([p / 1e3 for p, _ in roofs.values()] + [r["gflops"] / 2 for r in flop] or [1])
    yhi = max([p * 2 for p, _ in roofs.values()] + [r["gflops"] * 2 for r in flop] or [1000])
    X, Y = LogAxis(xlo, xhi, X0, X1), LogAxis(ylo, yhi, BOTTOM, TOP)
    strip_top = BOTTOM + 70
    height = max(strip_top + 90, TOP + 18 + 17 * len(rows) + 10)
    title = f"{device_block(r0)} ({dtype}): {day(r0)}, commit {commit_of(r0)}"
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="{height}" viewBox="0 0 1000 {height}" '
         f'font-family="sans-serif">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{X0}" y="30" font-size="16" font-weight="bold">{esc(title)}</text>',
         f'<clipPath id="chart"><rect x="{X0}" y="{TOP}" width="{X1 - X0}" height="{BOTTOM - TOP}"/></clipPath>',
         f'<rect x="{X0}" y="{TOP}" width="{X1 - X0}" height="{BOTTOM - TOP}" fill="none" stroke="black"/>']
    for v in X.ticks():
        o.append(f'<line x1="{X(v):.1f}" y1="{TOP}" x2="{X(v):.1f}" y2="{BOTTOM}" stroke="#ddd"/>')
        o.append(f'<text x="{X(v):.1f}" y="{BOTTOM + 16}" text-anchor="middle" font-size="11">{tick(v)}</text>')
    for v in Y.ticks():
        o.append(f'<line x1="{X0}" y1="{Y(v):.1f}" x2="{X1}" y2="{Y(v):.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{X0 - 6}" y="{Y(v) + 4:.1f}" text-anchor="end" font-size="11">{tick(v)}</text>')
    o.append(f'<text x="{(X0 + X1) / 2}" y="{BOTTOM + 34}" text-anchor="middle" font-size="12">'
             'arithmetic intensity (useful FLOP per compulsory byte)</text>')
    mid = (TOP + BOTTOM) / 2
    o.append(f'<text x="22" y="{mid}" text-anchor="middle" font-size="12" transform="rotate(-90 22 {mid})">GFLOP/s</text>')
    dashes = ["", "8,4", "3,3", "10,3,2,3"]
    for i, (b, (peak, bw)) in enumerate(sorted(roofs.items(), key=lambda x: BACKENDS.get(x[0], 9))):
        ridge = peak / bw
        xs0 = max(X.lo, Y.lo / bw)
        o.append(f'<polyline clip-path="url(#chart)" points="{X(xs0):.1f},{Y(xs0 * bw):.1f} {X(ridge):.1f},{Y(peak):.1f} '
                 f'{X(X.hi):.1f},{Y(peak):.1f}" fill="none" stroke="#333" stroke-width="2" stroke-dasharray="{dashes[i % 4]}"/>')
        o.append(f'<circle cx="{X(ridge):.1f}" cy="{Y(peak):.1f}" r="4" fill="white" stroke="#333" stroke-width="2"/>')
        o.append(f'<text x="{X1 - 4}" y="{Y(peak) - 5 - 13 * i:.1f}" text-anchor="end" font-size="11">'
                 f'{esc(b)}: {rate_text(peak, "gflops")}, {rate_text(bw, "gbps")}, ridge {ridge:.3g} FLOP/B</text>')
    for r in flop:
        x, y = X(r["gflops"] / r["gbps"]), Y(r["gflops"])
        o.append(marker(r, x, y, colors[(r.get("backend"), r.get("op"))]))
    # The bandwidth strip: rows that count no FLOPs, by GB/s against each backend's memory roof.
    if copy:
        bws = [r["gbps"] for r in copy] + [bw for _, bw in roofs.values()]
        S = LogAxis(min(bws) / 2, max(bws) * 2, X0, X1)
        o.append(f'<rect x="{X0}" y="{strip_top}" width="{X1 - X0}" height="40" fill="none" stroke="black"/>')
        for v in S.ticks():
            o.append(f'<text x="{S(v):.1f}" y="{strip_top + 56}" text-anchor="middle" font-size="11">{tick(v)}</text>')
        o.append(f'<text x="{(X0 + X1) / 2}" y="{strip_top + 74}" text-anchor="middle" font-size="12">'
                 'GB/s of the rows that count no FLOPs (transpose, copies); vertical lines: memory roofs</text>')
        for b, (_, bw) in roofs.items():
            o.append(f'<line x1="{S(bw):.1f}" y1="{strip_top}" x2="{S(bw):.1f}" y2="{strip_top + 40}" stroke="#333" stroke-width="2"/>')
        for r in copy:
            o.append(marker(r, S(r["gbps"]), strip_top + 20, colors[(r.get("backend"), r.get("op"))]))
    # The legend: one line per row.
    y = TOP
    o.append(f'<text x="{LEGX}" y="{y}" font-size="12" font-weight="bold">▲ optimized ■ tiled ● naive ◆ peer (*)</text>')
    y += 18
    for r in sorted(rows, key=lambda r: (OPS.get(r.get("op"), 9), BACKENDS.get(r.get("backend"), 9), bool(r.get("peer")),
                                         VARIANTS.get(r.get("variant"), 9))):
        metric = "gflops" if (r.get("gflops") or 0) > 0 else "gbps"
        rf = r.get("roof_fraction")
        roof = f", {100 * rf:.0f}% of roof" if isinstance(rf, (int, float)) and math.isfinite(rf) else ""
        o.append(marker(r, LEGX + 6, y - 4, colors[(r.get("backend"), r.get("op"))]))
        o.append(f'<text x="{LEGX + 18}" y="{y}" font-size="11">{esc(r.get("backend"))} {esc(r.get("op"))} '
                 f'{"*" if r.get("peer") else ""}{esc(r.get("variant"))}: {rate_text(r.get(metric), metric)}{roof}</text>')
        y += 17
    o.append("</svg>")
    return "\n".join(o) + "\n"


def plots(rows):
    """Per device: the newest comparison (one process) with measured ceilings, a roofline suite's
    run before any other, drawn in float."""
    runs = {}
    for r in rows:
        if r.get("kind") != "result" or r.get("dtype") != "float" or not r.get("ceilings") or r.get("op") not in OPS:
            continue
        runs.setdefault((device_block(r), r.get("invocation")), []).append(r)
    best = {}
    for (dev, inv), rs in runs.items():
        roofline = any(r.get("suite") == "roofline" for r in rs)
        k = (roofline, len({r.get("op") for r in rs}), max(when(r) for r in rs))
        if dev not in best or k > best[dev][0]:
            best[dev] = (k, rs)
    return {f"roofline-{slug(dev)}.svg": plot_run(rs) for dev, (_, rs) in best.items()}


# ---------------------------------------------------------------- the traffic tables

def traffic(rows):
    chosen = {}
    for r in rows:
        if r.get("kind") != "traffic" or not isinstance(r.get("predicted_bytes"), (int, float)):
            continue
        k = key_of(r) + (r.get("tile"),)
        if k not in chosen or when(r) >= when(chosen[k]):
            chosen[k] = r
    by_dev = {}
    for r in chosen.values():
        by_dev.setdefault(device_block(r), []).append(r)
    out = {}
    for dev, rs in by_dev.items():
        rs.sort(key=lambda r: (OPS.get(r.get("op"), 9), r.get("m") or 0, BACKENDS.get(r.get("backend"), 9),
                               VARIANTS.get(r.get("variant"), 9), r.get("tile") or ""))
        counters = sorted({re.sub(r", inside .*$", "", r.get("counter") or "?") for r in rs})
        days = sorted({day(r) for r in rs})
        commits = sorted({commit_of(r) for r in rs})
        lines = [f"# Memory traffic per call on {dev}: PMPP's model against the measured bytes", "",
                 f"Generated by `python3 bench/report.py` from bench/results/results.jsonl (suite `traffic`); "
                 f"measured {days[0] if len(days) == 1 else days[0] + ' to ' + days[-1]}, "
                 f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits)}. Counter: {'; '.join(counters)}.", "",
                 "| op | backend | variant | tile | compulsory MB | predicted MB | measured MB (read + write) | "
                 "measured / predicted | FLOP/B predicted | FLOP/B measured |",
                 "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in rs:
            meas = (r.get("measured_read") or 0) + (r.get("measured_write") or 0)
            pred = r["predicted_bytes"]
            flops = r.get("flops") or 0
            ratio = meas / pred if pred else float("nan")
            flag = " **>2x off**" if ratio > 2 or ratio < 0.5 else ""
            lines.append(f"| {r['op']} {r['m']}x{r['n']}x{r['k']} | {r['backend']} | {r['variant']} | {r.get('tile')} | "
                         f"{(r.get('compulsory_bytes') or 0) / 1e6:.1f} | {pred / 1e6:.1f} | {meas / 1e6:.1f} "
                         f"({(r.get('measured_read') or 0) / 1e6:.1f} + {(r.get('measured_write') or 0) / 1e6:.1f}) | "
                         f"{ratio:.2f}{flag} | {flops / pred if pred else 0:.3g} | {flops / meas if meas else 0:.3g} |")
        out[f"traffic-{slug(dev)}.md"] = "\n".join(lines) + "\n"
    return out


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated file is out of date")
    ap.add_argument("--db", default=os.path.join(ROOT, "bench", "results", "results.jsonl"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "bench", "results"),
                    help="where the plots and traffic tables go (default bench/results)")
    ap.add_argument("--variants", default="optimized",
                    help="comma-separated variants in the README table (default optimized; 'all' for every one)")
    args = ap.parse_args(argv)
    variants = [] if args.variants == "all" else [v for v in args.variants.split(",") if v]
    # The README and the plots show what the driver measured; rows imported from files made before
    # it stay in the database (their context says how they were made) but are not presented.
    rows = [r for r in read_db(args.db) if not r.get("imported")]

    wanted = {}
    try:
        text = open(args.readme).read()
    except OSError as e:
        die(f"{args.readme}: {e}")
    wanted[args.readme] = splice(text, readme_block(rows, variants), args.readme)
    generated = dict(plots(rows))
    generated.update(traffic(rows))
    for name, content in generated.items():
        wanted[os.path.join(args.results_dir, name)] = content
    # Generated files of devices no longer in the database.
    stale = []
    if os.path.isdir(args.results_dir):
        for f in sorted(os.listdir(args.results_dir)):
            if re.fullmatch(r"(roofline-.*\.svg|traffic-.*\.md)", f) and f not in generated:
                stale.append(os.path.join(args.results_dir, f))

    differ = []
    for path, content in wanted.items():
        try:
            with open(path) as f:
                have = f.read()
        except OSError:
            have = None
        if have != content:
            differ.append(path)
    if args.check:
        for p in differ:
            print(f"report.py: out of date: {os.path.relpath(p, ROOT)}", file=sys.stderr)
        for p in stale:
            print(f"report.py: no longer generated: {os.path.relpath(p, ROOT)}", file=sys.stderr)
        if differ or stale:
            print("report.py: run `python3 bench/report.py` to regenerate", file=sys.stderr)
            return 1
        return 0
    for path in differ:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(wanted[path])
        os.replace(tmp, path)
        print(f"report.py: wrote {os.path.relpath(path, ROOT)}", file=sys.stderr)
    for p in stale:
        os.remove(p)
        print(f"report.py: removed {os.path.relpath(p, ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
