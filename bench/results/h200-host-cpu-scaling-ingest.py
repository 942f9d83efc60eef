# python3 /tmp/xeon-ingest.py RESULT_DIR(with xeon/ files) CALL_LABEL -> writes bench/results/h200-host-cpu-scaling.{txt,json}
import json, sys, os, re
d, label = sys.argv[1], sys.argv[2]
def rows(f):
    p = os.path.join(d, f)
    if not os.path.exists(p): return []
    out = []
    for l in open(p):
        l = l.strip()
        if l.startswith('{'):
            try: out.append(json.loads(l))
            except Exception: pass
    return out
def text(f):
    p = os.path.join(d, f)
    return open(p).read() if os.path.exists(p) else ''
scal, var, tr = rows('scaling.jsonl'), rows('variants.jsonl'), rows('transpose.txt')
summary, fma, info = text('summary.txt'), text('fma.txt'), text('info.txt')
cpu = re.search(r'Model name:\s*(.*)', info)
ctx = {"host": cpu.group(1) if cpu else "", "call": label,
       "commit": (re.search(r'commit (\w+)', summary) or [None, ''])[1],
       "numpy": (re.search(r'numpy (\S+) from', summary) or [None, None])[1],
       "omp": "OMP_PLACES=cores OMP_PROC_BIND=close",
       "definitions": {"gflops": "2 N^3 / median time", "gflops_best": "2 N^3 / fastest run",
                       "efficiency": "(GFLOP/s(t) / t) / GFLOP/s(1) of the same variant",
                       "new": "shared-panel driver (default)", "grid": "round-1 driver (TILEKIT_OMP_GEMM=grid)",
                       "peer": "Debian OpenBLAS 0.3.21 in-process (core type chosen by tilekit)", "numpy": "numpy a @ b (its bundled OpenBLAS)"}}
json.dump({"context": ctx, "rows": scal, "variants_16_threads": var, "transpose": tr}, open('bench/results/h200-host-cpu-scaling.json', 'w'), indent=1)
with open('bench/results/h200-host-cpu-scaling.txt', 'w') as o:
    o.write(f"# openmp optimized SGEMM on the H200 host (16-core Xeon), device {label}; command: h200-host-cpu-scaling.cmd\n")
    o.write(text('scaling.txt'))
    o.write("\n# 16-thread alternatives (median / best GFLOP/s, alternating in one process)\n")
    for r in var:
        if 'gflops' in r: o.write(f"N={r['n']:5} {r['variant']:22} {r['gflops']:8.1f} {r['gflops_best']:8.1f} {r['check']}\n")
        elif 'error' in r: o.write(f"N={r['n']:5} {r['variant']:22} error: {r['error']}\n")
    o.write("\n# FMA ceiling (tilekit roofline, openmp)\n")
    for l in fma.splitlines():
        if l.startswith('==') or 'fp32 peak' in l: o.write(l + "\n")
    o.write("\n# transpose\n")
    for l in text('transpose.txt').splitlines():
        if l.startswith('transpose'): o.write(l + "\n")
    o.write("\n# stage log\n" + summary)
print("ok", len(scal), len(var), len(tr))
