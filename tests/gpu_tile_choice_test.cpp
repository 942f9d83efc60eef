// The GPU backends' host-side tile choice (backends/gpu/tile_choice.hpp) checked with the
// properties of GPUs this machine does not have: an NVIDIA H200 and AMD MI250X / MI300X. It is
// plain C++, so every launch shape the cuda and hip backends could pick is validated here,
// in every CI run, for both vendors: every block a whole number of warps (32) or wavefronts
// (64) and within the thread limit, every tile within the shared memory (NVIDIA) or LDS (AMD,
// 64 KiB per workgroup, no opt-in above it), and at least one block resident per SM/CU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu/tile_choice.hpp"
#include "harness.hpp"
#include "tilekit/ops.hpp"
#include "tilekit/tunings.hpp"

namespace tilekit::gpu {
namespace {

// ---- devices, as their runtimes report them -------------------------------------------------
// Written out field by field (rather than taken from DeviceProps::h200()/mi250x()) so that a
// change to those factories is checked against independent figures below.

// NVIDIA H200 SXM, sm_90 (cudaGetDeviceProperties): 132 SMs, warp 32, 1024 threads per block,
// 2048 threads and 32 blocks per SM, 64K 32-bit registers per SM and per block (255 per
// thread), 48 KiB shared memory per block by default, 227 KiB with the opt-in attribute,
// 228 KiB per SM of which the runtime reserves 1 KiB per block, 60 MiB L2.
DeviceProps h200() {
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
  d.l2_bytes = 60u * 1024 * 1024;
  d.async_copy = true;  // cp.async, sm_80 and later
  d.fp64_mma = true;    // mma.sync f64 (DMMA), sm_80 and later
  d.tf32_mma = true;    // mma.sync .tf32, sm_80 and later
  d.tf32_wgmma = true;  // wgmma .tf32: compute capability 9.0, the build's architectures including 90
  return d;
}

// AMD Instinct MI250X, one GCD (gfx90a, CDNA2; HIP shows each GCD as a device): 110 CUs,
// wavefront 64, 1024 threads per workgroup, 4 SIMDs per CU with at most 8 waves each
// (LLVM's getMaxWavesPerEU for gfx90a) = 32 waves = 2048 threads per CU; 512 VGPRs per lane
// per SIMD (256 architectural + 256 accumulation, unified on gfx90a) = 4 x 512 x 64 32-bit
// registers per CU; 64 KiB LDS per CU, all of it usable by one workgroup and none beyond
// (hipDeviceProp_t::sharedMemPerBlock = maxSharedMemoryPerMultiProcessor = 65536: AMD has no
// opt-in); multi-wave workgroups are also limited to 16 per CU by barrier resources, which
// the 32-wave limit always reaches first for them; 8 MiB L2 per GCD.
DeviceProps mi250x() {
  DeviceProps d;
  d.name = "AMD Instinct MI250X";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 110;
  d.warp_size = 64;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.regs_per_sm = 4 * 512 * 64;
  d.regs_per_block = 4 * 512 * 64;
  d.max_regs_per_thread = 512;
  d.smem_per_block = 64 * 1024;
  d.smem_per_block_optin = 64 * 1024;
  d.smem_per_sm = 64 * 1024;
  d.smem_reserved_per_block = 0;
  d.l2_bytes = 8u * 1024 * 1024;
  return d;
}

// AMD Instinct MI300X (gfx942, CDNA3): 304 CUs, the same per-CU limits as gfx90a (wavefront
// 64, 8 waves per SIMD, 512 VGPRs, 64 KiB LDS), 4 MiB L2 per XCD. The default build's gfx940
// is the first CDNA3 revision, the newest target Debian's clang 15 knows; its code objects do
// not load on a gfx942, but the limits tile choice reads are the same.
DeviceProps mi300x() {
  DeviceProps d = mi250x();
  d.name = "AMD Instinct MI300X";
  d.cc_minor = 4;
  d.sm_count = 304;
  d.l2_bytes = 4u * 1024 * 1024;
  return d;
}

struct NamedDevice {
  const char* id;
  DeviceProps (*make)();
};
const NamedDevice kDevices[] = {{"H200", h200}, {"MI250X", mi250x}, {"MI300X", mi300x}};

// Problems of every shape class: tiny (one partial tile), ragged (no dimension a multiple of
// any tile or warp), square powers of two, and tall/skinny; conv2d with every filter class
// (1, small unrolled, largest unrolled, just past it, the largest allowed).
std::vector<Problem> problems(Op op, DType t) {
  std::vector<Problem> ps;
  switch (op) {
    case Op::gemm:
      for (auto [m, n, k] : {std::tuple<index_t, index_t, index_t>{1, 1, 1}, {17, 33, 5}, {128, 128, 128},
                             {1000, 3, 700}, {4096, 4096, 4096}, {8192, 8192, 8192}, {131, 8191, 2}})
        ps.push_back({op, t, m, n, k});
      break;
    case Op::transpose:
      for (auto [r, c] : {std::pair<index_t, index_t>{1, 1}, {33, 65}, {1, 5000}, {4096, 4096}, {8192, 8192}})
        ps.push_back({op, t, r, c, 0});
      break;
    case Op::conv2d:
      for (index_t r : {1, 3, 5, 7, 9, 15, 17, 31})
        for (auto [h, w] : {std::pair<index_t, index_t>{1, 1}, {37, 70}, {4096, 4096}})
          ps.push_back({op, t, h, w, r});
      break;
  }
  return ps;
}

std::string describe(const DeviceProps& d, Variant v, const Problem& p, const LaunchPlan& pl) {
  return fmt::format("{} {} {} {}: m={} n={} k={} -> kernel '{}', tile {}, block {}x{}, {} B shared, {} blocks/SM ({})",
                     d.name, to_string(p.op), to_string(v), to_string(p.dtype), p.m, p.n, p.k, pl.kernel,
                     pl.tile.str(), pl.block_x, pl.block_y, pl.smem_bytes, pl.occupancy.blocks_per_sm,
                     pl.occupancy.limiter);
}

// Everything a launch plan must satisfy to run on device d.
void expect_launchable(const DeviceProps& d, Variant v, const Problem& p, const LaunchPlan& pl) {
  SCOPED_TRACE(describe(d, v, p, pl));
  // Whole warps/wavefronts: a partial one idles lanes and, on AMD, breaks the assumption of
  // every shuffle/reduction that a wavefront is full.
  EXPECT_GT(pl.threads(), 0);
  EXPECT_EQ(pl.threads() % d.warp_size, 0) << "block of " << pl.threads() << " threads is not whole warps of "
                                           << d.warp_size;
  EXPECT_LE(pl.threads(), d.max_threads_per_block);
  EXPECT_GE(pl.block_x, 1);
  EXPECT_GE(pl.block_y, 1);

  // Shared memory / LDS: the default per-block limit, or the opt-in one when the plan says
  // the backend raises the kernel's limit. Only the dynamic part needs the opt-in.
  const std::size_t limit = pl.needs_optin ? d.smem_per_block_optin : d.smem_per_block;
  EXPECT_LE(pl.smem_bytes, limit);
  EXPECT_LE(pl.dynamic_smem_bytes, pl.smem_bytes);
  EXPECT_EQ(pl.needs_optin, pl.dynamic_smem_bytes > d.smem_per_block);
  EXPECT_LE(pl.smem_bytes + d.smem_reserved_per_block, d.smem_per_sm);
  if (d.smem_per_block_optin <= d.smem_per_block) {
    EXPECT_FALSE(pl.needs_optin) << "this device has no opt-in";
  }
  if (v != Variant::naive) {
    // The tile the front end validated (tile_scratch_bytes is what its error messages quote)
    // is what the kernel stages, padding and double-buffering only add to it.
    EXPECT_FALSE(pl.tile.is_auto());
    EXPECT_LE(tile_scratch_bytes(p, pl.tile), pl.smem_bytes);
  }

  // Registers: the estimate must fit one thread and one block.
  EXPECT_LE(pl.regs_estimate, d.max_regs_per_thread);
  EXPECT_LE(std::size_t(pl.regs_estimate) * std::size_t(pl.threads()), std::size_t(d.regs_per_block));

  // At least one block resident per SM/CU, and the occupancy the plan reports is the estimate.
  EXPECT_GE(pl.occupancy.blocks_per_sm, 1) << "limited by " << pl.occupancy.limiter;
  const Occupancy o = estimate_occupancy(d, pl.threads(), pl.smem_bytes, pl.regs_estimate);
  EXPECT_EQ(o.blocks_per_sm, pl.occupancy.blocks_per_sm);
  EXPECT_GT(pl.occupancy.fraction, 0.0);
  EXPECT_LE(pl.occupancy.fraction, 1.0);
  EXPECT_FALSE(pl.kernel.empty());
}

// ---- every op x variant x dtype x problem, on every device ----------------------------------

struct Case {
  NamedDevice dev;
  Op op;
  Variant v;
  DType t;
};

std::vector<Case> all_cases() {
  std::vector<Case> cs;
  for (const auto& d : kDevices)
    for (Op op : kAllOps)
      for (Variant v : kAllVariants)
        for (DType t : kAllDTypes) cs.push_back({d, op, v, t});
  return cs;
}

class TileChoice : public testing::TestWithParam<Case> {};

TEST_P(TileChoice, AutomaticPlanIsLaunchable) {
  const Case& c = GetParam();
  const DeviceProps d = c.dev.make();
  for (const Problem& p : problems(c.op, c.t)) {
    LaunchPlan pl;
    ASSERT_NO_THROW(pl = plan_launch(d, c.v, p, {})) << d.name << " m=" << p.m << " n=" << p.n << " k=" << p.k;
    expect_launchable(d, c.v, p, pl);
  }
}

// The tiles the templated kernels are compiled for, requested explicitly: either a launchable
// plan or tilekit::Error (never a plan the device cannot run).
TEST_P(TileChoice, EveryCompiledTileIsLaunchableOrRefused) {
  const Case& c = GetParam();
  const DeviceProps d = c.dev.make();
  for (const TileConfig& t : compiled_tiles(c.op, c.v, c.t))
    for (const Problem& p : problems(c.op, c.t)) {
      try {
        expect_launchable(d, c.v, p, plan_launch(d, c.v, p, t));
      } catch (const Error& e) {
        // Refusals name the tile's needs and the device's limit.
        EXPECT_NE(std::string(e.what()).find(t.str()), std::string::npos) << e.what();
      }
    }
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return fmt::format("{}_{}_{}_{}", c.dev.id, to_string(c.op), to_string(c.v), to_string(c.t));
}

INSTANTIATE_TEST_SUITE_P(AllDevices, TileChoice, testing::ValuesIn(all_cases()), case_name);

// ---- vendor differences, one by one ---------------------------------------------------------

TEST(TileChoiceDevices, FactoriesMatchTheIndependentFigures) {
  // The backends' built-in examples describe the same hardware as the figures above.
  for (auto [made, ref] : {std::pair{DeviceProps::h200(), h200()}, std::pair{DeviceProps::mi250x(), mi250x()}}) {
    SCOPED_TRACE(ref.name);
    EXPECT_EQ(made.warp_size, ref.warp_size);
    EXPECT_EQ(made.sm_count, ref.sm_count);
    EXPECT_EQ(made.max_threads_per_block, ref.max_threads_per_block);
    EXPECT_EQ(made.max_threads_per_sm, ref.max_threads_per_sm);
    EXPECT_EQ(made.smem_per_block, ref.smem_per_block);
    EXPECT_EQ(made.smem_per_block_optin, ref.smem_per_block_optin);
    EXPECT_EQ(made.smem_per_sm, ref.smem_per_sm);
    EXPECT_EQ(made.regs_per_sm, ref.regs_per_sm);
    EXPECT_EQ(made.async_copy, ref.async_copy);
    EXPECT_EQ(made.fp64_mma, ref.fp64_mma);
    EXPECT_EQ(made.tf32_mma, ref.tf32_mma);
    EXPECT_EQ(made.tf32_wgmma, ref.tf32_wgmma);
  }
}

TEST(TileChoiceDevices, NaiveBlocksSpanWholeWavefrontsAlongRows) {
  // The naive kernels map x to the contiguous dimension: x must be a whole warp/wavefront so
  // each one reads consecutive addresses, 64 of them on AMD.
  for (const auto& nd : kDevices) {
    const DeviceProps d = nd.make();
    for (Op op : kAllOps) {
      const LaunchPlan pl = plan_launch(d, Variant::naive, problems(op, DType::f32).back(), {});
      EXPECT_EQ(pl.block_x % d.warp_size, 0) << d.name << " " << to_string(op) << ": block_x " << pl.block_x;
    }
  }
}

TEST(TileChoiceDevices, TileThatNeedsNvidiaOptInIsRefusedByAmdLds) {
  // gemm tiled 32x32 with a K step of 160 in double: 2 x 32 x 160 x 8 B = 80 KiB of tiles.
  // The H200 runs it by opting in above 48 KiB; an AMD workgroup has 64 KiB of LDS and no
  // opt-in, so the hip backend must refuse it with both sizes in the message.
  const Problem p{Op::gemm, DType::f64, 1024, 1024, 1024};
  const TileConfig t{32, 32, 160};
  ASSERT_EQ(tile_scratch_bytes(p, t), 81920u);

  const LaunchPlan nv = plan_launch(h200(), Variant::tiled, p, t);
  EXPECT_TRUE(nv.needs_optin);
  expect_launchable(h200(), Variant::tiled, p, nv);

  for (const DeviceProps& amd : {mi250x(), mi300x()}) {
    try {
      plan_launch(amd, Variant::tiled, p, t);
      ADD_FAILURE() << amd.name << " accepted a tile larger than its 64 KiB LDS";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("81920"), std::string::npos) << msg;
      EXPECT_NE(msg.find("65536"), std::string::npos) << msg;
    }
  }
}

TEST(TileChoiceDevices, BlocksBeyondTheThreadLimitAreRefused) {
  // 32 x 64 outputs, one thread each: 2048 threads, over both vendors' 1024.
  const Problem p{Op::gemm, DType::f32, 256, 256, 256};
  for (const auto& nd : kDevices) EXPECT_THROW(plan_launch(nd.make(), Variant::tiled, p, {32, 64, 8}), Error);
}

TEST(TileChoiceDevices, WavefrontSizeIsReadFromThePropertiesNotAssumed) {
  // A device with a 64-wide wavefront but only 256 threads per workgroup: the automatic tiled
  // gemm must shrink to 16 x 16 (256 threads = 4 wavefronts), not keep a 32 x 32 block.
  DeviceProps d = mi250x();
  d.max_threads_per_block = 256;
  const LaunchPlan pl = plan_launch(d, Variant::tiled, Problem{Op::gemm, DType::f32, 512, 512, 512}, {});
  EXPECT_EQ(pl.threads(), 256);
  expect_launchable(d, Variant::tiled, Problem{Op::gemm, DType::f32, 512, 512, 512}, pl);

  // And a wave32 device (RDNA in wave32 mode) gets whole 32-wide waves.
  DeviceProps rdna = mi250x();
  rdna.name = "wave32 device";
  rdna.warp_size = 32;
  for (Op op : kAllOps)
    for (Variant v : kAllVariants)
      for (DType t : kAllDTypes)
        for (const Problem& p : problems(op, t)) expect_launchable(rdna, v, p, plan_launch(rdna, v, p, {}));
}

// ---- occupancy floor of the bandwidth-bound automatic tiles ----------------------------------

std::string tile_str(int rows, int cols) { return TileConfig{rows, cols, 0}.str(); }

// The optimized transpose takes the largest compiled tile that keeps at least half of the
// device's threads resident. On the H200 that is 64x64 in both types (measured the fastest
// there); on a 64 KiB-LDS CU a 64x64 tile leaves one (double) or three (float) workgroups,
// so the MI250X gets 64x32 in float and 32x32 in double.
TEST(TileChoiceDevices, OptimizedTransposeTileKeepsHalfTheThreadsResident) {
  for (DType t : kAllDTypes) {
    const Problem p{Op::transpose, t, 8192, 8192, 0};
    const LaunchPlan nv = plan_launch(h200(), Variant::optimized, p, {});
    EXPECT_EQ(nv.tile.str(), tile_str(64, 64)) << to_string(t);
    for (const auto& nd : kDevices) {
      const DeviceProps d = nd.make();
      const LaunchPlan pl = plan_launch(d, Variant::optimized, p, {});
      EXPECT_GE(pl.occupancy.fraction, 0.5) << describe(d, Variant::optimized, p, pl);
    }
  }
  const Problem pf{Op::transpose, DType::f32, 8192, 8192, 0}, pd{Op::transpose, DType::f64, 8192, 8192, 0};
  EXPECT_EQ(plan_launch(mi250x(), Variant::optimized, pf, {}).tile.str(), tile_str(64, 32));
  EXPECT_EQ(plan_launch(mi250x(), Variant::optimized, pd, {}).tile.str(), tile_str(32, 32));
  // Before the floor: one 33 KB double workgroup per CU (12.5%).
  EXPECT_EQ(plan_launch(mi250x(), Variant::optimized, pd, {64, 64, 0}).occupancy.blocks_per_sm, 1);
}

// The tiled conv2d takes the largest square tile whose window fits the per-block limit, then,
// if that leaves less than half the threads resident, a smaller one. The H200 keeps its
// choices (64x64 up to R = 9, where the kernel is compiled for that width; R = 31 in double
// 32x32); on the MI250X, where the per-block limit is the CU's whole LDS, the floor moves the
// float tiles to 32 rows (still the compiled 64-wide kernel) and, where 50% is out of reach
// (double: eight rows per thread need 64 KB of window for 1024 resident threads), takes the
// tile with the most resident threads: never fewer than before.
TEST(TileChoiceDevices, TiledConv2dTileHasAnOccupancyFloor) {
  for (DType t : kAllDTypes)
    for (index_t r : {1, 3, 5, 7, 9, 15, 31}) {
      const Problem p{Op::conv2d, t, 4096, 4096, r};
      const LaunchPlan nv = plan_launch(h200(), Variant::tiled, p, {});
      const TileConfig before = t == DType::f64 && r == 31 ? TileConfig{32, 32, 0} : TileConfig{64, 64, 0};
      EXPECT_EQ(nv.tile.str(), before.str()) << to_string(t) << " R=" << r;
      EXPECT_GE(nv.occupancy.fraction, 0.5) << describe(h200(), Variant::tiled, p, nv);
      for (const DeviceProps& amd : {mi250x(), mi300x()}) {
        const LaunchPlan pl = plan_launch(amd, Variant::tiled, p, {});
        SCOPED_TRACE(describe(amd, Variant::tiled, p, pl));
        expect_launchable(amd, Variant::tiled, p, pl);
        // The old rule's tile on this device (64x64 fits 64 KiB for every R here but double 31).
        const LaunchPlan old = plan_launch(amd, Variant::tiled, p, before);
        EXPECT_GE(pl.occupancy.fraction, old.occupancy.fraction);
        if (old.occupancy.fraction < 0.5) {
          EXPECT_NE(pl.tile.str(), old.tile.str());
        }
        if (t == DType::f32 && r <= 9) {
          EXPECT_GE(pl.occupancy.fraction, 0.5);
          EXPECT_EQ(pl.tile.cols, kConvTiledCols) << "keeps the compiled width";
        }
      }
    }
  const Problem f5{Op::conv2d, DType::f32, 8192, 8192, 5}, d5{Op::conv2d, DType::f64, 8192, 8192, 5};
  EXPECT_EQ(plan_launch(mi250x(), Variant::tiled, f5, {}).tile.str(), tile_str(32, 64));
  EXPECT_EQ(plan_launch(mi250x(), Variant::tiled, f5, {64, 64, 0}).occupancy.blocks_per_sm, 3);
  EXPECT_EQ(plan_launch(mi250x(), Variant::tiled, f5, {}).occupancy.blocks_per_sm, 6);
  EXPECT_EQ(plan_launch(mi250x(), Variant::tiled, d5, {64, 64, 0}).occupancy.blocks_per_sm, 1);
  EXPECT_GE(plan_launch(mi250x(), Variant::tiled, d5, {}).occupancy.blocks_per_sm, 3);
}

// Refusals name the limit that exists: NVIDIA's opt-in maximum, or AMD's per-block LDS.
TEST(TileChoiceDevices, RefusalsNameTheRightSharedMemoryLimit) {
  const Problem p{Op::gemm, DType::f64, 1024, 1024, 1024};
  try {
    plan_launch(mi250x(), Variant::tiled, p, {32, 32, 160});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("opt-in shared"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no opt-in"), std::string::npos) << e.what();
  }
  try {
    plan_launch(h200(), Variant::tiled, p, {32, 32, 1024});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("opt-in shared memory"), std::string::npos) << e.what();
  }
}

// ---- the double gemm on the FP64 tensor cores (gemm_dmma.cuh) ------------------------------

// NVIDIA A100 SXM (sm_80): 108 SMs, 164 KiB shared memory per SM, 163 KiB opt-in per block.
DeviceProps a100() {
  DeviceProps d = h200();
  d.name = "NVIDIA A100";
  d.cc_major = 8;
  d.tf32_wgmma = false;  // wgmma: compute capability 9.0 only
  d.sm_count = 108;
  d.smem_per_block_optin = 163 * 1024;
  d.smem_per_sm = 164 * 1024;
  d.l2_bytes = 40u * 1024 * 1024;
  return d;
}
// An sm_86 part (RTX 30x0 / A40 class): DMMA exists, but only 99 KiB of opt-in shared memory.
DeviceProps sm86() {
  DeviceProps d = a100();
  d.name = "sm_86 device";
  d.cc_minor = 6;
  d.sm_count = 84;
  d.max_threads_per_sm = 1536;
  d.max_blocks_per_sm = 16;
  d.smem_per_block_optin = 99 * 1024;
  d.smem_per_sm = 100 * 1024;
  return d;
}
// NVIDIA V100 (sm_70): no asynchronous copies, no FP64 tensor cores.
DeviceProps v100() {
  DeviceProps d = h200();
  d.name = "NVIDIA V100";
  d.cc_major = 7;
  d.tf32_wgmma = false;
  d.sm_count = 80;
  d.smem_per_block_optin = 96 * 1024;
  d.smem_per_sm = 96 * 1024;
  d.smem_reserved_per_block = 0;
  d.async_copy = false;
  d.fp64_mma = false;
  d.tf32_mma = false;
  return d;
}

using test::TuningScope;

// Sets cuda.dgemm.mma for one scope (the plan reads it at every plan; its values are sweep values).
struct DmmaEnv : TuningScope {
  explicit DmmaEnv(const char* v) : TuningScope("cuda.dgemm.mma", v) {}
};

// Four stages of a 128 x (16 + 4) A tile and a 16 x (128 + 4) B tile, 8 bytes each; two of the 64x64
// block's; three of the 8-deep 64x128 block's.
constexpr std::size_t kDmma128x128Smem = 4 * (128 * 20 + 16 * 132) * 8;
constexpr std::size_t kDmma64x64Smem = 2 * (64 * 20 + 16 * 68) * 8;
constexpr std::size_t kDmma64x128Smem = 3 * (64 * 12 + 8 * 132) * 8;

TEST(TileChoiceDmma, H200DoubleGemmRunsOnTheTensorCoresWithTheSm90Shape) {
  const DeviceProps d = h200();
  ASSERT_EQ(kDmma128x128Smem, 149504u);
  ASSERT_EQ(kDmma64x64Smem, 37888u);
  ASSERT_EQ(kDmma64x128Smem, 43776u);
  EXPECT_EQ(dmma_smem_bytes(128, 128), kDmma128x128Smem);
  EXPECT_EQ(dmma_smem_bytes(64, 64), kDmma64x64Smem);
  EXPECT_EQ(dmma_smem_bytes(64, 128), kDmma64x128Smem);
  // The automatic DMMA block of each problem: its tile, threads, stages, atom and residency.
  struct Block {
    TileConfig tile;
    int threads;  // 32 x its warps
    std::size_t smem;
    int blocks_per_sm;
    const char* atom;
    const char* stages;
  };
  auto expect_block = [&](const Problem& p, const Block& b) {
    const LaunchPlan pl = plan_launch(d, Variant::optimized, p, {});
    SCOPED_TRACE(describe(d, Variant::optimized, p, pl));
    expect_launchable(d, Variant::optimized, p, pl);
    EXPECT_EQ(pl.dmma, 16816);
    EXPECT_EQ(pl.tile.str(), b.tile.str());
    EXPECT_EQ(pl.threads(), b.threads);
    EXPECT_EQ(pl.block_y, 1);  // the kernel indexes threadIdx.x only
    EXPECT_EQ(pl.smem_bytes, b.smem);
    EXPECT_EQ(pl.dynamic_smem_bytes, pl.smem_bytes);
    EXPECT_EQ(pl.needs_optin, b.smem > d.smem_per_block);
    EXPECT_EQ(pl.outputs_per_thread, 64);
    EXPECT_EQ(pl.occupancy.blocks_per_sm, b.blocks_per_sm);
    EXPECT_NE(pl.kernel.find(b.atom), std::string::npos);
    EXPECT_NE(pl.kernel.find(b.stages), std::string::npos);
  };
  // 128x128 once every SM gets 16 blocks of it (8192^3: 4096 blocks on 132 SMs): 2 x 4 warps of 64 x 32.
  for (index_t n : {6144, 8192, 16384})
    expect_block(Problem{Op::gemm, DType::f64, n, n, n},
                 {{128, 128, 16}, 256, kDmma128x128Smem, 1, "m16n8k16", "4 cp.async stages"});
  // Below that 64x128x8 (m16n8k8) once every SM gets 8 blocks of it (4096^3: 2048 on 132 SMs): 2 x 2
  // warps of 32 x 64, registers for two blocks an SM.
  for (const Problem& p : {Problem{Op::gemm, DType::f64, 4096, 4096, 4096}, Problem{Op::gemm, DType::f64, 5120, 5120, 64},
                           Problem{Op::gemm, DType::f64, 2112, 4224, 7}})
    expect_block(p, {{64, 128, 8}, 128, kDmma64x128Smem, 2, "m16n8k8", "3 cp.async stages, registers for 2 blocks an SM"});
  // Before sm_90 (m8n8k4) no 64x128x8 unless asked for: 64x64 below 128x128's size.
  const Problem p4096{Op::gemm, DType::f64, 4096, 4096, 4096};
  EXPECT_EQ(plan_launch(a100(), Variant::optimized, p4096, {}).tile.str(), (TileConfig{64, 64, 16}.str()));
  const LaunchPlan a = plan_launch(a100(), Variant::optimized, p4096, {64, 128, 8});
  expect_launchable(a100(), Variant::optimized, p4096, a);
  EXPECT_EQ(a.dmma, 884);
  EXPECT_EQ(a.tile.str(), (TileConfig{64, 128, 8}.str()));
  // Below that 64x64, three blocks an SM, from 2048^3 (512 blocks of 64x128) down to one element.
  for (const Problem& p : {Problem{Op::gemm, DType::f64, 2048, 2048, 2048}, Problem{Op::gemm, DType::f64, 2048, 4096, 64},
                           Problem{Op::gemm, DType::f64, 1024, 1536, 64}, Problem{Op::gemm, DType::f64, 17, 33, 5},
                           Problem{Op::gemm, DType::f64, 1, 1, 1}}) {
    const LaunchPlan ps = plan_launch(d, Variant::optimized, p, {});
    SCOPED_TRACE(describe(d, Variant::optimized, p, ps));
    expect_launchable(d, Variant::optimized, p, ps);
    EXPECT_EQ(ps.tile.str(), (TileConfig{64, 64, 16}.str()));
    EXPECT_EQ(ps.threads(), 128);
    EXPECT_EQ(ps.dmma, 16816);
    EXPECT_EQ(ps.smem_bytes, kDmma64x64Smem);
    EXPECT_FALSE(ps.needs_optin);
    EXPECT_EQ(ps.occupancy.blocks_per_sm, 3);
    EXPECT_NE(ps.kernel.find("registers for 3 blocks an SM"), std::string::npos);
  }
  // 128x64 only when asked for.
  const Problem mid{Op::gemm, DType::f64, 1024, 1536, 64};
  EXPECT_EQ(plan_launch(d, Variant::optimized, mid, {128, 64, 16}).tile.str(), (TileConfig{128, 64, 16}.str()));
  // float keeps its SIMT kernel.
  EXPECT_EQ(plan_launch(d, Variant::optimized, Problem{Op::gemm, DType::f32, 4096, 4096, 4096}, {}).dmma, 0);
}

TEST(TileChoiceDmma, TheSm80ShapeOnAmpereAndTilesThatFitTheOptIn) {
  const Problem p{Op::gemm, DType::f64, 8192, 8192, 8192};
  const LaunchPlan a = plan_launch(a100(), Variant::optimized, p, {});
  expect_launchable(a100(), Variant::optimized, p, a);
  EXPECT_EQ(a.dmma, 884);
  EXPECT_NE(a.kernel.find("m8n8k4"), std::string::npos);
  EXPECT_EQ(a.tile.str(), (TileConfig{128, 128, 16}.str()));
  // 146 KiB of stages do not fit a 99 KiB opt-in: 128x64 (86 KiB) does.
  const LaunchPlan s = plan_launch(sm86(), Variant::optimized, p, {});
  expect_launchable(sm86(), Variant::optimized, p, s);
  EXPECT_EQ(s.dmma, 884);
  EXPECT_EQ(s.tile.str(), (TileConfig{128, 64, 16}.str()));
  try {
    plan_launch(sm86(), Variant::optimized, p, {128, 128, 16});
    ADD_FAILURE() << "accepted 149504 bytes of stages on a 99 KiB opt-in";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("149504"), std::string::npos) << e.what();
  }
}

TEST(TileChoiceDmma, DevicesWithoutFp64TensorCoresKeepTheSimtKernel) {
  const Problem p{Op::gemm, DType::f64, 4096, 4096, 4096};
  for (const DeviceProps& d : {v100(), mi250x(), mi300x()}) {
    SCOPED_TRACE(d.name);
    const LaunchPlan pl = plan_launch(d, Variant::optimized, p, {});
    expect_launchable(d, Variant::optimized, p, pl);
    EXPECT_EQ(pl.dmma, 0);
    EXPECT_EQ(pl.tile.depth, 8);
    try {
      plan_launch(d, Variant::optimized, p, {128, 128, 16});
      ADD_FAILURE() << "a DMMA tile accepted without FP64 tensor cores";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("128x128x16"), std::string::npos) << msg;
      EXPECT_NE(msg.find("tensor cores"), std::string::npos) << msg;
    }
  }
  // Explicit 8-deep tiles run the SIMT kernel on the H200 too.
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, p, {64, 64, 8}).dmma, 0);
}

TEST(TileChoiceDmma, TuningChoosesTheShapeOrTheSimtKernel) {
  const Problem p{Op::gemm, DType::f64, 4096, 4096, 4096};
  if (!sweeps_built()) {
    EXPECT_THROW(DmmaEnv("m8n8k4"), Error);  // a sweep value: refused in a default build
    GTEST_SKIP() << "cuda.dgemm.mma's alternatives exist in sweep builds (-DTILEKIT_BUILD_SWEEPS=ON)";
  }
  {
    DmmaEnv e("m8n8k4");
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, p, {}).dmma, 884);
  }
  {
    DmmaEnv e("m16n8k16");
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, p, {}).dmma, 16816);
    EXPECT_EQ(plan_launch(mi250x(), Variant::optimized, p, {}).dmma, 0);  // never where there is no DMMA
  }
  {
    DmmaEnv e("off");
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, p, {});
    EXPECT_EQ(pl.dmma, 0);
    EXPECT_EQ(pl.tile.depth, 8);
    EXPECT_THROW(plan_launch(h200(), Variant::optimized, p, {128, 128, 16}), Error);
  }
  EXPECT_THROW(DmmaEnv("m8n8k8"), Error);  // not a value: refused when set
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, p, {}).dmma, 16816);
}

// ---- gemm.precision=tf32x3: the 3xTF32 float gemm (gemm_tf32x3.cuh) -------------------------

// Sets gemm.precision=tf32x3 for one scope.
struct Tf32x3Precision {
  Tf32x3Precision() { tilekit::set_tuning("gemm.precision", "tf32x3"); }
  ~Tf32x3Precision() { tilekit::set_tuning("gemm.precision", "fp32"); }
};

TEST(TileChoiceTf32x3, H200FloatGemmRunsThreeTf32ProductsOnlyWhenAsked) {
  // The mma.sync kernel on sm_90: a build without the sm_90a wgmma kernel (WgmmaAutomaticOnSm90 has
  // the build with it).
  DeviceProps d = h200();
  d.tf32_wgmma = false;
  const Problem p{Op::gemm, DType::f32, 8192, 8192, 8192};
  EXPECT_EQ(plan_launch(d, Variant::optimized, p, {}).tf32x3, 0);  // the default: FP32 FMA
  Tf32x3Precision on;
  const LaunchPlan pl = plan_launch(d, Variant::optimized, p, {});
  SCOPED_TRACE(describe(d, Variant::optimized, p, pl));
  expect_launchable(d, Variant::optimized, p, pl);
  EXPECT_EQ(pl.tf32x3, 1);
  EXPECT_EQ(pl.sgemm, 0);
  EXPECT_EQ(pl.tile.str(), (TileConfig{128, 128, 32}.str()));
  EXPECT_EQ(pl.threads(), 256);  // 2 x 4 warps of 64 x 32
  EXPECT_EQ(pl.block_y, 1);
  EXPECT_EQ(pl.smem_bytes, 3u * (128 * 36 + 32 * 136) * 4);  // 107520: three padded stages
  EXPECT_EQ(pl.dynamic_smem_bytes, pl.smem_bytes);
  EXPECT_TRUE(pl.needs_optin);
  EXPECT_EQ(pl.regs_estimate, 242);
  EXPECT_EQ(pl.occupancy.blocks_per_sm, 1);
  EXPECT_NE(pl.kernel.find("3xTF32"), std::string::npos);
  // The resolved tile passed back plans the same kernel (one plan per call).
  const LaunchPlan again = plan_launch(d, Variant::optimized, p, pl.tile);
  EXPECT_EQ(again.tf32x3, 1);
  EXPECT_EQ(again.kernel, pl.kernel);
  // Problems with fewer 128x128 blocks than SMs, and the explicit 48 KiB shape: 128x64x16.
  for (const auto& [q, t] : {std::pair{Problem{Op::gemm, DType::f32, 100, 200, 50}, TileConfig{}},
                             std::pair{p, TileConfig{128, 64, 16}}, std::pair{Problem{Op::gemm, DType::f32, 1, 1, 1}, TileConfig{}}}) {
    const LaunchPlan s = plan_launch(d, Variant::optimized, q, t);
    expect_launchable(d, Variant::optimized, q, s);
    EXPECT_EQ(s.tf32x3, 2);
    EXPECT_EQ(s.tile.str(), (TileConfig{128, 64, 16}.str()));
    EXPECT_EQ(s.threads(), 128);
    EXPECT_EQ(s.smem_bytes, 3u * (128 * 20 + 16 * 72) * 4);  // 44544: under 48 KiB
    EXPECT_FALSE(s.needs_optin);
    EXPECT_EQ(s.occupancy.blocks_per_sm, 2);
  }
  // Any other tile is refused, naming the compiled ones.
  try {
    plan_launch(d, Variant::optimized, p, {128, 128, 16});
    ADD_FAILURE() << "a tile the 3xTF32 kernel is not compiled for was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("128x128x32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("128x64x16"), std::string::npos) << msg;
  }
  // Double, and the naive and tiled float kernels, keep their own arithmetic.
  const Problem pd{Op::gemm, DType::f64, 4096, 4096, 4096};
  EXPECT_EQ(plan_launch(d, Variant::optimized, pd, {}).tf32x3, 0);
  EXPECT_EQ(plan_launch(d, Variant::optimized, pd, {}).dmma, 16816);
  EXPECT_EQ(plan_launch(d, Variant::naive, p, {}).tf32x3, 0);
  EXPECT_EQ(plan_launch(d, Variant::tiled, p, {}).tf32x3, 0);
}

TEST(TileChoiceTf32x3, RefusedWhereThereAreNoTf32TensorCoresAndFittedToTheOptIn) {
  Tf32x3Precision on;
  const Problem p{Op::gemm, DType::f32, 4096, 4096, 4096};
  for (const DeviceProps& d : {v100(), mi250x(), mi300x()}) {
    SCOPED_TRACE(d.name);
    try {
      plan_launch(d, Variant::optimized, p, {});
      ADD_FAILURE() << "3xTF32 planned without TF32 tensor cores";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("gemm.precision=tf32x3"), std::string::npos) << msg;
      EXPECT_NE(msg.find("sm_80"), std::string::npos) << msg;
    }
    EXPECT_EQ(plan_launch(d, Variant::naive, p, {}).tf32x3, 0);  // the other variants are unaffected
  }
  // A100: the big shape; an sm_86 part (99 KiB opt-in): 107520 bytes do not fit, 128x64x16 does.
  EXPECT_EQ(plan_launch(a100(), Variant::optimized, p, {}).tf32x3, 1);
  const LaunchPlan s = plan_launch(sm86(), Variant::optimized, p, {});
  expect_launchable(sm86(), Variant::optimized, p, s);
  EXPECT_EQ(s.tf32x3, 2);
  try {
    plan_launch(sm86(), Variant::optimized, p, {128, 128, 32});
    ADD_FAILURE() << "accepted 107520 bytes of stages on a 99 KiB opt-in";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("107520"), std::string::npos) << e.what();
  }
}

// The sm_90a kernel (gemm_tf32x3_sm90.cuh): the automatic choice on compute capability 9.0 where the
// build compiles it (DeviceProps::tf32_wgmma), at every size; cuda.tf32x3.kernel names either kernel.
struct Tf32x3Kernel {
  explicit Tf32x3Kernel(const char* k) { tilekit::set_tuning("cuda.tf32x3.kernel", k); }
  ~Tf32x3Kernel() { tilekit::set_tuning("cuda.tf32x3.kernel", "auto"); }
};

void expect_wgmma_plan(const DeviceProps& d, const Problem& q, const TileConfig& t) {
  const LaunchPlan pl = plan_launch(d, Variant::optimized, q, t);
  SCOPED_TRACE(describe(d, Variant::optimized, q, pl));
  expect_launchable(d, Variant::optimized, q, pl);
  EXPECT_TRUE(pl.tf32x3_wgmma);
  EXPECT_EQ(pl.tf32x3, 1);
  EXPECT_EQ(pl.tile.str(), (TileConfig{128, 128, 32}.str()));
  EXPECT_EQ(pl.threads(), 288);  // two warpgroups and a producer warp
  EXPECT_EQ(pl.smem_bytes, 3u * 65536 + 1024 + 48);
  EXPECT_TRUE(pl.needs_optin);
  EXPECT_EQ(pl.regs_estimate, kTf32x3WgmmaRegs);
  EXPECT_EQ(pl.occupancy.blocks_per_sm, 1);
  EXPECT_NE(pl.kernel.find("wgmma"), std::string::npos);
}

TEST(TileChoiceTf32x3, WgmmaAutomaticOnSm90) {
  Tf32x3Precision on;
  const Problem p{Op::gemm, DType::f32, 8192, 8192, 8192};
  // Every size, the small and skinny ones (fewer 128x128 blocks than SMs) included, and the tile it
  // is compiled for named.
  for (const auto& [q, t] :
       {std::pair{p, TileConfig{}}, std::pair{Problem{Op::gemm, DType::f32, 1, 1, 1}, TileConfig{}},
        std::pair{Problem{Op::gemm, DType::f32, 100, 200, 50}, TileConfig{}},
        std::pair{Problem{Op::gemm, DType::f32, 64, 8192, 8192}, TileConfig{}},
        std::pair{Problem{Op::gemm, DType::f32, 8192, 17, 4096}, TileConfig{}}, std::pair{p, TileConfig{128, 128, 32}}})
    expect_wgmma_plan(h200(), q, t);
  // mma.sync's own 128x64x16, named, runs mma.sync.
  const LaunchPlan s = plan_launch(h200(), Variant::optimized, p, {128, 64, 16});
  EXPECT_FALSE(s.tf32x3_wgmma);
  EXPECT_EQ(s.tf32x3, 2);
  // A build without the sm_90a kernel, and the other NVIDIA parts: mma.sync.
  DeviceProps without = h200();
  without.tf32_wgmma = false;
  EXPECT_FALSE(plan_launch(without, Variant::optimized, p, {}).tf32x3_wgmma);
  EXPECT_EQ(plan_launch(without, Variant::optimized, p, {}).tf32x3, 1);
  for (const DeviceProps& d : {a100(), sm86()}) {
    SCOPED_TRACE(d.name);
    EXPECT_FALSE(plan_launch(d, Variant::optimized, p, {}).tf32x3_wgmma);
    EXPECT_NE(plan_launch(d, Variant::optimized, p, {}).tf32x3, 0);
  }
  // cuda.tf32x3.kernel=mma on sm_90: the mma.sync kernel, its own automatic shapes.
  {
    Tf32x3Kernel mma("mma");
    const LaunchPlan m = plan_launch(h200(), Variant::optimized, p, {});
    EXPECT_FALSE(m.tf32x3_wgmma);
    EXPECT_EQ(m.tf32x3, 1);
    EXPECT_EQ(m.threads(), 256);
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, Problem{Op::gemm, DType::f32, 100, 200, 50}, {}).tf32x3, 2);
  }
  // The resolved tile passed back plans the same kernel.
  const LaunchPlan pl = plan_launch(h200(), Variant::optimized, p, {});
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, p, pl.tile).kernel, pl.kernel);
}

TEST(TileChoiceTf32x3, WgmmaNamedOnlyOnSm90WithTheKernel) {
  Tf32x3Precision on;
  const Problem p{Op::gemm, DType::f32, 8192, 8192, 8192};
  Tf32x3Kernel named("wgmma");
  for (const auto& [q, t] : {std::pair{p, TileConfig{}}, std::pair{Problem{Op::gemm, DType::f32, 1, 1, 1}, TileConfig{}},
                             std::pair{p, TileConfig{128, 128, 32}}})
    expect_wgmma_plan(h200(), q, t);
  try {
    DeviceProps without = h200();
    without.tf32_wgmma = false;
    plan_launch(without, Variant::optimized, p, {});
    ADD_FAILURE() << "wgmma planned in a build without the sm_90a kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not compile"), std::string::npos) << e.what();
  }
  try {
    plan_launch(h200(), Variant::optimized, p, {128, 64, 16});
    ADD_FAILURE() << "a tile the wgmma kernel is not compiled for was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("128x128x32"), std::string::npos) << e.what();
  }
  try {
    plan_launch(a100(), Variant::optimized, p, {});
    ADD_FAILURE() << "wgmma planned on sm_80";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("9.0"), std::string::npos) << e.what();
  }
  // double and the other variants are unaffected
  EXPECT_FALSE(plan_launch(h200(), Variant::optimized, Problem{Op::gemm, DType::f64, 4096, 4096, 4096}, {}).tf32x3_wgmma);
  EXPECT_FALSE(plan_launch(h200(), Variant::tiled, p, {}).tf32x3_wgmma);
}

// ---- the occupancy estimate itself ----------------------------------------------------------

TEST(Occupancy, ThreadLimitCountsWholeWavefronts) {
  // 96 threads are two 64-wide wavefronts on AMD: 2048 / 128 = 16 workgroups per CU.
  const Occupancy amd = estimate_occupancy(mi250x(), 96, 0, 0);
  EXPECT_EQ(amd.blocks_per_sm, 16);
  EXPECT_EQ(amd.warps_per_sm, 32);
  EXPECT_EQ(amd.limiter, "threads");
  // On the H200 they are three warps: 2048 / 96 = 21 blocks.
  const Occupancy nv = estimate_occupancy(h200(), 96, 0, 0);
  EXPECT_EQ(nv.blocks_per_sm, 21);
  EXPECT_EQ(nv.warps_per_sm, 63);
}

// ---- the float gemm of sm_90 (gemm_sm90.cuh) ------------------------------------------------

// Sets cuda.sgemm.kernel for one scope (every value but auto is a sweep value).
struct SgemmEnv : TuningScope {
  explicit SgemmEnv(const char* v) : TuningScope("cuda.sgemm.kernel", v) {}
};

// The kernels this build compiles are exactly the ones the tuning can name here: in a default
// build the default, the kernels of the explicit tiles only gemm_sm90 has, and gemm.cuh's; in a
// sweep build also the close competitors. The registry lists every name a sweep build has.
TEST(TileChoiceSgemm, CompiledVariantsAreTheTuningsValues) {
  const Tuning& t = find_tuning("cuda.sgemm.kernel");
  EXPECT_EQ(t.default_value, "auto");
  EXPECT_EQ(std::string(kSgemmVariants[kSgemmDefault].name), "dual3efs4r");
  for (int i = 0; i < kSgemmVariantCount; ++i)
    EXPECT_NE(std::find(t.values.begin(), t.values.end(), kSgemmVariants[i].name), t.values.end()) << kSgemmVariants[i].name;
  int named = 0;
  for (const auto& v : t.values) {
    if (v == "auto") continue;
    ++named;
    EXPECT_NE(std::find(t.sweep_values.begin(), t.sweep_values.end(), v), t.sweep_values.end()) << v;
    if (sweeps_built()) {
      EXPECT_GE(sgemm_index(v.c_str()), 0) << v;
    }
  }
  EXPECT_EQ(kSgemmVariantCount, sweeps_built() ? named : 5);
  for (const char* name : {"sm80", "dual3efs4r", "cub3efzs", "big3ef", "ddual3"}) EXPECT_GE(sgemm_index(name), 0) << name;
}

TEST(TileChoiceSgemm, EachNamedVariantPlansItsKernelAtEverySizeOnTheH200) {
  if (!sweeps_built()) {
    EXPECT_THROW(SgemmEnv("cub3efzs"), Error);  // a sweep value: refused in a default build
    GTEST_SKIP() << "cuda.sgemm.kernel names kernels in sweep builds (-DTILEKIT_BUILD_SWEEPS=ON)";
  }
  const DeviceProps d = h200();
  for (int i = 0; i < kSgemmVariantCount; ++i) {
    const SgemmVariant& k = kSgemmVariants[i];
    SCOPED_TRACE(k.name);
    SgemmEnv e(k.name);
    EXPECT_EQ(sgemm_variant_for(d), i);
    for (index_t n : {4096, 97}) {  // a named variant runs small problems too (the conformance suite's)
      const Problem p{Op::gemm, DType::f32, n, n + 3, n};
      const LaunchPlan pl = plan_launch(d, Variant::optimized, p, {});
      expect_launchable(d, Variant::optimized, p, pl);
      if (i == 0) {
        EXPECT_EQ(pl.sgemm, 0);
        continue;
      }
      EXPECT_EQ(pl.sgemm, i);
      EXPECT_EQ(pl.tile.str(), (TileConfig{k.rows, k.cols, k.depth}.str()));
      EXPECT_EQ(pl.threads(), k.tm == 16 && k.rows == 128 ? 128 : 256);
      EXPECT_EQ(pl.block_y, 1);
      EXPECT_EQ(pl.smem_bytes, sgemm_smem_bytes(k.rows, k.cols, k.depth, k.stages));
      EXPECT_EQ(pl.dynamic_smem_bytes, pl.smem_bytes);
      EXPECT_EQ(pl.needs_optin, pl.smem_bytes > 48 * 1024);
      EXPECT_EQ(pl.outputs_per_thread, k.tm * k.tn);
      EXPECT_EQ(pl.occupancy.blocks_per_sm, k.rows == 256 ? 1 : 2);
      // The explicit tile the plan reports plans the same kernel again.
      EXPECT_EQ(plan_launch(d, Variant::optimized, p, pl.tile).sgemm, i);
    }
  }
  EXPECT_EQ(sgemm_smem_bytes(128, 128, 16, 3), 3u * 16 * (132 + 128) * 4);
}

TEST(TileChoiceSgemm, DefaultStepsDownForSmallProblemsAndOtherDevicesKeepTheSm80Kernel) {
  const Problem big{Op::gemm, DType::f32, 4096, 4096, 4096}, small{Op::gemm, DType::f32, 97, 89, 83};
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, big, {}).sgemm, kSgemmDefault);
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, small, {}).sgemm, 0);
  // 2048^2: 256 blocks of the default's 128x128 give every SM one; a 256x128 variant named for
  // every size keeps its tile, and otherwise steps down to its 128x128 form (the same K loop).
  const Problem mid{Op::gemm, DType::f32, 2048, 2048, 2048};
  EXPECT_EQ(kSgemmVariants[kSgemmDefault].rows, 128);
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, mid, {}).sgemm, kSgemmDefault);
  EXPECT_EQ(plan_launch(h200(), Variant::optimized, small, {}).tile.str(), (TileConfig{64, 64, 8}.str()));
  // The explicit tiles only gemm_sm90 has run the compiled kernel of that tile most like the
  // default (every build has them), and each plans itself again.
  for (const auto& [tile, name] : {std::pair{TileConfig{256, 128, 8}, "cub3efzs"}, std::pair{TileConfig{256, 128, 16}, "big3ef"},
                                   std::pair{TileConfig{128, 128, 32}, "ddual3"}, std::pair{TileConfig{128, 128, 16}, "dual3efs4r"}}) {
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, big, tile);
    EXPECT_EQ(std::string(kSgemmVariants[pl.sgemm].name), name) << tile.str();
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, big, pl.tile).sgemm, pl.sgemm) << tile.str();
  }
  if (sweeps_built()) {
    {
      SgemmEnv e("cub3efzs");
      EXPECT_EQ(std::string(kSgemmVariants[plan_launch(h200(), Variant::optimized, big, {128, 128, 16}).sgemm].name),
                "dual3efzs4");
    }
    // An explicit 256x128x16 is only gemm_sm90's: it runs there even under sm80.
    SgemmEnv e("sm80");
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, big, {}).sgemm, 0);
    EXPECT_NE(plan_launch(h200(), Variant::optimized, big, {256, 128, 16}).sgemm, 0);
  }
  // ... and is refused (naming the tile) where the kernel does not exist.
  for (const DeviceProps& d : {a100(), sm86(), v100(), mi250x()}) {
    SCOPED_TRACE(d.name);
    EXPECT_EQ(sgemm_variant_for(d), 0);
    EXPECT_EQ(plan_launch(d, Variant::optimized, big, {}).sgemm, 0);
    try {
      plan_launch(d, Variant::optimized, big, {256, 128, 16});
      ADD_FAILURE() << "256x128x16 accepted without the sm_90 kernel";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("256x128x16"), std::string::npos) << err.what();
    }
  }
  // The 128x128 form of a 256-row variant keeps its per-thread shape, options and stages.
  if (sweeps_built()) {
    SgemmEnv e("cub3efz");
    EXPECT_EQ(std::string(kSgemmVariants[plan_launch(h200(), Variant::optimized, big, {128, 128, 16}).sgemm].name),
              "dual3efz");
  }
}

TEST(TileChoiceSgemm, UnknownNameIsAnError) {
  try {
    SgemmEnv e("warp9");
    ADD_FAILURE() << "accepted cuda.sgemm.kernel=warp9";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("dual3efs4r"), std::string::npos) << err.what();
  }
  // A measured loser removed from the build is unknown too.
  EXPECT_THROW(SgemmEnv("big3"), Error);
}

TEST(Occupancy, LdsBindsOnAmdWhereSharedMemoryDoesNotOnNvidia) {
  // 32 KiB per block: two per MI250X CU (64 KiB LDS), six per H200 SM (228 KiB, 1 KiB reserved each).
  const Occupancy amd = estimate_occupancy(mi250x(), 256, 32 * 1024, 0);
  EXPECT_EQ(amd.blocks_per_sm, 2);
  EXPECT_EQ(amd.limiter, "shared memory");
  const Occupancy nv = estimate_occupancy(h200(), 256, 32 * 1024, 0);
  EXPECT_EQ(nv.blocks_per_sm, 6);  // 233472 / 33792
  // All 64 KiB: exactly one workgroup per CU; one byte more cannot launch at all.
  EXPECT_EQ(estimate_occupancy(mi250x(), 256, 64 * 1024, 0).blocks_per_sm, 1);
  EXPECT_EQ(estimate_occupancy(mi250x(), 256, 64 * 1024 + 1, 0).blocks_per_sm, 0);
}

TEST(Occupancy, RegistersBind) {
  // 1024 threads x 64 registers = the H200's whole 64K register file: one block.
  const Occupancy nv = estimate_occupancy(h200(), 1024, 0, 64);
  EXPECT_EQ(nv.blocks_per_sm, 1);
  EXPECT_EQ(nv.limiter, "registers");
  // The MI250X CU holds 4 x 512 VGPRs per lane: 256 threads (4 wavefronts) at 128 VGPRs take
  // a quarter of it, so four workgroups fit; more registers than a thread may have: none.
  EXPECT_EQ(estimate_occupancy(mi250x(), 256, 0, 128).blocks_per_sm, 4);
  EXPECT_EQ(estimate_occupancy(mi250x(), 256, 0, 513).blocks_per_sm, 0);
  EXPECT_EQ(estimate_occupancy(h200(), 256, 0, 256).blocks_per_sm, 0);
}

}  // namespace

// ---- conv2d optimized: gpu.conv2d.optimized -------------------------------------------

// Sets gpu.conv2d.optimized for one scope and restores what it was (every value but auto is a
// sweep value).
struct ConvOptEnv : test::TuningScope {
  explicit ConvOptEnv(const char* v) : TuningScope("gpu.conv2d.optimized", v) {}
};

TEST(TileChoiceDevices, ConvOptimizedDefault) {
  // auto: the measured best on NVIDIA (kConvOptDefault), the vector-padded kernel on AMD.
  const Problem f5{Op::conv2d, DType::f32, 8192, 8192, 5};
  const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
  EXPECT_EQ(std::string(kConvOptDefault), "aligned-lines");
  EXPECT_EQ(pl.conv_pad_unit, 8);
  EXPECT_TRUE(pl.conv_lines);
  EXPECT_FALSE(pl.conv_split || pl.conv_tma || pl.conv_capped);
  EXPECT_EQ(pl.conv_prefetch, 0);
  EXPECT_EQ(plan_launch(mi250x(), Variant::optimized, f5, {}).conv_pad_unit, 0);
  if (!sweeps_built()) {
    for (const char* v : {"tile", "aligned", "aligned-occ", "aligned64", "aligned-lines-pf"})
      EXPECT_THROW(ConvOptEnv{v}, Error) << v;  // sweep values: refused in a default build
  }
}

TEST(TileChoiceDevices, ConvOptimizedOptions) {
  const Problem f5{Op::conv2d, DType::f32, 8192, 8192, 5};
  if (!sweeps_built()) GTEST_SKIP() << "gpu.conv2d.optimized's alternatives exist in sweep builds";
  {
    ConvOptEnv env("tile");
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_EQ(pl.conv_pad_unit, 0);
    EXPECT_EQ(pl.smem_bytes, std::size_t(36 * 136 * 4));
  }
  {
    ConvOptEnv env("aligned");  // the one-tile kernel, rows padded to 8 floats each side
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_EQ(pl.conv_pad_unit, 8);
    EXPECT_EQ(pl.smem_bytes, std::size_t(36 * 144 * 4));
    EXPECT_EQ(pl.threads(), 128);
    // R > kConvAlignedMaxFilter keeps the vector-padded kernel; tiled is not affected.
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, Problem{Op::conv2d, DType::f32, 512, 512, 11}, {}).conv_pad_unit, 0);
    EXPECT_EQ(plan_launch(h200(), Variant::tiled, f5, {}).conv_pad_unit, 0);
  }
  {
    ConvOptEnv env("aligned-occ");
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_TRUE(pl.conv_capped);
    EXPECT_EQ(pl.conv_pad_unit, 8);
  }
  {
    ConvOptEnv env("aligned64");  // a 64-row tile, 256 threads
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_EQ(pl.tile.str(), tile_str(64, 128));
    EXPECT_EQ(pl.threads(), 256);
    EXPECT_EQ(pl.smem_bytes, std::size_t(68 * 144 * 4));
    // The resolved tile passed back (as the library does on every call) gives the same plan.
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, f5, pl.tile).kernel, pl.kernel);
    // An explicit tile keeps its shape.
    EXPECT_EQ(plan_launch(h200(), Variant::optimized, f5, {16, 128, 0}).tile.str(), tile_str(16, 128));
  }
  {
    ConvOptEnv env("aligned-split");
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_TRUE(pl.conv_split);
    EXPECT_EQ(pl.conv_pad_unit, 8);
    EXPECT_EQ(pl.tile.str(), tile_str(32, 128));
  }
  {
    ConvOptEnv env("aligned-lines-pf");  // one wave ahead: SMs x resident blocks
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_TRUE(pl.conv_lines);
    EXPECT_EQ(pl.conv_prefetch, 132 * pl.occupancy.blocks_per_sm);
    EXPECT_GT(pl.conv_prefetch, 0);
    EXPECT_EQ(plan_launch(mi250x(), Variant::optimized, f5, {}).conv_prefetch, 0);
  }
  {
    ConvOptEnv env("aligned-tma-pf");
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_TRUE(pl.conv_tma);
    EXPECT_GT(pl.conv_prefetch, 0);
    EXPECT_FALSE(plan_launch(mi250x(), Variant::optimized, f5, {}).conv_tma);
  }
  {
    ConvOptEnv env("aligned64-lines-split");
    const LaunchPlan pl = plan_launch(h200(), Variant::optimized, f5, {});
    EXPECT_TRUE(pl.conv_split);
    EXPECT_TRUE(pl.conv_lines);
    EXPECT_EQ(pl.tile.str(), tile_str(64, 128));
  }
}

TEST(TileChoiceDevices, ConvOptimizedBadValues) {
  // strip<N> / walk<N> and -wide were removed (measured slower): errors like any typo, in every build.
  for (const char* bad : {"strip8", "walk4", "stripw", "strip8-wide", "fast", "-aligned", "wide", "aligned-wide",
                          "aligned7", "aligned0", "aligned-spilt", "aligned64-wide", "aligned-split-lines",
                          "aligned-pf-lines"}) {
    try {
      ConvOptEnv env(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a value"), std::string::npos) << bad << ": " << e.what();
    }
  }
}
}  // namespace tilekit::gpu
