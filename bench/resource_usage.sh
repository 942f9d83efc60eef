#!/usr/bin/env bash
# Regenerates bench/results/resource-usage.md: the resources every GPU kernel of
# backends/gpu/*.cu is compiled to, for both vendors side by side, and the occupancy that
# follows at the launch shape the backends' automatic tile choice uses.
#
#   NVIDIA sm_90 (H200)    nvcc -Xptxas -v: registers, spill stores/loads, static shared memory
#   AMD gfx90a (MI250X)    clang's -Rpass-analysis=kernel-resource-usage remarks (through hipcc):
#   AMD gfx940 (MI300)     VGPRs, AGPRs, SGPRs, scratch and spills, static LDS
#
# No GPU is needed: both compilers run here (CUDA 13 at /usr/local/cuda, Debian's ROCm 5.2
# hipcc). The kernels are compiled with the flags the backends build them with, against a
# configured build directory (for the generated tilekit/config.hpp the tile layer includes).
#
# Usage: bench/resource_usage.sh [output.md]
#   NVCC, HIPCC, CUDA_ARCH (90), AMD_ARCHS ("gfx90a gfx940") override the tools and targets;
#   BUILD (build/) names the build directory (any configuration: `cmake -S . -B build` suffices).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/bench/results/resource-usage.md}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
HIPCC=${HIPCC:-hipcc}
CUDA_ARCH=${CUDA_ARCH:-90}
AMD_ARCHS=${AMD_ARCHS:-gfx90a gfx940}
command -v "$NVCC" >/dev/null || { echo "resource_usage.sh: nvcc not found ($NVCC); set NVCC" >&2; exit 1; }
command -v "$HIPCC" >/dev/null || { echo "resource_usage.sh: hipcc not found ($HIPCC); set HIPCC" >&2; exit 1; }
command -v c++filt >/dev/null || { echo "resource_usage.sh: c++filt (binutils) is needed" >&2; exit 1; }
BUILD=${BUILD:-$root/build}
[[ -f $BUILD/include/tilekit/config.hpp ]] ||
  { echo "resource_usage.sh: no $BUILD/include/tilekit/config.hpp: configure first (cmake -S . -B build) or set BUILD" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
sources=(backends/gpu/gemm.cu backends/gpu/transpose.cu backends/gpu/conv2d.cu)
# The headers a kernel TU includes: tilekit's interface, backends/ (gpu/, common/gpu/) and the
# build's generated tilekit/config.hpp.
common=(-std=c++17 -O3 -DNDEBUG -Iinclude -I"$BUILD/include" -Ibackends)

# One compiler run per (source, target), two at a time: device code only, objects discarded.
# A failed run leaves <log>.failed behind; the script stops after all runs with their errors.
run() {  # run <log> <command...>: the command's stderr (where both compilers report) to <log>
  local log=$1; shift
  "$@" >/dev/null 2>"$log" || { echo "$*" >"$log.failed"; }
}
for src in "${sources[@]}"; do
  name=$(basename "$src" .cu)
  # --expt-relaxed-constexpr: as backends/cuda/CMakeLists.txt compiles them.
  run "$work/nv.$name.log" "$NVCC" "${common[@]}" -arch=sm_$CUDA_ARCH --expt-relaxed-constexpr -Xptxas -v -cubin \
    -o "$work/$name.cubin" "$src" &
  for arch in $AMD_ARCHS; do
    # The development machine has two cores: at most two compilers at a time.
    while (( $(jobs -rp | wc -l) >= 2 )); do wait -n || true; done
    run "$work/amd.$arch.$name.log" "$HIPCC" "${common[@]}" --offload-arch="$arch" --cuda-device-only \
      -Rpass-analysis=kernel-resource-usage -x hip -c "$src" -o "$work/$name.$arch.o" &
  done
  while (( $(jobs -rp | wc -l) >= 2 )); do wait -n || true; done
done
wait
failed=0
for f in "$work"/*.failed; do
  [[ -e $f ]] || continue
  failed=1
  echo "resource_usage.sh: failed: $(cat "$f")" >&2
  grep -m5 -E "error" "${f%.failed}" >&2 || tail -20 "${f%.failed}" >&2
done
(( failed == 0 )) || exit 1

nvcc_version=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -1)
hipcc_version=$("$HIPCC" --version 2>/dev/null | sed -n 's/^HIP version: *//p' | head -1)
clang_version=$("$HIPCC" --version 2>/dev/null | sed -n 's/.*clang version \([0-9.]*\).*/\1/p' | head -1)

python3 - "$work" "$out" "$CUDA_ARCH" "$nvcc_version" "$hipcc_version" "$clang_version" $AMD_ARCHS <<'PY'
import glob, math, os, re, subprocess, sys

work, out, cuda_arch, nvcc_v, hip_v, clang_v = sys.argv[1:7]
amd_archs = sys.argv[7:]

def demangle(names):
    if not names:
        return {}
    res = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return dict(zip(names, res.stdout.splitlines()))

def short(dem):
    # "void tilekit::gpu::gemm_tiled_kernel<float, 8>(tilekit::gpu::GemmParams<float>, int, int)"
    s = re.sub(r"^void ", "", dem)
    s = s.replace("tilekit::gpu::", "")
    depth = 0
    for i, ch in enumerate(s):  # cut the parameter list: the first '(' outside template brackets
        if ch == "<": depth += 1
        elif ch == ">": depth -= 1
        elif ch == "(" and depth == 0:
            return s[:i]
    return s

# ---- parse nvcc -Xptxas -v
nv = {}
for log in glob.glob(os.path.join(work, "nv.*.log")):
    cur = None
    for line in open(log):
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = m.group(1); nv[cur] = {"regs": 0, "spill_st": 0, "spill_ld": 0, "smem": 0, "stack": 0}; continue
        if cur is None: continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            nv[cur].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            nv[cur]["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            nv[cur]["smem"] = int(s.group(1)) if s else 0

# ---- parse clang's kernel-resource-usage remarks, per AMD target
amd = {a: {} for a in amd_archs}
keys = {"SGPRs": "sgpr", "VGPRs": "vgpr", "AGPRs": "agpr", "ScratchSize [bytes/lane]": "scratch",
        "Occupancy [waves/SIMD]": "occ", "SGPRs Spill": "sgpr_spill", "VGPRs Spill": "vgpr_spill",
        "LDS Size [bytes/block]": "lds"}
for a in amd_archs:
    for log in glob.glob(os.path.join(work, f"amd.{a}.*.log")):
        cur = None
        for line in open(log):
            m = re.search(r"remark: Function Name: (\S+)", line)
            if m:
                cur = m.group(1); amd[a][cur] = {}; continue
            m = re.search(r"remark:\s+(.+?): (\d+) \[-Rpass-analysis", line)
            if m and cur and m.group(1) in keys:
                amd[a][cur][keys[m.group(1)]] = int(m.group(2))

names = sorted(set(nv) | set().union(*[set(amd[a]) for a in amd_archs]))
dem = demangle(names)

# ---- the launch each kernel gets from the automatic tile choice (backends/gpu/tile_choice.cpp):
# threads per block and dynamic shared memory in bytes. Kernels whose tile is a template
# argument carry their shape (the tiled gemm's square width too); the others get the automatic
# plan's tile (transpose tiled 32x32 on a 32x8 block; conv2d tiled the largest square tile up
# to 64x64 whose window fits 48 KiB, on 256 threads; optimized 32x128, a thread per vector x 8 rows; for run-time R
# the largest, 31), the any-shape tiled gemm an explicit 32x32x32.
def launch(k):
    e = 8 if "<double" in k else 4
    m = re.match(r"(\w+)<(.*)>$", k)
    fam, args = m.group(1), [x.strip() for x in m.group(2).split(",")]
    if fam.endswith("naive_kernel"):
        return 256, 0, "256"
    if fam == "gemm_tiled_kernel":  # square kTile x kTile x kTile, static shared arrays
        w = int(args[1])
        return w * w, 0, f"{w}x{w}x{w}"
    if fam == "gemm_tiled_any_kernel":  # explicit tiles only; shown for 32x32x32
        return 1024, 2 * 32 * 32 * e, "32x32x32 (explicit)"
    if fam == "gemm_optimized_kernel":
        bm, bn, bk, tm, tn = map(int, args[1:6])
        return (bm // tm) * (bn // tn), 0, f"{bm}x{bn}x{bk}, {tm}x{tn} per thread"
    if fam == "transpose_tiled_kernel":
        return 256, 32 * 32 * e, "32x32 tile"
    if fam == "transpose_optimized_kernel":
        return 256, 0, f"{args[1]}x{args[2]} tile"
    if fam == "conv2d_tiled_kernel":  # the largest square tile whose window fits 48 KiB
        r = int(args[1]) or 31
        t = 64
        while t > 8 and (t + r - 1) ** 2 * e > 48 * 1024: t //= 2
        rows = int(re.sub(r"\D", "", args[3])) if len(args) > 3 else 8
        by = max(1, min(t, 256 // t))
        if int(args[1]) and t % rows == 0: by = min(by, t // rows)
        vec = len(args) > 5 and args[5].startswith("true")  # rows padded to whole 16-byte vectors
        w = 16 // e
        sw = t + 2 * ((r // 2 + w - 1) // w * w) if vec else t + r - 1
        return t * by, (t + r - 1) * sw * e, f"{t}x{t} tile, R={r}"
    if fam == "conv2d_optimized_kernel":  # 32x128, a thread per 16-byte vector x 8 rows, padded window
        r, rows = int(args[1]), int(args[2])
        w = 16 // e
        pad = (r // 2 + w - 1) // w * w
        bx = 128 // w
        return bx * min(32 // rows, 256 // bx), (32 + r - 1) * (128 + 2 * pad) * e, f"32x128 tile, R={r}"
    return 256, 0, "256 (assumed)"

def ceil_to(x, g): return (x + g - 1) // g * g

# On AMD the tiled conv2d's automatic tile differs (tile_choice.cpp): the square rule there
# runs against the whole 64 KiB of LDS, and when its window leaves fewer than 4 of 8 waves per
# SIMD resident a smaller tile is taken (the first of the list below reaching 4, else the one
# with the most). Kernels compiled for the 64-wide tile only consider 64-wide tiles here. Only
# the kernels an AMD plan launches get this (the 64-wide kernel with 8 rows and register-
# staged loads, and the run-time-R kernel); the others show the H200's launch.
def amd_conv_tiled_launch(k, r_res):
    e = 8 if "<double" in k else 4
    args = [x.strip() for x in re.match(r"\w+<(.*)>$", k).group(1).split(",")]
    kr, kcols = int(args[1]), int(args[2])
    r = kr or 31
    rows_pt = int(re.sub(r"\D", "", args[3])) if len(args) > 3 else 8
    def shape(t):
        bx = t[1]
        by = max(1, min(t[0], 256 // bx))
        if kr and t[0] % rows_pt == 0:
            c = min(by, t[0] // rows_pt)
            while c < by and (bx * c) % 64: c += 1
            by = c
        return bx * by, (t[0] + r - 1) * (t[1] + r - 1) * e
    t = (64, 64)
    while t[0] > 8 and shape(t)[1] > 65536: t = (t[0] // 2, t[1] // 2)
    def waves(t):
        th, lds = shape(t)
        return amd_occupancy(th, r_res, lds)[1] if lds <= 65536 else -1
    best = waves(t)
    if best < 4:
        first = t
        for c in [(32, 64), (32, 32), (16, 64), (16, 32), (8, 64), (8, 32)]:
            if c[0] * c[1] >= first[0] * first[1] or (kcols and c[1] != kcols): continue
            w = waves(c)
            if w > best: best, t = w, c
            if w >= 4: break
    th, lds = shape(t)
    return th, lds, t

# NVIDIA sm_90 (H200): 2048 threads, 32 blocks, 64K registers (allocated per warp in units of
# 256), 228 KiB shared memory per SM with 1 KiB reserved per block (128-byte granules).
def nv_occupancy(threads, regs, smem):
    warps = -(-threads // 32)
    lim = {"threads": 2048 // (warps * 32), "blocks": 32}
    if regs:
        per_warp = ceil_to(regs * 32, 256)
        lim["registers"] = (65536 // per_warp) // warps if per_warp * warps <= 65536 else 0
    lim["shared memory"] = 233472 // (ceil_to(smem, 128) + 1024) if smem <= 232448 else 0
    b = min(lim.values())
    why = min(lim, key=lambda n: (lim[n], n != "threads"))
    return b, b * warps / 64, why

# AMD gfx90a/gfx940 (CDNA2/3): 4 SIMDs per CU, at most 8 waves per SIMD; 512 VGPRs per lane
# per SIMD, VGPRs and AGPRs from one file (AGPRs start at a 4-aligned offset) allocated in
# granules of 8; SGPRs do not limit below 100 on gfx9; 64 KiB LDS per CU in 512-byte granules;
# at most 16 multi-wave workgroups per CU (barriers).
def amd_occupancy(threads, r, lds):
    wg_waves = -(-threads // 64)
    vg = r.get("vgpr", 0)
    total = (ceil_to(vg, 4) + r["agpr"]) if r.get("agpr", 0) else vg
    per_simd = min(8, 512 // ceil_to(max(total, 1), 8))
    sg = r.get("sgpr", 0)
    if sg > 100: per_simd = min(per_simd, 7)
    lim = {"waves": (per_simd * 4) // wg_waves}
    if wg_waves > 1: lim["barriers"] = 16
    lim["LDS"] = 65536 // ceil_to(lds, 512) if 0 < lds <= 65536 else (0 if lds > 65536 else 99)
    b = min(lim.values())
    why = min(lim, key=lambda n: lim[n])
    if why == "waves" and per_simd < 8: why = "VGPRs"
    return b, min(8.0, b * wg_waves / 4), why

ops = [("gemm", "gemm_"), ("transpose", "transpose_"), ("conv2d", "conv2d_")]
lines = []
w = lines.append
w("# GPU kernel resource usage: NVIDIA sm_90 and AMD " + " / ".join(amd_archs) + " side by side")
w("")
w("Generated by `bench/resource_usage.sh` (do not edit by hand). Compilers: nvcc " + nvcc_v +
  f" (`-arch=sm_{cuda_arch} -O3 --expt-relaxed-constexpr -Xptxas -v`); hipcc " + hip_v + " / clang " + clang_v +
  " (`--offload-arch=<target> -O3 -Rpass-analysis=kernel-resource-usage`). Nothing here ran on a GPU:")
w("these are the compilers' own reports, and occupancy is computed from them at the launch shape the")
w("automatic tile choice gives each kernel (block threads, dynamic shared memory/LDS added to the static part;")
w("where the AMD choice differs, as for the tiled conv2d under the occupancy floor, the LDS column names it).")
w("")
w("Columns: **regs** registers per thread (NVIDIA); **VGPR/AGPR/SGPR** vector, accumulation and scalar registers")
w("(AMD; VGPRs are per lane of a 64-wide wavefront); **spill** bytes stored/loaded by spills (NVIDIA) or spilled")
w("VGPRs/SGPRs and scratch bytes per lane (AMD); **smem/LDS** static + dynamic bytes per block; **occ.** resident")
w("blocks per SM/CU, the fraction of the maximum warps/wavefronts (64 per H200 SM, 8 per SIMD = 32 per CU on")
w("gfx90a/gfx940) and the limiting resource. AMD's `Occupancy [waves/SIMD]` as clang reports it (static LDS only,")
w("for the kernel's maximum workgroup size) is shown as *cc*.")
w("")
for title, prefix in ops:
    ks = [n for n in names if short(dem[n]).startswith(prefix)]
    if not ks: continue
    w(f"## {title}")
    w("")
    hdr = "| kernel | launch | threads | sm_90 regs | spill st/ld | smem | occ. (blocks, warps) |"
    sep = "| --- | --- | ---: | ---: | ---: | ---: | --- |"
    for a in amd_archs:
        hdr += f" {a} VGPR/AGPR/SGPR | spill V/S, scratch | LDS | occ. (WGs, waves/SIMD) |"
        sep += " ---: | ---: | ---: | --- |"
    w(hdr); w(sep)
    for n in sorted(ks, key=lambda n: short(dem[n])):
        k = short(dem[n])
        threads, dyn, shape = launch(k)
        row = f"| `{k}` | {shape} | {threads} |"
        r = nv.get(n)
        if r:
            smem = r["smem"] + dyn
            b, frac, why = nv_occupancy(threads, r["regs"], smem)
            row += f" {r['regs']} | {r['spill_st']}/{r['spill_ld']} | {smem} | {b}, {frac:.0%} ({why}) |"
        else:
            row += " n/a | | | |"
        for a in amd_archs:
            r = amd[a].get(n)
            if not r:
                row += " n/a | | | |"; continue
            lds = r.get("lds", 0) + dyn
            th, note = threads, ""
            if k.startswith("conv2d_tiled_kernel") and (", 64, ConvTiledShape<8, false>" in k or ", 0, 0," in k):
                th, dyn_amd, t = amd_conv_tiled_launch(k, r)
                lds = r.get("lds", 0) + dyn_amd
                if not shape.startswith(f"{t[0]}x{t[1]} "): note = f" ({t[0]}x{t[1]} tile, {th} threads)"
            b, waves, why = amd_occupancy(th, r, lds)
            row += (f" {r.get('vgpr',0)}/{r.get('agpr',0)}/{r.get('sgpr',0)} |"
                    f" {r.get('vgpr_spill',0)}/{r.get('sgpr_spill',0)}, {r.get('scratch',0)} B |"
                    f" {lds}{note} | {b}, {waves:g} of 8 ({why}); cc {r.get('occ','?')} |")
        w(row)
    w("")

# Spills, worst first. They do not cost the same everywhere: on sm_90 a spill goes to local
# memory (cached global memory); on gfx90a/gfx940 SGPR spills go to lanes of a VGPR and VGPR
# spills first to free AGPRs (both register moves), and only "scratch" is memory traffic.
nv_sp, amd_mem, amd_reg = [], [], []
for n in names:
    k = short(dem[n])
    r = nv.get(n)
    if r and (r["spill_st"] or r["spill_ld"]):
        nv_sp.append((r["spill_st"] + r["spill_ld"], f"- `{k}`: {r['spill_st']} B stored, {r['spill_ld']} B loaded per thread"))
    per = []
    for a in amd_archs:
        r = amd[a].get(n)
        if not r: continue
        if r.get("scratch"):
            per.append((r["scratch"], f"{a} {r['scratch']} B/lane ({r.get('vgpr_spill',0)} VGPRs, {r.get('sgpr_spill',0)} SGPRs spilled)"))
        elif r.get("vgpr_spill") or r.get("sgpr_spill"):
            amd_reg.append(f"- `{k}` on {a}: {r.get('vgpr_spill',0)} VGPRs to AGPRs, {r.get('sgpr_spill',0)} SGPRs to VGPR lanes")
    if per:
        amd_mem.append((max(p[0] for p in per), f"- `{k}`: " + "; ".join(p[1] for p in per)))
w("## Spills")
w("")
w(f"### sm_{cuda_arch}: to local memory")
w("")
lines.extend([t for _, t in sorted(nv_sp, reverse=True)] or ["None."])
w("")
w("### AMD: to scratch memory")
w("")
lines.extend([t for _, t in sorted(amd_mem, reverse=True)] or ["None."])
w("")
w("### AMD: within the register files (no memory traffic)")
w("")
lines.extend(sorted(amd_reg) or ["None."])
w("")
with open(out, "w") as f:
    f.write("\n".join(lines))
print(f"wrote {out}: {len(names)} kernels")
PY
