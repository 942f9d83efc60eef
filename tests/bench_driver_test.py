#!/usr/bin/env python3
"""ctest bench.driver: bench/run.py's smoke suite against this build's tilekit into a temporary
database, every row's context and figures checked; then bench/report.py regenerates a copy of the
README's results table from it, --check passes on the result and fails once the table is edited.
  python3 tests/bench_driver_test.py --build BUILD_DIR --root SOURCE_DIR"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

CONTEXT_KEYS = ("schema", "kind", "row_id", "run_id", "invocation", "suite", "step", "command", "env", "date", "host",
                "machine_kind", "cpu_model", "num_cpus", "cpu_flags", "gpus", "commit", "describe", "dirty", "compiler",
                "build_type", "backends_compiled", "tunings", "tunings_source", "tunings_set", "load_avg",
                "omp_num_threads", "imported")
RESULT_KEYS = ("op", "backend", "variant", "peer", "device", "dtype", "m", "n", "k", "reps", "seconds", "gflops", "gbps",
               "verified", "rel_error", "metric")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAILED: {what}", file=sys.stderr)


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    py = sys.executable
    runpy = os.path.join(a.root, "bench", "run.py")
    report = os.path.join(a.root, "bench", "report.py")
    tmp = tempfile.mkdtemp(prefix="tilekit-bench-test-")
    try:
        db = os.path.join(tmp, "results.jsonl")
        # Bad usage is refused before anything runs.
        rc, _, err = run([py, runpy, "no-such-suite", "--build", a.build, "--db", db])
        check(rc == 2 and "unknown suite" in err and not os.path.exists(db), f"unknown suite: rc {rc}, {err.strip()}")
        rc, out, _ = run([py, runpy, "--list"])
        check(rc == 0 and all(s in out for s in ("smoke", "gpu-targets", "gpu-double", "cpu-targets", "roofline",
                                                  "traffic", "sanitize", "host-scaling")), "--list names the suites")
        rc, out, _ = run([py, runpy, "smoke", "--build", a.build, "--db", db, "--dry-run"])
        check(rc == 0 and "run gemm" in out and not os.path.exists(db), "--dry-run prints and writes nothing")

        rc, out, err = run([py, runpy, "smoke", "--build", a.build, "--db", db, "--out", os.path.join(tmp, "out")],
                           timeout=240)
        check(rc == 0, f"smoke suite exit {rc}:\n{err[-2000:]}")
        rows = [json.loads(line) for line in open(db)] if os.path.exists(db) else []
        results = [r for r in rows if r.get("kind") == "result"]
        steps = [r for r in rows if r.get("kind") == "step"]
        check(len(steps) >= 3 and all(s.get("status") == "pass" for s in steps), "every step recorded as passed")
        has_openmp = any("openmp" in (r.get("backends_compiled") or []) for r in rows)
        expected = {"gemm", "transpose-vs-memcpy", "conv2d-tuned"} if has_openmp else {"gemm"}
        check({r.get("step") for r in results} >= expected,
              f"a result from every smoke step: {sorted({r.get('step') for r in results})}")
        for r in rows:
            missing = [k for k in CONTEXT_KEYS if k not in r]
            check(not missing, f"row {r.get('row_id')} lacks {missing}")
            check(r.get("suite") == "smoke" and r.get("schema") == 1, f"row {r.get('row_id')}: suite/schema")
        check(len({r.get("row_id") for r in rows}) == len(rows), "row ids are unique")
        for r in results:
            missing = [k for k in RESULT_KEYS if k not in r]
            check(not missing, f"result {r.get('row_id')} lacks {missing}")
            check(r.get("verified") is True, f"result {r.get('row_id')} verified")
            check(isinstance(r.get("seconds"), float) and r["seconds"] > 0, f"result {r.get('row_id')}: seconds")
            check(r.get("command", "").split()[1:2] == ["run"] and "--json" in r.get("command", ""),
                  f"result {r.get('row_id')}: the exact command ({r.get('command')})")
            check(isinstance(r.get("load_avg"), list) and len(r["load_avg"]) == 3, "load average recorded")
        # The figures agree with the problem: a transpose moves its matrix twice (read + write).
        for r in results:
            if r.get("op") == "transpose" and r.get("gbps"):
                moved = r["gbps"] * 1e9 * r["seconds"]
                check(abs(moved - 2 * 4 * r["m"] * r["n"]) <= 0.01 * moved, f"transpose bytes {moved} for {r['m']}x{r['n']}")
        gemm = [r for r in results if r.get("step") == "gemm"]
        # (tilekit counts the alpha/beta update of C beside the 2MNK of the product.)
        flops = gemm[0]["gflops"] * 1e9 * gemm[0]["seconds"] if len(gemm) == 1 else 0
        check(len(gemm) == 1 and (gemm[0]["m"], gemm[0]["n"], gemm[0]["k"]) == (37, 29, 23) and
              2 * 37 * 29 * 23 * 0.999 <= flops <= (2 * 37 * 29 * 23 + 2 * 37 * 29) * 1.001,
              f"gemm row: its shape, and FLOPs / time ({flops:.0f} FLOPs)")
        # The alternation group: two rounds each, the optimized row set against the faster copy.
        tr = [r for r in results if r.get("step") == "transpose-vs-memcpy"]
        opt = [r for r in tr if not r.get("peer")]
        peers = [r for r in tr if r.get("peer")]
        check(not has_openmp or (len(opt) == 1 and len(peers) == 2), f"one row per member: {len(opt)} + {len(peers)}")
        if opt and peers:
            best = max(p["gbps"] for p in peers)
            check(len(opt[0].get("round_seconds", [])) == 2, "both rounds' times kept")
            check(abs(opt[0].get("peer_fraction", -1) - opt[0]["gbps"] / best) < 1e-9 and
                  opt[0].get("peer_value") == best, "peer fraction against the fastest peer")
            one = [p for p in peers if (p.get("env") or {}).get("OMP_NUM_THREADS") == "1"]
            check(len(one) == 1 and one[0].get("omp_num_threads") == "1", "the 1-thread copy's environment recorded")
        tuned = [r for r in results if r.get("step") == "conv2d-tuned"]
        check(not has_openmp or (len(tuned) == 1 and tuned[0].get("tunings_set") == {"openmp.simd": "scalar"}),
              "tunings asked for recorded")
        if tuned:
            t = tuned[0]
            via_env = t.get("env", {}).get("TILEKIT_OPENMP_SIMD") == "scalar"
            via_opt = "--tune openmp.simd=scalar" in t.get("command", "")
            check(via_env or via_opt, f"the tuning reached the program ({t.get('command')}, {t.get('env')})")
            eff = t.get("tunings") or {}
            check(eff.get("openmp.simd") in ("scalar", "SCALAR") or eff.get("TILEKIT_OPENMP_SIMD") == "scalar",
                  f"the effective tunings show it: {eff}")

        # A second run appends (never rewrites); a merge of the same rows adds nothing.
        n = len(rows)
        rc, _, err = run([py, runpy, "--merge", db, "--db", db])
        check(rc == 0 and len(open(db).read().splitlines()) == n, "merging rows already there adds none")

        # The report: a copy of the README, regenerated from this database, then checked.
        readme = os.path.join(tmp, "README.md")
        shutil.copy(os.path.join(a.root, "README.md"), readme)
        before = open(readme).read()
        res = os.path.join(tmp, "res")
        rc, _, err = run([py, report, "--db", db, "--readme", readme, "--results-dir", res, "--check"])
        check(rc == 1, f"--check before regenerating: exit {rc} (1 expected: the table differs)")
        rc, _, err = run([py, report, "--db", db, "--readme", readme, "--results-dir", res])
        check(rc == 0, f"report.py: exit {rc}: {err}")
        after = open(readme).read()
        b0, e0 = before.index("<!-- results:begin -->"), before.index("<!-- results:end -->")
        b1, e1 = after.index("<!-- results:begin -->"), after.index("<!-- results:end -->")
        check(before[:b0] == after[:b1] and before[e0:] == after[e1:], "only the text between the markers changed")
        block = after[b1:e1]
        check(not has_openmp or "| transpose float | 96² | openmp | optimized |" in block,
              "the optimized transpose row is in the table")
        check((not has_openmp or " CPUs**:" in block) and "gemm float" not in block,
              "a CPU block; only the optimized variant by default")
        rc, _, err = run([py, report, "--db", db, "--readme", readme, "--results-dir", res, "--check"])
        check(rc == 0, f"--check after regenerating: exit {rc}: {err}")
        with open(readme, "w") as f:
            f.write(after.replace(" CPUs**:", " CPU**:"))
        rc, _, err = run([py, report, "--db", db, "--readme", readme, "--results-dir", res, "--check"])
        check(rc == 1 and "out of date" in err, f"--check after an edit: exit {rc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("bench driver: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
