#!/usr/bin/env bash
# PDGEMM on GPUs: ScaLAPACK over MPI, one rank per GPU, every rank's BLAS tilekit's on the cuda
# backend (docs/scalapack.md). Two steps:
#
# 1. HERE (Debian), with this branch's example built (BUILD_DIR/tilekit_scalapack_gemm and
#    BUILD_DIR/libtilekit_pblas_panel.so; any tilekit build with the MPI example in it):
#      bash bench/device/pack.sh                          # empties .device/, carries the build deps
#      bash bench/device/scalapack_gpu.sh pack BUILD_DIR  # then adds .device/scalapack/
#    .device/ is git-ignored; it travels to the device as a carried path. What this step adds
#    (Debian 12 builds, because the device has no ScaLAPACK and no package registry):
#      .device/scalapack/tilekit_scalapack_gemm     the example (needs libscalapack, libmpi.so.40)
#      .device/scalapack/libtilekit_pblas_panel.so  the PBLAS panel width from TILEKIT_PBLAS_PANEL
#      .device/scalapack/lib/libscalapack-openmpi.so.2.2   Debian's ScaLAPACK 2.2.1 for OpenMPI; it
#          needs liblapack.so.3, libblas.so.3 (made here as links to pack.sh's libopenblas.so.0),
#          libgfortran.so.5 (pack.sh carries it) and libmpi.so.40 (the device's OpenMPI, or below)
#      .device/scalapack/testers/{dpb3tst,spb3tst}  ScaLAPACK's PBLAS testers (scalapack-mpi-test)
#      .device/scalapack/openmpi-debian.tar.xz      Debian's OpenMPI 4.1.4 runtime (orterun, orted,
#          libmpi/libopen-rte/libopen-pal .so.40, its MCA plugins and help files, libhwloc15,
#          libevent 2.1, libnuma1, PMIx 2): used only when the device's own mpirun cannot run
#          the example with Debian's ScaLAPACK
#      .device/scalapack/CARRIED.txt                the list, with Debian package versions
#
# 2. ON THE DEVICE (nvidia-h100-x2 or nvidia-h200-x2), from the repository root, carry [".device"]:
#      bash bench/device/scalapack_gpu.sh run [STAGES]
#    stages (default: all, in this order; over 10 minutes in all on a fresh machine, so split them
#    over calls of the device tool, e.g. "build" then "tester gemm pdgemm"; the build stays on the
#    warm machine, and a fresh machine builds first):
#      build   bench/device/build.sh: tilekit with the cuda backend, libtilekit_blas among it
#      tester  scripts/scalapack.sh on 4 ranks (2 a GPU) with TILEKIT_BLAS_BACKEND=cuda and every
#              call on the GPU (TILEKIT_BLAS_GPU_MIN=0): the example and both PBLAS testers
#      gemm    tilekit's own DGEMM from device memory (tilekit run gemm --backend cuda --variant
#              optimized --dtype double) at 16384 and at the 2-GPU runs' local shapes, cuBLAS beside
#      pdgemm  PDGEMM, one rank a GPU (CUDA_VISIBLE_DEVICES from OMPI_COMM_WORLD_LOCAL_RANK):
#              1 GPU at N = 16384; 2 GPUs at N = 20643 (2^(1/3) x 16384: twice the work) and at
#              N = 23170 (sqrt(2) x 16384: twice the memory, 2.83 x the work), with the PBLAS panel
#              as wide as N (one BLAS call a rank); and at N = 8192 with ScaLAPACK's default panel
#              (32), which shows what per-call staging costs. Weak-scaling efficiency from rates:
#              (GFLOP/s on 2 GPUs / 2) / (GFLOP/s on 1 GPU).
#    Writes into $OUT (or ./scalapack-gpu-out): logs, scalapack-gpu.jsonl, summary.txt.
#    B=<dir> uses a tilekit build elsewhere instead of build-device/ (leave out "build");
#    BACKEND (default cuda: hip on AMD), N1 (the 1-GPU order, default 16384; the others follow from
#    it) and NGPU (default: nvidia-smi's count) change what runs, e.g. for a dry run on a CPU.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sp=$root/.device/scalapack
deps=$root/.device/deps/lib/x86_64-linux-gnu
multi=/usr/lib/x86_64-linux-gnu

pack() {
  local build=${1:?usage: scalapack_gpu.sh pack BUILD_DIR}
  [ -x "$build/tilekit_scalapack_gemm" ] && [ -f "$build/libtilekit_pblas_panel.so" ] || {
    echo "pack: $build has no tilekit_scalapack_gemm / libtilekit_pblas_panel.so (configure with MPI and ScaLAPACK)" >&2
    exit 2
  }
  [ -d "$deps" ] || { echo "pack: run bench/device/pack.sh first (it empties .device/)" >&2; exit 2; }
  rm -rf "$sp" && mkdir -p "$sp/lib" "$sp/testers"
  # The run step unpacks OpenBLAS from pack.sh's .xz; an unpacked copy left by a local run would
  # take 36 MB of the carry.
  [ -f "$deps/libopenblas.so.0.xz" ] && rm -f "$deps/libopenblas.so.0"
  cp "$build/tilekit_scalapack_gemm" "$build/libtilekit_pblas_panel.so" "$sp/"
  cp -L $multi/libscalapack-openmpi.so.2.2 "$sp/lib/"
  local t=$multi/scalapack/openmpi-tests/PBLAS
  cp $t/dpb3tst $t/spb3tst "$sp/testers/"
  # Debian's OpenMPI, laid out under usr/ as installed, for OPAL_PREFIX to relocate. Plugins for
  # fabrics a single host does not use (and whose libraries the device lacks) are left out.
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/usr/bin" "$stage/usr/lib/x86_64-linux-gnu/openmpi/lib" "$stage/usr/share"
  cp /usr/bin/orterun /usr/bin/orted "$stage/usr/bin/"
  ln -s orterun "$stage/usr/bin/mpirun"
  cp -P $multi/libmpi.so.40* $multi/libopen-rte.so.40* $multi/libopen-pal.so.40* $multi/libmca_common_sm.so.40* \
        $multi/libmca_common_ompio.so.41* $multi/libmca_common_monitoring.so.50* $multi/libhwloc.so.15* \
        $multi/libevent_core-2.1.so.7* $multi/libevent_pthreads-2.1.so.7* $multi/libnuma.so.1* \
        "$stage/usr/lib/x86_64-linux-gnu/"
  cp -r $multi/openmpi/lib/openmpi3 "$stage/usr/lib/x86_64-linux-gnu/openmpi/lib/"
  (cd "$stage/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3" &&
     rm -f *ucx* *ofi* *psm* *openib* *usnic* *verbs* *oshmem* *spml* *sshmem* *scoll* *atomic_* *_java*)
  mkdir -p "$stage/usr/lib/x86_64-linux-gnu/pmix2"
  cp -rP $multi/pmix2/lib $multi/pmix2/share "$stage/usr/lib/x86_64-linux-gnu/pmix2/"
  rm -f "$stage"/usr/lib/x86_64-linux-gnu/pmix2/lib/*.a
  cp -r /usr/share/openmpi "$stage/usr/share/"
  tar -C "$stage" -cf - usr | xz -T2 -6 >"$sp/openmpi-debian.tar.xz"
  rm -rf "$stage"
  {
    echo "Carried into .device/scalapack by bench/device/scalapack_gpu.sh pack (Debian 12 amd64):"
    dpkg-query -W -f='  ${Package} ${Version}\n' libscalapack-openmpi2.2 scalapack-mpi-test libopenmpi3 openmpi-bin \
      libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libnuma1 libpmix2 libgfortran5 libopenblas0-pthread
    echo "Files:"
    (cd "$sp" && find . -type f ! -name CARRIED.txt -printf '  %p %s bytes\n' | sort)
    echo "openmpi-debian.tar.xz holds:"
    tar -tJf "$sp/openmpi-debian.tar.xz" | grep -v '/$' | sed 's/^/  /'
  } >"$sp/CARRIED.txt"
  du -sh "$sp" "$root/.device"
}

if [ "${1:-}" = pack ]; then
  pack "${2:-}"
  exit
fi
if [ "${1:-}" != run ]; then
  echo "usage: scalapack_gpu.sh pack BUILD_DIR   (here)  |  scalapack_gpu.sh run [STAGES]   (on the device)" >&2
  exit 2
fi
shift
[ -x "$sp/tilekit_scalapack_gemm" ] || { echo "run: no .device/scalapack (pack it here and carry .device)" >&2; exit 2; }
out=${OUT:-scalapack-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stages=${*:-build tester gemm pdgemm}
has() { [[ " $stages " == *" $1 "* ]]; }
B=${B:-$root/build-device}
if ! has build && [ ! -f "$B/libtilekit_blas.so" ] && [ "$B" = "$root/build-device" ]; then stages="build $stages"; fi
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mca_base_component_show_load_errors=0
# No NVLink multicast anywhere on these machines (nothing here uses NCCL; kept for any child).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# Libraries: Debian's ScaLAPACK, with OpenBLAS (pack.sh's) as the libblas.so.3/liblapack.so.3 it
# names, and the Fortran runtime.
if [ -f "$deps/libopenblas.so.0.xz" ] && [ ! -f "$deps/libopenblas.so.0" ]; then
  xz -dc "$deps/libopenblas.so.0.xz" >"$deps/libopenblas.so.0"
fi
ln -sf "$deps/libopenblas.so.0" "$sp/lib/libblas.so.3"
ln -sf "$deps/libopenblas.so.0" "$sp/lib/liblapack.so.3"
export LD_LIBRARY_PATH=$sp/lib:$deps:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "git commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || cat "$root/.device/commit" 2>/dev/null)" | tee "$out/commit.txt"
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | tee "$out/gpus.txt"
ngpu=${NGPU:-$(grep -c . "$out/gpus.txt")}
backend=${BACKEND:-cuda}
n1=${N1:-16384}
n_work=$(python3 -c "print(round($n1 * 2 ** (1 / 3)))")   # twice the work of n1 (16384: 20643)
n_mem=$(python3 -c "print(round($n1 * 2 ** 0.5))")        # twice the memory (16384: 23170)
nvidia-smi topo -m >"$out/topo.txt" 2>&1

if has build; then
  start=$(date +%s)
  bash "$root/bench/device/build.sh" >"$out/build.log" 2>&1 || { echo "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30; }
  echo "build: $(($(date +%s) - start)) s"
fi
blas=$B/libtilekit_blas.so
[ -f "$blas" ] || { echo "no $blas: build first (the blas branch must be in this tree)"; exit 1; }
prog=$sp/tilekit_scalapack_gemm
panel=$sp/libtilekit_pblas_panel.so

# MPI: the device's own mpirun if it runs Debian's ScaLAPACK, else Debian's OpenMPI, carried.
smoke() {  # 2 ranks, messages past the shared-memory transport's eager size
  timeout 120 mpirun --oversubscribe -np 2 "$prog" --n 96 --nb 8 --grid 1x2 --reps 1 >"$out/mpi-smoke.log" 2>&1 &&
    grep -q '"verified": true' "$out/mpi-smoke.log"
}
mpi_works() {
  unset OMPI_MCA_btl_vader_single_copy_mechanism
  smoke && return 0
  # Single copies between ranks go through process_vm_readv (CMA), which some sandboxes refuse;
  # without them every message is copied twice through shared memory, slower but working.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  smoke
}
mpi=none
if command -v mpirun >/dev/null && mpi_works; then
  mpi="the device's ($(mpirun --version 2>&1 | head -n 1))"
else
  echo "the device's mpirun: $(command -v mpirun || echo none); $(tail -n 3 "$out/mpi-smoke.log" 2>/dev/null | tr '\n' ' ')"
  ompi=/tmp/tilekit-openmpi
  rm -rf "$ompi" && mkdir -p "$ompi" && tar -C "$ompi" -xJf "$sp/openmpi-debian.tar.xz"
  # OpenMPI relocates to OPAL_PREFIX; PMIx is told where its plugins are.
  export OPAL_PREFIX=$ompi/usr PMIX_MCA_mca_base_component_path=$ompi/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
  export PATH=$ompi/usr/bin:$PATH
  export LD_LIBRARY_PATH=$ompi/usr/lib/x86_64-linux-gnu:$ompi/usr/lib/x86_64-linux-gnu/openmpi/lib:$ompi/usr/lib/x86_64-linux-gnu/pmix2/lib:$LD_LIBRARY_PATH
  if mpi_works; then mpi="Debian's OpenMPI 4.1.4, carried"; else
    echo "neither MPI runs the example:"; cat "$out/mpi-smoke.log"; exit 1
  fi
fi
echo "MPI: $mpi${OMPI_MCA_btl_vader_single_copy_mechanism:+ (no single copies between ranks)}" | tee "$out/mpi.txt"

if has tester; then
  # 4 ranks on this machine's GPUs (2 a GPU on a 2-GPU machine: proves the path, not a timing).
  TILEKIT_BLAS_BACKEND=$backend TILEKIT_BLAS_GPU_MIN=0 SCALAPACK_TESTERS=$sp/testers \
    bash "$root/scripts/scalapack.sh" "$sp" "$blas" >"$out/tester.log" 2>&1
  echo "tester ($backend, every call on the GPU): exit $?"
  grep -E "ok |FAIL|all checks|check\(s\)" "$out/tester.log"
  cp -r "$sp/scalapack-logs" "$out/tester-logs" 2>/dev/null
fi

if has gemm; then
  for shape in "--size $n1" "--m $n_work --n $((n_work / 2)) --k $n_work" "--m $n_mem --n $((n_mem / 2)) --k $n_mem"; do
    for how in "--variant optimized" "--peer"; do
      # shellcheck disable=SC2086
      line=$("$B/tilekit" run gemm --backend "$backend" $how --dtype double $shape --reps 5 --json 2>>"$out/gemm.log")
      echo "$line" >>"$out/gemm.jsonl"
      python3 - "$line" <<'EOF' || echo "gemm $shape $how: no result ($line)"
import json, sys
r = json.loads(sys.argv[1])
who = "the peer (cuBLAS)" if r["peer"] else "tilekit " + r["variant"]
print(f"device-memory dgemm {r['m']}x{r['n']}x{r['k']} {who}: {r['gflops'] / 1e3:.2f} TFLOP/s, verified {r['verified']}")
EOF
    done
  done | tee "$out/gemm.txt"
fi

if has pdgemm; then
  # One rank a GPU: the rank's local rank picks its GPU.
  pdgemm() {  # tag ranks grid n panel reps
    local tag=$1 np=$2 grid=$3 n=$4 width=$5 reps=$6 pre=$blas
    local env=(-x "TILEKIT_BLAS_BACKEND=$backend" -x TILEKIT_BLAS_VERBOSE=2 -x "OMP_NUM_THREADS=${OMP_THREADS:-8}")
    if [ "$width" != default ]; then pre=$blas:$panel; env+=(-x "TILEKIT_PBLAS_PANEL=$width"); fi
    timeout 540 mpirun -np "$np" --oversubscribe --bind-to none --tag-output "${env[@]}" -x "LD_PRELOAD=$pre" \
      bash -c 'export CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK; exec "$0" "$@"' \
      "$prog" --n "$n" --nb 256 --grid "$grid" --reps "$reps" --verify sample >"$out/pdgemm-$tag.log" 2>&1
    echo "pdgemm $tag: exit $?"
    python3 - "$out/pdgemm-$tag.log" "$tag" "$width" "$reps" >>"$out/scalapack-gpu.jsonl" <<'EOF'
import json, re, sys, statistics
log, tag, width, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
run, calls = None, {}
for line in open(log, errors="replace"):
    m = re.match(r"\[\d+,(\d+)\]<(stdout|stderr)>:(.*)", line.rstrip("\n"))
    if not m:
        continue
    rank, text = int(m.group(1)), m.group(3)
    if text.startswith("{"):
        run = json.loads(text)
    c = re.match(r"tilekit-blas: [sd]gemm_ .* on (\w+): ([0-9.]+) ms", text)
    if c:
        calls.setdefault(rank, []).append(float(c.group(2)) / 1e3)
if run is None:
    print(json.dumps({"tag": tag, "error": "no result"}))
    sys.exit()
# Each rank's BLAS seconds a PDGEMM: its calls split evenly over the untimed call and the timed ones;
# the timed ones' median.
blas = {}
for rank, cs in calls.items():
    per = len(cs) // (reps + 1) or 1
    sums = [sum(cs[i * per:(i + 1) * per]) for i in range(1, reps + 1)] or [sum(cs)]
    blas[rank] = statistics.median(sums)
run.update(tag=tag, panel=width, blas_calls_per_rank=max((len(c) for c in calls.values()), default=0) // (reps + 1),
           blas_seconds_max=max(blas.values(), default=None), blas_seconds_min=min(blas.values(), default=None))
print(json.dumps(run))
EOF
    tail -n 1 "$out/scalapack-gpu.jsonl"
  }
  pdgemm 1gpu 1 1x1 "$n1" default 3
  if [ "$ngpu" -ge 2 ]; then
    pdgemm 2gpu-work-1x2 2 1x2 "$n_work" "$n_work" 3
    pdgemm 2gpu-work-2x1 2 2x1 "$n_work" "$n_work" 3
    pdgemm 2gpu-memory-1x2 2 1x2 "$n_mem" "$n_mem" 3
    pdgemm 2gpu-half-panel32 2 1x2 $((n1 / 2)) default 1
  else
    echo "fewer than 2 GPUs here: 2 ranks on one prove the path (not a scaling figure)"
    pdgemm 2rank-1gpu 2 1x2 "$n1" "$n1" 1
  fi
  python3 - "$out/scalapack-gpu.jsonl" "$out/gemm.jsonl" "$n1" <<'EOF' | tee "$out/summary.txt"
import json, os, sys
runs = {r["tag"]: r for r in map(json.loads, open(sys.argv[1])) if "tag" in r and "error" not in r}
dev = {}
if os.path.exists(sys.argv[2]):
    for line in open(sys.argv[2]):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        dev[(r["m"], r["n"], r["k"], r["peer"])] = r["gflops"]
n1 = int(sys.argv[3])
one = runs.get("1gpu")
d1 = dev.get((n1, n1, n1, False))
print(f"{'run':<22} {'N':>6} {'grid':>5} {'s':>8} {'TFLOP/s':>8} {'BLAS s':>8} {'MPI+pack s':>10} {'verified':>8}")
for tag, r in runs.items():
    b = r.get("blas_seconds_max") or 0
    print(f"{tag:<22} {r['n']:>6} {r['p']}x{r['q']:<3} {r['seconds']:>8.3f} {r['gflops']/1e3:>8.2f} {b:>8.3f} "
          f"{r['seconds'] - b:>10.3f} {str(r['verified']):>8}")
if one and d1:
    dev_s = 2 * n1**3 / (d1 * 1e9)
    print(f"1 GPU: PDGEMM reaches {one['gflops'] / d1:.2f} of tilekit's device-memory DGEMM at {n1} "
          f"({d1/1e3:.2f} TFLOP/s); host staging {one['blas_seconds_max'] - dev_s:.3f} s of {one['seconds']:.3f} s")
for tag in ("2gpu-work-1x2", "2gpu-work-2x1", "2gpu-memory-1x2"):
    if one and tag in runs:
        r = runs[tag]
        print(f"weak scaling {tag}: {r['gflops'] / 2 / one['gflops']:.3f} (rate per GPU vs 1 GPU); "
              f"time ratio {one['seconds'] / r['seconds']:.3f} at {r['n']**3 / n1**3:.2f}x the work")
EOF
fi
