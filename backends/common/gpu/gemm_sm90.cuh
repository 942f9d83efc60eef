// The float optimized GEMM for NVIDIA sm_90 (the H200), C = alpha*A*B + beta*C, row-major, any
// m, n, k and ld. CUDA only: hipcc never sees this file's contents (gemm.cuh's two-stage kernel
// stays the float path on AMD and on NVIDIA before sm_90). The plan chooses it by compute
// capability; the tuning cuda.sgemm.kernel names one of its instantiations (tile_choice.hpp:
// kSgemmVariants).
//
// What it changes against gemm.cuh's kernel (docs/design/gpu-sgemm-sm90-kernel.md), each step
// measurable alone:
//   copies  both operands go global -> shared with cp.async, so no register holds a prefetch:
//           B as 16-byte copies (rows of n, as in memory), A as 4-byte copies that land
//           transposed (k-major, the layout the compute reads as vectors). Partial pieces and
//           everything past the borders are zero-filled by the copy's source size.
//   stages  kStages shared stages (dynamic shared memory, opt-in above 48 KiB), one barrier per
//           K step: the copies of step t + kStages - 1 fly while step t computes.
//   warps   each warp owns a WM x WN sub-tile of C, its 32 lanes a 4 x 8 grid of TM x TN
//           thread tiles made of 4 x 4 quadrants (lane rows 4 apart, lane columns 4 apart): per
//           K index a warp reads 4 distinct 16-byte A vectors and 8 distinct B vectors per
//           quadrant row/column, one shared wavefront each.
//   registers  the next K index's A and B vectors are read while this one's FMAs run (two
//           fragment buffers), so the FMAs wait on no shared-memory load inside a step.
//
// Shared layout per stage: A as BK rows of BM + 4 floats (k-major), B as BK rows of BN floats.
// A's copies map 32 consecutive threads to 8 k x 4 consecutive rows: bank (4k + r) mod 32 is
// distinct for all 32, so the transposed stores are conflict-free, and in global memory the
// warp reads 4 rows x 32 contiguous bytes (whole sectors).
#pragma once

#if !defined(__HIPCC__)

#include <type_traits>

#include "device_common.cuh"

namespace tilekit::gpu {

namespace sgemm {

constexpr int kPadA = 4;  // floats of padding per k-row of A's shared tile (conflict-free stores)
// Shared bytes of one block; tile_choice.hpp's sgemm_smem_bytes computes the same for the plan.
__host__ __device__ constexpr int smem_bytes(int bm, int bn, int bk, int stages) { return stages * bk * (bm + kPadA + bn) * int(sizeof(float)); }

using async_group::copy;  // device_common.cuh: cp.async with zero fill, and without (copy_full)
using async_group::copy_full;
using async_group::commit;
using async_group::wait;

// Threads of a BM x BN block of TM x TN thread tiles (warps of 4 TM x 8 TN).
__host__ __device__ constexpr int threads(int bm, int bn, int tm, int tn) { return (bm / (4 * tm)) * (bn / (8 * tn)) * 32; }

}  // namespace sgemm

// BM x BN of C per block, BK deep per step, TM x TN per thread (sgemm::threads of them), kStages
// shared stages; kEarly: each step's barrier before its last K index (see the pipeline below);
// kFast: blocks wholly inside C copy their full K steps from per-row pointers, without predicates;
// KU: K indices unrolled (BK: the whole step; fewer keep the loop body small for the instruction
// cache: a fully unrolled 16-deep step of 16x8 per thread is ~2200 instructions, 35 KB of code).
// AHEAD: K indices the fragment reads run ahead of the FMAs that use them (1 or 2; 2 keeps three
// fragment sets live, so an LDS has two K indices of FMAs, not one, to land in, within its own warp).
// kZig: each 4 x 4 product walks its columns forward and back on alternate rows, so consecutive
// FFMAs share an operand register at every turn too (the register reuse cache), not only along a row.
// kSerp (instead): the whole TM x TN product of a K index as one such walk, row after row: ptxas
// then takes 1.01 source operands a FFMA from the reuse cache rather than 0.88, with fewer
// same-bank operand pairs (docs/design/gpu-sgemm-sm90-kernel.md).
// kSteady (with kFast): a fast block's steps that copy a whole K step run in a loop of their own with
// no condition in the step; kSpread (with kSteady, KU = BK, AHEAD = 1): those copies are spread over
// the step rather than all at its top, a group every kSpreadK K indices (1: one or two per index;
// the default's 4: fewer of the never-executed loads ptxas puts before each separate cp.async)
// (docs/design/gpu-sgemm-steady-spread.md).
// MIN_BLOCKS: blocks per SM the register budget must allow (2 blocks of 256 threads: at most 128
// registers a thread).
// bvec: B allows 16-byte copies (16-byte aligned base, ldb a multiple of 4; 4-byte copies
// otherwise); cvec: C allows 16-byte loads and stores. Both are uniform per launch.
//
// The block's body is gemm_sm90_block: whoever launches it supplies the block's index in the
// grid, the thread's rank in the block, the shared stages (sgemm::smem_bytes, 16-byte aligned)
// and the block's barrier. gemm_sm90_kernel below is the cuda backend's launch; the kokkos
// backend runs the same body in a Kokkos team (team scratch, team_barrier: backends/kokkos/gemm.cpp).
template <int BM, int BN, int BK, int TM, int TN, int kStages, bool kEarly = false, bool kFast = false, int KU = BK,
          int AHEAD = 1, bool kZig = false, bool kSteady = true, bool kSpread = false, int kSpreadK = 1, bool kSerp = false,
          class Barrier>
__device__ __forceinline__ void gemm_sm90_block(const GemmParams<float>& g, int tiles_x, int tiles_y, int bvec,
                                                int cvec, int pid, int tid, float* smem, Barrier barrier) {
  using namespace sgemm;
  constexpr int NT = threads(BM, BN, TM, TN);
  constexpr int LR = 4, LC = 8;                // lanes of a warp as 4 x 8
  constexpr int WM = TM * LR, WN = TN * LC;    // one warp's part of C
  constexpr int WARPS_N = BN / WN;
  constexpr int QM = TM / 4, QN = TN / 4;      // a thread's 4 x 4 quadrants
  constexpr int LDA = BM + kPadA, LDB = BN;
  constexpr int A_STAGE = BK * LDA, STAGE = A_STAGE + BK * LDB;
  constexpr int B_PER = BK * BN / 4 / NT;      // 16-byte B copies per thread and step
  static_assert(BM % WM == 0 && BN % WN == 0 && NT % 128 == 0, "whole warp tiles, whole 4-warp groups");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BM % 32 == 0, "thread tiles are whole 4 x 4 quadrants");
  static_assert(BM * BK % NT == 0 && (BK * BN / 4) % NT == 0 && BK % 8 == 0, "tiles must split evenly into copies");
  const gemm_parts::Tile bt = gemm_parts::grouped_tile(pid, tiles_x, tiles_y);
  const int m0 = bt.y * BM, n0 = bt.x * BN;

  const int lane = tid & 31, warp = tid >> 5;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int tr = lane / LC, tc = lane % LC;

  // A's copies: thread tid copies k = tid % 8 + 8 kh of its A_ROWS rows tid / 8 + ri NT / 8 (a warp:
  // 8 k x 4 consecutive rows, see the layout note). One offset and one row count are kept, not a
  // pointer per copy: 64-bit pointers for every row cost BK = 32 its spills.
  constexpr int A_ROWS = BM / (NT / 8);
  const int a_k = tid % 8, a_r = tid / 8;
  const int a_left = g.m - m0 - a_r;                // rows from this thread's first one to A's end
  const int a_off = (m0 + a_r) * g.lda + a_k, a_step = NT / 8 * g.lda;
  // kFast: a block wholly inside C (and B 16-byte copyable) copies every full K step from pointers
  // set up once, without bounds, predicates or source sizes. The general copies below cost ~13
  // SASS instructions each (parameter reloads, 64-bit address arithmetic, predicates: 260 per
  // step of dual3 against 2048 FFMA); these cost the copy and one 64-bit add per row.
  constexpr int B_VROW = BN / 4, B_RS = NT / B_VROW;  // 16-byte vectors a B row; rows apart per copy
  static_assert(!kFast || NT % B_VROW == 0, "B's fast copies need whole rows per pass");
  const bool fast = kFast && bvec && m0 + BM <= g.m && n0 + BN <= g.n;
  const float* a_ptr[kFast ? A_ROWS : 1] = {};  // set below for kFast; otherwise never read
  const float* b_ptr[kFast ? B_PER : 1] = {};
  const int b_r = tid / B_VROW, b_nc = (tid % B_VROW) * 4;
  if constexpr (kFast) {
#pragma unroll
    for (int ri = 0; ri < A_ROWS; ++ri) a_ptr[ri] = g.a + (fast ? a_off + ri * a_step : 0);
#pragma unroll
    for (int i = 0; i < B_PER; ++i) b_ptr[i] = g.b + (fast ? (b_r + i * B_RS) * g.ldb + n0 + b_nc : 0);
  }
  // A fast block's whole K step p0 .. p0 + BK as PIECES copies: A's 4-byte copies, then B's.
  constexpr int A_PIECES = A_ROWS * (BK / 8), PIECES = A_PIECES + B_PER;
  auto copy_piece = [&](int s, int p0, int i) {  // i: a compile-time index once unrolled
    float* as = smem + s * STAGE;
    if (i < A_PIECES) {
      const int ri = i / (BK / 8), kh = i % (BK / 8);
      copy_full<4>(as + (a_k + 8 * kh) * LDA + a_r + ri * (NT / 8), a_ptr[kFast ? ri : 0] + p0 + 8 * kh);
    } else {
      const int bi = i - A_PIECES;
      copy_full<16>(as + A_STAGE + (b_r + bi * B_RS) * LDB + b_nc, b_ptr[kFast ? bi : 0] + p0 * g.ldb);
    }
  };
  auto load_fast = [&](int s, int p0) {
#pragma unroll
    for (int i = 0; i < PIECES; ++i) copy_piece(s, p0, i);
  };
  auto load = [&](int s, int p0) {
    float* as = smem + s * STAGE;
    float* bs = as + A_STAGE;
    if (kFast && fast && p0 + BK <= g.k) return load_fast(s, p0);
#pragma unroll
    for (int ri = 0; ri < A_ROWS; ++ri)
#pragma unroll
      for (int kh = 0; kh < BK / 8; ++kh) {
        const int r = a_r + ri * (NT / 8), k = a_k + 8 * kh;
        const bool ok = ri * (NT / 8) < a_left && p0 + k < g.k;
        copy<4>(as + k * LDA + r, ok ? g.a + (a_off + ri * a_step + p0 + 8 * kh) : g.a, ok ? 4 : 0);
      }
    if (bvec) {
#pragma unroll
      for (int i = 0; i < B_PER; ++i) {
        const int q = tid + i * NT, r = q / (BN / 4), nc = (q % (BN / 4)) * 4, gk = p0 + r, gc = n0 + nc;
        const int bytes = gk < g.k ? 4 * max(0, min(4, g.n - gc)) : 0;
        copy<16>(bs + r * LDB + nc, bytes ? g.b + gk * g.ldb + gc : g.b, bytes);
      }
    } else {
#pragma unroll 4
      for (int i = 0; i < 4 * B_PER; ++i) {
        const int q = tid + i * NT, r = q / BN, nc = q % BN, gk = p0 + r, gc = n0 + nc;
        const bool ok = gk < g.k && gc < g.n;
        copy<4>(bs + r * LDB + nc, ok ? g.b + gk * g.ldb + gc : g.b, ok ? 4 : 0);
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // Fragments: quadrant qi of the thread's rows starts at wm0 + 16 qi + 4 tr, quadrant qj of its
  // columns at wn0 + 32 qj + 4 tc. Buffer of K index kk: kk % NB, a compile-time index once the
  // K loop is unrolled (NB divides KU and BK), so the fragments stay in registers; AHEAD + 1 of
  // the NB buffers are live at a time.
  constexpr int NB = AHEAD == 1 ? 2 : 4;
  static_assert(AHEAD == 1 || AHEAD == 2, "fragments one or two K indices ahead");
  using Frags = float4[NB][QM + QN];  // [buffer][A quadrants, then B quadrants]
  const float* frag_base = smem + wm0 + tr * 4;  // stage 0, K index 0 (B: + A_STAGE + wn0 - wm0 ...)
  auto fetch = [&](Frags& fr, int buf, int s, int kk) {
    const float* as = frag_base + s * STAGE + kk * LDA;
    const float* bs = frag_base + s * STAGE + A_STAGE + kk * LDB + (wn0 + tc * 4 - wm0 - tr * 4);
#pragma unroll
    for (int qi = 0; qi < QM; ++qi) fr[buf][qi] = *reinterpret_cast<const float4*>(as + qi * 4 * LR);
#pragma unroll
    for (int qj = 0; qj < QN; ++qj) fr[buf][QM + qj] = *reinterpret_cast<const float4*>(bs + qj * 4 * LC);
  };
  auto fma = [&](const Frags& fr, int buf) {
    // One serpentine over the rows: along row m, then back along row m + 1. Written as it was
    // measured: the same order with the operands taken out of the vectors otherwise (per row, as
    // below) gave ptxas' schedule 252 registers instead of 243.
    if constexpr (kSerp) {
      auto a_of = [&](int m) {
        const float4& v = fr[buf][m / 4];
        return m % 4 == 0 ? v.x : m % 4 == 1 ? v.y : m % 4 == 2 ? v.z : v.w;
      };
      auto b_of = [&](int n) {
        const float4& v = fr[buf][QM + n / 4];
        return n % 4 == 0 ? v.x : n % 4 == 1 ? v.y : n % 4 == 2 ? v.z : v.w;
      };
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n0 = 0; n0 < TN; ++n0) {
          const int n = (m & 1) ? TN - 1 - n0 : n0;
          acc[m][n] += a_of(m) * b_of(n);
        }
      return;
    }
#pragma unroll
    for (int qi = 0; qi < QM; ++qi) {
      const float a[4] = {fr[buf][qi].x, fr[buf][qi].y, fr[buf][qi].z, fr[buf][qi].w};
#pragma unroll
      for (int qj = 0; qj < QN; ++qj) {
        const float4& v = fr[buf][QM + qj];
        const float b[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int f0 = 0; f0 < 4; ++f0) {
            const int f = kZig && (e & 1) ? 3 - f0 : f0;
            acc[qi * 4 + e][qj * 4 + f] += a[e] * b[f];
          }
      }
    }
  };

  // The pipeline (as gemm_dmma.cuh's): before step t computes, this thread's copies of step t are
  // complete (at most kStages - 2 younger groups pending) and the barrier makes everyone's
  // visible; the same barrier means every warp has finished reading step t - 1's stage, which the
  // copies issued next reuse. Every step commits a group (empty past the end): the count is exact.
  // kEarly moves each step's barrier before its last AHEAD K indices: the first fragments of step
  // t + 1 are read across it, so the last FMAs of step t, not an idle wait, cover their latency.
  const int steps = (g.k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load(s, s * BK);
    commit();
  }
  int read = 0, write = kStages - 1;
  // The first AHEAD K indices of a stage are read before its loop (kEarly: across the previous
  // step's barrier), each later one AHEAD indices before its FMAs.
  auto fetch_first = [&](Frags& fr, int s) {
#pragma unroll
    for (int a = 0; a < AHEAD; ++a) fetch(fr, a, s, a);
  };
  Frags early;  // kEarly: the fragments live across steps
  if constexpr (kEarly) {
    wait<kStages - 2>();
    barrier();
    if (steps > 0) fetch_first(early, 0);
  }
  // One step. kWhole: a fast block's step whose copies (of step t + kStages - 1) are a whole K
  // step and which has a next step, so no condition is left in it: its copies, fragment reads and
  // FMAs are one basic block that ptxas interleaves. (Behind the conditions, the copies' integer
  // chains ran alone at the top of every step, ~5% of the warps' stall samples, cuBLAS's 0.4%:
  // docs/design/gpu-sgemm-steady-spread.md.) The other steps (edge blocks, the last kStages - 1,
  // a partial last K step) take the general path.
  auto run_step = [&](int t, auto whole) {
    constexpr bool kWhole = decltype(whole)::value;
    Frags local;  // otherwise they are the step's own (fewer registers live across the loop)
    Frags& fr = kEarly ? early : local;
    if constexpr (!kEarly) {
      wait<kStages - 2>();
      barrier();
    }
    // kSpread: the whole step's copies one or two per K index instead of all at its top, so that
    // they and their address arithmetic queue between the fragment reads rather than before them.
    constexpr bool kPieces = kWhole && kSpread;
    static_assert(!kSpread || (KU == BK && AHEAD == 1), "spread copies: the step unrolled, fragments one ahead");
    if constexpr (kWhole && !kSpread) {
      load_fast(write, (t + kStages - 1) * BK);
    } else if constexpr (!kWhole) {
      if (t + kStages - 1 < steps) load(write, (t + kStages - 1) * BK);
    }
    if constexpr (!kPieces) commit();
    if constexpr (!kEarly) fetch_first(fr, read);
    const int next = read + 1 == kStages ? 0 : read + 1;
    static_assert(BK % KU == 0 && KU % NB == 0, "whole unrolled groups of whole buffer rounds (the buffer is kk % NB)");
#pragma unroll 1
    for (int k0 = 0; k0 < BK; k0 += KU) {
#pragma unroll
      for (int u = 0; u < KU; ++u) {
        const int kk = k0 + u, j = kk + AHEAD;  // every group, and step t + 1, start in buffer 0
        if constexpr (kPieces) {  // every kSpreadK K indices, pieces [h P / H, (h + 1) P / H) of H = BK / kSpreadK
          constexpr int H = BK / kSpreadK;
          static_assert(BK % kSpreadK == 0, "whole groups of K indices");
          if (u % kSpreadK == 0) {
            const int h = u / kSpreadK;
#pragma unroll
            for (int i = h * PIECES / H; i < (h + 1) * PIECES / H; ++i) copy_piece(write, (t + kStages - 1) * BK, i);
          }
          if (u == BK - 1) commit();  // the group closes before the wait below
        }
        if (j < BK) {
          fetch(fr, (u + AHEAD) % NB, read, j);
        } else if (kEarly && (kWhole || t + 1 < steps)) {
          // The first read from the next stage: every read of this one is issued, so after this
          // barrier the stage may be refilled, and the next one's copies are visible.
          if (j == BK) {
            wait<kStages - 2>();
            barrier();
          }
          fetch(fr, (u + AHEAD) % NB, next, j - BK);
        }
        fma(fr, u % NB);
      }
    }
    read = next;
    write = write + 1 == kStages ? 0 : write + 1;
  };
  int t = 0;
  if constexpr (kFast && kSteady) {
    // Steady while the step copied is a whole one: t + kStages - 1 < g.k / BK (then t + 1 < steps).
    if (fast)
      for (; t + kStages - 1 < g.k / BK; ++t) run_step(t, std::true_type{});
  }
  for (; t < steps; ++t) run_step(t, std::false_type{});

  // Epilogue: acc[4 qi + e][4 qj + f] is C[m0 + wm0 + 16 qi + 4 tr + e][n0 + wn0 + 32 qj + 4 tc + f].
  // beta == 0 never reads C (it may hold NaN).
#pragma unroll
  for (int qi = 0; qi < QM; ++qi)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = m0 + wm0 + qi * 4 * LR + tr * 4 + e;
      if (row >= g.m) continue;
#pragma unroll
      for (int qj = 0; qj < QN; ++qj) {
        const int col = n0 + wn0 + qj * 4 * LC + tc * 4;
        float* c = g.c + row * g.ldc + col;
        const float* v = acc[qi * 4 + e] + qj * 4;
        if (cvec && col + 3 < g.n) {
          float4 out = make_float4(g.alpha * v[0], g.alpha * v[1], g.alpha * v[2], g.alpha * v[3]);
          if (g.beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(c);
            out.x += g.beta * old.x;
            out.y += g.beta * old.y;
            out.z += g.beta * old.z;
            out.w += g.beta * old.w;
          }
          *reinterpret_cast<float4*>(c) = out;
        } else {
#pragma unroll
          for (int f = 0; f < 4; ++f)
            if (col + f < g.n) c[f] = g.beta == 0.0f ? g.alpha * v[f] : g.alpha * v[f] + g.beta * c[f];
        }
      }
    }
}

template <int BM, int BN, int BK, int TM, int TN, int kStages, int MIN_BLOCKS, bool kEarly = false, bool kFast = false,
          int KU = BK, int AHEAD = 1, bool kZig = false, bool kSteady = true, bool kSpread = false, int kSpreadK = 1,
          bool kSerp = false>
__global__ __launch_bounds__(sgemm::threads(BM, BN, TM, TN), MIN_BLOCKS) void gemm_sm90_kernel(
    GemmParams<float> g, int tiles_x, int tiles_y, int bvec, int cvec) {
  extern __shared__ __align__(16) unsigned char gemm_sm90_smem[];
  gemm_sm90_block<BM, BN, BK, TM, TN, kStages, kEarly, kFast, KU, AHEAD, kZig, kSteady, kSpread, kSpreadK, kSerp>(
      g, tiles_x, tiles_y, bvec, cvec, int(blockIdx.x), int(threadIdx.x), reinterpret_cast<float*>(gemm_sm90_smem),
      [] { __syncthreads(); });
}

}  // namespace tilekit::gpu

#endif  // !__HIPCC__
