#!/usr/bin/env python3
"""bench/report.py's performance portability, on a database made up here: two backends that each
win one problem by 2x in one process score 2 / (1 + 2) = 0.67 each; a problem one backend ran
alone, a run with a tuning set, a peer and an unverified row are left out; the newest process of a
problem counts. A step run in rounds, whose median rows come from different processes, counts
with the median over its rounds of each round's fraction. Exit 0 when every check holds."""
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
    # Problem 3, three rounds (one process each); each backend's row is its median round's, from
    # different processes. Per round, kokkos / cuda speed: 1/3.3 : 1, 1/1.1 : 1/2, 1/2.2 : 1/3, so
    # the fractions are kokkos 0.30, 1, 1 (median 1) and cuda 1, 0.55, 0.73 (median 0.73); the
    # medians' ratio would give kokkos 0.91 and cuda 1 instead.
    rounds = {"run_id": "run1", "suite": "s", "step": "st", "member": "compare", "rounds": 3}
    rows += [
        row("r-a", "2026-01-04T00:00:00+00:00", "cuda", "naive", 50.0, m=2048, seconds=2.0,
            round_seconds=[1.0, 2.0, 3.0], **rounds),
        row("r-b", "2026-01-04T00:00:00+00:00", "kokkos", "naive", 100.0 / 2.2, m=2048, seconds=2.2,
            round_seconds=[3.3, 1.1, 2.2], **rounds),
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
            if n != 3:
                failures.append(f"{n} problems counted, expected 3 (p1's two and the rounds' one)")
            if backends != "cuda, kokkos":
                failures.append(f"backends {backends!r}")
            # cuda: 3 / (1/1 + 1/0.5 + 1/0.7333) = 0.69; kokkos: 3 / (1/0.5 + 1/1 + 1/1) = 0.75
            for b, want in (("cuda", "0.69"), ("kokkos", "0.75")):
                if scores.get(b) != want:
                    failures.append(f"{b} scored {scores.get(b)}, expected {want}")
    for f in failures:
        print("FAILED:", f)
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
