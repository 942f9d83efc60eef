// Tile choice for the GPU kernels, from the device's properties alone (see tile_choice.hpp).
#include "tile_choice.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "tilekit/ops.hpp"
#include "tilekit/tunings.hpp"

namespace tilekit::gpu {
namespace {

std::string shape(const TileConfig& t) { return t.str(); }

// Registers per thread of each kernel on sm_90 (float / double), read from `nvcc -Xptxas -v`
// (bench/results/resource-usage.md). They are NVIDIA figures on every device: on AMD the
// same kernels take other VGPR counts (the same table, gfx90a/gfx940 columns), so there the
// estimate is rougher. Only the estimate uses them: the backend asks the runtime for the real
// occupancy of the compiled kernel.
int regs_of(Op op, Variant v, DType t, const TileConfig& tile) {
  const bool f64 = t == DType::f64;
  switch (op) {
    case Op::gemm:
      if (v == Variant::naive) return 32;
      if (v == Variant::tiled) return 32;  // capped by its launch bounds (two 1024-thread blocks per SM)
      // DMMA (the larger of m16n8k16 / m8n8k4, ptxas 13.0 for sm_90, no spills): 243 / 210 at
      // 128x128, 178 / 145 at 128x64, 168 / 147 at 64x64 (bounded for three blocks an SM), 228 at
      // 64x128x8 (m16n8k8, two blocks an SM).
      if (f64 && is_dmma_tile(tile))
        return tile.rows == 128 && tile.cols == 128 ? 243 : tile.rows == 64 && tile.cols == 64 ? 168
                                                          : tile.rows == 64 ? 228 : 178;
      if (tile.rows == 256) return 201;  // gemm_sm90.cuh's 256x128 (float only; sgemm_regs)
      if (tile.rows == 128 && tile.cols == 128) return f64 ? 236 : 128;  // (16 deep: 128 + spills)
      if (tile.rows == 128) return f64 ? 154 : 95;
      return f64 ? 116 : 89;
    case Op::transpose:
      if (v == Variant::naive) return 12;
      if (v == Variant::tiled) return 31;
      return f64 ? 40 : 32;
    case Op::conv2d:
      if (v == Variant::optimized) return f64 ? 62 : 48;
      return v == Variant::tiled ? (f64 ? 46 : 32) : 32;
  }
  return 32;
}

int round_up(int x, int to) { return (x + to - 1) / to * to; }

// A block of about 256 threads, the shape (x = a warp or more along the contiguous dimension)
// every naive kernel uses: a whole warp reads consecutive addresses.
void naive_block(const DeviceProps& d, LaunchPlan& pl) {
  const int threads = std::min(d.max_threads_per_block, std::max(256, d.warp_size));
  pl.block_x = std::min(threads, std::max(32, d.warp_size));
  pl.block_y = threads / pl.block_x;
}

std::size_t optin_limit(const DeviceProps& d) { return std::max(d.smem_per_block, d.smem_per_block_optin); }

// Names the limit in refusals: NVIDIA's opt-in maximum, or (AMD, where there is no opt-in)
// the plain per-block limit.
std::string where(const DeviceProps& d) {
  const char* what = d.smem_per_block_optin > d.smem_per_block ? " (opt-in shared memory per block)"
                                                                : " (shared memory/LDS per block, no opt-in)";
  return (d.name.empty() ? std::string("the device") : d.name) + what;
}

// Automatic tiles of the bandwidth-bound kernels (transpose, conv2d) keep at least this
// fraction of the device's threads resident when a smaller tile allows it.
constexpr double kOccupancyFloor = 0.5;

void check_threads(const DeviceProps& d, const Problem& p, const TileConfig& t, int threads, const char* why) {
  if (threads > d.max_threads_per_block || threads < 1)
    throw Error(std::string(to_string(p.op)) + " tile " + shape(t) + " needs " + std::to_string(threads) +
                " threads per block (" + why + "), but the device allows " + std::to_string(d.max_threads_per_block));
}

bool in_list(const std::vector<TileConfig>& l, const TileConfig& t) {
  return std::any_of(l.begin(), l.end(),
                     [&](const TileConfig& c) { return c.rows == t.rows && c.cols == t.cols && c.depth == t.depth; });
}

void check_compiled(Op op, Variant v, DType dt, const TileConfig& t) {
  auto l = compiled_tiles(op, v, dt);
  if (in_list(l, t)) return;
  std::string s;
  for (auto& c : l) s += (s.empty() ? "" : ", ") + c.str();
  throw Error(std::string(to_string(op)) + " " + std::string(to_string(v)) + " (" + std::string(to_string(dt)) +
              ") is compiled for the tiles " + s + "; " + t.str() + " is not one of them");
}

// ---- gemm.precision=tf32x3: the float optimized gemm on the TF32 tensor cores (gemm_tf32x3.cuh)
// Compute capability 9.0 with the sm_90a kernel compiled: wgmma's 128x128x32 (gemm_tf32x3_sm90.cuh).
// Elsewhere, mma.sync's, automatic: 128x128x32 while every SM gets a block and its stages fit the opt-in shared memory,
// else 128x64x16 (44544 bytes: any sm_80+ part). A device without TF32 tensor cores (AMD, NVIDIA
// before sm_80) is refused: FP32 FMA would be as accurate, but it is not the kernel asked for, and
// the result would be timed and recorded under the wrong name.
void plan_tf32x3(const DeviceProps& d, const Problem& p, const TileConfig& req, LaunchPlan& pl) {
  const std::string dev = d.name.empty() ? std::string("the device") : d.name;
  if (!d.tf32_mma || d.warp_size != 32)
    throw Error("gemm.precision=tf32x3: the float gemm on the TF32 tensor cores (3xTF32, mma.sync .tf32) needs "
                "NVIDIA sm_80 or later and the cuda backend, which " + dev + " is not; gemm.precision=fp32 runs FP32 FMA");
  const std::string kernel = tilekit::tuning("cuda.tf32x3.kernel");
  if (kernel != "auto" && kernel != "mma" && kernel != "wgmma") throw_unmapped_tuning("cuda.tf32x3.kernel", kernel);
  const TileConfig wt{128, 128, 32};
  // Automatic: wgmma wherever it runs, at every size (measured 2.1-2.2x the mma.sync kernel at 4096³
  // and 8192³ on an H200; no measurement favours mma.sync's 128x64x16 where 128x128 blocks leave
  // SMs idle), unless a tile only mma.sync is compiled for is asked for.
  const bool wgmma = kernel == "wgmma" ||
                     (kernel == "auto" && d.tf32_wgmma && d.cc_major == 9 && d.cc_minor == 0 &&
                      (req.is_auto() || (req.rows == wt.rows && req.cols == wt.cols && req.depth == wt.depth)));
  if (wgmma) {
    // wgmma is sm_90a's (arch-specific: neither sm_80 nor sm_100 has it).
    if (d.cc_major != 9 || d.cc_minor != 0)
      throw Error("cuda.tf32x3.kernel=wgmma: the 3xTF32 kernel on wgmma needs compute capability 9.0 (Hopper), which " +
                  dev + " is not (" + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
                  "); cuda.tf32x3.kernel=mma runs mma.sync");
    if (!d.tf32_wgmma)
      throw Error("cuda.tf32x3.kernel=wgmma: this build does not compile the sm_90a wgmma kernel "
                  "(CMAKE_CUDA_ARCHITECTURES without 90); cuda.tf32x3.kernel=mma runs mma.sync");
    if (!req.is_auto() && !(req.rows == wt.rows && req.cols == wt.cols && req.depth == wt.depth))
      throw Error("gemm optimized tile " + req.str() + " under cuda.tf32x3.kernel=wgmma: the wgmma kernel is compiled for " +
                  wt.str());
    check_tile_fits(p, wt, optin_limit(d), where(d));
    if (kTf32x3WgmmaSmemBytes > optin_limit(d))
      throw Error("gemm optimized tile " + wt.str() + " (3xTF32 on wgmma) needs " + std::to_string(kTf32x3WgmmaSmemBytes) +
                  " bytes of shared memory, but " + where(d) + " offers " + std::to_string(optin_limit(d)) + " bytes");
    pl.tile = wt;
    pl.block_x = kTf32x3WgmmaThreads;
    pl.block_y = 1;
    pl.smem_bytes = pl.dynamic_smem_bytes = kTf32x3WgmmaSmemBytes;
    pl.outputs_per_thread = wt.rows * wt.cols / 256;
    pl.tf32x3 = 1;
    pl.tf32x3_wgmma = true;
    pl.kernel = "gemm_tf32x3_wgmma<float; 3xTF32 on sm_90's wgmma (m64n128k8 .tf32 from shared memory, A and B split "
                "and swizzled by a pre-pass), 2 warpgroups of 64x128 and a producer warp, 3 bulk-copy stages>";
    return;
  }
  auto fits = [&](const Tf32x3Shape& s) { return tf32x3_smem_bytes(s) <= optin_limit(d); };
  int pick = -1;
  if (req.is_auto()) {
    const Tf32x3Shape& big = kTf32x3Shapes[0];
    const index_t blocks = ((p.m + big.rows - 1) / big.rows) * ((p.n + big.cols - 1) / big.cols);
    pick = fits(big) && blocks >= d.sm_count ? 0 : 1;
  } else {
    std::string names;
    for (int i = 0; i < kTf32x3ShapeCount; ++i) {
      const Tf32x3Shape& s = kTf32x3Shapes[i];
      if (req.rows == s.rows && req.cols == s.cols && req.depth == s.depth) pick = i;
      names += (i ? ", " : "") + TileConfig{s.rows, s.cols, s.depth}.str();
    }
    if (pick < 0)
      throw Error("gemm optimized tile " + req.str() + " under gemm.precision=tf32x3: the 3xTF32 kernel is compiled for " +
                  names);
  }
  const Tf32x3Shape& s = kTf32x3Shapes[pick];
  const TileConfig t{s.rows, s.cols, s.depth};
  check_tile_fits(p, t, optin_limit(d), where(d));
  pl.smem_bytes = pl.dynamic_smem_bytes = tf32x3_smem_bytes(s);
  if (!fits(s))
    throw Error("gemm optimized tile " + t.str() + " (3xTF32) needs " + std::to_string(pl.smem_bytes) +
                " bytes of shared memory (" + std::to_string(s.stages) + " stages), but " + where(d) + " offers " +
                std::to_string(optin_limit(d)) + " bytes");
  pl.tile = t;
  pl.block_x = 32 * s.warps_m * s.warps_n;
  pl.block_y = 1;
  pl.outputs_per_thread = s.rows * s.cols / pl.block_x;
  pl.tf32x3 = pick + 1;
  pl.kernel = "gemm_tf32x3<float; 3xTF32 on the TF32 tensor cores (mma.sync m16n8k8, FP32 sums), " +
              std::to_string(s.warps_m) + "x" + std::to_string(s.warps_n) + " warps of " +
              std::to_string(s.rows / s.warps_m) + "x" + std::to_string(s.cols / s.warps_n) + ", " +
              std::to_string(s.stages) + " cp.async stages>";
}

}  // namespace

bool precision_tf32x3() { return tilekit::tuning("gemm.precision") == "tf32x3"; }

DeviceProps DeviceProps::h200() {
  DeviceProps d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536;
  d.regs_per_block = 65536;
  d.max_regs_per_thread = 255;
  d.smem_per_block = 48 * 1024;
  d.smem_per_block_optin = 227 * 1024;
  d.smem_per_sm = 228 * 1024;
  d.smem_reserved_per_block = 1024;
  d.l2_bytes = 60 * 1024 * 1024;
  d.async_copy = true;
  d.fp64_mma = true;
  d.tf32_mma = true;
  d.tf32_wgmma = true;  // a cuda build for sm_90 compiles the wgmma kernel
  return d;
}

DeviceProps DeviceProps::mi250x() {
  DeviceProps d;
  d.name = "AMD Instinct MI250X";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 110;
  d.warp_size = 64;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.regs_per_sm = 4 * 512 * 64;  // 4 SIMDs x 512 VGPRs x 64 lanes
  d.regs_per_block = d.regs_per_sm;
  d.max_regs_per_thread = 512;
  d.smem_per_block = 64 * 1024;
  d.smem_per_block_optin = 64 * 1024;
  d.smem_per_sm = 64 * 1024;
  d.smem_reserved_per_block = 0;
  d.l2_bytes = 8 * 1024 * 1024;
  return d;
}

Occupancy estimate_occupancy(const DeviceProps& d, int threads, std::size_t smem, int regs) {
  Occupancy o;
  if (threads <= 0) return o;
  const int warp = std::max(1, d.warp_size);
  const int warps = (threads + warp - 1) / warp;
  struct Limit {
    int blocks;
    const char* name;
  };
  std::vector<Limit> limits;
  limits.push_back({d.max_threads_per_sm / (warps * warp), "threads"});
  limits.push_back({d.max_blocks_per_sm, "blocks"});
  const std::size_t smem_block = smem + d.smem_reserved_per_block;
  if (smem > 0 && smem_block > 0)
    limits.push_back({smem > optin_limit(d) ? 0 : int(d.smem_per_sm / smem_block), "shared memory"});
  if (regs > 0) {
    // Registers are allocated per warp in units of 256 (NVIDIA); the same rounding is a fair
    // model elsewhere.
    const int per_warp = round_up(regs * warp, 256);
    const bool fits = regs <= d.max_regs_per_thread && per_warp * warps <= d.regs_per_block;
    limits.push_back({fits ? d.regs_per_sm / (per_warp * warps) : 0, "registers"});
  }
  auto bind = std::min_element(limits.begin(), limits.end(), [](const Limit& a, const Limit& b) {
    return a.blocks < b.blocks;
  });
  o.blocks_per_sm = std::max(0, bind->blocks);
  o.limiter = bind->name;
  o.warps_per_sm = o.blocks_per_sm * warps;
  o.fraction = d.max_threads_per_sm > 0 ? double(o.warps_per_sm * warp) / d.max_threads_per_sm : 0;
  return o;
}

std::vector<TileConfig> compiled_tiles(Op op, Variant v, DType t) {
  if (v != Variant::optimized) return {};
  if (op == Op::gemm) {
    if (t == DType::f32) return {{128, 128, 8}, {128, 128, 16}, {128, 64, 8}, {64, 64, 8}, {256, 128, 16}, {128, 128, 32}, {256, 128, 8}};
    return {{128, 128, 8}, {128, 64, 8}, {64, 64, 8}, {128, 128, kDmmaDepth}, {128, 64, kDmmaDepth}, {64, 64, kDmmaDepth},
            {64, 128, dmma_depth(64, 128)}};
  }
  if (op == Op::transpose) return {{32, 32, 0}, {64, 64, 0}, {32, 64, 0}, {64, 32, 0}};
  return {{kConvOptimizedRows, kConvOptimizedCols, 0}, {64, kConvOptimizedCols, 0}, {16, kConvOptimizedCols, 0}};
}

int dmma_shape_for(const DeviceProps& d) {
  if (!d.fp64_mma || d.warp_size != 32) return 0;
  const int named = tuning_choice<int>("cuda.dgemm.mma", {{"auto", -1}, {"off", 0}, {"m8n8k4", 884}, {"m16n8k16", 16816}});
  if (named >= 0) return named;
  // sm_90 has the 16 x 8 x 16 shape; the 8 x 8 x 4 one is sm_80's (on sm_90 it moves 4x the
  // accumulator registers per multiply-add).
  return d.cc_major >= 9 ? 16816 : 884;
}

namespace {
bool runs_gemm_sm90(const DeviceProps& d) { return d.async_copy && d.cc_major >= 9 && d.warp_size == 32; }
}  // namespace

SgemmChoice sgemm_choice(const DeviceProps& d) {
  if (!runs_gemm_sm90(d)) return {0, false};
  const std::string v = tuning("cuda.sgemm.kernel");
  if (v == "auto") return {kSgemmDefault, false};
  const int i = sgemm_index(v.c_str());
  if (i < 0) throw_unmapped_tuning("cuda.sgemm.kernel", v);  // listed by the registry, not compiled here
  return {i, true};
}

int sgemm_variant_for(const DeviceProps& d) { return sgemm_choice(d).variant; }

namespace {
bool sgemm_tile_is(const SgemmVariant& v, int rows, int depth) { return v.rows == rows && v.depth == depth; }
// The gemm_sm90 variant of tile rows x 128 x depth: `sv` itself if it has that tile, else the one
// of that tile most like it; 0 if no variant has it.
int sgemm_with_tile(int sv, int rows, int depth) {
  if (sgemm_tile_is(kSgemmVariants[sv], rows, depth)) return sv;
  // The kernel of that tile most like sv: the same per-thread shape and K-loop options first,
  // then the nearest number of stages (cub3efzs steps down to dual3efzs). Only the variants this
  // build compiled are candidates (a default build: the defaults and the explicit tiles' kernels).
  const SgemmVariant& w = kSgemmVariants[sv];
  auto distance = [&](const SgemmVariant& c) {
    const int unlike = (c.tm != w.tm || c.tn != w.tn) + (c.early != w.early) + (c.fast != w.fast) + (c.ku != w.ku) +
                       (c.ahead != w.ahead) + (c.zig != w.zig) + (c.steady != w.steady) +
                       (c.spread != w.spread);
    return 16 * unlike + std::abs(c.stages - w.stages);
  };
  int best = 0;
  for (int i = 1; i < kSgemmVariantCount; ++i) {
    const SgemmVariant& c = kSgemmVariants[i];
    if (!sgemm_tile_is(c, rows, depth)) continue;
    if (best == 0 || distance(c) < distance(kSgemmVariants[best])) best = i;
  }
  return best;
}
// Explicit tiles only gemm_sm90 compiles (256x128x16, 256x128x8, 128x128x32): they run it
// whatever cuda.sgemm.kernel says.
bool sgemm_only_tile(const TileConfig& t) {
  return t.cols == 128 && ((t.rows == 256 && (t.depth == 16 || t.depth == 8)) || (t.rows == 128 && t.depth == 32));
}
}  // namespace

ConvOptChoice conv2d_opt_choice(const DeviceProps& d) {
  ConvOptChoice c;
  // auto: the measured best on NVIDIA (devices with cp.async: kConvOptDefault); elsewhere (AMD,
  // not measured) the one-tile kernel with vector-padded rows. The registry has checked the value.
  std::string v = tuning("gpu.conv2d.optimized");
  if (v == "auto") v = d.async_copy ? std::string(kConvOptDefault) : std::string("tile");
  const std::string bad = "gpu.conv2d.optimized=" + v + ": expected tile or aligned[<N>][-lines][-split][-tma][-pf]";
  if (v == "tile") return c;
  c.aligned = true;
  if (v == "aligned") return c;
  if (v == "aligned-occ") {
    c.capped = true;
    return c;
  }
  if (v.rfind("aligned", 0) != 0) throw Error(bad);
  // aligned[<N>][-lines][-split][-tma][-pf]
  std::string n = v.substr(7);
  for (auto [suffix, flag] :
       {std::pair<std::string, bool*>{"-pf", &c.prefetch}, {"-tma", &c.tma}, {"-split", &c.split}, {"-lines", &c.lines}})
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      *flag = true;
      n.resize(n.size() - suffix.size());
    }
  if (!n.empty()) {
    if (n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos) throw Error(bad);
    c.rows = std::stoi(n);
    if (c.rows < kConvRowsPerThread || c.rows % kConvRowsPerThread != 0) throw Error(bad);
  }
  return c;
}

LaunchPlan plan_launch(const DeviceProps& d, Variant v, const Problem& p, const TileConfig& req) {
  LaunchPlan pl;
  const std::size_t e = size_of(p.dtype);
  const bool f64 = p.dtype == DType::f64;
  const std::string dt(to_string(p.dtype));
  const int warp = std::max(1, d.warp_size);

  switch (p.op) {
    case Op::gemm:
      if (v == Variant::naive) {
        naive_block(d, pl);
        pl.kernel = "gemm_naive<" + dt + ">";
      } else if (v == Variant::tiled) {
        TileConfig t = req;
        if (t.is_auto()) {
          // PMPP's square tile, one thread per element of C: the widest power of two whose
          // block fits the thread limit, is whole warps, and whose two tiles fit the default
          // shared memory (no opt-in needed for the textbook kernel).
          int w = 32;
          while (w > 1 && (w * w > d.max_threads_per_block || (w * w) % warp != 0 ||
                           2 * std::size_t(w) * w * e > d.smem_per_block))
            w /= 2;
          t = {w, w, w};
        }
        check_tile_fits(p, t, optin_limit(d), where(d));
        check_threads(d, p, t, t.rows * t.cols, "one per element of the C tile");
        pl.tile = t;
        pl.block_x = t.cols;
        pl.block_y = t.rows;
        pl.smem_bytes = tile_scratch_bytes(p, t);
        // The portable kernel (backends/portable/gemm_tiled.hpp): its tiles in dynamic shared
        // memory; square tiles of the widths it compiles unroll the K loop.
        pl.dynamic_smem_bytes = pl.smem_bytes;
        const bool fixed = t.rows == t.cols && t.cols == t.depth && (t.rows == 8 || t.rows == 16 || t.rows == 32);
        pl.kernel = "gemm_tiled<" + dt + (fixed ? ", " + std::to_string(t.rows) + "x" + std::to_string(t.rows) + " compiled" : std::string(", any shape")) + ", tile layer>";
      } else if (!f64 && precision_tf32x3()) {
        plan_tf32x3(d, p, req, pl);
      } else if (const int shape = f64 ? dmma_shape_for(d) : 0;
                 f64 && (is_dmma_tile(req) || (req.is_auto() && shape != 0))) {
        // The double gemm on the FP64 tensor cores (gemm_dmma.cuh). Automatic: 128x128 (half the
        // L2 traffic per multiply-add of 64x64) once it gives every SM 16 blocks or more, where
        // the partial last wave of one block an SM costs little; below that 64x64, three blocks an
        // SM (H200: 1.01x cuBLAS at 4096^3 and 5120^3 against 0.95x and 0.91x for 128x128; 128x128
        // wins from 6144^3). Each only if its stages fit the opt-in shared memory (else 128x64,
        // then the SIMT kernel). With m16n8k8 (sm_90), between the two 64x128x8, two blocks an SM,
        // once it gives every SM 8 blocks (four waves): docs/design/gpu-dgemm-dmma.md.
        TileConfig t = req;
        if (t.is_auto()) {
          const index_t wide = ((p.m + 127) / 128) * ((p.n + 127) / 128);
          const index_t narrow = ((p.m + 63) / 64) * ((p.n + 127) / 128);
          const TileConfig big[] = {{128, 128, kDmmaDepth}, {128, 64, kDmmaDepth}, {64, 64, kDmmaDepth}};
          const TileConfig mid[] = {{64, 128, dmma_depth(64, 128)}, {64, 64, kDmmaDepth}};
          const TileConfig small[] = {{64, 64, kDmmaDepth}};
          const bool many = wide >= 16 * index_t(d.sm_count);
          const bool some = shape == 16816 && narrow >= 8 * index_t(d.sm_count);
          t = {};
          for (const TileConfig& c : many   ? std::vector<TileConfig>(std::begin(big), std::end(big))
                                     : some ? std::vector<TileConfig>(std::begin(mid), std::end(mid))
                                            : std::vector<TileConfig>(std::begin(small), std::end(small))) {
            if (dmma_smem_bytes(c.rows, c.cols) > optin_limit(d)) continue;
            t = c;
            break;
          }
          if (t.is_auto()) return plan_launch(d, v, p, TileConfig{64, 64, 8});
        }
        check_tile_fits(p, t, optin_limit(d), where(d));
        check_compiled(p.op, v, p.dtype, t);
        if (shape == 0)
          throw Error("gemm optimized tile " + t.str() + " (double) runs on FP64 tensor cores (mma.sync f64, NVIDIA " +
                      "sm_80 or later, cuda backend), which " + (d.name.empty() ? std::string("the device") : d.name) +
                      " lacks" + (d.fp64_mma ? std::string(" under cuda.dgemm.mma=off") : std::string()) +
                      "; its SIMT tiles are 128x128x8, 128x64x8 and 64x64x8");
        pl.dmma_stages = dmma_stages(t.rows, t.cols);
        if (t.rows == 128 && t.cols == 128 && tuning("cuda.dgemm.wide") == "stages3") pl.dmma_stages = 3;
        pl.smem_bytes = dmma_smem_bytes(t.rows, t.cols, pl.dmma_stages);
        if (pl.smem_bytes > optin_limit(d))
          throw Error("gemm optimized tile " + t.str() + " needs " + std::to_string(pl.smem_bytes) + " bytes of shared memory (" +
                      std::to_string(pl.dmma_stages) + " stages, padded rows), but " + where(d) + " offers " +
                      std::to_string(optin_limit(d)) + " bytes");
        const int wm = dmma_warps_m(t.rows, t.cols), wn = dmma_warps_n(t.rows, t.cols);
        pl.tile = t;
        pl.block_x = 32 * wm * wn;
        pl.block_y = 1;
        pl.dynamic_smem_bytes = pl.smem_bytes;
        pl.outputs_per_thread = t.rows * t.cols / pl.block_x;
        pl.dmma = shape;
        pl.kernel = std::string("gemm_dmma<double; FP64 tensor cores, mma.sync ") +
                    (shape != 16816 ? "m8n8k4" : t.depth == 8 ? "m16n8k8" : "m16n8k16") + ", " + std::to_string(wm) + "x" + std::to_string(wn) +
                    " warps of " + std::to_string(t.rows / wm) + "x" + std::to_string(t.cols / wn) + ", " +
                    std::to_string(pl.dmma_stages) + " cp.async stages" +
                    (dmma_min_blocks(t.rows, t.cols) > 1
                         ? ", registers for " + std::to_string(dmma_min_blocks(t.rows, t.cols)) + " blocks an SM"
                         : std::string()) + ">";
      } else if (const SgemmChoice sc = f64 ? SgemmChoice{0, false} : sgemm_choice(d);
                 !f64 && runs_gemm_sm90(d) &&
                 ((sc.variant != 0 && (req.is_auto() || (req.rows == 128 && req.cols == 128 &&
                                                   (req.depth == 16 || req.depth == kSgemmVariants[sc.variant].depth)))) ||
                  sgemm_only_tile(req))) {
        // The float gemm of sm_90 (gemm_sm90.cuh). Automatic: the variant's tile while it gives
        // every SM a block, else its 128x128 form, else gemm.cuh's 64x64 kernel.
        // (under sm80 an explicit tile only gemm_sm90 has runs the default's kernel of that tile)
        int sv = sc.variant != 0 ? sc.variant : kSgemmDefault;
        TileConfig t = req;
        auto blocks = [&](int rows, int cols) { return ((p.m + rows - 1) / rows) * ((p.n + cols - 1) / cols); };
        if (t.is_auto()) {
          // A variant named by cuda.sgemm.kernel runs at every size (so the conformance suite's
          // small shapes exercise it); the default steps down for small problems.
          const bool named = sc.named;
          if (!named && blocks(kSgemmVariants[sv].rows, 128) < d.sm_count) sv = sgemm_with_tile(sv, 128, 16);
          if (!named && blocks(128, 128) < d.sm_count) return plan_launch(d, v, p, TileConfig{64, 64, 8});
        } else {
          sv = sgemm_with_tile(sv, t.rows, t.depth);
        }
        const SgemmVariant& k = kSgemmVariants[sv];
        t = {k.rows, k.cols, k.depth};
        check_tile_fits(p, t, optin_limit(d), where(d));
        pl.smem_bytes = sgemm_smem_bytes(k.rows, k.cols, k.depth, k.stages);
        if (pl.smem_bytes > optin_limit(d))
          throw Error("gemm optimized tile " + t.str() + " needs " + std::to_string(pl.smem_bytes) +
                      " bytes of shared memory (" + std::to_string(k.stages) + " stages), but " + where(d) +
                      " offers " + std::to_string(optin_limit(d)) + " bytes");
        pl.tile = t;
        pl.block_x = sgemm_threads(k);
        pl.block_y = 1;
        pl.dynamic_smem_bytes = pl.smem_bytes;
        pl.outputs_per_thread = k.tm * k.tn;
        pl.sgemm = sv;
        pl.kernel = std::string("gemm_sm90<float; ") + k.name + ": warps of " + std::to_string(4 * k.tm) + "x" +
                    std::to_string(8 * k.tn) + ", " + std::to_string(k.tm) + "x" + std::to_string(k.tn) +
                    " per thread, " + std::to_string(k.stages) + " cp.async stages>";
      } else {
        TileConfig t = req;
        if (!f64 && sgemm_only_tile(t))
          throw Error("gemm optimized tile " + t.str() + " (float) is the sm_90 kernel's (gemm_sm90: NVIDIA sm_90 " +
                      "or later, cuda backend), which " + (d.name.empty() ? std::string("the device") : d.name) +
                      " is not");
        if (t.is_auto()) {
          // The big tile gives each thread 8x8 outputs (most reuse per shared-memory load);
          // fall back to the small one when the big tile would leave SMs without a block.
          // 16 deep: half the barriers of 8 (measured 83% vs 76% of cuBLAS at 4096; on the
          // register-prefetch path ptxas spills ~64 bytes of it to L1, with B by cp.async none:
          // docs/design/gpu-sgemm-two-stage.md). Double keeps 64x64: its 8x8 version needs ~234
          // registers, one block per SM.
          const index_t big_blocks = ((p.m + 127) / 128) * ((p.n + 127) / 128);
          t = !f64 && big_blocks >= d.sm_count ? TileConfig{128, 128, 16} : TileConfig{64, 64, 8};
        }
        check_tile_fits(p, t, optin_limit(d), where(d));
        check_compiled(p.op, v, p.dtype, t);
        const int tm = t.rows == 128 ? 8 : 4, tn = t.cols == 128 ? 8 : 4;
        pl.tile = t;
        pl.block_x = t.cols / tn;
        pl.block_y = t.rows / tm;
        pl.outputs_per_thread = tm * tn;
        const int pad = int(16 / e);
        pl.smem_bytes = 2 * std::size_t(t.depth) * (t.rows + pad + t.cols + pad) * e;  // two stages
        pl.kernel = "gemm_optimized<" + dt + "; " + std::to_string(tm) + "x" + std::to_string(tn) +
                    " per thread, double-buffered>";
      }
      break;

    case Op::transpose:
      if (v == Variant::naive) {
        naive_block(d, pl);
        pl.kernel = "transpose_naive<" + dt + ">";
      } else if (v == Variant::tiled) {
        TileConfig t = req.is_auto() ? TileConfig{32, 32, 0} : req;
        const int by = std::max(1, std::min(t.rows, std::max(1, 256 / t.cols)));
        check_tile_fits(p, t, optin_limit(d), where(d));
        check_threads(d, p, t, t.cols * by, "one per column of the tile");
        pl.tile = t;
        pl.block_x = t.cols;
        pl.block_y = by;
        pl.dynamic_smem_bytes = pl.smem_bytes = tile_scratch_bytes(p, t);
        pl.outputs_per_thread = (t.rows + by - 1) / by;
        pl.kernel = "transpose_tiled<" + dt + ", unpadded, tile layer>";
      } else {
        TileConfig t = req;
        if (t.is_auto()) {
          // The largest compiled tile (more bytes in flight per thread: 64x64 measured best on
          // the H200) whose shared tiles still leave at least half the device's threads
          // resident; on a 64 KiB-LDS CU a 64x64 tile holds 1 (double) or 3 (float) workgroups
          // per CU, so there it takes 32x32 (double) and 64x32 (float). None reaching 50%: the
          // one with the most.
          const TileConfig prefer[] = {{64, 64, 0}, {64, 32, 0}, {32, 64, 0}, {32, 32, 0}};
          double best = -1;
          for (const TileConfig& c : prefer) {
            const double f =
                estimate_occupancy(d, 256, std::size_t(c.rows) * (c.cols + 1) * e, regs_of(p.op, v, p.dtype, c)).fraction;
            if (f > best) best = f, t = c;
            if (f >= kOccupancyFloor) break;
          }
        }
        check_tile_fits(p, t, optin_limit(d), where(d));
        check_compiled(p.op, v, p.dtype, t);
        pl.tile = t;
        pl.block_x = 256;
        pl.block_y = 1;
        pl.smem_bytes = std::size_t(t.rows) * (t.cols + 1) * e;
        pl.outputs_per_thread = t.rows * t.cols / 256;
        pl.kernel = "transpose_optimized<" + dt + ", padded, " + std::to_string(16 / e) + "-wide vectors>";
      }
      break;

    case Op::conv2d:
      if (v == Variant::naive) {
        naive_block(d, pl);
        pl.kernel = "conv2d_naive<" + dt + ">";
      } else {
        const bool opt = v == Variant::optimized;
        const bool unrolled = p.k <= kConvUnrolledMaxFilter;
        // The tiled kernel: about 256 threads, one per column, stepping down it; with R
        // compiled (<= 9) `rows` at a time when the tile's rows allow (conv2d_tiled_choice for
        // the compiled 64-wide tile, kConvTiledRowsPerThread otherwise), and then no more row
        // threads than row groups.
        auto tiled_rows = [&](const TileConfig& t) {
          return t.cols == kConvTiledCols ? conv2d_tiled_choice(int(p.k), int(e), d.async_copy).rows : kConvTiledRowsPerThread;
        };
        auto tiled_block = [&](const TileConfig& t, int& bx, int& by) {
          const bool coarse = p.k <= 9 && t.rows % tiled_rows(t) == 0;
          bx = t.cols;
          by = std::max(1, std::min(t.rows, std::max(1, 256 / bx)));
          if (!coarse) return;
          // Fewer row threads when there are fewer row groups, but never part of a warp.
          int capped = std::min(by, t.rows / tiled_rows(t));
          while (capped < by && (bx * capped) % warp != 0) ++capped;
          by = capped;
        };
        // The optimized kernel: a thread per 16-byte vector of columns (per column for R > 15,
        // which runs the tiled kernel) and kConvRowsPerThread rows, at most 256 threads.
        auto optimized_block_x = [&](const TileConfig& t) { return unrolled ? t.cols / (16 / int(e)) : t.cols; };
        auto optimized_block_y = [&](const TileConfig& t) {
          return std::max(1, std::min(t.rows / kConvRowsPerThread, 256 / optimized_block_x(t)));
        };
        auto optimized_smem = [&](const TileConfig& t) {
          return std::size_t(t.rows + p.k - 1) * std::size_t(t.cols + 2 * conv2d_optimized_pad(int(p.k), int(e))) * e;
        };
        // gpu.conv2d.optimized, for the kernels it selects (float and double, R <= 9, unrolled).
        const ConvOptChoice oc =
            opt && unrolled && p.k <= kConvAlignedMaxFilter ? conv2d_opt_choice(d) : ConvOptChoice{};
        TileConfig t = req;
        if (t.is_auto() && opt) {
          // Its automatic tile, shortened while the window does not fit the default shared
          // memory per block (large filters; R > 15 runs the tiled kernel's window), and once
          // more where it leaves fewer than half the device's threads resident (AMD double:
          // the 32x128 window is over half of a CU's 64 KiB of LDS).
          auto smem = [&](const TileConfig& c) { return unrolled ? optimized_smem(c) : tile_scratch_bytes(p, c); };
          auto occ = [&](const TileConfig& c) {
            return estimate_occupancy(d, optimized_block_x(c) * optimized_block_y(c), smem(c), regs_of(p.op, v, p.dtype, c))
                .fraction;
          };
          t = TileConfig{kConvOptimizedRows, kConvOptimizedCols, 0};
          while (t.rows > kConvRowsPerThread && smem(t) > d.smem_per_block) t.rows /= 2;
          const TileConfig shorter{t.rows / 2, t.cols, 0};
          if (shorter.rows >= kConvRowsPerThread && occ(t) < kOccupancyFloor && occ(shorter) > occ(t)) t = shorter;
        }
        if (t.is_auto()) {
          // The largest square tile whose window fits the default shared memory: bigger tiles
          // re-read less halo and give each thread more rows.
          t = TileConfig{64, kConvTiledCols, 0};
          while (t.rows > 8 && tile_scratch_bytes(p, t) > d.smem_per_block) t = TileConfig{t.rows / 2, t.cols / 2, 0};
          // ...unless its window leaves less than half the device's threads resident, as where
          // the per-block limit is the whole CU's LDS (AMD: 64 KiB, one 64x64 double window
          // per CU). Then the first smaller tile that reaches the floor (keeping the compiled
          // 64-wide kernel as long as possible), or failing that the one with the most
          // resident threads.
          auto occ = [&](const TileConfig& c) {
            int bx = 0, by = 0;
            tiled_block(c, bx, by);
            if (tile_scratch_bytes(p, c) > d.smem_per_block) return -1.0;
            return estimate_occupancy(d, bx * by, tile_scratch_bytes(p, c), regs_of(p.op, v, p.dtype, c)).fraction;
          };
          double best = occ(t);
          if (best < kOccupancyFloor) {
            const TileConfig first = t;
            for (const TileConfig& c : {TileConfig{32, 64, 0}, TileConfig{32, 32, 0}, TileConfig{16, 64, 0},
                                        TileConfig{16, 32, 0}, TileConfig{8, 64, 0}, TileConfig{8, 32, 0}}) {
              if (c.rows * c.cols >= first.rows * first.cols) continue;
              const double f = occ(c);
              if (f > best) best = f, t = c;
              if (f >= kOccupancyFloor) break;
            }
          }
        }
        const int per = opt ? kConvRowsPerThread : 1;
        check_tile_fits(p, t, optin_limit(d), where(d));
        if (opt && unrolled && (t.rows % per != 0 || t.cols != kConvOptimizedCols))
          throw Error("conv2d optimized tile " + t.str() + ": the kernel is compiled for " +
                      std::to_string(kConvOptimizedCols) + " columns and rows a multiple of " + std::to_string(per) +
                      " (each thread computes " + std::to_string(per) + " rows of one 16-byte vector of columns)");
        if (opt && !unrolled && t.rows % per != 0)
          throw Error("conv2d optimized tile " + t.str() + ": rows must be a multiple of " + std::to_string(per));
        int bx = opt ? optimized_block_x(t) : t.cols, by = opt ? optimized_block_y(t) : 1;
        if (!opt) tiled_block(t, bx, by);
        check_threads(d, p, t, bx * by, opt && unrolled ? "one per 16-byte vector of columns of the tile" : "one per column of the tile");
        pl.tile = t;
        pl.block_x = bx;
        pl.block_y = by;
        if (opt && unrolled) {
          pl.smem_bytes = optimized_smem(t);
          if (pl.smem_bytes > optin_limit(d))
            throw Error("conv2d optimized tile " + t.str() + " needs " + std::to_string(pl.smem_bytes) +
                        " bytes of scratch (with its vector padding), but " + where(d) + " offers " +
                        std::to_string(optin_limit(d)) + " bytes");
        } else {
          // The portable tiled kernel (backends/portable/conv2d_tiled.hpp): the window's rows
          // carry the halo rounded up to whole 16-byte vectors each side.
          pl.smem_bytes = std::size_t(t.rows + p.k - 1) *
                          std::size_t(conv2d_tiled_row_length(int(p.k), t.cols, int(e), true)) * e;
          if (pl.smem_bytes > optin_limit(d))
            throw Error("conv2d tiled tile " + t.str() + " needs " + std::to_string(pl.smem_bytes) +
                        " bytes of scratch (with its vector padding), but " + where(d) + " offers " +
                        std::to_string(optin_limit(d)) + " bytes");
        }
        pl.dynamic_smem_bytes = pl.smem_bytes;
        pl.outputs_per_thread = (t.rows + by - 1) / by * ((t.cols + bx - 1) / bx);
        if (opt && unrolled)
          pl.kernel = "conv2d_optimized<" + dt + ", R=" + std::to_string(p.k) + " unrolled, " + std::to_string(per) +
                      " rows x " + std::to_string(16 / e) + " columns per thread>";
        else if (opt)
          pl.kernel = "conv2d_tiled<" + dt + "> (R > " + std::to_string(kConvUnrolledMaxFilter) +
                      " has no unrolled kernel)";
        else
          pl.kernel = "conv2d_tiled<" + dt + (p.k <= 9 ? ", R=" + std::to_string(p.k) + " unrolled" : std::string()) +
                      (p.k <= 9 && t.cols == kConvTiledCols && t.rows % tiled_rows(t) == 0
                           ? ", " + std::to_string(tiled_rows(t)) + " rows per thread, 64 wide compiled"
                           : std::string()) +
                      ", tile layer" + (d.async_copy ? ", asynchronous loads" : "") + ">";
        if (oc.aligned) {
          // gpu.conv2d.optimized (conv2d.cuh): rows padded to 32-byte sectors, on the automatic tile
          // or (aligned<N>) an N x 128 one; an explicit tile keeps its shape (the library passes
          // the resolved tile back on every call: the same plan).
          const int unit = 32 / int(e);
          const int pad = (int(p.k) / 2 + unit - 1) / unit * unit;
          TileConfig st = t;
          if (oc.rows != 0 && req.is_auto()) st = TileConfig{oc.rows, kConvOptimizedCols, 0};
          const int sbx = optimized_block_x(st), sby = optimized_block_y(st);
          const std::size_t smem = std::size_t(st.rows + p.k - 1) * std::size_t(st.cols + 2 * pad) * e;
          if (smem <= optin_limit(d)) {
            pl.tile = st;
            pl.block_x = sbx;
            pl.block_y = sby;
            pl.outputs_per_thread = (st.rows + sby - 1) / sby * ((st.cols + sbx - 1) / sbx);
            pl.conv_pad_unit = unit;
            pl.conv_capped = oc.capped;
            pl.conv_split = oc.split;
            pl.conv_lines = oc.lines;
            pl.conv_prefetch = oc.prefetch && d.async_copy && d.cc_major >= 9 ? 1 : 0;  // sm_90; distance below
            pl.conv_tma = oc.tma && d.async_copy && d.cc_major >= 9;
            pl.smem_bytes = pl.dynamic_smem_bytes = smem;
            pl.kernel = "conv2d_optimized<" + dt + ", R=" + std::to_string(p.k) + " unrolled, " + std::to_string(per) +
                        " rows x " + std::to_string(16 / e) + " columns per thread, rows padded to 32-byte sectors" +
                        (oc.capped ? ", registers capped" : "") +
                        (pl.conv_lines ? ", window copied line by line" : "") +
                        (pl.conv_split ? ", window in two cp.async groups" : "") +
                        (pl.conv_tma ? ", window by one bulk tensor copy (TMA)" : "") +
                        (pl.conv_prefetch ? ", next wave's rows prefetched to L2" : "") +
                        (st.rows != kConvOptimizedRows || st.cols != kConvOptimizedCols ? ", " + st.str() + " tile"
                                                                                        : std::string()) +
                        ">";
          }
#if !TILEKIT_GPU_PRE_SM80_KERNELS
          // A tile whose sector-padded window does not fit would run the vector-padded kernel,
          // which a build for sm_80 and newer does not have at this R (tile_choice.hpp).
          else
            throw Error("conv2d optimized tile " + st.str() + " needs " + std::to_string(smem) +
                        " bytes of shared memory (its rows padded to 32-byte sectors), but " + where(d) + " offers " +
                        std::to_string(optin_limit(d)) + " bytes");
#endif
        }
      }
      break;
  }
  pl.needs_optin = pl.dynamic_smem_bytes > d.smem_per_block;
  pl.async_copy = d.async_copy;
  pl.regs_estimate = pl.tf32x3_wgmma ? kTf32x3WgmmaRegs
                     : pl.tf32x3 != 0 ? kTf32x3Shapes[pl.tf32x3 - 1].regs
                     : pl.sgemm != 0  ? sgemm_regs(kSgemmVariants[pl.sgemm])
                                      : regs_of(p.op, v, p.dtype, pl.tile);
  pl.occupancy = estimate_occupancy(d, pl.threads(), pl.smem_bytes, pl.regs_estimate);
  // conv2d aligned-pf: prefetch for the block one wave of resident blocks ahead.
  if (pl.conv_prefetch > 0) pl.conv_prefetch = d.sm_count * std::max(1, pl.occupancy.blocks_per_sm);
  return pl;
}

}  // namespace tilekit::gpu
