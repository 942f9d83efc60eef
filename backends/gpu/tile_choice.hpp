// Tile and launch-shape choice for the GPU backends (cuda and hip), as pure host C++: no CUDA
// or HIP header is included, so it compiles with any C++17 compiler and is unit-tested with
// the properties of devices the test machine does not have (an H200, an MI250X).
//
// The API in three steps:
//   1. Describe a device with DeviceProps (the backend fills it from cudaGetDeviceProperties /
//      hipGetDeviceProperties; DeviceProps::h200() and ::mi250x() are datasheet examples).
//   2. plan_launch(props, variant, problem, requested) validates an explicit tile or chooses
//      one, and returns the LaunchPlan the kernels are launched with: tile, block shape,
//      shared-memory bytes, whether that needs the opt-in above the default per-block limit,
//      and the occupancy estimate_occupancy() predicts. It throws tilekit::Error for a tile
//      the device cannot run (with both sizes in the message).
//   3. estimate_occupancy() is also usable alone: blocks per SM from the thread, block-count,
//      shared-memory and register limits, and which one binds.
//
// Nothing here assumes a warp of 32: block sizes are rounded to props.warp_size (64 on AMD).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/portable/conv2d_tiled_rows.hpp"
#include "tilekit/backend.hpp"
#include "tilekit/config.hpp"  // TILEKIT_HAS_SWEEPS: the measured alternatives are compiled too

// Which kernels a build compiles beyond those the GPUs it targets run by default. A cuda build
// whose lowest architecture (TILEKIT_CUDA_MIN_ARCH, from CMAKE_CUDA_ARCHITECTURES; 0 when not a
// number) is sm_90 or newer leaves out what only older GPUs choose: gemm.cuh's 128x128x16 float
// kernel and the m8n8k4 DMMA (their defaults below sm_90), and at sm_80 or newer the
// vector-padded conv2d window for R <= kConvAlignedMaxFilter (the default without cp.async). A
// hip build keeps AMD's defaults and leaves out the sector-aligned conv2d windows (NVIDIA's, with
// cp.async). A sweep build (TILEKIT_HAS_SWEEPS) compiles all of them. (Plain C++ sees them too:
// the plan refuses what the build cannot launch.)
#if defined(TILEKIT_HAS_SWEEPS) || defined(__HIPCC__) || !defined(TILEKIT_CUDA_MIN_ARCH) || TILEKIT_CUDA_MIN_ARCH < 90
#define TILEKIT_GPU_PRE_SM90_KERNELS 1
#else
#define TILEKIT_GPU_PRE_SM90_KERNELS 0
#endif
#if defined(TILEKIT_HAS_SWEEPS) || defined(__HIPCC__) || !defined(TILEKIT_CUDA_MIN_ARCH) || TILEKIT_CUDA_MIN_ARCH < 80
#define TILEKIT_GPU_PRE_SM80_KERNELS 1
#else
#define TILEKIT_GPU_PRE_SM80_KERNELS 0
#endif
#if defined(TILEKIT_HAS_SWEEPS) || !defined(__HIPCC__)
#define TILEKIT_GPU_ALIGNED_CONV_KERNELS 1
#else
#define TILEKIT_GPU_ALIGNED_CONV_KERNELS 0
#endif

namespace tilekit::gpu {

struct DeviceProps {
  std::string name;
  int cc_major = 0, cc_minor = 0;         // compute capability (CUDA) / gfx major, minor (HIP)
  int sm_count = 1;                       // SMs (NVIDIA) or CUs (AMD)
  int warp_size = 32;                     // 64 on AMD CDNA
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;                // 32-bit registers
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  std::size_t smem_per_block = 48 * 1024;        // default limit of one block
  std::size_t smem_per_block_optin = 48 * 1024;  // largest a kernel may opt in to
  std::size_t smem_per_sm = 64 * 1024;
  std::size_t smem_reserved_per_block = 0;       // runtime's own use per block (1 KiB on sm_80+)
  std::size_t l2_bytes = 0;
  bool async_copy = false;  // asynchronous global-to-shared copies (NVIDIA sm_80+: cp.async)
  bool fp64_mma = false;    // FP64 tensor cores (NVIDIA sm_80+: mma.sync f64, "DMMA"; the cuda backend only)
  bool tf32_mma = false;    // TF32 tensor cores (NVIDIA sm_80+: mma.sync .tf32; the cuda backend only)
  bool tf32_wgmma = false;  // the 3xTF32 kernel on wgmma runs: compute capability 9.0 and a cuda build whose
                            // architectures include 90 (gemm_tf32x3_sm90.cu compiled for sm_90a)

  static DeviceProps h200();    // NVIDIA H200 SXM (sm_90), as cudaGetDeviceProperties reports it
  static DeviceProps mi250x();  // AMD MI250X, one GCD (gfx90a): wavefront 64, 64 KiB LDS, 110 CUs
};

struct Occupancy {
  int blocks_per_sm = 0;   // resident blocks of this kernel per SM
  int warps_per_sm = 0;
  double fraction = 0;     // resident threads / max_threads_per_sm
  std::string limiter;     // "threads", "blocks", "shared memory" or "registers"
};

// threads_per_block > 0; smem_bytes: static + dynamic shared memory of one block;
// regs_per_thread: as ptxas/the runtime reports (0 = unknown, register limit ignored).
Occupancy estimate_occupancy(const DeviceProps& d, int threads_per_block, std::size_t smem_bytes,
                             int regs_per_thread);

struct LaunchPlan {
  std::string kernel;              // e.g. "gemm_optimized<128,128,8; 8x8 per thread>"
  TileConfig tile;                 // what resolve_tile reports ({} for naive kernels)
  int block_x = 1, block_y = 1;    // threads per block
  std::size_t smem_bytes = 0;      // shared memory per block, static + dynamic
  std::size_t dynamic_smem_bytes = 0;  // the part passed at launch (extern __shared__)
  bool needs_optin = false;        // dynamic_smem_bytes above props.smem_per_block
  int regs_estimate = 0;           // registers per thread, from `nvcc -Xptxas -v` on sm_90
  int outputs_per_thread = 1;
  bool async_copy = false;         // the device's DeviceProps::async_copy (kernels that can use it)
  int dmma = 0;                    // double gemm optimized on the tensor cores: 884 (mma.sync m8n8k4),
                                   // 16816 (m16n8k16, sm_90; m16n8k8 at 64x128x8); 0: the SIMT kernel
  int dmma_stages = 0;             // ... its shared stages (dmma_stages; the sweep value cuda.dgemm.wide=stages3)
  int sgemm = 0;                   // float gemm optimized: index into kSgemmVariants (0: gemm.cuh's kernel)
  int tf32x3 = 0;                  // float gemm optimized under gemm.precision=tf32x3: 1 + index into
                                   // kTf32x3Shapes (0: not the 3xTF32 kernel)
  bool tf32x3_wgmma = false;       // ... run by the sm_90a wgmma kernel (gemm_tf32x3_sm90.cuh) instead
  int conv_pad_unit = 0;           // conv2d optimized: its rows' padding unit in elements: 0 (a vector) or a sector
  bool conv_capped = false;        // ... aligned-occ: registers capped for 10 blocks/SM (float R = 3, 5)
  bool conv_split = false;         // ... aligned-split: the window loaded as two cp.async groups
  bool conv_lines = false;         // ... aligned-lines: the window copied whole 128-byte lines first
  int conv_prefetch = 0;           // ... aligned-pf: blocks ahead whose window each block prefetches to L2
  bool conv_tma = false;           // ... aligned-tma: the window by one bulk tensor copy (sm_90)
  Occupancy occupancy;             // estimate_occupancy(props, threads, smem, regs_estimate)
  int threads() const { return block_x * block_y; }
};

LaunchPlan plan_launch(const DeviceProps& d, Variant v, const Problem& p, const TileConfig& requested);

// Compile-time tile shapes of the kernels that are templated on their tile (the optimized
// gemm and transpose): explicit tiles for those variants must be one of these. For the double
// gemm the 16-deep tiles are the DMMA kernel's (devices with DeviceProps::fp64_mma only), the
// 8-deep ones the SIMT kernel's.
std::vector<TileConfig> compiled_tiles(Op op, Variant v, DType t);

// The DMMA double gemm (backends/gpu/gemm_dmma.cuh): K step and row padding; each block shape's
// shared stages and the blocks an SM its registers are bounded for (docs/design/gpu-dgemm-dmma.md):
// 128x128 four stages, one block an SM; 64x64 two stages, three blocks an SM; 128x64 three stages;
// 64x128 8 deep (m16n8k8: its fragments at 16 deep would not fit the registers), three stages, two
// blocks an SM. Every DMMA tile is 16 deep but 64x128x8 (the SIMT kernel's tiles are 8 deep).
inline constexpr int kDmmaDepth = 16, kDmmaPad = 4;
constexpr int dmma_depth(int bm, int bn) { return bm == 64 && bn == 128 ? 8 : kDmmaDepth; }
constexpr bool is_dmma_tile(const TileConfig& t) {
  return t.depth == kDmmaDepth || (t.rows == 64 && t.cols == 128 && t.depth == dmma_depth(64, 128));
}
constexpr int dmma_stages(int bm, int bn) { return bm == 128 && bn == 128 ? 4 : bm == 64 && bn == 64 ? 2 : 3; }
constexpr int dmma_min_blocks(int bm, int bn) { return bm == 64 && bn == 64 ? 3 : bm == 64 && bn == 128 ? 2 : 1; }
// The shared bytes of a BM x BN block of `stages` stages (the kernel's dmma::smem_bytes).
constexpr std::size_t dmma_smem_bytes(int bm, int bn, int stages) {
  const int bk = dmma_depth(bm, bn);
  return std::size_t(stages) * std::size_t(bm * (bk + kDmmaPad) + bk * (bn + kDmmaPad)) * 8;
}
constexpr std::size_t dmma_smem_bytes(int bm, int bn) { return dmma_smem_bytes(bm, bn, dmma_stages(bm, bn)); }
// Warps of a DMMA block: 2 x 4 warps of 64 x 32 for 128 x 128; 4 x 2 of 32 x 32 for 128 x 64;
// 2 x 2 of 32 x 32 for 64 x 64, of 32 x 64 for 64 x 128.
constexpr int dmma_warps_m(int bm, int bn) { return bm == 128 && bn == 64 ? 4 : 2; }
constexpr int dmma_warps_n(int bm, int bn) { return bm == 128 && bn == 128 ? 4 : 2; }
// Which DMMA shape the plan picks: the tuning cuda.dgemm.mma (m8n8k4 / m16n8k16 / off, sweep
// values; "off" gives the SIMT kernel) overrides the choice by compute capability.
int dmma_shape_for(const DeviceProps& d);

// The float optimized gemm's kernels, by the name the tuning cuda.sgemm.kernel gives them: "sm80"
// is gemm.cuh's two-stage kernel (the path of AMD and of NVIDIA before sm_90); the others are
// backends/gpu/gemm_sm90.cuh's (cuda, sm_90+): both operands by cp.async, `stages` shared stages,
// threads of `tm` x `tn` outputs in warps of 4 tm x 8 tn (sgemm_threads of them): 256 threads
// (256 rows, one block an SM) or 128 (128 rows with 16x8 a thread: two blocks an SM). Their
// measurements: docs/design/gpu-sgemm-sm90-kernel.md, docs/design/gpu-sgemm-steady-spread.md.
// gemm.cu instantiates every entry from this table (sm90_kernel).
struct SgemmVariant {
  const char* name;
  int rows, cols, depth, stages, tm, tn;
  bool early = false;  // each step's barrier before its last K index (gemm_sm90.cuh's kEarly)
  bool fast = false;   // interior blocks copy full steps without predicates (gemm_sm90.cuh's kFast)
  int ku = 0;          // K indices unrolled per loop iteration (gemm_sm90.cuh's KU; 0: the whole step)
  int ahead = 1;       // K indices the fragment reads run ahead of their FMAs (gemm_sm90.cuh's AHEAD)
  bool zig = false;    // the FFMAs of a 4 x 4 product in zigzag order (gemm_sm90.cuh's kZig)
  bool steady = true;  // fast blocks' whole steps in a loop with no condition (gemm_sm90.cuh's kSteady)
  bool spread = false; // ... their copies spread over the step's K indices (gemm_sm90.cuh's kSpread)
  int spread_k = 1;    // ... a group of copies every spread_k K indices (gemm_sm90.cuh's kSpreadK)
  bool serp = false;   // a K index's FFMAs as one serpentine over the rows (gemm_sm90.cuh's kSerp)
};
// A default build compiles the default (dual3efs4r), the kernels an explicit tile only gemm_sm90
// has runs (256x128x8: cub3efzs, the shape kokkos runs; 256x128x16: big3ef; 128x128x32: ddual3)
// and gemm.cuh's ("sm80"). A sweep build adds the close competitors the design notes measured:
// the 4 x 4 products in zigzag order (dual3efzs4), the copies spread one or two per K index
// (dual3efzs), the same K loop without the spread copies (dual3efz, cub3efz) and with the steps
// behind their conditions (cub3efzb, the A/B baseline). The other variants measured lost clearly
// and were removed (git history has them).
inline constexpr SgemmVariant kSgemmVariants[] = {
    {"sm80", 128, 128, 16, 2, 8, 8},
    // "s4": the steady steps' copies spread over the step, five every 4 K indices (one or two every
    // index made ptxas put three never-executed LDS before each separate LDGSTS: 48 issue slots a step).
    // "r": each K index's 16 x 8 product as one serpentine over the rows: ptxas takes an operand
    // from the reuse cache 1.01 times a FFMA instead of 0.88, and 1.4-2.0% more speed.
    {"dual3efs4r", 128, 128, 16, 3, 16, 8, true, true, 0, 1, false, true, true, 4, true},
    {"cub3efzs", 256, 128, 8, 3, 16, 8, true, true, 0, 1, true, true, true},
    {"big3ef", 256, 128, 16, 3, 16, 8, true, true},
    {"ddual3", 128, 128, 32, 3, 16, 8},
#ifdef TILEKIT_HAS_SWEEPS
    // The 4 x 4 products in zigzag order (the default before; 1.4-2.0% below dual3efs4r).
    {"dual3efzs4", 128, 128, 16, 3, 16, 8, true, true, 0, 1, true, true, true, 4},
    {"dual3efz", 128, 128, 16, 3, 16, 8, true, true, 0, 1, true},
    {"cub3efz", 256, 128, 8, 3, 16, 8, true, true, 0, 1, true},
    // The steady steps off: the copies behind conditions in every step.
    {"cub3efzb", 256, 128, 8, 3, 16, 8, true, true, 0, 1, true, false},
    // The copies spread one or two per K index (0.9-1.4% below dual3efzs4).
    {"dual3efzs", 128, 128, 16, 3, 16, 8, true, true, 0, 1, true, true, true},
#endif
};
inline constexpr int kSgemmVariantCount = int(sizeof(kSgemmVariants) / sizeof(kSgemmVariants[0]));
inline constexpr int kSgemmPadA = 4;
constexpr bool sgemm_name_is(const char* a, const char* b) {
  for (; *a && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}
constexpr int sgemm_index(const char* name) {
  for (int i = 0; i < kSgemmVariantCount; ++i)
    if (sgemm_name_is(kSgemmVariants[i].name, name)) return i;
  return -1;
}
// What the plan takes on sm_90 by default (docs/design/gpu-sgemm-steady-spread.md,
// gpu-sgemm-sm90-kernel.md): the steady steps with their copies spread in groups every 4 K indices,
// each K index's FFMAs one serpentine over the thread's rows, at 128x128 (two blocks an SM):
// 100.3-103.3% of cuBLAS from 2048³ to 16384³ on an H200, 1.4-2.0% above the 4 x 4 products in
// zigzag order (dual3efzs4), which was 0.9-1.4% above the copies one or two per K index
// (dual3efzs); on an H100 that one ran 98% at 4096 and 99.5% at 8192, its 256x128 form cub3efzs
// 97-98% and cub3efz (the steps behind their conditions) 91-93% in the same runs. Problems with
// fewer 128x128 blocks than SMs run gemm.cuh's 64x64 kernel.
inline constexpr int kSgemmDefault = sgemm_index("dual3efs4r");
static_assert(kSgemmDefault > 0, "the default SGEMM variant is one of kSgemmVariants");
constexpr int sgemm_threads(const SgemmVariant& v) { return (v.rows / (4 * v.tm)) * (v.cols / (8 * v.tn)) * 32; }
// Registers a thread from ptxas (13.0, sm_90, no spills): 8x8 per thread 127; 16x8 201
// (256x128, one block per SM; fast copies 223), 211 (128x128x16, two; fast 233), 233 (128x128x32,
// two), 255 (early barrier, or 4-8 K indices unrolled, or two ahead), 228 (2 unrolled), 243 (the
// rows' serpentine, with the early barrier).
constexpr int sgemm_regs(const SgemmVariant& v) {
  return v.tm * v.tn == 64 ? 127 : v.serp ? 243 : v.early || v.ku > 2 || v.ahead > 1 ? 255 : v.ku == 2 ? 228 : v.rows == 256 ? (v.fast ? 223 : 201) : v.depth == 32 || v.fast ? 233 : 211;
}
constexpr std::size_t sgemm_smem_bytes(int bm, int bn, int bk, int stages) {
  return std::size_t(stages) * bk * std::size_t(bm + kSgemmPadA + bn) * 4;
}
// The float optimized gemm kernel for this device: the tuning cuda.sgemm.kernel (sweep values)
// overrides the default on devices that run gemm_sm90.cuh (NVIDIA sm_90+); elsewhere always 0.
// `named`: a kernel was named, and runs at every size.
struct SgemmChoice {
  int variant = 0;
  bool named = false;
};
SgemmChoice sgemm_choice(const DeviceProps& d);
int sgemm_variant_for(const DeviceProps& d);

// The FP32-accurate float gemm on the TF32 tensor cores (backends/gpu/gemm_tf32x3.cuh: three TF32
// products a multiply-add, 3xTF32), which the optimized float gemm runs when the tuning
// gemm.precision is tf32x3 (docs/design/gpu-sgemm-tf32x3.md). Its compiled shapes: warps of 64 x
// 32, `stages` cp.async stages; `regs` from ptxas 13.0 for sm_90 (no spills).
struct Tf32x3Shape {
  int rows, cols, depth, warps_m, warps_n, stages, min_blocks, regs;
};
inline constexpr Tf32x3Shape kTf32x3Shapes[] = {
    {128, 128, 32, 2, 4, 3, 1, 242},  // automatic: 8 warps, 107520 bytes of shared memory, one block an SM
    {128, 64, 16, 2, 2, 3, 2, 217},   // 4 warps in 44544 bytes (48 KiB: the kokkos backend's), two blocks an SM
};
inline constexpr int kTf32x3ShapeCount = int(sizeof(kTf32x3Shapes) / sizeof(kTf32x3Shapes[0]));
inline constexpr int kTf32x3PadA = 4, kTf32x3PadB = 8;  // floats a shared row (gemm_tf32x3.cuh's kPadA, kPadB)
constexpr std::size_t tf32x3_smem_bytes(const Tf32x3Shape& s) {
  return std::size_t(s.stages) * std::size_t(s.rows * (s.depth + kTf32x3PadA) + s.depth * (s.cols + kTf32x3PadB)) * 4;
}
// The 3xTF32 kernel on sm_90's wgmma (backends/common/gpu/gemm_tf32x3_sm90.cuh), the automatic choice
// on compute capability 9.0 where the build compiles it (DeviceProps::tf32_wgmma): its one tile, 2 consumer warpgroups and a
// producer warp, 3 stages of 64 KiB plus 1024 bytes of alignment and 6 mbarriers; registers from
// ptxas 13.0 for sm_90a (no spills).
inline constexpr int kTf32x3WgmmaThreads = 288, kTf32x3WgmmaRegs = 141;
inline constexpr std::size_t kTf32x3WgmmaSmemBytes = 3 * 65536 + 1024 + 6 * 8;
// Whether the tuning gemm.precision asks for the 3xTF32 kernel (tf32x3) rather than FP32 FMA (fp32).
bool precision_tf32x3();

// conv2d: the optimized kernel is unrolled for filters up to this size; larger filters run
// the tiled kernel's code path (the plan's kernel name says so).
inline constexpr int kConvUnrolledMaxFilter = 15;
// conv2d optimized: output rows each thread computes (its register window), its automatic
// tile (the width is compiled in), and the columns its shared rows carry each side of the tile
// (the halo R/2 rounded up to whole 16-byte vectors, so the window loads as aligned vectors).
inline constexpr int kConvRowsPerThread = 8;
inline constexpr int kConvOptimizedRows = 32, kConvOptimizedCols = 128;
// conv2d tiled: output rows each thread computes down a column when the tile's rows allow,
// and the width of its automatic tile (compiled in for R <= 9; other widths run too).
inline constexpr int kConvTiledRowsPerThread = 8;
inline constexpr int kConvTiledCols = 64;
// Output rows each thread of the compiled 64-wide tiled kernel (backends/portable/
// conv2d_tiled.hpp) computes down its column, for filter size r and element size. Measured on
// the H200 at 8192^2 with the hand-written kernel this one replaced
// (bench/results/h200-conv2d-tiled-3.txt): 8 rows with 16-byte asynchronous window copies
// (float R = 5: 80% of memcpy), except double R = 5, where 16 rows measured best. The tile
// layer takes 16-byte asynchronous copies wherever the image allows them.
struct ConvTiledChoice {
  int rows;
};
constexpr ConvTiledChoice conv2d_tiled_choice(int r, int elem_bytes, bool async_copy) {
  return {portable::conv2d_tiled_gpu_rows(r, elem_bytes, async_copy)};  // shared with the kokkos backend
}
// conv2d optimized, the tuning gpu.conv2d.optimized (auto: kConvOptDefault on NVIDIA devices
// with cp.async, tile elsewhere; every other value is a sweep value):
//   tile            the one-tile kernel, window rows padded to 16-byte vectors
//   aligned         the one-tile kernel, window rows padded to 32-byte sectors each side
//   aligned-occ     the same, registers capped at 48 (launch bounds) for float R = 3 and 5
//   aligned<N>      aligned on an N x 128 tile instead of the automatic 32 x 128 (N a multiple of
//                   8: taller tiles re-read fewer halo rows; the automatic tile only)
//   aligned-split   aligned, the window loaded as two cp.async groups: the upper half of the
//                   block's threads computes once the rows it needs are in
//   aligned-lines   aligned, the window copied tile columns first (whole 128-byte lines per
//                   warp instruction), then the padding columns: 6 L2 requests a row, not 7
//   aligned-pf      aligned, each block prefetching into L2 (cp.async.bulk.prefetch, sm_90) the
//                   window rows of the block one wave of resident blocks after it
//   aligned-tma     aligned, the window brought in by one 2-D bulk tensor copy (TMA, sm_90)
//                   completing on an mbarrier, instead of each thread's cp.async copies
//   (-lines, -split, -tma and -pf: float and double R = 3 and 5, 16-byte images; elsewhere
//   aligned. They combine in this order, also with <N>: aligned64-lines-split-pf,
//   aligned64-tma-pf; -tma ignores -lines and -split.)
// These are compiled for R <= kConvAlignedMaxFilter; larger R runs the vector-padded kernel.
// (strip<N>, walk<N>, stripw, walkw and their -wide forms, a block walking down its column
// strip, measured slower than the one-tile kernel every time and were removed:
// docs/design/gpu-conv2d-optimized-window.md.)
struct ConvOptChoice {
  bool aligned = false;
  bool capped = false;
  int rows = 0;         // aligned<N>: the tile's rows (0: the automatic tile's)
  bool split = false;   // aligned-split
  bool lines = false;   // aligned-lines
  bool prefetch = false;  // aligned-pf
  bool tma = false;       // aligned-tma
};
ConvOptChoice conv2d_opt_choice(const DeviceProps& d);
// What gpu.conv2d.optimized=auto means on NVIDIA devices with cp.async: the measured best.
inline constexpr const char* kConvOptDefault = "aligned-lines";  // docs/design/gpu-conv2d-optimized-window.md
inline constexpr int kConvAlignedMaxFilter = 9;
constexpr int conv2d_optimized_pad(int r, int elem_bytes) {
  return (r / 2 + 16 / elem_bytes - 1) / (16 / elem_bytes) * (16 / elem_bytes);
}
// Shared row length of a conv2d window: the tile plus the halo, or (vec: the optimized and the
// portable tiled kernels) the tile plus the halo rounded up to whole 16-byte vectors each side.
constexpr int conv2d_tiled_row_length(int r, int cols, int elem_bytes, bool vec) {
  return vec ? cols + 2 * conv2d_optimized_pad(r, elem_bytes) : cols + r - 1;
}

}  // namespace tilekit::gpu
