#!/usr/bin/python3
"""Debian's numpy on libtilekit_blas.

  numpy_check.py --lib <path/to/libtilekit_blas.so> --backend <serial|openmp|kokkos|...> [--as libblas]

runs this script again as a child with LD_PRELOAD=<lib> (or, with --as libblas, with the
directory of the library's libblas.so.3 link first on LD_LIBRARY_PATH: numpy then loads it as
its libblas.so.3, as Debian's alternative would give it), TILEKIT_BLAS_BACKEND=<backend> and
TILEKIT_BLAS_VERBOSE=1. The child computes float32 and float64 products (transposed operands,
Fortran-ordered arrays, non-contiguous slices, from several threads) and checks each against a
float64 product computed without BLAS (np.einsum), within a relative-error bound; and a few
operations numpy sends to other BLAS routines (gemv, syrk, dot), which libtilekit_blas forwards
to the system BLAS. The parent then reads the child's summary line to check that tilekit served
the products, on that backend. Exit status: 0 passed, 1 failed, 77 skipped (no numpy).
"""
import os
import re
import subprocess
import sys


def child():
    import numpy as np
    from concurrent.futures import ThreadPoolExecutor

    maps = open("/proc/self/maps").read()
    if "libtilekit_blas" not in maps:
        print("FAIL: libtilekit_blas is not loaded in this process")
        return 1
    rng = np.random.default_rng(7)
    failures = []
    products = {np.float32: 0, np.float64: 0}

    def check(name, a, b, dtype):
        got = a @ b
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ref = np.einsum("ik,kj->ij", a64, b64)  # numpy's own loops, not BLAS
        mag = np.einsum("ik,kj->ij", np.abs(a64), np.abs(b64))
        eps = np.finfo(dtype).eps
        bound = 4.0 * (a.shape[1] + 2) * eps * mag + np.finfo(dtype).tiny
        err = np.abs(got.astype(np.float64) - ref)
        if got.dtype != dtype or got.shape != ref.shape or not np.all(err <= bound):
            worst = np.unravel_index(np.argmax(err - bound), err.shape) if got.shape == ref.shape else None
            failures.append(f"{name} {np.dtype(dtype).name}: worst element {worst}: error "
                            f"{err[worst] if worst else 'shape'} over bound {bound[worst] if worst else ''}")
        products[dtype] += 1

    for dtype in (np.float32, np.float64):
        def r(*shape):
            return rng.standard_normal(shape).astype(dtype)
        m, k, n = 131, 257, 70
        a, b = r(m, k), r(k, n)
        check("a @ b", a, b, dtype)
        check("a.T @ b", r(k, m).T, b, dtype)
        check("a @ b.T", a, r(n, k).T, dtype)
        check("a.T @ b.T", r(k, m).T, r(n, k).T, dtype)
        check("Fortran-ordered", np.asfortranarray(a), np.asfortranarray(b), dtype)
        big = r(2 * m + 3, k + 40)
        check("slices (ld > cols)", big[1:m + 1, 5:k + 5], r(k + 9, n + 11)[3:k + 3, 2:n + 2], dtype)
        check("strided rows", big[::2, :k], b, dtype)
        check("1 x k times k x n", a[:1], b, dtype)
        check("square 512", r(512, 512), r(512, 512), dtype)
        with ThreadPoolExecutor(max_workers=4) as pool:
            pairs = [(r(60 + 7 * i, 90), r(90, 40 + 5 * i)) for i in range(8)]
            list(pool.map(lambda p: check("from threads", p[0], p[1], dtype), pairs))

    # Forwarded to the system BLAS: matrix-vector (gemv), a @ a.T (syrk), vector dot.
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((90, 70)).astype(dtype)
        v = rng.standard_normal(70).astype(dtype)
        a64, v64 = a.astype(np.float64), v.astype(np.float64)
        tol = 200 * np.finfo(dtype).eps
        for name, got, ref, mag in (
                ("a @ v (gemv)", a @ v, np.einsum("ij,j->i", a64, v64), np.einsum("ij,j->i", abs(a64), abs(v64))),
                ("a @ a.T (syrk)", a @ a.T, np.einsum("ik,jk->ij", a64, a64), np.einsum("ik,jk->ij", abs(a64), abs(a64))),
                ("v @ v (dot)", np.array(v @ v), np.array(v64 @ v64), np.array(abs(v64) @ abs(v64)))):
            if not np.all(np.abs(got.astype(np.float64) - ref) <= tol * mag):
                failures.append(f"{name} {np.dtype(dtype).name}: wrong result")

    for f in failures:
        print("FAIL:", f)
    print(f"numpy {np.__version__}: {products[np.float32]} float32 and {products[np.float64]} float64 products checked")
    return 1 if failures else 0


def parent(lib, backend, as_libblas):
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("SKIP: python3-numpy is not installed")
        return 77
    env = dict(os.environ, TILEKIT_BLAS_BACKEND=backend, TILEKIT_BLAS_VERBOSE="1")
    if as_libblas:
        alt = os.path.join(os.path.dirname(os.path.realpath(lib)), "tilekit-blas")
        if not os.path.exists(os.path.join(alt, "libblas.so.3")):
            print(f"FAIL: no libblas.so.3 in {alt}")
            return 1
        env["LD_LIBRARY_PATH"] = alt + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env.pop("LD_PRELOAD", None)
    else:
        env["LD_PRELOAD"] = lib
    p = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=600)
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr)
    if p.returncode != 0:
        print(f"FAIL: the numpy child exited with status {p.returncode}")
        return 1
    line = re.search(r"^tilekit-blas: (\d+) calls \(sgemm (\d+), dgemm (\d+)\) on (.+)$", p.stderr, re.M)
    if not line:
        print("FAIL: no tilekit-blas summary line: numpy did not call libtilekit_blas")
        return 1
    sgemm, dgemm, where = int(line.group(2)), int(line.group(3)), line.group(4)
    # 9 single-call products and 8 from threads per dtype; numpy may send a product elsewhere
    # (gemv for a single row), so at least the square and the threaded ones must be here.
    if sgemm < 9 or dgemm < 9 or where != backend:
        print(f"FAIL: expected >= 9 sgemm and dgemm calls all on {backend}, got sgemm {sgemm}, dgemm {dgemm} on {where}")
        return 1
    how = "as libblas.so.3" if as_libblas else "preloaded"
    print(f"PASS: numpy's products ran on tilekit ({backend}, {how}): sgemm {sgemm}, dgemm {dgemm}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        sys.exit(child())
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    if not {"--lib", "--backend"} <= set(args) <= {"--lib", "--backend", "--as"} or args.get("--as", "libblas") != "libblas":
        print(__doc__)
        sys.exit(2)
    sys.exit(parent(os.path.realpath(args["--lib"]), args["--backend"], "--as" in args))
