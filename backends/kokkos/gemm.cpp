// C = alpha * A * B + beta * C in Kokkos.
//   naive:     one thread per element of C, a dot product straight from memory (on GPUs a
//              256-thread team per 32 x 8 piece of C, as the cuda backend launches it).
//   tiled:     the textbook shared-memory kernel (PMPP Fig. 5.13), written once for every backend
//              on the tile layer (backends/portable/gemm_tiled.hpp): one team per C tile, A and
//              B blocks in team scratch per K step, one lane (a team thread on GPUs) per element.
//   optimized: thread coarsening: each thread accumulates an R x R block of C in registers. On
//              GPUs the automatic tile runs GemmBlock, a fixed 128x128x16 (float) / 64x64x8
//              (double) block with 16-byte loads, A staged transposed in padded scratch, two
//              scratch buffers so the next K step loads while this one computes, and each 32
//              team ranks a 4 x 8 patch of the thread grid. Float on sm_90 (Kokkos::Cuda),
//              problems of at least one 256x128 block per SM: Sm90Team, the cuda backend's
//              sm_90 block body (backends/gpu/gemm_sm90.cuh) in a Kokkos team. On the tensor cores
//              (gemm_mma.hpp, CUDA sm_80+): double runs the cuda backend's DMMA block in a team, and
//              float under gemm.precision=tf32x3 its 3xTF32 block.
// An optimized tile whose register blocks outnumber the team's threads (an explicit tile too
// large for a GPU block) cannot keep every accumulator in a register across K steps: it runs
// the same kernel with the accumulators in scratch.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kokkos.hpp"
#include "common/portable/gemm_tiled.hpp"
#include "gemm_mma.hpp"
#include "host_packed.hpp"
#include "tilekit/ops.hpp"
#if defined(KOKKOS_ENABLE_CUDA)
#include "common/gpu/gemm_sm90.cuh"
#endif

namespace tilekit::kokkos {
// A named namespace, not an anonymous one: the functors and lambdas here instantiate Kokkos'
// __global__ kernels, and nvcc's extended lambdas want enclosing functions with external linkage.
namespace gemm_kernels {

// GemmArgs with 32-bit indices (the front end keeps every matrix under 2^31 elements).
template <class T>
struct GemmView {
  const T* a;
  const T* b;
  T* c;
  int m, n, k, lda, ldb, ldc;
  T alpha, beta;
  explicit GemmView(const GemmArgs<T>& g)
      : a(g.a), b(g.b), c(g.c), m(int(g.m)), n(int(g.n)), k(int(g.k)), lda(int(g.lda)), ldb(int(g.ldb)),
        ldc(int(g.ldc)), alpha(g.alpha), beta(g.beta) {}
  // beta == 0 must not read C: it may hold NaN.
  KOKKOS_INLINE_FUNCTION void store(int i, int j, T v) const {
    T& out = c[i * ldc + j];
    out = beta == T(0) ? alpha * v : alpha * v + beta * out;
  }
};

// The dot product's loop (the tuning kokkos.naive.loop; docs/design/kokkos-naive-gemm.md):
// plain (default), the textbook loop as the cuda kernel states it; under the team launch, with the
// strides in 32-bit registers (keep_strides32), its SASS is the cuda kernel's: the same 74
// instructions per 16 taps, loads in the same order. batch4 (a sweep value) walks pointers and issues four
// taps' loads before their four FMAs (the same products, added in the same order): the form that
// kept the load queue full while the launch's grid-stride loop still changed the plain loop's
// schedule, at 43% more warp instructions than cuda's loop.
inline bool naive_loop_batched() {
  return tuning_choice<bool>("kokkos.naive.loop", {{"plain", false}, {"batch4", true}});
}

// One kernel per loop form: beside the batch4 loop in the same kernel, the plain loop reloaded its
// parameters from the constant bank at every step (99 instructions per 16 taps against 74).
template <class T, bool kBatch4>
void gemm_naive_launch(const GemmView<T>& g, index_t league) {
  naive_for<true>(
      "tilekit::kokkos::gemm_naive", g.n, g.m, KOKKOS_LAMBDA(const int j, const int i) {
        const GemmView<T>& v = g;  // captured here: an extended lambda may not first capture in `if constexpr`
        T acc = 0;
        if constexpr (kBatch4) {
          const T* a = v.a + i * v.lda;
          const T* b = v.b + j;
          int p = 0;
          for (; p + 4 <= v.k; p += 4, b += 4 * v.ldb) {
            const T a0 = a[p], a1 = a[p + 1], a2 = a[p + 2], a3 = a[p + 3];
            const T b0 = b[0], b1 = b[v.ldb], b2 = b[2 * v.ldb], b3 = b[3 * v.ldb];
            acc += a0 * b0;
            acc += a1 * b1;
            acc += a2 * b2;
            acc += a3 * b3;
          }
          for (; p < v.k; ++p, b += v.ldb) acc += a[p] * *b;
        } else {
          int lda = v.lda, ldb = v.ldb;
          keep_strides32(lda, ldb);
          for (int p = 0; p < v.k; ++p) acc += v.a[i * lda + p] * v.b[p * ldb + j];
        }
        v.store(i, j, acc);
      },
      league);
}

// `league`: the plan's team launch (naive_league), 0 for MDRange.
template <class T>
void gemm_naive(const GemmArgs<T>& args, bool batched, index_t league) {
  const GemmView<T> g(args);
  if constexpr (kSweeps) {
    if (batched) return gemm_naive_launch<T, true>(g, league);
  }
  gemm_naive_launch<T, false>(g, league);
}

// ---------------------------------------------------------------------------------------------
// The general team kernel. R x R micro-tile per thread (R = 1: the textbook kernel); the thread's
// rows and columns are strided by the number of micro-tiles along each side, so adjacent threads
// read adjacent B columns from scratch and write adjacent C columns. S > 0 fixes the tile to
// S x S x S at compile time (index arithmetic becomes shifts, loops unroll).
// Persistent: the team has one thread per micro-tile, which keeps its accumulators in registers
// for the whole K loop. Otherwise a team of any size walks the micro-tiles in every K step and
// adds its partial sums to an accumulator tile in scratch.
// Direct (fixed tiles only, team of exactly S * S threads): the load phase as PMPP writes it,
// thread (ty, tx) copying A(ty, tx) and B(ty, tx) of the phase's tiles, both global loads issued
// before either scratch store. Otherwise the tiles are filled by two TeamThreadRange loops
// (for_each_in_tile), which work for any team size but whose second loop's load cannot be issued
// before the first loop's store has its data: two global-memory latencies per K step, not one.
template <class T, int R, bool Persistent, int S = 0, bool Direct = false>
struct GemmTeam {
  static_assert(!Direct || (S > 0 && R == 1 && Persistent), "direct loads need a fixed tile, one thread per element");
  // The 32 x 32 textbook tile is a 1024-thread block on GPUs: bound it so that two blocks share a
  // multiprocessor (at most 32 registers a thread), as raw CUDA's __launch_bounds__(1024, 2).
  using Policy = typename std::conditional<S == 32 && Persistent, Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<1024, 2>>,
                                           TeamPolicy>::type;
  GemmView<T> g;
  int tm_, tn_, tk_, tiles_n;

  KOKKOS_INLINE_FUNCTION int tm() const { return S > 0 ? S : tm_; }
  KOKKOS_INLINE_FUNCTION int tn() const { return S > 0 ? S : tn_; }
  KOKKOS_INLINE_FUNCTION int tk() const { return S > 0 ? S : tk_; }
  KOKKOS_INLINE_FUNCTION int tx() const { return (tn() + R - 1) / R; }  // micro-tiles along n
  KOKKOS_INLINE_FUNCTION int ty() const { return (tm() + R - 1) / R; }  // micro-tiles along m
  KOKKOS_INLINE_FUNCTION int micro_tiles() const { return tx() * ty(); }

  static std::size_t accumulator_bytes(int tm, int tn) { return Persistent ? 0 : align_up(sizeof(T) * tm * tn); }
  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int tm, int tn, int tk) {
    return kScratchAlign + align_up(sizeof(T) * tm * tk) + align_up(sizeof(T) * tk * tn) +
           (Persistent ? 0 : align_up(sizeof(T) * tm * tn));
  }

  // acc += (rows of micro-tile t of sa) x (columns of micro-tile t of sb), one K step.
  KOKKOS_INLINE_FUNCTION void multiply(int t, const T* sa, const T* sb, T (&acc)[R][R]) const {
    if constexpr (S > 0 && R == 1 && (S * int(sizeof(T))) % 16 == 0) {
      constexpr int W = Pack<T>::W;
      // Fixed textbook tile, unrolled. A warp's threads share one row of A (a broadcast), read
      // here W elements per 16-byte access: a quarter of the shared-memory instructions for A,
      // in a kernel whose speed is the rate of those instructions. (nvcc does this by itself
      // for a __shared__ array; through a scratch pointer it does not, even told the alignment.)
      const int r0 = t / S, c0 = t - r0 * S;
      TILEKIT_UNROLL
      for (int q0 = 0; q0 < S; q0 += W) {
        const Pack<T> x = *reinterpret_cast<const Pack<T>*>(sa + r0 * S + q0);
        TILEKIT_UNROLL
        for (int w = 0; w < W; ++w) acc[0][0] += x.v[w] * sb[(q0 + w) * S + c0];
      }
    } else if constexpr (S > 0) {
      TILEKIT_UNROLL
      for (int q = 0; q < S; ++q) multiply_step(t, q, sa, sb, acc);
    } else {
      for (int q = 0; q < tk(); ++q) multiply_step(t, q, sa, sb, acc);
    }
  }
  KOKKOS_INLINE_FUNCTION void multiply_step(int t, int q, const T* sa, const T* sb, T (&acc)[R][R]) const {
    const int TM = tm(), TN = tn(), TK = tk(), TX = tx(), TY = ty();
    const int r0 = t / TX, c0 = t - r0 * TX;
    {
      T av[R], bv[R];
      TILEKIT_UNROLL
      for (int i = 0; i < R; ++i) {
        const int r = r0 + i * TY;
        av[i] = (R == 1 || r < TM) ? sa[r * TK + q] : T(0);
      }
      TILEKIT_UNROLL
      for (int j = 0; j < R; ++j) {
        const int c = c0 + j * TX;
        bv[j] = (R == 1 || c < TN) ? sb[q * TN + c] : T(0);
      }
      TILEKIT_UNROLL
      for (int i = 0; i < R; ++i)
        TILEKIT_UNROLL
        for (int j = 0; j < R; ++j) acc[i][j] += av[i] * bv[j];
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int TM = tm(), TN = tn(), TK = tk(), TX = tx(), TY = ty();
    const int i0 = team.league_rank() / tiles_n * TM, j0 = team.league_rank() % tiles_n * TN;
    ScratchCarver scratch(team, scratch_bytes(TM, TN, TK));
    T* sa = scratch.take<T>(TM * TK);
    T* sb = scratch.take<T>(TK * TN);
    T* sacc = Persistent ? nullptr : scratch.take<T>(TM * TN);

    T acc[R][R];
    if (Persistent) {
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j) acc[i][j] = 0;
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM * TN), [&](const int e) { sacc[e] = 0; });
    }

    for (int p0 = 0; p0 < g.k; p0 += TK) {
      // Load phase: coalesced rows of A and B, zeros outside the matrices so the compute phase
      // needs no bounds checks.
      if constexpr (Direct) {
        const int t = team.team_rank(), ty = t / S, tx = t - ty * S;
        const int gi = i0 + ty, ga = p0 + tx, gb = p0 + ty, gj = j0 + tx;
        const T av = (gi < g.m && ga < g.k) ? g.a[gi * g.lda + ga] : T(0);
        const T bv = (gb < g.k && gj < g.n) ? g.b[gb * g.ldb + gj] : T(0);
        sa[t] = av;
        sb[t] = bv;
      } else {
        for_each_in_tile(team, TM, TK, [&](const int r, const int q) {
          const int gi = i0 + r, gq = p0 + q;
          sa[r * TK + q] = (gi < g.m && gq < g.k) ? g.a[gi * g.lda + gq] : T(0);
        });
        for_each_in_tile(team, TK, TN, [&](const int q, const int c) {
          const int gq = p0 + q, gj = j0 + c;
          sb[q * TN + c] = (gq < g.k && gj < g.n) ? g.b[gq * g.ldb + gj] : T(0);
        });
      }
      team.team_barrier();  // the tiles are complete before anyone reads them
      if (Persistent) {
        if (team.team_rank() < TX * TY) multiply(team.team_rank(), sa, sb, acc);
      } else if (!exec_on_gpu()) {
        // Host spaces, where a team is one thread or a few: rows of the tile over the team and,
        // within a row, the i-q-j order of a CPU blocked loop, whose unit-stride updates of the
        // accumulator row the compiler vectorizes; the vector unit is the coarsening here. (The
        // GPU order above walks B down a column; 8-row register blocks in i-q-j order measured
        // slower on the CI machine than this.)
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM), [&](const int r) {
          T* acc_row = sacc + r * TN;
          for (int q = 0; q < TK; ++q) {
            const T av = sa[r * TK + q];
            const T* brow = sb + q * TN;
            for (int c = 0; c < TN; ++c) acc_row[c] += av * brow[c];
          }
        });
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TX * TY), [&](const int t) {
          T part[R][R];
          for (int i = 0; i < R; ++i)
            for (int j = 0; j < R; ++j) part[i][j] = 0;
          multiply(t, sa, sb, part);
          const int r0 = t / TX, c0 = t - r0 * TX;
          for (int i = 0; i < R; ++i)
            for (int j = 0; j < R; ++j) {
              const int r = r0 + i * TY, c = c0 + j * TX;
              if (r < TM && c < TN) sacc[r * TN + c] += part[i][j];
            }
        });
      }
      team.team_barrier();  // everyone is done reading before the next load overwrites the tiles
    }

    if (Persistent) {
      const int t = team.team_rank();
      if (t >= TX * TY) return;
      const int r0 = t / TX, c0 = t - r0 * TX;
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j) {
          const int r = r0 + i * TY, c = c0 + j * TX;
          if (r < TM && c < TN && i0 + r < g.m && j0 + c < g.n) g.store(i0 + r, j0 + c, acc[i][j]);
        }
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM * TN), [&](const int e) {
        const int r = e / TN, c = e - r * TN;
        if (i0 + r < g.m && j0 + c < g.n) g.store(i0 + r, j0 + c, sacc[e]);
      });
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The GPU block kernel behind optimized's automatic tile: BM x BN x BK fixed, NT = (BM/R)(BN/R)
// threads each owning an R x R block of C held in registers as H x H pieces of W = 16/sizeof(T)
// elements (float: 8 x 8 as 2 x 2 pieces of 4), the pieces BM/H rows or BN/H columns apart so
// that a warp's 16-byte scratch reads touch few banks and its C stores are contiguous.
// Each thread stages PA W-wide pieces of A and PB of B per K step (float 128x128x8: 1 and 1,
// 128x128x16: 2 and 2).
// A is stored transposed (K-major) so a thread reads its rows of A as whole pieces; its rows are
// padded by W elements, which keeps them 16-byte aligned and spreads a warp's transposed stores
// over the banks. Two scratch buffers: the loads for step p+1 are issued before the arithmetic
// of step p, and one barrier per step suffices.
// Patch: thread (ty, tx) of the (BM/R) x (BN/R) thread grid is taken from the team rank so that
// each 32 consecutive ranks (a warp on CUDA, where a team's threads are numbered along
// threadIdx.y with vector length 1) form a 4 x 8 patch of the grid: per K index a warp reads 4
// distinct A pieces and 8 distinct B pieces from scratch (one 128-byte wavefront each) instead
// of the 2 and 16 of a 2 x 16 strip (tx = rank % TX). Only speed depends on the grouping: any
// warp size computes the same result. The CUDA backend's kernel does the same (backends/gpu).
// Vec: A, B and the K/N extents allow 16-byte global loads (checked at launch); otherwise the
// same pieces are loaded element by element with bounds checks.
// VStore: the B pieces go to scratch through store_pack_scratch (an explicit st.shared.v4 on
// CUDA). Without it nvcc stores them in the K loop as W scalar stores (PTX: 4 st.shared.f32 per
// piece; the CUDA backend's kernel has one st.shared.v4), and the 16-deep float kernel spills 48 B;
// with it the K loop's shared stores match the CUDA kernel's and nothing spills, which makes the
// 16-deep block pay: the float default (see block_mode below; docs/design/kokkos-gemmblock.md).
template <class T, int BM, int BN, int BK, int R, bool Vec, bool Patch = true, bool VStore = false>
struct GemmBlock {
  static constexpr int W = Pack<T>::W, H = R / W;
  static constexpr int TX = BN / R, TY = BM / R, NT = TX * TY;
  static constexpr int LDA_S = BM + W, LDB_S = BN + W;
  static constexpr int PA = BM * BK / W / NT, PB = BK * BN / W / NT;  // pieces staged per thread
  static_assert(R % W == 0, "a thread's rows and columns come in whole pieces");
  static_assert(BK % W == 0 && BN % W == 0, "tiles are whole pieces");
  static_assert(PA >= 1 && PB >= 1 && BM * BK == PA * NT * W && BK * BN == PB * NT * W,
                "each thread stages whole pieces of A and of B");
  static_assert(!Patch || (TY % 4 == 0 && TX % 8 == 0 && NT % 32 == 0), "the thread grid must tile by 4 x 8");
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<NT, 2>>;

  GemmView<T> g;
  int tiles_m, tiles_n;
  bool vec_c;  // C rows allow 16-byte accesses
  // League ranks walk C in groups of kGroup block-rows, column by column, so that the blocks
  // resident at one time share rows of A and columns of B while those are still in L2.
  static constexpr int kGroup = 8;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return kScratchAlign + align_up(sizeof(T) * 2 * BK * LDA_S) + align_up(sizeof(T) * 2 * BK * LDB_S);
  }

  // Piece i of this thread's share of the A tile: row ra, columns ka..ka+W-1 (K); of B: row rb
  // (K), columns cb..cb+W-1. Consecutive ranks take consecutive pieces along a row: coalesced.
  KOKKOS_INLINE_FUNCTION static int a_row(int t, int i) { return (t + i * NT) / (BK / W); }
  KOKKOS_INLINE_FUNCTION static int a_col(int t, int i) { return (t + i * NT) % (BK / W) * W; }
  KOKKOS_INLINE_FUNCTION static int b_row(int t, int i) { return (t + i * NT) / (BN / W); }
  KOKKOS_INLINE_FUNCTION static int b_col(int t, int i) { return (t + i * NT) % (BN / W) * W; }

  KOKKOS_INLINE_FUNCTION void load(int t, int i0, int j0, int p0, Pack<T> (&pa)[PA], Pack<T> (&pb)[PB]) const {
    TILEKIT_UNROLL
    for (int i = 0; i < PA; ++i) {
      const int gi = i0 + a_row(t, i), gk = p0 + a_col(t, i);
      if (Vec) {
        if (gi < g.m && gk < g.k) pa[i] = *reinterpret_cast<const Pack<T>*>(g.a + gi * g.lda + gk);
        else for (int w = 0; w < W; ++w) pa[i].v[w] = 0;
      } else {
        TILEKIT_UNROLL
        for (int w = 0; w < W; ++w) pa[i].v[w] = (gi < g.m && gk + w < g.k) ? g.a[gi * g.lda + gk + w] : T(0);
      }
    }
    TILEKIT_UNROLL
    for (int i = 0; i < PB; ++i) {
      const int gq = p0 + b_row(t, i), gj = j0 + b_col(t, i);
      if (Vec) {
        if (gq < g.k && gj < g.n) pb[i] = *reinterpret_cast<const Pack<T>*>(g.b + gq * g.ldb + gj);
        else for (int w = 0; w < W; ++w) pb[i].v[w] = 0;
      } else {
        TILEKIT_UNROLL
        for (int w = 0; w < W; ++w) pb[i].v[w] = (gq < g.k && gj + w < g.n) ? g.b[gq * g.ldb + gj + w] : T(0);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int t = team.team_rank();
    const int pid = team.league_rank(), per_group = kGroup * tiles_n, first = pid / per_group * kGroup;
    const int group_rows = tiles_m - first < kGroup ? tiles_m - first : kGroup;
    const int i0 = (first + pid % per_group % group_rows) * BM, j0 = pid % per_group / group_rows * BN;
    ScratchCarver scratch(team, scratch_bytes());
    // Buffer b of A at as + b * BK * LDA_S, of B at bs + b * BK * LDB_S (both 16-byte multiples).
    T* as = scratch.take<T>(2 * BK * LDA_S);
    T* bs = scratch.take<T>(2 * BK * LDB_S);

    // The block of C this thread computes: (ty, tx) of the thread grid.
    constexpr int GC = Patch ? TX / 8 : 1;  // 4 x 8 patches per row of the grid
    const int patch = t / 32, lane = t % 32;
    const int tx = Patch ? patch % GC * 8 + lane % 8 : t % TX;
    const int ty = Patch ? patch / GC * 4 + lane / 8 : t / TX;

    T acc[R][R];
    TILEKIT_UNROLL
    for (int i = 0; i < R; ++i)
      TILEKIT_UNROLL
      for (int j = 0; j < R; ++j) acc[i][j] = 0;

    Pack<T> pa[PA], pb[PB];
    auto stage = [&](int buf) {
      TILEKIT_UNROLL
      for (int i = 0; i < PA; ++i) {
        const int ra = a_row(t, i), ka = a_col(t, i);
        TILEKIT_UNROLL
        for (int w = 0; w < W; ++w) as[buf * BK * LDA_S + (ka + w) * LDA_S + ra] = pa[i].v[w];
      }
      TILEKIT_UNROLL
      for (int i = 0; i < PB; ++i) {
        T* dst = bs + buf * BK * LDB_S + b_row(t, i) * LDB_S + b_col(t, i);
        if constexpr (VStore) store_pack_scratch(dst, pb[i]);
        else *reinterpret_cast<Pack<T>*>(dst) = pb[i];
      }
    };
    load(t, i0, j0, 0, pa, pb);
    stage(0);
    team.team_barrier();

    int cur = 0;
    for (int p0 = 0; p0 < g.k; p0 += BK) {
      const bool next = p0 + BK < g.k;
      if (next) load(t, i0, j0, p0 + BK, pa, pb);  // in flight during the arithmetic
      const T* a_s = as + cur * BK * LDA_S;
      const T* b_s = bs + cur * BK * LDB_S;
      TILEKIT_UNROLL
      for (int q = 0; q < BK; ++q) {
        T av[R], bv[R];
        TILEKIT_UNROLL
        for (int h = 0; h < H; ++h) {
          const Pack<T> x = *reinterpret_cast<const Pack<T>*>(a_s + q * LDA_S + h * (BM / H) + ty * W);
          const Pack<T> y = *reinterpret_cast<const Pack<T>*>(b_s + q * LDB_S + h * (BN / H) + tx * W);
          TILEKIT_UNROLL
          for (int w = 0; w < W; ++w) {
            av[h * W + w] = x.v[w];
            bv[h * W + w] = y.v[w];
          }
        }
        TILEKIT_UNROLL
        for (int i = 0; i < R; ++i)
          TILEKIT_UNROLL
          for (int j = 0; j < R; ++j) acc[i][j] += av[i] * bv[j];
      }
      // The other buffer was last read before the previous barrier: safe to overwrite now.
      if (next) stage(cur ^ 1);
      team.team_barrier();
      cur ^= 1;
    }

    TILEKIT_UNROLL
    for (int hr = 0; hr < H; ++hr)
      TILEKIT_UNROLL
      for (int wr = 0; wr < W; ++wr) {
        const int gi = i0 + hr * (BM / H) + ty * W + wr;
        if (gi >= g.m) continue;
        TILEKIT_UNROLL
        for (int hc = 0; hc < H; ++hc) {
          const int gj = j0 + hc * (BN / H) + tx * W;
          // acc is indexed with compile-time constants only (unrolled loops): a run-time index
          // or an address taken would move it from registers to local memory.
          if (vec_c && gj < g.n) {  // n % W == 0: the piece is wholly inside C
            Pack<T>* out = reinterpret_cast<Pack<T>*>(g.c + gi * g.ldc + gj);
            Pack<T> o;
            if (g.beta == T(0)) {
              TILEKIT_UNROLL
              for (int w = 0; w < W; ++w) o.v[w] = g.alpha * acc[hr * W + wr][hc * W + w];
            } else {
              o = *out;
              TILEKIT_UNROLL
              for (int w = 0; w < W; ++w) o.v[w] = g.alpha * acc[hr * W + wr][hc * W + w] + g.beta * o.v[w];
            }
            *out = o;
          } else {
            TILEKIT_UNROLL
            for (int w = 0; w < W; ++w)
              if (gj + w < g.n) g.store(gi, gj + w, acc[hr * W + wr][hc * W + w]);
          }
        }
      }
  }
};

// The block shapes GemmBlock is compiled for: the automatic one (depth BK) and, for float, an
// alternative depth (AltBK) that an explicit --tile 128,128,8 selects. With B's scratch stores
// split into scalar stores, 16 deep measured no faster than 8 and spilled 48 B at the 128
// registers two blocks per SM allow; with the 16-byte stores (vstore) it spills nothing and
// runs at 41.4 TFLOP/s against 38.6 for 8 deep on the H200 at 4096^3, so 16 is automatic, as in
// the CUDA backend.
template <class T> struct BlockShape;
template <> struct BlockShape<float> { static constexpr int BM = 128, BN = 128, BK = 16, AltBK = 8, R = 8; };
template <> struct BlockShape<double> { static constexpr int BM = 64, BN = 64, BK = 8, AltBK = 8, R = 4; };
template <class T, int BK, bool Vec, bool Patch = true, bool VStore = false>
using Block = GemmBlock<T, BlockShape<T>::BM, BlockShape<T>::BN, BK, BlockShape<T>::R, Vec, Patch, VStore>;
template <class T>
bool block_depth(int depth) { return depth == BlockShape<T>::BK || depth == BlockShape<T>::AltBK; }

// Which GemmBlock runs: the tuning kokkos.gemm.block (sweep values), else (auto) the measured best:
//   patch   each 32 ranks a 4 x 8 patch of the thread grid (the CUDA backend's mapping)
//   strip   tx = rank % TX: each 32 ranks a 2 x 16 strip of the thread grid
//   vstore  patch, B pieces stored to scratch as one 16-byte store (VStore above)
// H200, 4096^3 float (bench/results/kokkos-h200-optimized.txt, final run in h200-final-*):
// 128x128x8 patch 37467 GFLOP/s, strip 37449, 16 deep 37226 / 37292; vstore 128x128x8 38551,
// vstore 128x128x16 41360 = 97% of the CUDA backend's 42591 in the same run. So float defaults
// to vstore with the 16-deep block; double (64x64x8, measured 101% of CUDA with patch) keeps patch.
// Only the 16-byte-load (Vec) kernels offer strip and vstore; the element-wise ones use patch.
// A default build compiles the defaults' Vec kernels only (float vstore, double patch).
enum class BlockMode { patch, strip, vstore };
template <class T>
constexpr BlockMode kBlockDefault = std::is_same_v<T, float> ? BlockMode::vstore : BlockMode::patch;
template <class T>
BlockMode block_mode() {
  return tuning_choice<BlockMode>("kokkos.gemm.block", {{"auto", kBlockDefault<T>},
                                                       {"patch", BlockMode::patch},
                                                       {"strip", BlockMode::strip},
                                                       {"vstore", BlockMode::vstore}});
}

// The float gemm of sm_90 on Kokkos::Cuda: the cuda backend's block (backends/gpu/gemm_sm90.cuh,
// gemm_sm90_block: cp.async stages, warps of 4 x 8 thread tiles of 16 x 8, the early barrier, the
// FFMAs in one serpentine) run by a Kokkos team. Kokkos supplies what the CUDA launch did: the league rank
// is the block index, the team rank the thread index (vector length 1: a team's threads are
// numbered along threadIdx.y, so 32 consecutive ranks are a warp), level-0 team scratch the
// shared stages, team_barrier() the __syncthreads(), LaunchBounds the __launch_bounds__. The body
// is written once, for both backends. With the steady steps and spread copies (gemm_sm90.cuh's
// kSteady, kSpread) it runs at 0.99 of the same shape in cuda; branchier K steps were scheduled a
// little worse inside Kokkos' launch (0.93-0.94: docs/design/kokkos-sgemm-shared-body.md).
// The shape is cub3efzs': 256 x 128 x 8, one block of 256 threads per SM, the automatic tile
// while the problem gives every SM a block (smaller problems run GemmBlock). The cuda backend's
// default, dual3efs4r (128 x 128 x 16, 3 stages, two blocks an SM, 3-5% faster than cub3efzs),
// needs 49920 bytes of shared memory: above the 48 KiB Kokkos offers a team (Kokkos' CUDA team
// launches do not opt in to more; "insufficient shared memory" on the H200).
// The tuning kokkos.sgemm.kernel: sm90 (the default), and the sweep values cub (at every size, so
// that the conformance suite's small shapes run it), block (GemmBlock at every size), sm90z (the
// FFMAs in 4 x 4 zigzags) and sm90s1 (that, with the steady steps' copies one per K index rather
// than in groups every 4).
enum class Sm90Mode { sm90, sm90z, sm90s1, cub, block };
inline Sm90Mode sm90_mode() {
  return tuning_choice<Sm90Mode>("kokkos.sgemm.kernel", {{"sm90", Sm90Mode::sm90},
                                                         {"sm90s1", Sm90Mode::sm90s1},
                                                         {"sm90z", Sm90Mode::sm90z},
                                                         {"cub", Sm90Mode::cub},
                                                         {"block", Sm90Mode::block}});
}
#if defined(KOKKOS_ENABLE_CUDA)
template <int BM, int BN, int BK, int TM, int TN, int kStages, int kMinBlocks, bool kBar, int kSpreadK = 1,
          bool kSerp = false>
struct Sm90Team {
  static constexpr int NT = gpu::sgemm::threads(BM, BN, TM, TN);
  using Policy = Kokkos::TeamPolicy<Kokkos::Cuda, Kokkos::LaunchBounds<NT, kMinBlocks>>;
  gpu::GemmParams<float> g;
  int tiles_x, tiles_y, bvec, cvec;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return kScratchAlign + std::size_t(gpu::sgemm::smem_bytes(BM, BN, BK, kStages));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
#if defined(__CUDA_ARCH__)
    // The stages as an offset into the block's dynamic shared memory, worked out once and passed
    // through a shuffle: from Kokkos' scratch pointer itself (a generic pointer, aligned, checked
    // against the size, null when short) ptxas rematerialized that arithmetic in every K step,
    // ~55 uniform-datapath instructions a step (docs/design/kokkos-sgemm-shared-body.md). A shuffle's
    // result it keeps.
    extern __shared__ __align__(16) unsigned char tilekit_sm90_smem[];
    const auto* p = reinterpret_cast<unsigned char*>(ScratchCarver(team, scratch_bytes()).take<float>(0));
    const int off = __shfl_sync(0xffffffffu, int(p - tilekit_sm90_smem), 0);
    float* smem = reinterpret_cast<float*>(tilekit_sm90_smem + off);
    gpu::gemm_sm90_block<BM, BN, BK, TM, TN, kStages, /*early*/ true, /*fast*/ true, BK, /*ahead*/ 1, /*zig*/ !kSerp,
                         /*steady*/ true, /*spread*/ true, kSpreadK, kSerp>(
        g, tiles_x, tiles_y, bvec, cvec, team.league_rank(), team.team_rank(), smem, [&] { block_barrier<kBar>(team); });
#else
    (void)team;
#endif
  }
};
// The steady steps' copies in groups every 4 K indices, as the cuda default's (one every K index
// made ptxas put never-executed loads before each: 1.7-1.8% slower, sweep value sm90s1).
// Each K index's FFMAs in one serpentine over the rows, as the cuda default's: 2.6% faster than the
// 4 x 4 quadrants' zigzag order at 4096³ and 8192³ on an H200 (sweep value sm90z).
template <bool kBar, int kSpreadK = 4, bool kSerp = true>
using Sm90Cub = Sm90Team<256, 128, 8, 16, 8, 3, 1, kBar, kSpreadK, kSerp>;
#endif

struct CudaFacts {
  int major = 0, sms = 0;
};
inline const CudaFacts& cuda_facts() {
  static const CudaFacts f = [] {
    CudaFacts c;
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION >= 40000
    if (exec_is_cuda()) {
      const cudaDeviceProp prop = Kokkos::Cuda().cuda_device_prop();
      c.major = prop.major;
      c.sms = prop.multiProcessorCount;
    }
#endif
    return c;
  }();
  return f;
}
// Whether a float gemm tile `t` runs the sm_90 block here.
template <class T>
bool runs_sm90(const TileConfig& t) {
  if (!std::is_same_v<T, float> || !exec_is_cuda() || cuda_facts().major < 9 || sm90_mode() == Sm90Mode::block)
    return false;
  return t.rows == 256 && t.cols == 128 && t.depth == 8;
}

// Micro-tile of optimized's general kernel (explicit tiles, host spaces): 8 x 8, so that on a
// host, where a team is one thread, an 8 x 8 tile keeps its 64 accumulators in registers.
constexpr int kOptR = 8;
template <class Functor, class Policy = TeamPolicy>
int team_max(const Functor& f, std::size_t scratch) {
  Policy policy(1, 1);
  policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
  return policy.team_size_max(f, Kokkos::ParallelForTag());
}

// How a call runs, decided once (the plan's detail) for describe_launch and for the launch itself.
enum class Kind { naive, portable, team_persistent, team_shared, block, sm90, mma };
struct GemmPlan : OpPlan {
  Kind kind = Kind::naive;
  int r = 1;  // micro-tile side of the team kernels
  index_t naive_league = 0;  // naive: the team launch's league (0: MDRange)
  bool batched = false;      // naive: kokkos.naive.loop = batch4
  bool block_barrier = true;  // sm90: kokkos.barrier
  BlockMode block_mode = BlockMode::patch;  // block: kokkos.gemm.block
};

bool fixed_square(const TileConfig& t, int s) { return t.rows == s && t.cols == s && t.depth == s; }

template <class T>
GemmPlan plan(Variant v, const Problem& p, const TileConfig& t) {
  GemmPlan pl;
  if (v == Variant::naive) {
    pl.naive_league = naive_league(p.n, p.m, NaiveMode::team);
    pl.batched = naive_loop_batched();
    if (pl.naive_league > 0) {
      pl.launch.league = int(pl.naive_league);
      pl.launch.team = 256;
      pl.launch.kernel = "a 256-thread team per 32x8 piece of C, dot products from global memory";
    } else {
      pl.launch.kernel = exec_on_gpu() ? "MDRange over C, 32x8 blocks, dot products from global memory"
                                       : "MDRange over C, dot products from memory";
    }
    if (pl.batched) pl.launch.kernel += ", four taps' loads before their FMAs";
    return pl;
  }
  const int tiles_n = tiles(p.n, t.cols);
  pl.launch.league = tiles(p.m, t.rows) * tiles_n;
  if (v == Variant::tiled) {
    // The portable kernel (backends/portable/gemm_tiled.hpp) on the tile layer's Kokkos executor.
    pl.kind = Kind::portable;
    pl.launch.team = exec_on_gpu() ? t.rows * t.cols : 1;
    pl.launch.scratch = portable::GemmTiled<T>::scratch_bytes(t.rows, t.cols, t.depth);
    pl.launch.kernel = exec_on_gpu() ? std::string("tile layer: one lane per element of C (a team thread each)")
                                     : "tile layer: a lane per column of C, " + std::to_string(portable::kHostRows) +
                                           " rows of a compiled tile (a team of one thread loops over the lanes)";
    return pl;
  }
  if (v == Variant::optimized) {  // the tensor-core teams (gemm_mma.hpp) where they run
    if (const std::optional<Launch> m = mma::plan(dtype_of<T>(), p, t)) {
      pl.kind = Kind::mma;
      pl.launch = *m;
      return pl;
    }
  }
#if defined(KOKKOS_ENABLE_CUDA)
  if (v == Variant::optimized && runs_sm90<T>(t)) {
    pl.kind = Kind::sm90;
    pl.r = 16;
    pl.block_barrier = barrier_is_block();
    pl.launch.team = Sm90Cub<true>::NT;
    pl.launch.scratch = Sm90Cub<true>::scratch_bytes();
    pl.launch.kernel = "the cuda backend's sm_90 block (gemm_sm90_block, 256x128x8, copies in groups of 4 K indices) in a Kokkos team: 16x8 per thread "
                       "in registers, 3 cp.async stages in team scratch, " +
                       std::string(pl.block_barrier ? "__syncthreads()" : "team_barrier()") + " between them";
    return pl;
  }
#endif
  if (v == Variant::optimized && t.rows == BlockShape<T>::BM && t.cols == BlockShape<T>::BN &&
      block_depth<T>(t.depth)) {
    auto try_block = [&](auto probe) {
      using B = decltype(probe);
      if (team_max<B, typename B::Policy>(probe, B::scratch_bytes()) < B::NT) return false;
      pl.kind = Kind::block;
      pl.r = BlockShape<T>::R;
      pl.block_mode = block_mode<T>();
      pl.launch.team = B::NT;
      pl.launch.scratch = B::scratch_bytes();
      pl.launch.kernel = "GemmBlock: " + std::to_string(pl.r) + "x" + std::to_string(pl.r) +
                         " per thread in registers, padded transposed A, double-buffered scratch, " +
                         (pl.block_mode == BlockMode::strip ? "2x16 thread strips per 32 ranks"
                                                            : "4x8 thread patches per 32 ranks") +
                         (pl.block_mode == BlockMode::vstore ? ", 16-byte scratch stores of B" : "");
      return true;
    };
    const GemmView<T> none{GemmArgs<T>{}};
    const bool ok = t.depth == BlockShape<T>::BK ? try_block(Block<T, BlockShape<T>::BK, true>{none, 1, 1, false})
                                                 : try_block(Block<T, BlockShape<T>::AltBK, true>{none, 1, 1, false});
    if (ok) return pl;
  }
  const int r = kOptR;
  const int micro = ((t.rows + r - 1) / r) * ((t.cols + r - 1) / r);
  pl.r = r;
  const GemmView<T> none{GemmArgs<T>{}};
  GemmTeam<T, kOptR, true> persistent{none, t.rows, t.cols, t.depth, 1};
  const std::size_t bytes = decltype(persistent)::scratch_bytes(t.rows, t.cols, t.depth);
  if (team_max<decltype(persistent), typename decltype(persistent)::Policy>(persistent, bytes) >= micro) {
    pl.kind = Kind::team_persistent;
    pl.launch.team = micro;
    pl.launch.scratch = bytes;
    pl.launch.kernel = "one thread per " + std::to_string(r) + "x" + std::to_string(r) + " block of C, accumulators in registers";
    return pl;
  }
  pl.kind = Kind::team_shared;
  GemmTeam<T, kOptR, false> probe{none, t.rows, t.cols, t.depth, 1};
  pl.launch.scratch = probe.scratch_bytes(t.rows, t.cols, t.depth);
  TeamPolicy policy(1, 1);
  policy.set_scratch_size(0, Kokkos::PerTeam(pl.launch.scratch));
  const int team = policy.team_size_recommended(probe, Kokkos::ParallelForTag());
  pl.launch.team = std::max(1, std::min(team, micro));
  pl.launch.kernel = std::to_string(r) + "x" + std::to_string(r) + " blocks of C shared out among the team, accumulators in scratch";
  return pl;
}

// Bytes the kernel needs beyond the textbook A and B tiles, were it to run this tile.
template <class T>
std::size_t reserved_bytes(const GemmPlan& pl, const Problem& p, const TileConfig& t) {
  const std::size_t e = sizeof(T);
  if (pl.kind == Kind::block || pl.kind == Kind::sm90 || pl.kind == Kind::mma) return pl.launch.scratch - tile_scratch_bytes(p, t);
  std::size_t r = kScratchAlign + 2 * (kScratchAlign - 1);  // alignment, worst case
  if (pl.kind == Kind::team_shared) r += align_up(e * std::size_t(t.rows) * std::size_t(t.cols));
  return r;
}

template <class T>
TileConfig auto_tile(Variant v, const Problem& p) {
  const std::size_t s = scratch_max(), e = sizeof(T);
  if (v == Variant::optimized) {
    if (const std::optional<TileConfig> m = mma::auto_tile(p)) return *m;  // gemm_mma.hpp
    // sm_90 float: cuBLAS's 256 x 128 block while every SM gets one, else GemmBlock's 128 x 128
    // (where the cuda backend steps down to dual3efz, which does not fit a Kokkos team).
    const TileConfig cub{256, 128, 8};
    if (runs_sm90<T>(cub) && (sm90_mode() == Sm90Mode::cub || tiles(p.m, 256) * tiles(p.n, 128) >= cuda_facts().sms))
      return cub;
    if (exec_on_gpu()) return {BlockShape<T>::BM, BlockShape<T>::BN, BlockShape<T>::BK};
    // Host: a team is one thread. A 32 x 32 block of C (sixteen 8 x 8 register blocks, their
    // sums kept in a scratch accumulator between K steps) with the deepest K step whose A and B
    // tiles fit beside it. On the CI machine's Serial space (512^3 float) this ran at 6.2
    // GFLOP/s, against 4.4 for a single 8 x 8 block kept in registers: that one repacks A and B
    // for every 64 outputs.
    const int side = 4 * kOptR;
    const std::size_t acc = align_up(e * side * side) + 3 * kScratchAlign;
    int depth = 512;
    while (depth > 8 && acc + 2 * e * std::size_t(side) * depth > s) depth /= 2;
    return {side, side, depth};
  }
  // tiled: a square tile at a width the portable kernel compiles (the K loop unrolls): on GPUs
  // 32 x 32 (a team thread per element of C: 1024), on hosts 64 (a vectorised lane loop), the
  // widest whose A and B blocks fit the scratch.
  for (int side : {exec_on_gpu() ? 32 : 64, 32, 16, 8}) {
    const std::size_t bytes = portable::GemmTiled<T>::scratch_bytes(side, side, side) + kScratchAlign;
    if (bytes > s) continue;
    return {side, side, side};
  }
  return {8, 8, 8};
}

inline bool aligned(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

template <class F>
void launch_team(const char* name, const Launch& l, const F& f) {
  typename F::Policy policy(l.league, l.team);
  policy.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
  Kokkos::parallel_for(name, policy, f);
}

}  // namespace gemm_kernels

using namespace gemm_kernels;

namespace gemm_kernels {
template <class T>
tilekit::Plan plan_call(Variant v, const Problem& p, const TileConfig& requested) {
  tilekit::Plan out;
  GemmPlan pl;
  if (v == Variant::optimized && host_path::available()) {
    out.tile = host_path::tile(p, requested);
    pl.host = true;
    pl.launch.kernel = host_path::gemm_kernel(p.dtype);
  } else if (requested.is_auto()) {
    out.tile = v == Variant::naive ? TileConfig{} : auto_tile<T>(v, p);
    pl = plan<T>(v, p, out.tile);
  } else {
    // An explicit tile is checked as the tiled kernel would run it, even for naive (which then
    // ignores it).
    const GemmPlan checked = plan<T>(v == Variant::naive ? Variant::tiled : v, p, requested);
    // (The tensor-core teams checked their own launch against Kokkos' real limit for their team.)
    if (checked.kind != Kind::mma)
      check_team_scratch(p, requested, reserved_bytes<T>(checked, p, requested),
                         checked.kind == Kind::team_shared ? "alignment and the accumulator tile" : "alignment and padding");
    if (v == Variant::tiled) check_tile_lanes(p, requested, requested.rows * requested.cols, "one per element of C");
    out.tile = v == Variant::naive ? TileConfig{} : requested;
    pl = v == Variant::naive ? plan<T>(v, p, out.tile) : checked;
  }
  out.detail = std::shared_ptr<const OpPlan>(std::make_shared<const GemmPlan>(std::move(pl)));
  return out;
}
}  // namespace gemm_kernels

Plan gemm_plan(Variant v, const Problem& p, const TileConfig& requested) {
  return p.dtype == DType::f32 ? plan_call<float>(v, p, requested) : plan_call<double>(v, p, requested);
}

template <class T>
void gemm(const tilekit::Plan& plan, const GemmArgs<T>& args) {
  const GemmPlan& pl = static_cast<const GemmPlan&>(*plan.get<OpPlan>());
  if (plan.variant == Variant::naive) return gemm_naive(args, pl.batched, pl.naive_league);
  if (pl.host) return host_path::gemm(args, plan.tile);
  const TileConfig& t = plan.tile;
  const GemmView<T> g(args);
  const int tiles_n = tiles(args.n, t.cols);
  const Launch& l = pl.launch;
  switch (pl.kind) {
    case Kind::portable:
      return portable::gemm_tiled<exec_on_gpu()>(args, t, [](const tile::Shape& sh, const auto& k) { tile::run_kokkos(sh, k); });
    case Kind::team_persistent:
      return launch_team("tilekit::kokkos::gemm_coarsened", l, GemmTeam<T, kOptR, true>{g, t.rows, t.cols, t.depth, tiles_n});
    case Kind::team_shared:
      return launch_team("tilekit::kokkos::gemm_coarsened_shared", l,
                            GemmTeam<T, kOptR, false>{g, t.rows, t.cols, t.depth, tiles_n});
    case Kind::block: {
      constexpr int W = Pack<T>::W;
      const bool vec_ab = g.lda % W == 0 && g.ldb % W == 0 && g.k % W == 0 && g.n % W == 0 && aligned(g.a) && aligned(g.b);
      const bool vec_c = g.ldc % W == 0 && g.n % W == 0 && aligned(g.c);
      auto run = [&](auto f) {
        using F = decltype(f);
        typename F::Policy policy(l.league, l.team);
        policy.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
        Kokkos::parallel_for("tilekit::kokkos::gemm_block", policy, f);
      };
      const int tiles_m = tiles(args.m, t.rows);
      auto run_depth = [&](auto depth) {
        constexpr int BK = decltype(depth)::value;
        if (!vec_ab) return run(Block<T, BK, false>{g, tiles_m, tiles_n, vec_c});
        // The default's Vec kernel; the others in sweep builds only (a default build's plan
        // never names them).
        if constexpr (kBlockDefault<T> == BlockMode::vstore) {
          if (!kSweeps || pl.block_mode == BlockMode::vstore) return run(Block<T, BK, true, true, true>{g, tiles_m, tiles_n, vec_c});
        } else {
          if (!kSweeps || pl.block_mode == BlockMode::patch) return run(Block<T, BK, true>{g, tiles_m, tiles_n, vec_c});
        }
        if constexpr (kSweeps) {
          switch (pl.block_mode) {
            case BlockMode::patch: return run(Block<T, BK, true>{g, tiles_m, tiles_n, vec_c});
            case BlockMode::strip: return run(Block<T, BK, true, false>{g, tiles_m, tiles_n, vec_c});
            case BlockMode::vstore: return run(Block<T, BK, true, true, true>{g, tiles_m, tiles_n, vec_c});
          }
        }
      };
      if (t.depth == BlockShape<T>::BK) run_depth(std::integral_constant<int, BlockShape<T>::BK>{});
      else if constexpr (BlockShape<T>::AltBK != BlockShape<T>::BK)
        run_depth(std::integral_constant<int, BlockShape<T>::AltBK>{});
      return;
    }
    case Kind::sm90: {
#if defined(KOKKOS_ENABLE_CUDA)
      if constexpr (std::is_same_v<T, float>) {
        const gpu::GemmParams<float> gp{g.m, g.n, g.k, g.alpha, g.beta, g.a, g.lda, g.b, g.ldb, g.c, g.ldc};
        const int bvec = aligned(g.b) && g.ldb % 4 == 0, cvec = aligned(g.c) && g.ldc % 4 == 0;
        const int tiles_m = tiles(args.m, t.rows);
#if defined(TILEKIT_HAS_SWEEPS)
        if (!pl.block_barrier)  // kokkos.barrier=team: sweep builds only
          return launch_team("tilekit::kokkos::gemm_sm90", l, Sm90Cub<false>{gp, tiles_n, tiles_m, bvec, cvec});
        if (sm90_mode() == Sm90Mode::sm90s1)
          return launch_team("tilekit::kokkos::gemm_sm90", l, Sm90Cub<true, 1, false>{gp, tiles_n, tiles_m, bvec, cvec});
        if (sm90_mode() == Sm90Mode::sm90z)
          return launch_team("tilekit::kokkos::gemm_sm90", l, Sm90Cub<true, 4, false>{gp, tiles_n, tiles_m, bvec, cvec});
#endif
        return launch_team("tilekit::kokkos::gemm_sm90", l, Sm90Cub<true>{gp, tiles_n, tiles_m, bvec, cvec});
      }
#endif
      return;
    }
    case Kind::mma: return mma::gemm(args, t);
    case Kind::naive: break;
  }
}

template void gemm<float>(const tilekit::Plan&, const GemmArgs<float>&);
template void gemm<double>(const tilekit::Plan&, const GemmArgs<double>&);

}  // namespace tilekit::kokkos
