// The Kokkos executor of tile kernels: a tile is a team of a TeamPolicy over the default
// execution space, scratch the team's level-0 scratch pad, a barrier team_barrier().
//   GPU spaces (Cuda, HIP): a team of lanes.count() threads, one lane each; lane state in
//   registers, loads as in gpu.hpp (asynchronous copies where the GPU has them).
//   Host spaces: a team of one thread that runs each phase as a loop over the lanes, exactly as
//   host.hpp does (Kokkos' host teams are one thread wide); lane state in a per-thread arena.
// Included by tile.hpp when Kokkos is (define TILEKIT_TILE_WITH_KOKKOS, or include
// <Kokkos_Core.hpp> first).
#pragma once

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

#include "tilekit/tile/core.hpp"
#include "tilekit/tile/gpu.hpp"
#include "tilekit/tile/host.hpp"

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

namespace detail {

// Whether teams of `Exec` are GPU thread blocks (a function for host and device code alike).
template <class Exec>
KOKKOS_INLINE_FUNCTION constexpr bool kokkos_space_is_gpu() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Exec, Kokkos::Cuda>::value) return true;
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
  if (std::is_same<Exec, Kokkos::HIP>::value) return true;
#else
  if (std::is_same<Exec, Kokkos::Experimental::HIP>::value) return true;
#endif
#endif
  return false;
}

using KokkosExec = Kokkos::DefaultExecutionSpace;
// Whether kernel K runs as GPU teams (value-dependent on K, so that `if constexpr` discards the
// other path's functor instead of compiling it for the wrong space).
template <class K>
constexpr bool kokkos_gpu_teams = kokkos_space_is_gpu<KokkosExec>() && sizeof(K) > 0;
using KokkosPolicy = Kokkos::TeamPolicy<KokkosExec>;
using KokkosMember = KokkosPolicy::member_type;

// The team's scratch, 16-byte aligned.
KOKKOS_INLINE_FUNCTION unsigned char* kokkos_scratch(const KokkosMember& m, std::size_t bytes) {
  return bytes ? static_cast<unsigned char*>(m.team_scratch(0).get_shmem_aligned(bytes, kScratchAlign)) : nullptr;
}

// Slack for aligning the team's scratch start, where the space has room for it (a launch at
// exactly the space's limit relies on Kokkos' own alignment of the scratch start).
inline std::size_t kokkos_scratch_request(std::size_t bytes) {
  const std::size_t most = std::size_t(KokkosPolicy::scratch_size_max(0));
  return bytes + kScratchAlign <= most ? bytes + kScratchAlign : bytes;
}

// KokkosShared::block (Kokkos::Cuda): Kokkos' CUDA ParallelFor of a TeamPolicy puts
// sizeof(double) * (team size + 2) bytes for its team reductions, broadcasts and scans at the
// start of every block's dynamic shared memory, and the team's scratch after them. A tile
// kernel uses none of those, so it takes the block's shared memory from its start and asks
// Kokkos for that much less scratch: the block then needs no more shared memory than the same
// tile's CUDA block, and as many of them fit an SM under the same carveout. The team checks
// on the device that Kokkos' scratch does end where the tile's does (else it aborts).
KOKKOS_INLINE_FUNCTION constexpr std::size_t kokkos_cuda_team_reserve(int team_size) {
  return sizeof(double) * std::size_t(team_size + 2);
}
KOKKOS_INLINE_FUNCTION constexpr std::size_t kokkos_block_request(std::size_t bytes, int team_size) {
  const std::size_t reserve = kokkos_cuda_team_reserve(team_size);
  return bytes > reserve ? bytes - reserve : 0;
}

// Host spaces: the host executor's tile over the team's scratch.
template <class K>
struct KokkosHostTiles {
  K kernel;
  Shape s;
  bool threads;  // whether teams run on several threads at once (atomics on memory must be real)
  void operator()(const KokkosMember& m) const {
    HostTile tile(s, index_t(m.league_rank()), kokkos_scratch(m, s.scratch_bytes), host_thread_state().arena, threads);
    kernel(tile);
  }
};

}  // namespace detail

// Where a GPU team's scratch lies in its block's shared memory: where Kokkos' team scratch puts
// it (every space), or from the block's start, over Kokkos' team-reduction space (block:
// Kokkos::Cuda only, for kernels that use no Kokkos team collective; see
// detail::kokkos_block_request).
enum class KokkosShared { scratch, block };

#if defined(__CUDACC__) || defined(__HIPCC__)
// GPU spaces: one lane per team thread; kLx x kLy lanes when the kernel fixes them (kLanes).
// kWholeBlock (KokkosShared::block): the team owns its block's shared memory from the start, and
// its barrier is the block's (a team of lanes is a whole block: vector length 1).
template <int kLx = 0, int kLy = 0, bool kWholeBlock = false>
class KokkosGpuTile {
 public:
  KOKKOS_INLINE_FUNCTION KokkosGpuTile(const detail::KokkosMember& m, const Shape& s)
      : m_(m),
        smem_(kWholeBlock ? block_base(m, s.scratch_bytes) : aligned_base(detail::kokkos_scratch(m, s.scratch_bytes))),
        cap_(s.scratch_bytes),
        tx_(index_t(m.league_rank()) % s.tiles_x),
        ty_(index_t(m.league_rank()) / s.tiles_x),
        lanes_(kLx > 0 ? Dim2{kLx, kLy} : s.lanes),
        lane_{m.team_rank() % (kLx > 0 ? kLx : s.lanes.x), m.team_rank() / (kLx > 0 ? kLx : s.lanes.x), m.team_rank()},
        constants_(s.constants) {}
  KOKKOS_INLINE_FUNCTION index_t x() const { return tx_; }
  KOKKOS_INLINE_FUNCTION index_t y() const { return ty_; }
  KOKKOS_INLINE_FUNCTION Dim2 lanes() const {
    if constexpr (kLx > 0)
      return {kLx, kLy};
    else
      return lanes_;
  }

  // The lane is worked out once per tile, not by a division by a run-time lane count in every
  // phase, which the tiled gemm's K loop cannot afford (docs/design/tile-layer-launch-bounds.md).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_lanes(const F& f) const {
    f(lane_);
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_lanes(Dim2 upto, const F& f) const {
    if (lane_.x < upto.x && lane_.y < upto.y) f(lane_);
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each(int n, const F& f) const {
    const int nt = m_.team_size();
    for (int i = m_.team_rank(); i < n; i += nt) f(i);
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each(int rows, int cols, const F& f) const {
    for (int r = lane_.y; r < rows; r += lanes().y)
      for (int c = lane_.x; c < cols; c += lanes().x) f(r, c);
  }
  // Loads are asynchronous copies on GPUs that have them: wait for this thread's first.
  // kWholeBlock: __syncthreads() itself, not Kokkos' team_barrier(), which tests blockDim.z at
  // every call and branches around the barrier (docs/design/kokkos-block-barrier.md).
  KOKKOS_INLINE_FUNCTION void barrier() const {
    KOKKOS_IF_ON_DEVICE((detail::copy_async_wait_all();))
    if constexpr (kWholeBlock) {
      KOKKOS_IF_ON_DEVICE((__syncthreads();))
      KOKKOS_IF_ON_HOST((m_.team_barrier();))
    } else {
      m_.team_barrier();
    }
  }

  // Constants in constant memory, as on the GPU executor (run_kokkos copies them there on
  // Kokkos' stream): read from global memory, the conv2d's 25 filter taps took 25 registers and
  // the team spilled under the kernel's launch bounds.
  template <class T>
  KOKKOS_INLINE_FUNCTION const T* constants_as() const {
    KOKKOS_IF_ON_DEVICE((return detail::constants_of<T>();))
    KOKKOS_IF_ON_HOST((return static_cast<const T*>(constants_);))
  }
  template <class T, int kLd>
  KOKKOS_INLINE_FUNCTION ScratchView<T, kLd> scratch_view(int rows, int cols, int ld) {
    const std::size_t bytes = align_scratch(std::size_t(rows) * std::size_t(ld) * sizeof(T));
    if (used_ + bytes > cap_) Kokkos::abort("tilekit tile kernel: scratch carved beyond its launch's scratch_bytes");
    T* p = reinterpret_cast<T*>(smem_ + used_);
    used_ += bytes;
    return {p, rows, cols, ld};
  }
  template <class T, int N>
  KOKKOS_INLINE_FUNCTION GpuLaneState<T, N> make_lane_state() const {
    return {};
  }
  template <class T, int kLd>
  KOKKOS_INLINE_FUNCTION void load(const ScratchView<T, kLd>& dst, const GlobalView<T>& src, index_t row0,
                                   index_t col0) const {
    KOKKOS_IF_ON_DEVICE((detail::gpu_load(dst, src, row0, col0, lane_, lanes());))
    KOKKOS_IF_ON_HOST((Kokkos::abort("tilekit tile kernel: the GPU tile ran on the host");))
  }
  template <class T, int kLd>
  KOKKOS_INLINE_FUNCTION detail::GpuBlockWalk<T, kLd> walk(const ScratchView<T, kLd>& dst, const GlobalView<T>& src,
                                                           index_t row0, index_t col0, index_t step_rows,
                                                           index_t step_cols) const {
    detail::GpuBlockWalk<T, kLd> w{};
    KOKKOS_IF_ON_DEVICE((w = detail::gpu_walk(dst, src, row0, col0, step_rows, step_cols, lane_, lanes());))
    KOKKOS_IF_ON_HOST((Kokkos::abort("tilekit tile kernel: the GPU tile ran on the host");))
    return w;
  }
  template <class T, int kLd>
  KOKKOS_INLINE_FUNCTION void load(const detail::GpuBlockWalk<T, kLd>& w) const {
    KOKKOS_IF_ON_DEVICE((detail::gpu_walk_load(w, lane_, lanes());))
    KOKKOS_IF_ON_HOST((Kokkos::abort("tilekit tile kernel: the GPU tile ran on the host");))
  }

  // Atomics: Kokkos' own; collectives: the GPU executor's (gpu.hpp), over the team's threads.
  template <AtomicOp op, class T, int kLd>
  KOKKOS_INLINE_FUNCTION T scratch_atomic(const ScratchView<T, kLd>& s, int r, int c, T v) const {
    return global_atomic<op>(&s(r, c), v);
  }
  template <AtomicOp op, class T>
  KOKKOS_INLINE_FUNCTION T global_atomic(T* p, T v) const {
    static_assert(detail::kAtomicSupported<op, T>, "tile atomics: add on int, unsigned, long long, unsigned "
                                                   "long long, float, double; min and max on the integer types");
    if constexpr (op == AtomicOp::add)
      return Kokkos::atomic_fetch_add(p, v);
    else if constexpr (op == AtomicOp::min)
      return Kokkos::atomic_fetch_min(p, v);
    else
      return Kokkos::atomic_fetch_max(p, v);
  }
  template <class Op, class State>
  KOKKOS_INLINE_FUNCTION typename State::value_type reduce(State& x, Op op) {
    typename State::value_type r{};
    KOKKOS_IF_ON_DEVICE((r = detail::gpu_block_reduce(x.v[0], op, lane_.id, lanes().count(), set_);))
    KOKKOS_IF_ON_HOST((Kokkos::abort("tilekit tile kernel: the GPU tile ran on the host");))
    return r;
  }
  template <class Op, class State, class F>
  KOKKOS_INLINE_FUNCTION void reduce_to_lane0(State& x, Op op, const F& f) {
    KOKKOS_IF_ON_DEVICE((detail::gpu_block_reduce_to_lane0(x.v[0], op, lane_.id, lanes().count(), set_, f);))
    KOKKOS_IF_ON_HOST((Kokkos::abort("tilekit tile kernel: the GPU tile ran on the host");))
  }
  template <bool kInclusive, class Op, class In, class Out>
  KOKKOS_INLINE_FUNCTION typename In::value_type scan(In& x, Out& y, Op op) {
    typename In::value_type r{};
    KOKKOS_IF_ON_DEVICE((r = detail::gpu_block_scan<kInclusive>(x.v[0], y.v[0], op, lane_.id, lanes().count(), set_);))
    KOKKOS_IF_ON_HOST((Kokkos::abort("tilekit tile kernel: the GPU tile ran on the host");))
    return r;
  }

 private:
  // Kokkos' scratch pointer, rebuilt as the block's dynamic shared base plus an offset whose low
  // bits are visibly zero: Kokkos computes the offset at run time, so the compiler cannot prove
  // 16-byte alignment from its pointer and reads a lane's row of scratch one scalar at a time
  // (the tiled gemm: 32 ld.shared.f32 where the CUDA block issues 8 ld.shared.v4).
  KOKKOS_INLINE_FUNCTION static unsigned char* aligned_base(unsigned char* p) {
    KOKKOS_IF_ON_DEVICE((
      extern __shared__ __align__(16) unsigned char tilekit_tile_kokkos_smem[];
      if (p) return tilekit_tile_kokkos_smem + ((p - tilekit_tile_kokkos_smem) & ~std::ptrdiff_t(kScratchAlign - 1));
    ))
    return p;
  }
  // KokkosShared::block: the block's shared memory from its start, after checking that Kokkos'
  // team scratch (asked for kokkos_block_request(bytes) bytes) ends at or beyond `bytes`.
  KOKKOS_INLINE_FUNCTION static unsigned char* block_base(const detail::KokkosMember& m, std::size_t bytes) {
    KOKKOS_IF_ON_DEVICE((
      extern __shared__ __align__(16) unsigned char tilekit_tile_kokkos_smem[];
      const std::size_t request = detail::kokkos_block_request(bytes, m.team_size());
      auto* p = static_cast<unsigned char*>(m.team_scratch(0).get_shmem(request));
      if (!p || p + request < tilekit_tile_kokkos_smem + bytes)
        Kokkos::abort("tilekit tile kernel: Kokkos' team scratch does not follow its team-reduction space "
                      "(KokkosShared::block)");
      return tilekit_tile_kokkos_smem;
    ))
    return nullptr;
  }
  const detail::KokkosMember& m_;
  unsigned char* smem_;
  std::size_t used_ = 0, cap_;
  index_t tx_, ty_;
  Dim2 lanes_;
  Lane lane_;
  const void* constants_;
  int set_ = 0;  // the collectives' slot set the next one uses
};

namespace detail {
// The policy of kernel K's GPU teams, with K's launch bounds (kMaxLanes, kMinTilesPerSM) as the
// CUDA/HIP entry declares them: without them the team's compiler takes registers freely (the
// tiled gemm: 38 instead of 32, so one 1024-lane team an SM instead of two, 1.47x the time).
template <class K>
using KokkosGpuPolicy = Kokkos::TeamPolicy<KokkosExec, Kokkos::LaunchBounds<MaxLanes<K>::value, MinTiles<K>::value>>;
template <class K, KokkosShared kShared = KokkosShared::scratch>
struct KokkosGpuTiles {
  K kernel;
  Shape s;
  KOKKOS_INLINE_FUNCTION void operator()(const KokkosMember& m) const {
    KokkosGpuTile<FixedLanes<K>::value.x, FixedLanes<K>::value.y, kShared == KokkosShared::block> tile(m, s);
    kernel(tile);
  }
};
}  // namespace detail
#endif

// Launches every tile of s as a team of Kokkos' default execution space (asynchronously on GPU
// spaces, like every Kokkos kernel; the next kernel in that space sees its results).
// kShared = block: see KokkosShared (Kokkos::Cuda; host spaces ignore it).
template <KokkosShared kShared = KokkosShared::scratch, class K>
void run_kokkos(const Shape& s, const K& kernel) {
  detail::check_fixed_lanes<K>(s);
  if (s.tiles() == 0) return;
  if (s.tiles() > index_t(INT_MAX))
    throw Error(std::string("tile kernel '") + s.name + "': " + std::to_string(s.tiles()) +
                " tiles exceed Kokkos' league size limit of 2^31 - 1");
  const std::string label = std::string("tilekit::tile::") + s.name;
  if constexpr (detail::kokkos_gpu_teams<K>) {
#if defined(__CUDACC__) || defined(__HIPCC__)
    // The most lanes a team of this kernel may have, asked before a policy of that team size is
    // made (Kokkos throws from the constructor past its limit).
#if defined(KOKKOS_ENABLE_CUDA)
    constexpr KokkosShared kMode = kShared;
#else
    static_assert(kShared == KokkosShared::scratch, "KokkosShared::block is Kokkos::Cuda's layout");
    constexpr KokkosShared kMode = KokkosShared::scratch;
#endif
    const detail::KokkosGpuTiles<K, kMode> f{kernel, s};
    const std::size_t request = kMode == KokkosShared::block
                                    ? detail::kokkos_block_request(s.scratch_bytes, s.lanes.count())
                                    : detail::kokkos_scratch_request(s.scratch_bytes);
    using Policy = detail::KokkosGpuPolicy<K>;
    Policy probe(1, 1);
    probe.set_scratch_size(0, Kokkos::PerTeam(request));
    const int most = probe.team_size_max(f, Kokkos::ParallelForTag());
    if (s.lanes.count() > most)
      throw Error(std::string("tile kernel '") + s.name + "' is launched with " + std::to_string(s.lanes.count()) +
                  " lanes per tile, but Kokkos' " + detail::KokkosExec::name() + " offers teams of at most " +
                  std::to_string(most) + " threads for it");
#if defined(KOKKOS_ENABLE_CUDA)
    detail::gpu_copy_constants(s, detail::KokkosExec().cuda_stream());
#else
    detail::gpu_copy_constants(s, detail::KokkosExec().hip_stream());
#endif
    Policy policy(int(s.tiles()), s.lanes.count());
    policy.set_scratch_size(0, Kokkos::PerTeam(request));
    Kokkos::parallel_for(label, policy, f);
#endif
  } else {
    detail::KokkosPolicy policy(int(s.tiles()), 1);
    policy.set_scratch_size(0, Kokkos::PerTeam(detail::kokkos_scratch_request(s.scratch_bytes)));
    Kokkos::parallel_for(label, policy, detail::KokkosHostTiles<K>{kernel, s, detail::KokkosExec().concurrency() > 1});
  }
}

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile
