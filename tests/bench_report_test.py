#!/usr/bin/env python3
"""bench/report.py's performance portability, on a database made up here: two backends that each
win one problem by 2x in one process score 2 / (1 + 2) = 0.67 each; a problem one backend ran
alone, a run with a tuning set, a peer and an unverified row are left out; the newest process of a
problem counts. Exit 0 when every check holds."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def row(inv, date, backend, variant, gflops, m=1024, **extra):
    r = {"kind": "result", "op": "gemm", "dtype": "float", "m": m, "n": m, "k": m, "backend": backend,
         "variant": variant, "gflops": gflops, "gbps": 1.0, "seconds": 1.0, "peer": False, "verified": True,
         "device": "Test GPU", "device_kind": "gpu", "machine_kind": "gpu", "invocation": inv, "date": date,
         "commit": "c0ffee", "describe": "c0ffee", "report": True, "tunings_set": {}}
    r.update(extra)
    return r


def main():
    rows = [
        # problem 1 (optimized): a twice b; problem 2 (tiled): b twice a; both in one process
        row("p1", "2026-01-02T00:00:00+00:00", "cuda", "optimized", 100.0),
        row("p1", "2026-01-02T00:00:00+00:00", "kokkos", "optimized", 50.0),
        row("p1", "2026-01-02T00:00:00+00:00", "cuda", "tiled", 50.0),
        row("p1", "2026-01-02T00:00:00+00:00", "kokkos", "tiled", 100.0),
        # an older process of problem 1 with the opposite result: replaced by the newer one
        row("p0", "2026-01-01T00:00:00+00:00", "cuda", "optimized", 10.0),
        row("p0", "2026-01-01T00:00:00+00:00", "kokkos", "optimized", 100.0),
        # left out: one backend alone, a tuning set, a peer, an unverified row
        row("p2", "2026-01-03T00:00:00+00:00", "cuda", "naive", 1.0, m=512),
        row("p3", "2026-01-03T00:00:00+00:00", "cuda", "naive", 1.0, tunings_set={"x": "y"}),
        row("p3", "2026-01-03T00:00:00+00:00", "kokkos", "naive", 9.0, tunings_set={"x": "y"}),
        row("p4", "2026-01-03T00:00:00+00:00", "cuda", "naive", 1.0, m=256),
        row("p4", "2026-01-03T00:00:00+00:00", "kokkos", "naive", 9.0, m=256, verified=False),
        row("p5", "2026-01-03T00:00:00+00:00", "cuda", "cublas", 500.0, m=128, peer=True),
        row("p5", "2026-01-03T00:00:00+00:00", "kokkos", "naive", 9.0, m=128),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        db, readme = os.path.join(tmp, "results.jsonl"), os.path.join(tmp, "README.md")
        with open(db, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        with open(readme, "w") as f:
            f.write("# t\n\n<!-- results:begin -->\n<!-- results:end -->\n")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "report.py"), "--db", db, "--readme", readme,
                            "--results-dir", os.path.join(tmp, "out")], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr)
            return 1
        text = open(readme).read()
        m = re.search(r"Performance portability over (\d+) problems? \(([^)]*)\): ((?:\w+ \d+\.\d\d(?:, )?)+)\.", text)
        if not m:
            failures.append(f"no portability sentence in:\n{text}")
        else:
            n, backends, scores = int(m.group(1)), m.group(2), dict(s.split() for s in m.group(3).split(", "))
            if n != 2:
                failures.append(f"{n} problems counted, expected 2 (p1's two)")
            if backends != "cuda, kokkos":
                failures.append(f"backends {backends!r}")
            for b in ("cuda", "kokkos"):
                if scores.get(b) != "0.67":
                    failures.append(f"{b} scored {scores.get(b)}, expected 0.67 (2 / (1/1 + 1/0.5))")
    for f in failures:
        print("FAILED:", f)
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
