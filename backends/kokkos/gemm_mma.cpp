// The tensor-core gemm teams (gemm_mma.hpp): the cuda backend's DMMA and 3xTF32 block bodies in
// Kokkos teams on Kokkos::Cuda.
#include "gemm_mma.hpp"

#include <string>

#include "tilekit/tunings.hpp"
#if defined(KOKKOS_ENABLE_CUDA)
#include "common/gpu/gemm_dmma.cuh"
#include "common/gpu/gemm_tf32x3.cuh"
#endif

namespace tilekit::kokkos::mma {
// A named namespace: the functors instantiate Kokkos' __global__ kernels (as gemm.cpp's).
namespace teams {

#if defined(KOKKOS_ENABLE_CUDA)
// What both teams share: the league is the grid, the team a block of NT ranks (vector length 1,
// so 32 consecutive ranks are a warp), the stages an offset into the block's dynamic shared
// memory, worked out once from Kokkos' scratch pointer and passed through a shuffle (from the
// pointer itself ptxas rematerializes Kokkos' alignment arithmetic in every K step:
// docs/design/kokkos-sgemm-shared-body.md), and the block barrier instruction or team_barrier().
template <class T>
KOKKOS_INLINE_FUNCTION T* stages_of(const Member& team, std::size_t bytes) {
#if defined(__CUDA_ARCH__)
  extern __shared__ __align__(16) unsigned char tilekit_mma_smem[];
  const auto* p = reinterpret_cast<unsigned char*>(ScratchCarver(team, bytes).take<T>(0));
  const int off = __shfl_sync(0xffffffffu, int(p - tilekit_mma_smem), 0);
  return reinterpret_cast<T*>(tilekit_mma_smem + off);
#else
  return ScratchCarver(team, bytes).take<T>(0);
#endif
}

// gemm_dmma_block, BM x BN x BK, WARPS_M x WARPS_N warps, m16n8k16 or (8 deep) m16n8k8 on sm_90
// (on sm_80 the same registers feed m8n8k4), kStages stages, registers bounded for TEAMS teams an SM.
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int kStages, int TEAMS, bool kBar>
struct DmmaTeam {
  static constexpr int NT = 32 * WARPS_M * WARPS_N;
  using Policy = Kokkos::TeamPolicy<Kokkos::Cuda, Kokkos::LaunchBounds<NT, TEAMS>>;
  gpu::GemmParams<double> g;
  int tiles_x, tiles_y, vec, cvec;
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return kScratchAlign + std::size_t(gpu::dmma::smem_bytes(BM, BN, kStages, BK));
  }
  static std::string shape() {
    return std::to_string(WARPS_M) + "x" + std::to_string(WARPS_N) + " warps of " + std::to_string(BM / WARPS_M) + "x" +
           std::to_string(BN / WARPS_N) + ", " + std::to_string(kStages) + " cp.async stages " + std::to_string(BK) +
           " deep in team scratch";
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
#if defined(__CUDA_ARCH__)
    gpu::gemm_dmma_block<BM, BN, WARPS_M, WARPS_N, true, kStages, BK>(
        g, tiles_x, tiles_y, vec, cvec, team.league_rank(), team.team_rank(), stages_of<double>(team, scratch_bytes()),
        [&] { block_barrier<kBar>(team); });
#else
    (void)team;
#endif
  }
};

// The compiled teams, by tile (gemm_mma.hpp). 64x64x16: 2x2 warps of 32x32, 2 stages, bounded for
// two teams an SM, ptxas gives it 164 registers, so three fit. 64x128x8: 2x2 warps of 32x64,
// 3 stages (43776 bytes), 236 registers, two teams an SM.
template <bool kBar, class F>
void with_dmma_team(const TileConfig& t, F&& f) {
  if (t.cols == 128) return f(DmmaTeam<64, 128, 8, 2, 2, 3, 2, kBar>{});
  f(DmmaTeam<64, 64, 16, 2, 2, 2, 2, kBar>{});
}

// gemm_tf32x3_block, 128x64x16, 2x2 warps of 64x32, 3 stages, two teams an SM.
template <bool kBar>
struct Tf32x3Team {
  static constexpr int BM = 128, BN = 64, BK = 16, WARPS_M = 2, WARPS_N = 2, NT = 32 * WARPS_M * WARPS_N, kStages = 3;
  using Policy = Kokkos::TeamPolicy<Kokkos::Cuda, Kokkos::LaunchBounds<NT, 2>>;
  gpu::GemmParams<float> g;
  int tiles_x, tiles_y, vec, cvec;
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return kScratchAlign + std::size_t(gpu::tf32x3::smem_bytes(BM, BN, BK, kStages));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
#if defined(__CUDA_ARCH__)
    gpu::gemm_tf32x3_block<BM, BN, BK, WARPS_M, WARPS_N, kStages>(g, tiles_x, tiles_y, vec, cvec, team.league_rank(),
                                                                  team.team_rank(), stages_of<float>(team, scratch_bytes()),
                                                                  [&] { block_barrier<kBar>(team); });
#else
    (void)team;
#endif
  }
};

struct Device {
  int major = 0, sms = 0;
  std::size_t smem_per_block = 0;
};
const Device& device() {
  static const Device d = [] {
    Device r;
#if KOKKOS_VERSION >= 40000
    if (exec_is_cuda()) {
      const cudaDeviceProp& prop = Kokkos::Cuda().cuda_device_prop();
      r.major = prop.major;
      r.sms = prop.multiProcessorCount;
      r.smem_per_block = prop.sharedMemPerBlock;
    }
#endif
    return r;
  }();
  return d;
}
// Whether a team of `team` ranks with `scratch` bytes of level-0 scratch launches: Kokkos' CUDA
// team launch takes (team + 2) doubles of the block's shared memory for itself and refuses past
// the default per-block limit (no opt-in). (TeamPolicy::scratch_size_max(0) is lower: it keeps
// room for teams of 1024.)
bool launches(int team, std::size_t scratch) {
  return scratch + sizeof(double) * std::size_t(team + 2) <= device().smem_per_block;
}
#endif

bool tensor_cores() {
#if defined(KOKKOS_ENABLE_CUDA)
  return exec_is_cuda() && device().major >= 8;
#else
  return false;
#endif
}

// gemm.precision=tf32x3 on this space: false on host spaces (FP32 FMA is as accurate); on a GPU that
// cannot run the 3xTF32 team, an error.
bool tf32x3_here() {
  if (tilekit::tuning("gemm.precision") != "tf32x3" || !exec_on_gpu()) return false;
  if (!tensor_cores())
    throw Error("gemm.precision=tf32x3: the float gemm on the TF32 tensor cores (3xTF32) needs Kokkos::Cuda on NVIDIA "
                "sm_80 or later, which this Kokkos device is not; gemm.precision=fp32 runs FP32 FMA");
  return true;
}
// kokkos.dgemm.kernel: mma (the DMMA team where it runs) or block (gemm.cpp's generic block).
bool dgemm_here() { return tensor_cores() && tilekit::tuning("kokkos.dgemm.kernel") != "block"; }

bool same(const TileConfig& a, const TileConfig& b) { return a.rows == b.rows && a.cols == b.cols && a.depth == b.depth; }

#if defined(KOKKOS_ENABLE_CUDA)
// Every team a block of 256 ranks, so every warp is whole for mma.sync.
struct DmmaPeak {
  Kokkos::View<double*, Kokkos::CudaSpace> out;
  int iters;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
#if defined(__CUDA_ARCH__)
    const int tid = team.league_rank() * team.team_size() + team.team_rank();
    out(tid) = gpu::dmma::peak_chains(tid, iters);
#else
    (void)team;
#endif
  }
};
#endif

}  // namespace teams

using namespace teams;

double dmma_peak_gflops(int sms) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (!dgemm_here() || sms <= 0) return 0;
  const int team = 256, league = sms * 8 * 4, iters = 1024;  // every SM full (2048 threads), 4 times over
  const DmmaPeak f{Kokkos::View<double*, Kokkos::CudaSpace>("tilekit::dmma_peak", std::size_t(league) * team), iters};
  const TeamPolicy policy(league, team);
  double best = 1e30;
  for (int r = 0; r < 6; ++r) {  // the first one warms up
    Kokkos::fence();
    Kokkos::Timer t;
    Kokkos::parallel_for("tilekit::kokkos::dmma_peak", policy, f);
    Kokkos::fence();
    if (r > 0) best = std::min(best, t.seconds());
  }
  return gpu::dmma::kPeakFlopsPerStep * double(iters) * double(league) * team / best * 1e-9;
#else
  (void)sms;
  return 0;
#endif
}

std::optional<TileConfig> auto_tile(const Problem& p) {
  if (p.dtype == DType::f32) {
    if (tf32x3_here()) return tf32x3_tile();
    return std::nullopt;
  }
  if (!dgemm_here()) return std::nullopt;
#if defined(KOKKOS_ENABLE_CUDA)
  // 64x128x8 once it gives every SM 8 blocks (four waves of two, the cuda backend's rule for it on
  // sm_90, where cuda's 128x128 takes over from 16 an SM: a team cannot have that), else 64x64
  // (H200: 1.10x 64x64 at 4096³, 1.08x 64x96 and 1.03x cuda at 8192³: docs/design/kokkos-gemm-mma.md).
  if (tiles(p.m, 64) * tiles(p.n, 128) >= 8 * index_t(device().sms)) return dgemm_wide_tile();
#endif
  return dgemm_tile();
}

std::optional<Launch> plan(DType dt, const Problem& p, const TileConfig& t) {
#if defined(KOKKOS_ENABLE_CUDA)
  Launch l;
  if (dt == DType::f32) {
    if (!tf32x3_here()) return std::nullopt;
    if (!same(t, tf32x3_tile()))
      throw Error("gemm optimized tile " + t.str() + " under gemm.precision=tf32x3: the kokkos backend's 3xTF32 team is "
                  "compiled for " + tf32x3_tile().str());
    using F = Tf32x3Team<true>;
    l.team = F::NT;
    l.scratch = F::scratch_bytes();
    l.kernel = "the cuda backend's 3xTF32 block (gemm_tf32x3_block) in a Kokkos team: 3 TF32 tensor-core products a "
               "multiply-add (mma.sync m16n8k8), 2x2 warps of 64x32, 3 cp.async stages in team scratch";
  } else {
    if (!dgemm_here() || !(same(t, dgemm_tile()) || same(t, dgemm_wide_tile()))) return std::nullopt;
    with_dmma_team<true>(t, [&](auto team) {
      using F = decltype(team);
      l.team = F::NT;
      l.scratch = F::scratch_bytes();
      l.kernel = std::string("the cuda backend's DMMA block (gemm_dmma_block) in a Kokkos team: FP64 tensor cores (mma.sync ") +
                 (device().major < 9 ? "m8n8k4" : t.depth == 8 ? "m16n8k8" : "m16n8k16") + "), " + F::shape();
    });
  }
  if (!launches(l.team, l.scratch))
    throw Error("gemm optimized tile " + t.str() + ": its team needs " + std::to_string(l.scratch) +
                " bytes of shared memory beside Kokkos' own, more than this device gives a Kokkos team (" +
                std::to_string(device().smem_per_block) + " bytes a block, no opt-in)");
  l.league = tiles(p.m, t.rows) * tiles(p.n, t.cols);
  l.kernel += barrier_is_block() ? ", __syncthreads() between them" : ", team_barrier() between them";
  return l;
#else
  (void)dt, (void)p, (void)t;
  return std::nullopt;
#endif
}

namespace {
#if defined(KOKKOS_ENABLE_CUDA)
template <class F>
void launch(const char* name, int league, const F& f) {
  typename F::Policy policy(league, F::NT);
  policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes()));
  Kokkos::parallel_for(name, policy, f);
}
bool aligned(const void* p, std::size_t n) { return reinterpret_cast<std::uintptr_t>(p) % n == 0; }
template <class T>
gpu::GemmParams<T> params(const GemmArgs<T>& a) {
  return {int(a.m), int(a.n), int(a.k), a.alpha, a.beta, a.a, int(a.lda), a.b, int(a.ldb), a.c, int(a.ldc)};
}
#endif
}  // namespace

void gemm(const GemmArgs<float>& a, const TileConfig& t) {
#if defined(KOKKOS_ENABLE_CUDA)
  const gpu::GemmParams<float> g = params(a);
  const int tx = tiles(a.n, t.cols), ty = tiles(a.m, t.rows);
  const int vec = aligned(g.a, 16) && aligned(g.b, 16) && g.lda % 4 == 0 && g.ldb % 4 == 0;
  const int cvec = aligned(g.c, 8) && g.ldc % 2 == 0;
#if defined(TILEKIT_HAS_SWEEPS)  // kokkos.barrier=team: sweep builds only
  if (!barrier_is_block()) return launch("tilekit::kokkos::gemm_tf32x3", tx * ty, Tf32x3Team<false>{g, tx, ty, vec, cvec});
#endif
  launch("tilekit::kokkos::gemm_tf32x3", tx * ty, Tf32x3Team<true>{g, tx, ty, vec, cvec});
#else
  (void)a, (void)t;
#endif
}

void gemm(const GemmArgs<double>& a, const TileConfig& t) {
#if defined(KOKKOS_ENABLE_CUDA)
  const gpu::GemmParams<double> g = params(a);
  const int tx = tiles(a.n, t.cols), ty = tiles(a.m, t.rows);
  const int vec = aligned(g.a, 16) && aligned(g.b, 16) && g.lda % 2 == 0 && g.ldb % 2 == 0;
  const int cvec = aligned(g.c, 16) && g.ldc % 2 == 0;
  auto run = [&](auto team) {
    using F = decltype(team);
    launch("tilekit::kokkos::gemm_dmma", tx * ty, F{g, tx, ty, vec, cvec});
  };
#if defined(TILEKIT_HAS_SWEEPS)  // kokkos.barrier=team: sweep builds only
  if (!barrier_is_block()) return with_dmma_team<false>(t, run);
#endif
  with_dmma_team<true>(t, run);
#else
  (void)a, (void)t;
#endif
}

}  // namespace tilekit::kokkos::mma
