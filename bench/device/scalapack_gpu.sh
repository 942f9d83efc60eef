#!/usr/bin/env bash
# PDGEMM on GPUs: ScaLAPACK over MPI, one rank per GPU, every rank's BLAS tilekit's on the cuda
# backend (docs/scalapack.md): weak scaling from 1 to 2 GPUs, the fraction of the single-GPU
# device-memory DGEMM reached, and the host staging and MPI costs apart. Two steps:
#
# 1. HERE (Debian), with the example built (BUILD_DIR/tilekit_scalapack_gemm and
#    BUILD_DIR/libtilekit_pblas_panel.so: a tilekit build with MPI and ScaLAPACK found, or the
#    example alone, cmake -S examples/scalapack -B build-scalapack):
#      bash bench/device/pack.sh                          # empties .device/, carries the build deps
#      bash bench/device/scalapack_gpu.sh pack BUILD_DIR  # then adds .device/scalapack/
#    .device/ is git-ignored; it travels to the device as a carried path. What this step adds
#    (Debian 12 builds, because the device has no ScaLAPACK and no package registry):
#      .device/scalapack/tilekit_scalapack_gemm     the example (needs libscalapack, libmpi.so.40)
#      .device/scalapack/libtilekit_pblas_panel.so  the PBLAS panel width (TILEKIT_PBLAS_PANEL)
#      .device/scalapack/lib/libscalapack-openmpi.so.2.2   Debian's ScaLAPACK 2.2.1 for OpenMPI; it
#          needs liblapack.so.3, libblas.so.3 (made there as links to pack.sh's libopenblas.so.0),
#          libgfortran.so.5 (pack.sh carries it) and libmpi.so.40 (the device's OpenMPI, or below)
#      .device/scalapack/testers/{dpb3tst,spb3tst}  ScaLAPACK's PBLAS testers (scalapack-mpi-test)
#      .device/scalapack/openmpi-debian.tar.xz      Debian's OpenMPI 4.1.4 runtime (orterun, orted,
#          libmpi/libopen-rte/libopen-pal .so.40, its MCA plugins and help files, libhwloc15,
#          libevent 2.1, libnuma1, PMIx 2): used only when the device's own mpirun cannot run
#          the example with Debian's ScaLAPACK
#      .device/scalapack/CARRIED.txt                the list, with Debian package versions
#
# 2. ON THE DEVICE (nvidia-h100-x2 / nvidia-h200-x2; on one GPU it still runs, 2 ranks sharing
#    it, and says so), from the repository root, with ".device" carried and tilekit built with the
#    cuda backend in build-device/ (bash bench/device/build.sh; the run builds it first if missing):
#      bash bench/device/scalapack_gpu.sh run [STAGES]
#    stages (default "gemm pdgemm": about 4 minutes on a warm machine with build-device/ built):
#      build   bench/device/build.sh
#      gemm    tilekit's DGEMM from device memory (tilekit run gemm --backend cuda --variant
#              optimized --dtype double) at N1^3 and at each 2-GPU rank's local product, cuBLAS
#              beside it at N1^3; and tilekit_blas_bench: dgemm_ on host memory through the BLAS
#              against tilekit's gemm on device memory, N1^3, in one process
#      pdgemm  PDGEMM, one rank a GPU (CUDA_VISIBLE_DEVICES from OMPI_COMM_WORLD_LOCAL_RANK, and
#              TILEKIT_BLAS_DEVICES=0 where the build has that setting, so a rank's BLAS uses its
#              own GPU alone), NB = 256, PBLAS panels "max" (libtilekit_pblas_panel: as wide as K
#              within ScaLAPACK's 32-bit workspace limit): 1 GPU at N1 = 16384; 2 GPUs at
#              N2 = 16384 * 2^(1/3) rounded to NB (20736: 2.03 x the work) on a 1x2 and a 2x1
#              grid; and 2 GPUs at N1 / 2 with ScaLAPACK's own 32-wide panels, every call on the
#              GPU, which shows what per-call staging costs. These run with glibc keeping freed
#              memory (GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=64 GiB):
#              PBLAS allocates its panel workspaces, gigabytes at wide panels, in every PDGEMM, and
#              pages given back to the kernel fault in afresh each time. The 1 GPU and 2 GPU 1x2
#              runs again with the default allocator ("-mmap") show what that is worth.
#      tester  scripts/scalapack.sh on 4 ranks (2 a GPU) with TILEKIT_BLAS_BACKEND=cuda and every
#              call on the GPU (TILEKIT_BLAS_GPU_MIN=0): the example and both PBLAS testers
#              (about 2 more minutes)
#    Every PDGEMM is verified (64 sampled rows and columns of C, exact reference). Weak-scaling
#    efficiency = t(1 GPU, N1) / t(2 GPUs, N2) x W2 / (2 W1), W = N^3 (the rounding of N2 makes
#    the work 2.03x, not 2x; the plain time ratio is printed too). Each rank's BLAS time is the sum
#    of its per-call times (TILEKIT_BLAS_VERBOSE=2); host staging = BLAS time - the same product's
#    time from device memory; MPI and ScaLAPACK's packing = PDGEMM time - BLAS time.
#    Output: RESULT {json} lines on stdout (also written, without the prefix, to $BENCH_ROWS when
#    set, for bench/run.py's rows = "file"), and in $OUT (or ./scalapack-gpu-out): logs,
#    results.jsonl, summary.txt. Exit status: 0 when every run ran and verified, 1 otherwise
#    (the targets, weak scaling >= 0.90, are reported, not enforced).
#    B=<dir> uses a tilekit build elsewhere instead of build-device/ (leave out "build");
#    BACKEND (default cuda), N1 (default 16384; N2 follows), NB (default 256), NGPU (default:
#    nvidia-smi's count) and THREADS (host threads a rank, default cores / ranks) change what runs,
#    e.g. for a dry run on a CPU: NGPU=2 BACKEND=openmp N1=2048 B=build ... run pdgemm
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
stages=${*:-gemm pdgemm}
has() { [[ " $stages " == *" $1 "* ]]; }
B=${B:-$root/build-device}
if ! has build && [ ! -f "$B/libtilekit_blas.so" ] && [ "$B" = "$root/build-device" ]; then stages="build $stages"; fi
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mca_base_component_show_load_errors=0
# No NVLink multicast anywhere on these machines (nothing here uses NCCL; kept for any child).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
rows=$out/results.jsonl
: >"$rows"
emit() {  # a JSON object: a RESULT line, results.jsonl, and $BENCH_ROWS for bench/run.py
  echo "RESULT $1"
  echo "$1" >>"$rows"
  [ -n "${BENCH_ROWS:-}" ] && echo "$1" >>"$BENCH_ROWS"
  return 0
}

# Libraries: Debian's ScaLAPACK, with OpenBLAS (pack.sh's) as the libblas.so.3/liblapack.so.3 it
# names, and the Fortran runtime.
if [ -f "$deps/libopenblas.so.0.xz" ] && [ ! -f "$deps/libopenblas.so.0" ]; then
  xz -dc "$deps/libopenblas.so.0.xz" >"$deps/libopenblas.so.0"
fi
ln -sf "$deps/libopenblas.so.0" "$sp/lib/libblas.so.3"
ln -sf "$deps/libopenblas.so.0" "$sp/lib/liblapack.so.3"
export LD_LIBRARY_PATH=$sp/lib:$deps:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || cat "$root/.device/commit" 2>/dev/null)
echo "git commit: $commit" | tee "$out/commit.txt"
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | tee "$out/gpus.txt"
backend=${BACKEND:-cuda}
ngpu=${NGPU:-$(grep -c . "$out/gpus.txt")}
if [ "$ngpu" -lt 1 ]; then
  case $backend in cuda | hip) echo "no GPU here (nvidia-smi lists none): NGPU=... for a dry run on a CPU backend"; exit 1 ;; esac
  ngpu=1
fi
gpu_name=$(head -n 1 "$out/gpus.txt" | cut -d, -f2 | sed 's/^ *//')
gpu_name=${gpu_name:-$backend on $(nproc) cores}
nb=${NB:-256}
n1=${N1:-16384}
n2=$(python3 -c "print(round($n1 * 2 ** (1 / 3) / $nb) * $nb)")   # twice the work, whole blocks (16384: 20736)
threads=${THREADS:-$(($(nproc) / 2))}   # host threads a rank, as when 2 ranks share the host
[ "$threads" -ge 1 ] || threads=1
nvidia-smi topo -m >"$out/topo.txt" 2>&1
echo "N1 = $n1, N2 = $n2, NB = $nb, $ngpu GPU(s), $threads host threads a rank, backend $backend" | tee "$out/setup.txt"

if has build; then
  start=$(date +%s)
  bash "$root/bench/device/build.sh" >"$out/build.log" 2>&1 || { echo "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
  echo "build: $(($(date +%s) - start)) s"
fi
blas=$B/libtilekit_blas.so
[ -f "$blas" ] || { echo "no $blas: build first (bash bench/device/build.sh)"; exit 1; }
prog=$sp/tilekit_scalapack_gemm
panel=$sp/libtilekit_pblas_panel.so
# A rank's BLAS on its own GPU alone: CUDA_VISIBLE_DEVICES shows it one, and where libtilekit_blas
# can spread a call over several GPUs (blas.devices), it is told to use that one.
devices_env=()
"$B/tilekit" tunings 2>/dev/null | grep -q 'blas\.devices' && devices_env=(-x TILEKIT_BLAS_DEVICES=0)

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
single_copy=yes
[ -n "${OMPI_MCA_btl_vader_single_copy_mechanism:-}" ] && single_copy=no
echo "MPI: $mpi (single copies between ranks: $single_copy)" | tee "$out/mpi.txt"

# The local products of the 2-GPU runs: rank 0's share of C (the larger, when the blocks do not
# split evenly) times K.
read -r loc_big loc_small <<<"$(python3 -c "
b = -(-$n2 // $nb); print(-(-b // 2) * $nb, min($n2, b // 2 * $nb))")"

if has tester; then
  # 4 ranks on this machine's GPUs (2 a GPU on a 2-GPU machine: proves the path, not a timing).
  TILEKIT_BLAS_BACKEND=$backend TILEKIT_BLAS_GPU_MIN=0 SCALAPACK_TESTERS=$sp/testers \
    bash "$root/scripts/scalapack.sh" "$sp" "$blas" >"$out/tester.log" 2>&1
  rc=$?
  echo "tester ($backend, every call on the GPU): exit $rc"
  grep -E "ok |FAIL|all checks|check\(s\)" "$out/tester.log"
  cp -r "$sp/scalapack-logs" "$out/tester-logs" 2>/dev/null
  [ $rc -eq 0 ] || fail "scripts/scalapack.sh on $backend: exit $rc (log: $out/tester.log)"
fi

if has gemm; then
  # tilekit's DGEMM on device memory: N1^3, and the local products of the 2-GPU grids.
  for spec in "1gpu $n1 $n1 $n1 optimized" "1gpu-peer $n1 $n1 $n1 peer" "local-1x2 $n2 $loc_big $n2 optimized" \
              "local-2x1 $loc_big $n2 $n2 optimized"; do
    read -r tag m n k how <<<"$spec"
    how_args=(--variant optimized)
    [ "$how" = peer ] && how_args=(--peer)
    line=$(timeout 240 "$B/tilekit" run gemm --backend "$backend" "${how_args[@]}" --dtype double --m "$m" --n "$n" --k "$k" \
      --reps 5 --json 2>>"$out/gemm.log")
    if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["verified"] is not False' "$line" 2>/dev/null; then
      emit "$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["tag"]="device-memory-"+sys.argv[2]; print(json.dumps(r))' "$line" "$tag")"
      echo "$line" >>"$out/gemm.jsonl"
    else
      fail "device-memory dgemm $m x $n x $k ($how): ${line:-no result} (log: $out/gemm.log)"
      tail -n 5 "$out/gemm.log"
    fi
  done
  # dgemm_ from host memory through the BLAS against tilekit's gemm from device memory, one process.
  if [ -x "$B/tilekit_blas_bench" ]; then
    timeout 240 "$B/tilekit_blas_bench" --backend "$backend" --dtype double --size "$n1" --reps 3 >"$out/blas-bench.log" 2>&1
    sed 's/^RESULT /  tilekit_blas_bench: /' "$out/blas-bench.log"
    r=$(grep -m1 '^RESULT blas_vs_tilekit' "$out/blas-bench.log")
    if [ -n "$r" ]; then
      emit "$(python3 - "$r" "$gpu_name" <<'PY'
import json, sys
kv = dict(x.split("=", 1) for x in sys.argv[1].split()[2:])
n = int(kv["n"]); blas = float(kv["blas_heap_s"]); dev = float(kv["tilekit_s"])
print(json.dumps({"op": "dgemm_host_vs_device", "backend": kv["backend"], "dtype": "double", "m": n, "n": n, "k": n,
                  "device": sys.argv[2], "blas_host_seconds": blas, "device_seconds": dev, "staging_seconds": blas - dev,
                  "fraction": dev / blas, "gflops": 2 * n**3 / blas / 1e9,
                  "what": "dgemm_ on heap memory through libtilekit_blas vs tilekit::gemm on device memory, one process"}))
PY
)"
    else
      fail "tilekit_blas_bench printed no result (log: $out/blas-bench.log)"
    fi
  fi
fi

if has pdgemm; then
  pdgemm() {  # tag ranks grid n panel reps [VAR=value for the ranks...]
    local tag=$1 np=$2 grid=$3 n=$4 width=$5 reps=$6 log=$out/pdgemm-$1.log
    shift 6
    local env=(-x "TILEKIT_BLAS_BACKEND=$backend" -x TILEKIT_BLAS_VERBOSE=2 -x "OMP_NUM_THREADS=$threads"
               -x "OPENBLAS_NUM_THREADS=$threads" -x "LD_PRELOAD=$blas:$panel" -x "TILEKIT_PBLAS_PANEL=$width"
               -x "TK_NGPU=$ngpu" "${devices_env[@]}")
    local e
    for e in "$@"; do env+=(-x "$e"); done
    # PBLAS allocates its panel workspaces (gigabytes at wide panels) in every PDGEMM and frees them;
    # glibc gives such blocks back to the kernel, so each PDGEMM faults them in afresh. "keep": glibc
    # told to keep them (its tunables; docs/scalapack.md); "default": as a program runs by default.
    [ "$malloc_mode" = keep ] && env+=(-x "GLIBC_TUNABLES=$keep_pages")
    local start=$SECONDS
    timeout 300 mpirun -np "$np" --oversubscribe --bind-to none --tag-output "${env[@]}" \
      bash -c 'export CUDA_VISIBLE_DEVICES=$((OMPI_COMM_WORLD_LOCAL_RANK % TK_NGPU)); exec "$0" "$@"' \
      "$prog" --n "$n" --nb "$nb" --grid "$grid" --reps "$reps" --verify sample >"$log" 2>&1
    local rc=$?
    local row
    row=$(python3 - "$log" "$tag" "$width" "$reps" "$np" "$ngpu" "$backend" "$gpu_name" "$rc" "$single_copy" "$malloc_mode" <<'PY'
import json, re, sys, statistics
log, tag, width, reps, np_, ngpu, backend, gpu, rc, single, malloc = sys.argv[1:12]
reps, np_, ngpu = int(reps), int(np_), int(ngpu)
run, calls, where, ks = None, {}, {}, []
for line in open(log, errors="replace"):
    m = re.match(r"\[\d+,(\d+)\]<(stdout|stderr)>:(.*)", line.rstrip("\n"))
    if not m:
        continue
    rank, text = int(m.group(1)), m.group(3)
    if text.startswith("{"):
        run = json.loads(text)
    c = re.match(r"tilekit-blas: [sd]gemm_? .*?k=(\d+).* on (\S+?): ([0-9.]+) ms", text)
    if c:
        calls.setdefault(rank, []).append(float(c.group(3)) / 1e3)
        where[c.group(2)] = where.get(c.group(2), 0) + 1
        ks.append(int(c.group(1)))
if run is None:
    print(json.dumps({"op": "pdgemm", "tag": tag, "error": f"no result (exit {rc})"}))
    sys.exit()
# A rank makes the same calls in every PDGEMM: its calls split evenly over the untimed one and
# the timed ones; the BLAS seconds of a PDGEMM are the median over the timed ones' sums.
blas = {}
for rank, cs in calls.items():
    per = max(1, len(cs) // (reps + 1))
    sums = [sum(cs[i * per:(i + 1) * per]) for i in range(1, reps + 1)] or [sum(cs)]
    blas[rank] = statistics.median(sums)
gpus_used = min(np_, ngpu)
bmax = max(blas.values(), default=None)
row = {"op": "pdgemm", "tag": tag, "backend": backend, "dtype": run["dtype"], "m": run["m"], "n": run["n"],
       "k": run["k"], "nb": run["nb"], "grid": f"{run['p']}x{run['q']}", "ranks": run["ranks"], "gpus": gpus_used,
       "ranks_per_gpu": np_ // gpus_used, "device": gpu, "panel": width, "panel_used": max(ks, default=None),
       "reps": run["reps"], "seconds": run["seconds"], "min_seconds": run["seconds_min"], "gflops": run["gflops"],
       "verified": run["verified"], "rel_error": run["rel_error"], "check": run["check"],
       "blas_calls_per_rank": max((len(c) for c in calls.values()), default=0) // (reps + 1),
       "blas_calls_on": where, "blas_seconds": bmax, "blas_seconds_min": min(blas.values(), default=None),
       "mpi_pack_seconds": None if bmax is None else run["seconds"] - bmax, "mpi_single_copy": single == "yes",
       "malloc": malloc}
if np_ > ngpu:
    row["note"] = f"{np_} ranks on {ngpu} GPU(s): {np_ // ngpu} ranks share a GPU; proves the path, not a scaling figure"
print(json.dumps(row))
PY
)
    emit "$row"
    echo "  pdgemm $tag: exit $rc, $((SECONDS - start)) s wall (log: $log)"
    if [ $rc -ne 0 ] || ! grep -q '"verified": true' <<<"$row"; then
      fail "pdgemm $tag: exit $rc, $(grep -aE 'scalapack_gemm:|tilekit-blas: [^dsn0-9]|tilekit-pblas|Segmentation|signal|MPI_ABORT' "$log" | head -n 3 | tr '\n' ' ')"
    fi
  }
  keep_pages=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736
  malloc_mode=keep
  pdgemm 1gpu 1 1x1 "$n1" max 3
  if [ "$ngpu" -ge 2 ]; then
    echo "2 GPUs: one rank each"
  else
    echo "one GPU here: the 2-rank runs put 2 ranks on it (proves the path; not a scaling figure)"
  fi
  pdgemm 2gpu-1x2 2 1x2 "$n2" max 3
  pdgemm 2gpu-2x1 2 2x1 "$n2" max 3
  # ScaLAPACK's own panels (32 wide), every call on the GPU: per-call staging.
  pdgemm 2gpu-panel32 2 1x2 $((n1 / 2)) 32 1 TILEKIT_BLAS_GPU_MIN=0
  # The same 1 -> 2 GPU pair with glibc's default allocator: what keeping the pages is worth.
  malloc_mode=default
  pdgemm 1gpu-mmap 1 1x1 "$n1" max 3
  pdgemm 2gpu-1x2-mmap 2 1x2 "$n2" max 3
fi

# The figures: weak scaling, the fraction of the device-memory DGEMM, staging and MPI apart.
python3 - "$rows" "$n1" "$n2" "$ngpu" "$gpu_name" >"$out/derived.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n1, n2, ngpu, gpu = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
pd = {r["tag"]: r for r in rows if r.get("op") == "pdgemm" and "error" not in r}
dev = {r["tag"]: r for r in rows if r.get("op") == "gemm"}
one = pd.get("1gpu")
d1 = dev.get("device-memory-1gpu")
pairs = [("1gpu", "2gpu-1x2", "1x2"), ("1gpu", "2gpu-2x1", "2x1"), ("1gpu-mmap", "2gpu-1x2-mmap", "1x2")]
out = []
if one and d1:
    dev_s = 2 * n1**3 / (d1["gflops"] * 1e9)
    out.append({"op": "pdgemm_vs_device_dgemm", "tag": "1gpu", "device": gpu, "dtype": "double", "m": n1, "n": n1, "k": n1,
                "pdgemm_gflops": one["gflops"], "device_gflops": d1["gflops"], "fraction": one["gflops"] / d1["gflops"],
                "pdgemm_seconds": one["seconds"], "blas_seconds": one["blas_seconds"], "device_seconds": dev_s,
                "staging_seconds": None if one["blas_seconds"] is None else one["blas_seconds"] - dev_s,
                "mpi_pack_seconds": one["mpi_pack_seconds"]})
for tag1, tag2, grid in pairs:
    one, r, local = pd.get(tag1), pd.get(tag2), "local-" + grid
    if not (one and r):
        continue
    w = (n2 / n1) ** 3 / 2  # the 2-GPU work per GPU over the 1-GPU work
    row = {"op": "pdgemm_weak_scaling", "tag": tag2, "device": gpu, "dtype": "double", "grid": grid, "malloc": r["malloc"],
           "n1": n1, "n2": n2, "gpus": r["gpus"], "ranks_per_gpu": r["ranks_per_gpu"],
           "seconds_1gpu": one["seconds"], "seconds_2gpu": r["seconds"], "time_ratio": one["seconds"] / r["seconds"],
           "work_ratio": 2 * w, "efficiency": one["seconds"] / r["seconds"] * w, "target": 0.9,
           "blas_seconds": r["blas_seconds"], "mpi_pack_seconds": r["mpi_pack_seconds"]}
    row["meets_target"] = row["efficiency"] >= 0.9 and r["gpus"] == 2
    dl = dev.get("device-memory-" + local)
    if dl:
        dev_s = 2 * dl["m"] * dl["n"] * dl["k"] / (dl["gflops"] * 1e9)
        row.update(local_device_seconds=dev_s,
                   staging_seconds=None if r["blas_seconds"] is None else r["blas_seconds"] - dev_s)
    if "note" in r:
        row["note"] = r["note"]
    out.append(row)
for o in out:
    print(json.dumps(o))
PY
while read -r line; do emit "$line"; done <"$out/derived.jsonl"

python3 - "$rows" <<'PY' | tee "$out/summary.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v, d=3: "-" if v is None else f"{v:.{d}f}"
print(f"{'run':<16} {'N':>6} {'grid':>5} {'GPUs':>4} {'panel':>6} {'calls':>5} {'malloc':>7} {'s':>7} {'TFLOP/s':>7} {'BLAS s':>7} {'MPI+pack s':>10} verified")
for r in rows:
    if r.get("op") == "pdgemm" and "error" not in r:
        print(f"{r['tag']:<16} {r['n']:>6} {r['grid']:>5} {r['gpus']:>4} {str(r['panel_used']):>6} {r['blas_calls_per_rank']:>5} {r['malloc']:>7} "
              f"{r['seconds']:>7.3f} {r['gflops'] / 1e3:>7.2f} {f(r['blas_seconds']):>7} {f(r['mpi_pack_seconds']):>10} {r['verified']}")
    elif r.get("op") == "pdgemm":
        print(f"{r['tag']:<16} {r['error']}")
for r in rows:
    if r.get("op") == "gemm":
        who = "cuBLAS" if r.get("peer") else "tilekit " + str(r.get("variant"))
        print(f"device-memory dgemm {r['m']}x{r['n']}x{r['k']} {who}: {r['gflops'] / 1e3:.2f} TFLOP/s")
    elif r.get("op") == "dgemm_host_vs_device":
        print(f"dgemm_ {r['m']}^3 from host memory through the BLAS: {r['blas_host_seconds']:.3f} s vs {r['device_seconds']:.3f} s "
              f"from device memory: {r['fraction']:.2f} of it (staging {r['staging_seconds']:.3f} s)")
    elif r.get("op") == "pdgemm_vs_device_dgemm":
        print(f"1 GPU: PDGEMM reaches {r['fraction']:.3f} of the device-memory DGEMM at {r['m']} ({r['device_gflops'] / 1e3:.2f} TFLOP/s); "
              f"BLAS {f(r['blas_seconds'])} s = device {r['device_seconds']:.3f} s + staging {f(r['staging_seconds'])} s; "
              f"MPI + packing {f(r['mpi_pack_seconds'])} s")
    elif r.get("op") == "pdgemm_weak_scaling":
        print(f"weak scaling {r['tag']} ({r['malloc']} malloc; {r['gpus']} GPU(s), {r['ranks_per_gpu']} rank(s) a GPU): efficiency {r['efficiency']:.3f} "
              f"(time ratio {r['time_ratio']:.3f} at {r['work_ratio']:.3f}x the work; target 0.90: "
              f"{'met' if r['meets_target'] else 'not met'}); staging {f(r.get('staging_seconds'))} s, "
              f"MPI + packing {f(r.get('mpi_pack_seconds'))} s of {r['seconds_2gpu']:.3f} s" + (f"; {r['note']}" if "note" in r else ""))
PY
if [ $failures -ne 0 ]; then
  echo "scalapack_gpu.sh: $failures failure(s) (output: $out)"
  exit 1
fi
echo "scalapack_gpu.sh: every run verified (output: $out)"
