#!/usr/bin/env python3
"""The bench driver: runs named suites (bench/suites.toml) with one build's `tilekit` and appends
every result, with its full context, to one database of JSON lines (bench/results/results.jsonl).

  python3 bench/run.py SUITE... [--build DIR] [--db FILE] [--out DIR] [--steps GLOB,...]
                       [--kind cpu|gpu|multi-gpu] [--budget SECONDS] [--dry-run]
  python3 bench/run.py --list
  python3 bench/run.py --merge FILE... [--db FILE]     rows measured elsewhere (the GPU machine)
  python3 bench/run.py --import FILE... [--db FILE]    a `tilekit compare --json` file, flagged imported

Standard library only (python3 of Debian 12 or newer: tomllib). Every `compare` runs with
`--json FILE` and every `run` with `--json`; what they print and write is kept under --out
(default BUILD/bench-out/RUN_ID), the rows go to the database. Exit status: 0 when every step
passed, 1 when a step failed or timed out (its rows, if any, are still recorded), 2 on bad usage.
bench/README.md describes the suites' format and the database's rows."""

import argparse
import datetime
import fnmatch
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

try:
    import tomllib
except ImportError:  # pragma: no cover - python < 3.11
    tomllib = None

SCHEMA = 1
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DB = os.path.join(ROOT, "bench", "results", "results.jsonl")
DEFAULT_SUITES = os.path.join(ROOT, "bench", "suites.toml")
KINDS = ("cpu", "gpu", "multi-gpu")
# The result fields of `tilekit run/compare --json` rows that the database keeps as they are.
RESULT_KEYS = ("op", "backend", "variant", "peer", "device", "dtype", "m", "n", "k", "tile", "launch", "reps",
               "seconds", "min_seconds", "max_seconds", "gflops", "gbps", "verified", "rel_error", "check",
               "speedup_vs_naive", "peer_fraction", "intensity", "peak_gflops", "peak_gbps", "roof_fraction",
               "roof_level")


class UsageError(Exception):
    pass


def die(msg, code=2):
    print(f"run.py: {msg}", file=sys.stderr)
    sys.exit(code)


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds")


# ---------------------------------------------------------------- suites

def load_suites(path):
    if tomllib is None:
        die("python 3.11 or newer is needed (tomllib)")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        die(f"{path}: {e}")
    suites = data.get("suites")
    if not isinstance(suites, dict) or not suites:
        die(f"{path}: no [suites.NAME] tables")
    for name, s in suites.items():
        validate_suite(path, name, s)
    return suites


def validate_suite(path, name, s):
    where = f"{path}: suite '{name}'"
    if not isinstance(s.get("steps"), list) or not s["steps"]:
        die(f"{where}: no [[suites.{name}.steps]]")
    for k in s.get("kinds", KINDS):
        if k not in KINDS:
            die(f"{where}: unknown kind '{k}' (cpu, gpu, multi-gpu)")
    seen = set()
    for st in s["steps"]:
        sname = st.get("name")
        if not sname or not re.fullmatch(r"[A-Za-z0-9_.-]+", sname):
            die(f"{where}: a step needs a name of letters, digits, '.', '_', '-' (got {sname!r})")
        if sname in seen:
            die(f"{where}: step '{sname}' is named twice")
        seen.add(sname)
        members = st.get("members")
        cmds = [k for k in ("tilekit", "script") if k in st]
        if members is not None:
            if cmds:
                die(f"{where}, step '{sname}': 'members' and '{cmds[0]}' exclude each other")
            if not isinstance(members, list) or not members:
                die(f"{where}, step '{sname}': 'members' must be a non-empty list")
            labels = set()
            for m in members:
                mc = [k for k in ("tilekit", "script") if k in m]
                if len(mc) != 1:
                    die(f"{where}, step '{sname}': each member needs exactly one of 'tilekit' or 'script'")
                if not m.get("label") or m["label"] in labels:
                    die(f"{where}, step '{sname}': each member needs its own 'label'")
                labels.add(m["label"])
        elif len(cmds) != 1:
            die(f"{where}, step '{sname}': needs exactly one of 'tilekit', 'script' or 'members'")
        for k in st.get("kinds", KINDS):
            if k not in KINDS:
                die(f"{where}, step '{sname}': unknown kind '{k}'")


# ---------------------------------------------------------------- the machine and the build

def run_quiet(argv, timeout=20, env=None):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)


def cpuinfo():
    info = {"cpu_model": platform.processor() or None, "cpu_family": None, "cpu_model_number": None,
            "cpu_flags": []}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return info
    first = text.split("\n\n", 1)[0]
    fields = {}
    for line in first.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
    info["cpu_model"] = fields.get("model name", info["cpu_model"])
    info["cpu_family"] = int(fields["cpu family"]) if fields.get("cpu family", "").isdigit() else None
    info["cpu_model_number"] = int(fields["model"]) if fields.get("model", "").isdigit() else None
    flags = set(fields.get("flags", "").split())
    # The instruction sets the CPU targets depend on (TARGETS.md: Zen 3 / 4 / 5, AVX2 vs AVX-512).
    info["cpu_flags"] = sorted(flags & {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile"})
    info["_all_flags"] = flags
    return info


def gpus():
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    rc, out, _ = run_quiet([exe, "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                            "--format=csv,noheader"])
    if rc != 0:
        return []
    res = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0]:
            res.append({"name": parts[0], "driver": parts[1], "memory": parts[2] if len(parts) > 2 else None,
                        "max_sm_clock": parts[3] if len(parts) > 3 else None})
    return res


def machine_kind(gpu_list):
    return "cpu" if not gpu_list else "gpu" if len(gpu_list) == 1 else "multi-gpu"


def source_commit():
    """The commit the tree was at: git, or (on the GPU machine, whose copy of the tree has no usable
    git) what bench/device/pack.sh recorded in .device/."""
    rc, head, _ = run_quiet(["git", "-C", ROOT, "rev-parse", "HEAD"])
    packed = None
    try:
        with open(os.path.join(ROOT, ".device", "commit")) as f:
            packed = f.read().strip() or None
    except OSError:
        pass
    # The GPU machine's copy of the tree may carry a .git older than the tree itself: there the
    # commit pack.sh recorded is one that git does not know.
    if packed and rc == 0 and head.strip() != packed and run_quiet(["git", "-C", ROOT, "cat-file", "-e", packed])[0] != 0:
        rc = 1
    if rc == 0 and head.strip():
        # Dirty: code that differs from the commit. The results database and the files generated
        # from it (bench/results/) are this driver's own output, not a change to what it measures.
        rc2, desc, _ = run_quiet(["git", "-C", ROOT, "describe", "--always", "--abbrev=12"])
        rc3, changed, _ = run_quiet(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--",
                                     ".", ":(exclude)bench/results"])
        dirty = rc3 == 0 and bool(changed.strip())
        desc = desc.strip() + ("-dirty" if dirty else "") if rc2 == 0 else None
        return {"commit": head.strip(), "describe": desc, "dirty": dirty, "commit_source": "git"}
    res = {"commit": None, "describe": None, "dirty": None, "commit_source": None}
    for name, key in (("commit", "commit"), ("describe", "describe")):
        try:
            with open(os.path.join(ROOT, ".device", name)) as f:
                res[key] = f.read().strip() or None
                res["commit_source"] = ".device"
        except OSError:
            pass
    if res["describe"]:
        res["dirty"] = res["describe"].endswith("-dirty")
    return res


def build_facts(build):
    facts = {"build_dir": os.path.relpath(build, ROOT) if build.startswith(ROOT) else build,
             "build_type": None, "compiler": None, "backends_compiled": [], "cuda_architectures": None}
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    facts["build_type"] = line.split("=", 1)[1].strip() or None
    except OSError:
        pass
    cdir = os.path.join(build, "CMakeFiles")
    try:
        for v in sorted(os.listdir(cdir)):
            p = os.path.join(cdir, v, "CMakeCXXCompiler.cmake")
            if os.path.isfile(p):
                text = open(p).read()
                cid = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
                ver = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
                if cid:
                    facts["compiler"] = f"{cid.group(1)} {ver.group(1) if ver else ''}".strip()
    except OSError:
        pass
    try:
        text = open(os.path.join(build, "include", "tilekit", "config.hpp")).read()
        m = re.search(r'#define TILEKIT_BACKENDS "([^"]*)"', text)
        if m:
            facts["backends_compiled"] = [b for b in m.group(1).split(",") if b]
        m = re.search(r'#define TILEKIT_PLUGIN_BACKENDS "([^"]*)"', text)
        if m:
            facts["backends_compiled"] += [b for b in m.group(1).split(",") if b and b not in facts["backends_compiled"]]
        m = re.search(r'#define TILEKIT_CUDA_ARCHITECTURES "([^"]*)"', text)
        if m and m.group(1):
            facts["cuda_architectures"] = m.group(1)
    except OSError:
        pass
    return facts


def find_tilekit(build):
    exe = os.path.join(build, "tilekit")  # src/cli/CMakeLists.txt: RUNTIME_OUTPUT_DIRECTORY is the build's root
    if os.access(exe, os.X_OK):
        return exe
    others = sorted(p for p in (os.path.join(ROOT, d, "tilekit") for d in os.listdir(ROOT) if d.startswith("build"))
                    if os.access(p, os.X_OK))
    hint = f"; built ones: {', '.join(os.path.relpath(p, ROOT) for p in others)}" if others else ""
    die(f"no tilekit program at {exe} (give the build directory with --build){hint}")


def device_env(env):
    """On the GPU machine the Debian libraries travel in .device/ (bench/device/pack.sh)."""
    lib = os.path.join(ROOT, ".device", "deps", "lib", "x86_64-linux-gnu")
    paths = [p for p in (lib, "/usr/local/cuda/lib64") if os.path.isdir(p)] if os.path.isdir(lib) else []
    if paths:
        old = env.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = ":".join(paths + ([old] if old else []))
        env["PATH"] = "/usr/local/cuda/bin:" + env.get("PATH", "")
    return env


class Tilekit:
    """What this build's program offers: `--tune` (else tunings go through the environment) and
    `tilekit tunings --json` (else the effective tunings are what the environment sets)."""

    def __init__(self, exe, env):
        self.exe = exe
        self.env = env
        rc, out, err = run_quiet([exe, "run", "--help"], env=env)
        self.has_tune = rc == 0 and "--tune" in out
        rc, out, err = run_quiet([exe, "tunings", "--help"], env=env)
        self.has_tunings = rc == 0
        self._cache = {}

    def tunings(self, env, tunes):
        if not self.has_tunings:
            return None
        key = (json.dumps(tunes, sort_keys=True), json.dumps({k: v for k, v in env.items() if k.startswith("TILEKIT_")},
                                                             sort_keys=True))
        if key not in self._cache:
            argv = [self.exe, "tunings", "--json"] + tune_args(tunes)
            rc, out, _ = run_quiet(argv, env=env)
            if rc != 0 and tunes:
                rc, out, _ = run_quiet([self.exe, "tunings", "--json"], env=env)
            val = None
            if rc == 0:
                try:
                    val = normalize_tunings(json.loads(out))
                except ValueError:
                    val = None
            self._cache[key] = val
        return self._cache[key]


def tune_args(tunes):
    args = []
    for k, v in sorted(tunes.items()):
        args += ["--tune", f"{k}={v}"]
    return args


def tuning_env_name(name):
    """The documented environment form of a tuning: cuda.sgemm.kernel -> TILEKIT_CUDA_SGEMM_KERNEL."""
    return "TILEKIT_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def normalize_tunings(t):
    """{name: value} from whatever shape `tilekit tunings --json` or a context's `tunings` has:
    a mapping, {"tunings": ...}, or a list of {"name", "value"|"effective"}."""
    if isinstance(t, dict) and "tunings" in t and len(t) <= 3:
        t = t["tunings"]
    if isinstance(t, dict):
        out = {}
        for k, v in t.items():
            if isinstance(v, dict):
                for key in ("value", "effective", "current"):
                    if key in v:
                        v = v[key]
                        break
            out[str(k)] = v
        return out
    if isinstance(t, list):
        out = {}
        for e in t:
            if isinstance(e, dict) and "name" in e:
                for key in ("value", "effective", "current"):
                    if key in e:
                        out[str(e["name"])] = e[key]
                        break
        return out
    return None


# ---------------------------------------------------------------- contexts and rows

class Context:
    def __init__(self, build, kind_override=None):
        self.cpu = cpuinfo()
        self.gpus = gpus()
        self.kind = kind_override or machine_kind(self.gpus)
        self.src = source_commit()
        self.build = build_facts(build)
        self.host = socket.gethostname()
        self.num_cpus = os.cpu_count()

    def base(self):
        return {
            "schema": SCHEMA,
            "host": self.host,
            "machine_kind": self.kind,
            "cpu_model": self.cpu["cpu_model"],
            "cpu_family": self.cpu["cpu_family"],
            "cpu_model_number": self.cpu["cpu_model_number"],
            "cpu_flags": self.cpu["cpu_flags"],
            "num_cpus": self.num_cpus,
            "gpus": self.gpus,
            "commit": self.src["commit"],
            "describe": self.src["describe"],
            "dirty": self.src["dirty"],
            "commit_source": self.src["commit_source"],
            "compiler": self.build["compiler"],
            "build_type": self.build["build_type"],
            "build_dir": self.build["build_dir"],
            "backends_compiled": self.build["backends_compiled"],
            "cuda_architectures": self.build["cuda_architectures"],
        }


def compact_ceilings(c):
    if not isinstance(c, dict):
        return None
    return {k: c.get(k) for k in ("gbps", "gflops_f32", "gflops_f64")}


def from_tilekit_context(ctx):
    """The facts of a `compare --json` context block that the database keeps per row."""
    if not isinstance(ctx, dict):
        return {}, {}
    facts = {}
    for src, dst in (("date", "date"), ("tilekit_commit", "tilekit_commit"), ("tilekit_version", "tilekit_version"),
                     ("library_build_type", "build_type"), ("compiler", "compiler"), ("cpu_model", "cpu_model"),
                     ("num_cpus", "num_cpus"), ("load_avg", "load_avg"), ("host_name", "host"),
                     ("omp_num_threads", "omp_num_threads")):
        if ctx.get(src) not in (None, ""):
            facts[dst] = ctx[src]
    if ctx.get("gpus"):
        facts["tilekit_gpus"] = ctx["gpus"]
    if "tunings" in ctx:
        facts["tunings"] = normalize_tunings(ctx["tunings"])
        facts["tunings_source"] = "context"
    per_backend = {}
    for b in ctx.get("backends", []) or []:
        if isinstance(b, dict) and b.get("backend"):
            per_backend[b["backend"]] = {"device_kind": b.get("kind"), "compute_units": b.get("threads_or_compute_units"),
                                         "ceilings": compact_ceilings(b.get("ceilings"))}
    return facts, per_backend


def result_fields(r):
    out = {k: r.get(k) for k in RESULT_KEYS if k in r}
    for k, v in r.items():  # what a newer tilekit adds (traffic, tunings of the row...) is kept too
        if k not in out and k not in ("context",):
            out[k] = v
    # A program's rows may name their own metric (a GEMM under another op name, a size).
    out["metric"] = r.get("metric") or ("gflops" if r.get("op") == "gemm" else "gbps")
    return out


def annotate_peers(rows, same_backend):
    """Each non-peer result row gets the best peer beside it: in a `compare`, its own backend's peer
    row (as tilekit's peer_fraction); in an alternation group, the fastest peer of the same problem
    (TARGETS.md: the best OpenBLAS kernel, the faster of a 1- and an all-thread memcpy)."""
    def key(r):
        return (r.get("op"), r.get("dtype"), r.get("m"), r.get("n"), r.get("k")) + ((r.get("backend"),) if same_backend else ())
    best = {}
    for r in rows:
        if r.get("kind") == "result" and r.get("peer") and r.get("verified") is not False:
            v = r.get(r["metric"])
            if isinstance(v, (int, float)) and v > 0 and v > best.get(key(r), (0, None))[0]:
                best[key(r)] = (v, r)
    for r in rows:
        if r.get("kind") != "result" or r.get("peer"):
            continue
        b = best.get(key(r))
        if not b:
            continue
        r["peer_variant"] = b[1].get("variant")
        r["peer_backend"] = b[1].get("backend")
        r["peer_value"] = b[0]
        mine = r.get(r["metric"])
        if r.get("peer_fraction") is None and isinstance(mine, (int, float)):
            r["peer_fraction"] = mine / b[0]
        if b[1].get("env"):
            r["peer_env"] = b[1]["env"]


# ---------------------------------------------------------------- running steps

def substitute(args, subst, compiled):
    out = []
    for a in args:
        a = str(a)

        def backends(m):
            wanted = [b for b in m.group(1).split(",") if b]
            have = [b for b in wanted if b in compiled]
            return ",".join(have)
        a = re.sub(r"\{backends:([^}]*)\}", backends, a)
        for k, v in subst.items():
            a = a.replace("{" + k + "}", v)
        out.append(a)
    return out


def check_requires(req, ctx, compiled):
    """None when met, else why not. Entries: cpu:FLAG, cpu:!FLAG, tool:NAME, backend:NAME, gpus:N."""
    for r in req or []:
        kind, _, what = str(r).partition(":")
        neg = what.startswith("!")
        what = what.lstrip("!")
        if kind == "cpu":
            ok = what in ctx.cpu.get("_all_flags", set())
        elif kind == "tool":
            ok = shutil.which(what) is not None or os.path.exists(os.path.join("/usr/local/cuda/bin", what))
        elif kind == "backend":
            ok = what in compiled
        elif kind == "gpus":
            ok = len(ctx.gpus) >= int(what)
        else:
            raise UsageError(f"unknown requirement '{r}' (cpu:FLAG, tool:NAME, backend:NAME, gpus:N)")
        if ok == neg:
            return f"{'has' if neg else 'needs'} {r.replace('!', '')}"
    return None


def expand_vary(step, ncpu):
    """A step with `vary = {VAR = [values]}` becomes one step per combination (the values set in its
    environment); "nproc" stands for the CPU count, and thread counts above it are dropped."""
    vary = step.get("vary")
    if not vary:
        return [(step, {})]
    combos = [{}]
    for var, values in vary.items():
        vals = []
        for v in values:
            v = str(ncpu) if v == "nproc" else str(v)
            if var.endswith("NUM_THREADS") and v.isdigit() and int(v) > ncpu:
                continue
            if v not in vals:
                vals.append(v)
        combos = [dict(c, **{var: v}) for c in combos for v in vals]
    return [(step, c) for c in combos]


class Runner:
    def __init__(self, args, ctx, tk, suites):
        self.args = args
        self.ctx = ctx
        self.tk = tk
        self.suites = suites
        self.run_id = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{ctx.host}-{os.getpid()}"
        self.out = os.path.abspath(args.out or os.path.join(args.build, "bench-out", self.run_id))
        self.t0 = time.monotonic()
        self.failed = 0
        self.rows_written = 0
        self.seq = 0

    # one process: argv and env -> (rc, stdout, stderr, seconds, timed_out)
    def spawn(self, argv, env, timeout, log_base):
        t = time.monotonic()
        try:
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                 cwd=ROOT, start_new_session=True)
        except OSError as e:
            return 127, "", str(e), 0.0, False
        timed_out = False
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True

            def kill(sig):  # the step's own process group: it and what it started
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
            kill(signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                kill(signal.SIGKILL)
                out, err = p.communicate()
        secs = time.monotonic() - t
        if log_base:
            with open(log_base + ".out", "w") as f:
                f.write(out or "")
            with open(log_base + ".err", "w") as f:
                f.write(err or "")
        return p.returncode, out or "", err or "", secs, timed_out

    def remaining(self):
        if self.args.budget is None:
            return None
        return self.args.budget - (time.monotonic() - self.t0)

    def append(self, rows):
        if self.args.dry_run or not rows:
            return
        os.makedirs(os.path.dirname(os.path.abspath(self.args.db)), exist_ok=True)
        with open(self.args.db, "a") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.rows_written += len(rows)

    def command_for(self, spec, step, member, vary_env, artifact, tag):
        """argv, env, recorded env, tunings asked for, what kind of command."""
        compiled = self.ctx.build["backends_compiled"]
        subst = {"build": self.args.build, "tilekit": self.tk.exe, "out": artifact, "root": ROOT}

        def values(d):
            return {str(k): substitute([v], subst, compiled)[0] for k, v in (d or {}).items()}
        env_set = values(step.get("env"))
        env_set.update(vary_env)
        if member:
            env_set.update(values(member.get("env")))
        tunes = values(step.get("tunings"))
        if member:
            tunes.update(values(member.get("tunings")))
        src = member or step
        if "tilekit" in src:
            args = substitute(src["tilekit"], subst, compiled)
            if not args:
                raise UsageError(f"step '{step['name']}': empty tilekit command")
            sub = args[0]
            argv = [self.tk.exe] + args
            if sub == "compare":
                if "--json" not in args:
                    argv += ["--json", os.path.join(artifact, f"{tag}.json")]
                if step.get("plot") and "--plot" not in args:
                    argv += ["--plot", os.path.join(artifact, f"{tag}.svg")]
            elif sub == "run" and "--json" not in args:
                argv.append("--json")
            if tunes:
                if self.tk.has_tune:
                    argv += tune_args(tunes)
                else:
                    for k, v in tunes.items():
                        env_set[tuning_env_name(k)] = v
            what = sub
        else:
            argv = substitute(src["script"], subst, compiled)
            for k, v in tunes.items():  # scripts get tunings in their documented environment form
                env_set[tuning_env_name(k)] = v
            what = "script"
        env = dict(self.base_env)
        env["BENCH_OUT"] = artifact  # a script's own files, and the rows it wants recorded
        env["BENCH_ROWS"] = os.path.join(artifact, f"{tag}.rows.jsonl")
        for k, v in env_set.items():
            if v == "":
                env.pop(k, None)  # VAR = "" in a suite: unset it for this step
            else:
                env[k] = v
        return argv, env, env_set, tunes, what

    def context_rows(self, suite, step, member, rnd, env_set, env, tunes, argv, what, group):
        base = self.ctx.base()
        base.update({
            "suite": suite, "step": step["name"], "member": member.get("label") if member else None,
            "round": rnd, "run_id": self.run_id, "group": group,
            "command": shlex.join([os.path.relpath(a, ROOT) if a == self.tk.exe else a for a in argv]),
            "env": env_set, "tunings_set": tunes or {},
            "omp_num_threads": env.get("OMP_NUM_THREADS"),
            "report": bool(step.get("report", self.suites[suite].get("report", True))),
            "imported": False,
        })
        base["load_avg"] = list(os.getloadavg())
        tun = self.tk.tunings(env, tunes)
        if tun is not None:
            base["tunings"], base["tunings_source"] = tun, "tilekit tunings"
        else:
            base["tunings"] = {k: v for k, v in env.items() if k.startswith("TILEKIT_")}
            base["tunings_source"] = "environment"
        base["date"] = now_iso()
        return base

    def one(self, suite, step, member, rnd, vary_env, artifact, group, timeout):
        """Runs one process; returns (rows, step_row)."""
        self.seq += 1
        label = step["name"] + (f".{member['label']}" if member else "") + \
            "".join(f".{k}{v}" for k, v in vary_env.items()) + (f".r{rnd}" if rnd is not None else "")
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
        argv, env, env_set, tunes, what = self.command_for(member or step, step, member, vary_env, artifact, tag)
        if self.args.dry_run:
            envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env_set.items()))
            print(f"  [{suite}/{label}] {envs + ' ' if envs else ''}{shlex.join(argv)}  (limit {timeout:.0f} s)")
            return [], None
        base = self.context_rows(suite, step, member, rnd, env_set, env, tunes, argv, what, group)
        invocation = f"{self.run_id}#{self.seq}"
        base["invocation"] = invocation
        print(f"run.py: {suite}/{label}: {base['command']}", file=sys.stderr, flush=True)
        rc, out, err, secs, timed_out = self.spawn(argv, env, timeout, os.path.join(artifact, tag))
        rows = []
        problems = []
        src = member or step
        row_kind = src.get("rows_kind", step.get("rows_kind", "result"))
        if what == "compare":
            jpath = argv[argv.index("--json") + 1]
            try:
                with open(jpath) as f:
                    doc = json.load(f)
                rows = self.rows_from_compare(doc, base, row_kind)
            except (OSError, ValueError) as e:
                if rc == 0:
                    problems.append(f"no JSON from compare: {e}")
        elif what == "run":
            for line in out.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    rows.append(self.row(base, r, row_kind))
            if rc == 0 and not rows:
                problems.append("no JSON row from run")
        elif what == "script" and src.get("rows", step.get("rows")) in ("stdout", "file"):
            text = out
            if src.get("rows", step.get("rows")) == "file":
                try:
                    text = open(env["BENCH_ROWS"]).read()
                except OSError:
                    text = ""
            for line in text.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(r, dict) and "op" in r:
                        rows.append(self.row(base, r, row_kind))
        for i, r in enumerate(rows):
            r["row_id"] = f"{invocation}.{i}"
        status = "timeout" if timed_out else "pass" if rc == 0 and not problems else "fail"
        if rc == 1 and what in ("compare", "run"):
            problems.append("verification failed (exit 1)")
        tail = (out + ("\n" if out and err else "") + err).strip().splitlines()[-15:]
        step_row = dict(base, kind="step", row_id=f"{invocation}.step", status=status, exit_code=rc,
                        wall_seconds=round(secs, 3), rows=len(rows), problems=problems,
                        output_tail="\n".join(tail)[-3000:])
        if status != "pass":
            print(f"run.py: {suite}/{label}: {status} (exit {rc}){': ' + '; '.join(problems) if problems else ''}",
                  file=sys.stderr)
            for t in tail[-6:]:
                print(f"    {t}", file=sys.stderr)
        return rows, step_row

    def row(self, base, r, kind):
        row = dict(base)
        row.update(result_fields(r))
        row["kind"] = kind
        return row

    def rows_from_compare(self, doc, base, kind):
        if isinstance(doc, dict):
            ctx, rows_in = doc.get("context"), doc.get("rows", [])
        else:  # a bare list: compare before its context block existed
            ctx, rows_in = None, doc
        facts, per_backend = from_tilekit_context(ctx)
        rows = []
        for r in rows_in:
            row = dict(base)
            # The program's own context wins over the driver's guesses (its date is when it ran).
            row.update({k: v for k, v in facts.items() if not (k == "tunings" and v is None)})
            row.update(result_fields(r))
            pb = per_backend.get(r.get("backend"), {})
            row["device_kind"] = pb.get("device_kind")
            row["ceilings"] = pb.get("ceilings")
            row["kind"] = kind
            rows.append(row)
        annotate_peers(rows, same_backend=True)
        return rows

    def run_step(self, suite, step):
        compiled = self.ctx.build["backends_compiled"]
        why = None
        kinds = step.get("kinds")
        if kinds and self.ctx.kind not in kinds:
            why = f"for {', '.join(kinds)} machines, this is a {self.ctx.kind} one"
        why = why or check_requires(list(self.suites[suite].get("requires", [])) + list(step.get("requires", [])),
                                    self.ctx, compiled)
        if why:
            print(f"run.py: {suite}/{step['name']}: skipped ({why})", file=sys.stderr)
            return
        for st, vary_env in expand_vary(step, self.ctx.num_cpus):
            timeout = float(step.get("timeout", self.suites[suite].get("timeout", 600)))
            left = self.remaining()
            if left is not None and not self.args.dry_run:
                if left < min(30.0, timeout):
                    print(f"run.py: {suite}/{step['name']}: skipped (budget spent: {left:.0f} s left)", file=sys.stderr)
                    self.failed += 1
                    return
                timeout = min(timeout, left)
            artifact = os.path.join(self.out, suite, st["name"])
            if not self.args.dry_run:
                os.makedirs(artifact, exist_ok=True)
            group = f"{self.run_id}/{suite}/{st['name']}" + "".join(f"/{k}={v}" for k, v in vary_env.items())
            if "members" not in st:
                rows, srow = self.one(suite, st, None, None, vary_env, artifact, group, timeout)
                self.finish(rows, [srow] if srow else [], same_backend=True)
                continue
            members = []
            for m in st["members"]:
                why = (m.get("kinds") and self.ctx.kind not in m["kinds"] and f"for {', '.join(m['kinds'])}") or \
                    check_requires(m.get("requires"), self.ctx, compiled)
                if why:
                    print(f"run.py: {suite}/{st['name']}.{m['label']}: skipped ({why})", file=sys.stderr)
                else:
                    members.append(m)
            rounds = int(st.get("rounds", 1))
            per_round = {m["label"]: [] for m in members}
            step_rows = []
            deadline = time.monotonic() + timeout
            for rnd in range(rounds):
                # Alternating: each round starts one member later, so drift in the machine's load
                # falls on every member alike.
                order = members[rnd % len(members):] + members[:rnd % len(members)] if members else []
                for m in order:
                    left = deadline - time.monotonic()
                    if left < 1:
                        step_rows.append(dict(self.ctx.base(), kind="step", suite=suite, step=st["name"],
                                              member=m["label"], round=rnd, run_id=self.run_id, group=group,
                                              row_id=f"{self.run_id}#{self.seq}.{m['label']}.{rnd}.skip",
                                              status="timeout", date=now_iso(), problems=["step time limit reached"]))
                        continue
                    rows, srow = self.one(suite, st, m, rnd if rounds > 1 else None, vary_env, artifact, group, left)
                    if srow:
                        step_rows.append(srow)
                    per_round[m["label"]].extend(rows)
            if self.args.dry_run:
                continue
            merged = [median_row(rs, rounds) for rs in per_round.values() if rs]
            merged = [r for r in merged if r]
            # A result that is several rows (one per round) keeps the median round's, all times beside it.
            self.finish([r for rs in merged for r in rs], step_rows, same_backend=False)

    def finish(self, rows, step_rows, same_backend):
        annotate_peers(rows, same_backend)
        self.append(rows + step_rows)
        for s in step_rows:
            if s.get("status") != "pass":
                self.failed += 1

    def run(self, names):
        self.base_env = device_env(dict(os.environ))
        self.base_env["TILEKIT"] = self.tk.exe
        self.base_env["BENCH_BUILD"] = self.args.build
        pats = [p for p in (self.args.steps or "").split(",") if p]
        print(f"run.py: run {self.run_id} on a {self.ctx.kind} machine ({self.ctx.cpu['cpu_model']}"
              f"{', ' + ', '.join(g['name'] for g in self.ctx.gpus) if self.ctx.gpus else ''}); "
              f"tilekit {os.path.relpath(self.tk.exe, ROOT)}; "
              f"tunings via {'--tune' if self.tk.has_tune else 'the environment'}; "
              f"{'dry run' if self.args.dry_run else 'rows to ' + self.args.db}; artifacts in {self.out}",
              file=sys.stderr)
        for name in names:
            s = self.suites[name]
            kinds = s.get("kinds", list(KINDS))
            if self.ctx.kind not in kinds:
                print(f"run.py: suite {name}: skipped (for {', '.join(kinds)} machines, this is a {self.ctx.kind} one; "
                      f"--kind overrides)", file=sys.stderr)
                continue
            if self.args.dry_run:
                print(f"{name}: {s.get('description', '')}")
            for st in s["steps"]:
                if pats and not any(fnmatch.fnmatch(st["name"], p) for p in pats):
                    continue
                self.run_step(name, st)
        if not self.args.dry_run:
            print(f"run.py: {self.rows_written} rows appended to {self.args.db}; "
                  f"{self.failed} step(s) failed or timed out", file=sys.stderr)
        return 1 if self.failed else 0


def median_row(rows, rounds):
    """The rows of one member over its rounds -> one row per distinct result (normally one): the
    median round's, with every round's median time in round_seconds."""
    by = {}
    for r in rows:
        k = (r.get("op"), r.get("backend"), r.get("variant"), r.get("peer"), r.get("dtype"), r.get("m"), r.get("n"),
             r.get("k"), r.get("threads"))
        by.setdefault(k, []).append(r)
    out = []
    for rs in by.values():
        timed = [r for r in rs if isinstance(r.get("seconds"), (int, float))]
        if not timed:
            out.append(rs[-1])
            continue
        timed.sort(key=lambda r: r["seconds"])
        med = dict(timed[(len(timed) - 1) // 2])
        if rounds > 1:
            med["round_seconds"] = [r["seconds"] for r in rs if isinstance(r.get("seconds"), (int, float))]
            med["rounds"] = len(rs)
            med["round"] = None
            med["seconds_median_of_rounds"] = statistics.median(med["round_seconds"])
            med["verified"] = all(r.get("verified") is not False for r in rs)
        out.append(med)
    return out


# ---------------------------------------------------------------- merge and import

def read_db(path):
    rows = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except ValueError as e:
                        die(f"{path}:{n}: not JSON: {e}", 1)
    except FileNotFoundError:
        pass
    return rows


def merge(files, db, dry):
    have = {r.get("row_id") for r in read_db(db)}
    new = []
    for path in files:
        for r in read_db(path):
            if not isinstance(r, dict) or r.get("schema") != SCHEMA or not r.get("row_id"):
                die(f"{path}: not a row of this database (schema {SCHEMA}, row_id): {str(r)[:120]}", 1)
            if r["row_id"] not in have:
                have.add(r["row_id"])
                new.append(r)
    if not dry and new:
        with open(db, "a") as f:
            for r in new:
                f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"run.py: {len(new)} new rows from {len(files)} file(s){' (dry run)' if dry else ' appended to ' + db}",
          file=sys.stderr)


def import_compare(files, db, dry, suite):
    """`tilekit compare --json` files measured before the driver existed: their rows with their own
    context, flagged imported and named by the file they came from."""
    have = {r.get("row_id") for r in read_db(db)}
    new = []
    for path in files:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            die(f"{path}: {e}", 1)
        if not isinstance(doc, dict) or not isinstance(doc.get("context"), dict):
            die(f"{path}: no context block (only `compare --json` files with their context are imported)", 1)
        name = os.path.relpath(os.path.abspath(path), os.path.join(ROOT, "bench", "results")) \
            if os.path.abspath(path).startswith(os.path.join(ROOT, "bench", "results")) else os.path.basename(path)
        facts, per_backend = from_tilekit_context(doc["context"])
        gpu_names = []
        for g in doc["context"].get("gpus", []):
            gname = re.sub(r"^Kokkos .*? on ", "", g.get("name") or "") if isinstance(g, dict) else ""
            if gname and gname not in gpu_names:
                gpu_names.append(gname)
        commit = facts.get("tilekit_commit") or ""
        base = {
            "schema": SCHEMA, "imported": True, "source_file": name, "suite": suite or "imported",
            "step": os.path.splitext(os.path.basename(name))[0], "member": None, "round": None,
            "run_id": f"imported:{name}", "group": f"imported:{name}", "invocation": f"imported:{name}",
            "command": None, "env": {}, "tunings_set": {}, "tunings": None, "tunings_source": None,
            "machine_kind": "gpu" if gpu_names else "cpu", "gpus": [{"name": n} for n in gpu_names],
            "commit": None, "describe": commit or None, "dirty": commit.endswith("-dirty") if commit else None,
            "commit_source": "tilekit build", "report": True, "cpu_flags": None, "cpu_family": None,
            "cpu_model_number": None, "build_dir": None, "backends_compiled": None, "cuda_architectures": None,
        }
        rows = []
        for i, r in enumerate(doc.get("rows", [])):
            row = dict(base)
            row.update(facts)
            row.update(result_fields(r))
            pb = per_backend.get(r.get("backend"), {})
            row["device_kind"] = pb.get("device_kind")
            row["ceilings"] = pb.get("ceilings")
            row["kind"] = "result"
            row["row_id"] = f"imported:{name}.{i}"
            rows.append(row)
        annotate_peers(rows, same_backend=True)
        for r in rows:
            if r["row_id"] not in have:
                have.add(r["row_id"])
                new.append(r)
    if not dry and new:
        os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
        with open(db, "a") as f:
            for r in new:
                f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"run.py: {len(new)} imported rows from {len(files)} file(s){' (dry run)' if dry else ' appended to ' + db}",
          file=sys.stderr)


# ---------------------------------------------------------------- main

def list_suites(suites):
    for name, s in suites.items():
        kinds = ", ".join(s.get("kinds", KINDS))
        print(f"{name}  [{kinds}]  {s.get('description', '')}")
        for st in s["steps"]:
            extra = []
            if st.get("kinds"):
                extra.append("on " + ", ".join(st["kinds"]))
            if st.get("requires"):
                extra.append("needs " + ", ".join(st["requires"]))
            if st.get("rounds"):
                extra.append(f"{st['rounds']} rounds")
            if st.get("vary"):
                extra.append("vary " + ", ".join(st["vary"]))
            extra.append(f"limit {st.get('timeout', s.get('timeout', 600))} s")
            print(f"    {st['name']:<22} {st.get('description', '')}  ({'; '.join(extra)})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suites", nargs="*", help="suite names (--list shows them)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory holding tilekit (default: build)")
    ap.add_argument("--db", default=DEFAULT_DB, help="the database to append to (default: bench/results/results.jsonl)")
    ap.add_argument("--out", help="where outputs go (default: BUILD/bench-out/RUN_ID)")
    ap.add_argument("--suites-file", default=DEFAULT_SUITES, help=argparse.SUPPRESS)
    ap.add_argument("--steps", help="only steps whose names match these comma-separated globs")
    ap.add_argument("--kind", choices=KINDS, help="the machine's kind (default: from nvidia-smi)")
    ap.add_argument("--budget", type=float,
                    help="seconds for everything; steps are cut to what is left, and skipped under 30 s")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing, write nothing")
    ap.add_argument("--list", action="store_true", help="list the suites and their steps")
    ap.add_argument("--merge", nargs="+", metavar="FILE", help="append another database's new rows to --db")
    ap.add_argument("--import", dest="imports", nargs="+", metavar="FILE",
                    help="append the rows of `tilekit compare --json` files (flagged imported) to --db")
    ap.add_argument("--import-suite", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.db = os.path.abspath(args.db)

    if args.merge or args.imports:
        if args.suites:
            die("--merge and --import take no suites")
        if args.merge:
            merge(args.merge, args.db, args.dry_run)
        if args.imports:
            import_compare(args.imports, args.db, args.dry_run, args.import_suite)
        return 0
    suites = load_suites(args.suites_file)
    if args.list:
        list_suites(suites)
        return 0
    if not args.suites:
        die("name at least one suite (--list shows them)")
    for s in args.suites:
        if s not in suites:
            die(f"unknown suite '{s}' (known: {', '.join(suites)})")
    if len(set(args.suites)) != len(args.suites):
        die("a suite is named twice")
    args.build = os.path.abspath(args.build)
    exe = find_tilekit(args.build)
    ctx = Context(args.build, args.kind)
    tk = Tilekit(exe, device_env(dict(os.environ)))
    try:
        return Runner(args, ctx, tk, suites).run(args.suites)
    except UsageError as e:
        die(str(e))


if __name__ == "__main__":
    sys.exit(main())
