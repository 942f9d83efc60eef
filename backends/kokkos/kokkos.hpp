// The kokkos backend: every kernel is written once against Kokkos' default execution space.
// naive kernels are flat MDRangePolicy loops on hosts and, for gemm and conv2d, cuda-shaped team
// launches on GPUs (naive_for); tiled and optimized kernels use hierarchical parallelism: a league
// of teams, one per output tile, whose inputs are staged in team scratch (level 0: shared memory
// when the space is Cuda/HIP, ordinary memory on host spaces) between team_barrier()s.
//
// Each operation's file (gemm.cpp, transpose.cpp, conv2d.cpp) exposes the same two things: the
// plan of a call (its tile, the launch that tile gives, which kernel runs and the tunings it
// follows: everything decided once per call) and the kernels, which launch what the plan says.
// Every source here is compiled by nvcc_wrapper when Kokkos targets CUDA, so device code
// (KOKKOS_LAMBDA, KOKKOS_INLINE_FUNCTION) lives in them.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "tilekit/backend.hpp"
#include "tilekit/config.hpp"
#include "tilekit/tile/kokkos.hpp"
#include "tilekit/tunings.hpp"

// Unrolls a loop with compile-time bounds in device code; host compilers (nvcc's host pass
// included) decide for themselves, and GCC would warn about the pragma.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TILEKIT_UNROLL _Pragma("unroll")
#define TILEKIT_UNROLL_4 _Pragma("unroll 4")
#else
#define TILEKIT_UNROLL
#define TILEKIT_UNROLL_4
#endif

#if defined(__GNUC__) || defined(__clang__) || defined(__CUDACC__)
#define TILEKIT_ASSUME_ALIGNED(p, n) __builtin_assume_aligned((p), (n))
#else
#define TILEKIT_ASSUME_ALIGNED(p, n) (p)
#endif

namespace tilekit::kokkos {

// Whether the measured alternatives to the default kernels are compiled (-DTILEKIT_BUILD_SWEEPS=ON):
// the sweep values of the kokkos.* tunings select them.
#ifdef TILEKIT_HAS_SWEEPS
inline constexpr bool kSweeps = true;
#else
inline constexpr bool kSweeps = false;
#endif

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using TeamPolicy = Kokkos::TeamPolicy<Exec>;
using Member = TeamPolicy::member_type;
// Flat naive kernels: the first index is the column. Kokkos maps index 0 to threadIdx.x on GPUs
// (adjacent threads, adjacent columns: coalesced row-major accesses) and, with Iterate::Left,
// runs it innermost on hosts.
using Policy2D = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;

// Whether teams are GPU thread blocks (team scratch = shared memory, a team of many threads).
// Host and device function: kernels branch on it too (a plain constexpr function would need
// nvcc's --expt-relaxed-constexpr there).
KOKKOS_INLINE_FUNCTION constexpr bool exec_on_gpu() { return tile::detail::kokkos_space_is_gpu<Exec>(); }

// Whether the space is Kokkos::Cuda (CUDA-only instructions beside Kokkos: cp.async, __constant__).
KOKKOS_INLINE_FUNCTION constexpr bool exec_is_cuda() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<Exec, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

// Level-0 scratch one team may use, as the execution space reports it.
inline std::size_t scratch_max() { return std::size_t(TeamPolicy::scratch_size_max(0)); }
// The shared memory an SM gives its blocks (Kokkos::Cuda; elsewhere no limit is known: SIZE_MAX),
// and what CUDA keeps of it for every resident block.
std::size_t smem_per_sm();
inline constexpr std::size_t kSmemReservedPerBlock = 1024;

// Scratch arrays are carved out of one block, each starting on a 16-byte boundary so that
// 16-byte vector loads are legal on every space; a team asks for the arrays plus 16 bytes
// of slack for aligning the block's start.
constexpr std::size_t kScratchAlign = 16;
KOKKOS_INLINE_FUNCTION constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
}
class ScratchCarver {
 public:
  KOKKOS_INLINE_FUNCTION ScratchCarver(const Member& team, std::size_t bytes)
      : p_(static_cast<char*>(team.team_scratch(0).get_shmem_aligned(bytes - kScratchAlign, kScratchAlign))) {}
  // The alignment is promised to the compiler too: fixed-size tile loops then read
  // consecutive scratch elements as one 16-byte access (LDS.128 on NVIDIA GPUs).
  template <class T>
  KOKKOS_INLINE_FUNCTION T* take(std::size_t count) {
    T* r = static_cast<T*>(TILEKIT_ASSUME_ALIGNED(p_, kScratchAlign));
    p_ += align_up(count * sizeof(T));
    return r;
  }

 private:
  char* p_;
};

// W = 16 / sizeof(T) consecutive elements, 16-byte aligned: one 128-bit load or store.
template <class T>
struct alignas(16) Pack {
  static constexpr int W = int(16 / sizeof(T));
  T v[W];
};

// *dst = p as one 16-byte store, dst in team scratch (level 0: shared memory on CUDA) and 16-byte
// aligned. nvcc 13 stores GemmBlock's B piece in its K loop as W scalar stores (4 STS.32, each
// 4-way bank-conflicted, instead of one STS.128) however the copy is written: a Pack copy, a
// float4 from make_float4, a __builtin_assume_aligned address. On CUDA this states the vector
// store in PTX; elsewhere it is the plain copy.
template <class T>
KOKKOS_INLINE_FUNCTION void store_pack_scratch(T* dst, const Pack<T>& p) {
#if defined(__CUDA_ARCH__)
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (std::is_same<T, float>::value) {
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(a), "f"(p.v[0]), "f"(p.v[1]), "f"(p.v[2]),
                 "f"(p.v[3])
                 : "memory");
    return;
  } else if constexpr (std::is_same<T, double>::value) {
    asm volatile("st.shared.v2.f64 [%0], {%1, %2};" ::"r"(a), "d"(p.v[0]), "d"(p.v[1]) : "memory");
    return;
  }
#endif
  *reinterpret_cast<Pack<T>*>(dst) = p;
}

// *dst = p as one 16-byte store to global memory (dst 16-byte aligned). A Pack copy is W scalar
// stores wherever nvcc cannot prove the alignment itself; on CUDA this states the vector store
// in PTX (st.global.v4 / v2), elsewhere it is the plain copy.
template <class T>
KOKKOS_INLINE_FUNCTION void store_pack_global(T* dst, const Pack<T>& p) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<T, float>::value) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(dst)), "f"(p.v[0]),
                 "f"(p.v[1]), "f"(p.v[2]), "f"(p.v[3])
                 : "memory");
    return;
  } else if constexpr (std::is_same<T, double>::value) {
    asm volatile("st.global.v2.f64 [%0], {%1, %2};" ::"l"(__cvta_generic_to_global(dst)), "d"(p.v[0]), "d"(p.v[1])
                 : "memory");
    return;
  }
#endif
  *reinterpret_cast<Pack<T>*>(dst) = p;
}

// Calls f(r, c) for every element of a rows x cols tile, shared out among the team's threads.
// GPUs: one flat range, so consecutive threads take consecutive columns (coalesced row-major
// accesses). Hosts: whole rows per thread, with no index division per element and a unit-stride
// inner loop the compiler can vectorize.
template <class F>
KOKKOS_INLINE_FUNCTION void for_each_in_tile(const Member& team, int rows, int cols, const F& f) {
  if (exec_on_gpu()) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * cols), [&](const int e) {
      const int r = e / cols;
      f(r, e - r * cols);
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int r) {
      for (int c = 0; c < cols; ++c) f(r, c);
    });
  }
}

inline Policy2D naive_policy(index_t cols, index_t rows) {
  // 32 x 8 blocks on GPUs: one warp along a row. Host spaces keep Kokkos' default tiling.
  if (exec_on_gpu()) return Policy2D({0, 0}, {cols, rows}, {32, 8});
  return Policy2D({0, 0}, {cols, rows});
}

// How the naive kernels run on GPU spaces (the tuning kokkos.naive.launch, read by the plan):
// mdrange (the MDRangePolicy above) or team (a league of 256-thread teams, one per 32 x 8 piece of
// the output in row-major order, team rank r at column r % 32 and row r / 32: the cuda backend's
// naive launch as Kokkos can state it); auto, the operation's `fallback` (gemm: team; conv2d: team
// on Kokkos::Cuda; transpose: mdrange; docs/design/kokkos-naive-gemm.md). Host spaces: mdrange.
enum class NaiveMode { mdrange, team };
NaiveMode naive_mode(NaiveMode fallback);
// The league of the team launch for a cols x rows output, or 0 where the MDRange launch runs
// (mdrange chosen, a host space, or more pieces than a league may have: Kokkos::Cuda refuses a
// league of maxGridSize[0] = 2^31 - 1 or more).
inline index_t naive_league(index_t cols, index_t rows, NaiveMode fallback) {
  const index_t pieces = ((cols + 31) / 32) * ((rows + 7) / 8);
  return naive_mode(fallback) == NaiveMode::team && pieces < index_t(INT32_MAX) ? pieces : 0;
}

// An empty asm over the strides a and b, which the compiler must then take as unknown 32-bit
// values. NVVM folds the sign extension of a 32-bit stride read from a Kokkos closure into the
// parameter load (ld.param.s32 into a 64-bit register); the loop then steps its pointer with a 64-bit add pair (IADD3 + IADD3.X) where the
// same loop in a __global__ function keeps the 32-bit stride and ptxas steps with one IMAD.WIDE.
// Through this the strides stay 32-bit registers, as in the cuda kernel. One statement for both:
// with one each, ptxas scheduled the naive gemm's loop with 8 loads ahead of its first FMA instead
// of the cuda kernel's 14. Elsewhere: nothing.
KOKKOS_INLINE_FUNCTION void keep_strides32(int& a, int& b) {
#if defined(__CUDA_ARCH__)
  asm("" : "+r"(a), "+r"(b));
#else
  (void)a;
  (void)b;
#endif
}

// How the team launch divides a league rank into the piece's column and row. ptxas lays out the
// body after it differently: the conv2d body is the cuda kernel's either way and the unsigned
// division is 6 SASS instructions shorter a thread; after the unsigned one the gemm's loop
// reloads its parameters from the constant bank (87 instructions per 16 taps against 74).
enum class NaiveIndex { signed_div, unsigned_div };

// f(j, i) for every column j < cols and row i < rows: the team launch over `league` teams when the
// plan gave one (league > 0, naive_league), else the MDRange launch. kTeams: whether the team
// launch is compiled (the operations whose default is MDRange have it in sweep builds only).
//
// Every Kokkos launch wraps the functor in a grid-stride loop (TeamPolicy: over league ranks from
// blockIdx.x in steps of gridDim.x). Inside that loop NVVM compiles the naive bodies differently
// from the same source in a plain __global__ function: it strength-reduces the tap addresses to
// 64-bit pointer walks and keeps parameters in uniform registers that each step must copy
// (39 SASS instructions per 4 conv2d taps against the cuda kernel's 32). On Kokkos::Cuda the grid
// of a TeamPolicy launch is the league itself (the policy refuses a larger league), so that loop
// runs once per block; a thread that ends (PTX exit) after its output tells the compiler so, the
// loop is gone, and the body compiles to the cuda kernel's SASS. Serial-execution debug builds of
// Kokkos launch one block for the whole league: they keep the loop.
template <bool kTeams, NaiveIndex kIndex = NaiveIndex::signed_div, class F>
void naive_for(const char* name, index_t cols, index_t rows, const F& f, index_t league) {
  if constexpr (kTeams) {
    if (league > 0) {
      const int c = int(cols), r = int(rows), x = int((cols + 31) / 32);
      Kokkos::parallel_for(name, TeamPolicy(int(league), 256), KOKKOS_LAMBDA(const Member& team) {
        // t unsigned: % 32 and / 32 are a mask and a shift. Everything the branches use is read
        // here first: an extended lambda may not first capture inside `if constexpr`.
        const unsigned t = unsigned(team.team_rank());
        const int b = team.league_rank(), xs = x, rs = r, cs = c;
        const F& fs = f;
        if constexpr (kIndex == NaiveIndex::unsigned_div) {
          const unsigned ub = unsigned(b), ux = unsigned(xs);
          const unsigned j = ub % ux * 32u + t % 32u, i = ub / ux * 8u + t / 32u;
          if (i < unsigned(rs) && j < unsigned(cs)) fs(int(j), int(i));
        } else {
          const int j = b % xs * 32 + int(t % 32u), i = b / xs * 8 + int(t / 32u);
          if (i < rs && j < cs) fs(j, i);
        }
#if defined(__CUDA_ARCH__) && !defined(KOKKOS_IMPL_DEBUG_CUDA_SERIAL_EXECUTION)
        asm volatile("exit;");
        __builtin_unreachable();
#endif
      });
      return;
    }
  } else {
    (void)league;
  }
  Kokkos::parallel_for(name, naive_policy(cols, rows), f);
}

// One launch as a kernel will make it.
struct Launch {
  int league = 0, team = 0, vector = 1;  // team = 0: a flat MDRange launch
  std::size_t scratch = 0;               // level-0 bytes per team
  std::string kernel;                    // which kernel, in words
};
std::string describe(const Launch& l);
// The detail of every kokkos plan (tilekit::Plan::detail points at one): its launch, and each
// operation's own choices in a struct derived from it.
struct OpPlan {
  Launch launch;
  bool host = false;  // optimized on a host space: the host's fast path (host_packed.hpp)
};

// "Kokkos::Serial team scratch (level 0: N bytes[, less R that this kernel keeps for ...])"
std::string scratch_where(std::size_t reserved, const char* what);
// Throws like check_tile_fits when the tile's textbook bytes plus what the kernel adds (padding,
// accumulators, a staged filter, alignment) exceed the space's level-0 scratch.
void check_team_scratch(const Problem& p, const TileConfig& t, std::size_t reserved, const char* what);

// The tiled variants' lanes are team threads on GPU spaces: refuses (tilekit::Error, before any
// launch) a tile that needs more than a team can have. `what`: what one lane computes.
void check_tile_lanes(const Problem& p, const TileConfig& t, int lanes, const char* what);

// The barrier of a team that is a whole GPU block (NT team threads, vector length 1, so blockDim.z
// is 1). Kokkos' team_barrier() on Cuda and HIP tests blockDim.z at every call (1: __syncthreads();
// otherwise a fence, for teams inside one warp): a branch around every barrier, which cuts a K
// step or a tile's phases into basic blocks that ptxas schedules apart. kBlock: the barrier
// instruction itself, as the cuda backend's kernels; host spaces always take team_barrier().
// Chosen by the tuning kokkos.barrier = block (default) | team (a sweep value: its kernels are
// compiled in sweep builds only; docs/design/kokkos-block-barrier.md).
template <bool kBlock, class M>
KOKKOS_INLINE_FUNCTION void block_barrier(const M& team) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if (kBlock) __syncthreads();
  else team.team_barrier();
#else
  team.team_barrier();
#endif
}

inline bool barrier_is_block() { return tuning_choice<bool>("kokkos.barrier", {{"block", true}, {"team", false}}); }

// Integer ceil-divide, for tiles along a dimension.
inline int tiles(index_t extent, int tile) { return int((extent + tile - 1) / tile); }

// ---- per operation: the plan (the tile, auto or validated, and its launch; detail: an OpPlan),
// and the kernel that runs it
Plan gemm_plan(Variant v, const Problem& p, const TileConfig& requested);
template <class T>
void gemm(const Plan& pl, const GemmArgs<T>& a);

Plan transpose_plan(Variant v, const Problem& p, const TileConfig& requested);
template <class T>
void transpose(const Plan& pl, const TransposeArgs<T>& a);

Plan conv2d_plan(Variant v, const Problem& p, const TileConfig& requested);
template <class T>
void conv2d(const Plan& pl, const Conv2dArgs<T>& a);

}  // namespace tilekit::kokkos
