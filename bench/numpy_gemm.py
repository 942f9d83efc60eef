#!/usr/bin/env python3
"""numpy's float32 matrix product (its bundled OpenBLAS) as a gemm peer, timed the way tilekit
times its rows: a warm-up, then the median of REPS runs, random inputs. Prints one JSON row in
`tilekit run --json`'s shape (backend "numpy", peer true), or nothing and exit 3 without numpy.
The thread count is numpy's own (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS, which the caller sets).
  python3 bench/numpy_gemm.py N [REPS]"""
import json
import os
import statistics
import sys
import time

try:
    import numpy as np
except ImportError:
    print("numpy_gemm.py: no numpy in this python", file=sys.stderr)
    sys.exit(3)

if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
    print(__doc__.strip().splitlines()[-1], file=sys.stderr)
    sys.exit(2)
n = int(sys.argv[1])
reps = int(sys.argv[2]) if len(sys.argv) == 3 else 10
rng = np.random.default_rng(42)
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
c = a @ b  # warm-up: the thread pool, page faults
# A sampled check against float64, so a broken BLAS cannot pass as fast.
rows = rng.integers(0, n, 8)
ref = a[rows].astype(np.float64) @ b.astype(np.float64)
bound = 4 * n * np.finfo(np.float32).eps * (np.abs(a[rows]).astype(np.float64) @ np.abs(b).astype(np.float64))
ok = bool(np.all(np.abs(c[rows] - ref) <= bound))
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    c = a @ b
    times.append(time.perf_counter() - t0)
med = statistics.median(times)
flops = 2.0 * n ** 3
print(json.dumps({
    "op": "gemm", "backend": "numpy", "variant": f"numpy {np.__version__}", "peer": True, "dtype": "float",
    "m": n, "n": n, "k": n, "reps": reps, "seconds": med, "min_seconds": min(times), "max_seconds": max(times),
    "gflops": flops / med * 1e-9, "gbps": 3 * 4 * n * n / med * 1e-9, "verified": ok,
    "threads": int(os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or os.cpu_count()),
}))
sys.exit(0 if ok else 1)
