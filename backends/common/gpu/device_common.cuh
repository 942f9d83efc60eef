// Device-side helpers shared by the kernels of both vendors, and by every backend that runs them
// (cuda and hip through backends/gpu, kokkos on Kokkos::Cuda): the kernels' arguments, vector
// loads, block coordinates, cp.async groups. Nothing here depends on how a backend plans a launch.
#pragma once

#include <cstdint>

#include "portability.hpp"

namespace tilekit::gpu {

// The kernels index with int: the front end refuses matrices of 2^31 elements or more.
template <class T>
struct GemmParams {
  int m, n, k;
  T alpha, beta;
  const T* a; int lda;
  const T* b; int ldb;
  T* c; int ldc;
};
template <class T>
struct TransposeParams {
  int rows, cols;
  const T* in; int ld_in;
  T* out; int ld_out;
};
template <class T>
struct Conv2dParams {
  int h, w, r;
  const T* in; int ld_in;
  const T* filter;  // device memory, r x r
  T* out; int ld_out;
};

// One 16-byte vector of T: the widest load a thread can issue in one instruction.
template <class T> struct Vec16;
template <> struct Vec16<float> {
  using type = float4;
  static constexpr int n = 4;
  __device__ static void unpack(const float4& v, float* o) { o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
  __device__ static float4 pack(const float* o) { return make_float4(o[0], o[1], o[2], o[3]); }
};
template <> struct Vec16<double> {
  using type = double2;
  static constexpr int n = 2;
  __device__ static void unpack(const double2& v, double* o) { o[0] = v.x; o[1] = v.y; }
  __device__ static double2 pack(const double* o) { return make_double2(o[0], o[1]); }
};

// Grids are one-dimensional (gridDim.x reaches 2^31 - 1, y only 65535); a block recovers its
// 2D tile coordinates from the number of tiles per row.
struct BlockXY {
  int x, y;
};
__device__ __forceinline__ BlockXY block_xy(int tiles_x) {
  return {int(blockIdx.x) % tiles_x, int(blockIdx.x) / tiles_x};
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

inline int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// Groups of asynchronous copies (cp.async, sm_80+; no-ops elsewhere), for the multi-stage kernels.
namespace async_group {
__device__ __forceinline__ void commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}
// cp.async of `bytes` (0..size) of T from global to shared, the rest of `size` zero-filled (the
// kernels' borders): 16-byte copies bypass L1 (.cg: the reuse is in shared memory), smaller ones
// must go through it (.ca). Below sm_80 (and in the host emulation, backends/cuda/scripts) a
// plain copy with the same zero fill.
template <int size, class T>
__device__ __forceinline__ void copy(T* dst_shared, const T* src, int bytes) {
  static_assert(size == 16 || size == 8 || size == 4, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (size == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(size), "r"(bytes) : "memory");
#else
  for (int e = 0; e < size / int(sizeof(T)); ++e) dst_shared[e] = e * int(sizeof(T)) < bytes ? src[e] : T(0);
#endif
}
// The same copy of all `size` bytes (no source size, no zero fill: the interior blocks' fast path).
template <int size, class T>
__device__ __forceinline__ void copy_full(T* dst_shared, const T* src) {
  static_assert(size == 16 || size == 8 || size == 4, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (size == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(size) : "memory");
#else
  for (int e = 0; e < size / int(sizeof(T)); ++e) dst_shared[e] = src[e];
#endif
}
}  // namespace async_group

// Pieces the tiled gemm kernels share (gemm_sm90, gemm_dmma, gemm_tf32x3 and its wgmma form).
namespace gemm_parts {

// The block's tile of C, x along n and y along m, from its index in a one-dimensional grid: 8 tile
// rows walked together, so that the blocks resident at one time share A's and B's panels in L2.
struct Tile {
  int x, y;
};
__device__ __forceinline__ Tile grouped_tile(int pid, int tiles_x, int tiles_y) {
  constexpr int kGroup = 8;
  const int per_group = kGroup * tiles_x, first = (pid / per_group) * kGroup;
  const int gsize = min(tiles_y - first, kGroup);
  return {(pid % per_group) / gsize, first + (pid % per_group) % gsize};
}

// Global -> shared: the BM x BK tile of A at (m0, p0) and the BK x BN tile of B at (p0, n0), row by
// row as in global memory (shared rows LDA and LDB apart), copied by NT threads as 16-byte vectors
// when vec (aligned bases, ld a multiple of the vector) or element by element. Pieces past the
// matrices are zero-filled and read nothing (their source clamped to the matrix's first element, a
// valid address).
template <class T, int BM, int BN, int BK, int NT, int LDA, int LDB>
__device__ __forceinline__ void copy_tiles(const GemmParams<T>& g, T* as, T* bs, int m0, int n0, int p0, int tid,
                                           int vec) {
  constexpr int E = 16 / int(sizeof(T)), S = int(sizeof(T));
  if (vec) {
#pragma unroll
    for (int i = 0; i < BM * BK / E / NT; ++i) {
      const int q = tid + i * NT, r = q / (BK / E), kc = (q % (BK / E)) * E, gr = m0 + r, gk = p0 + kc;
      const int bytes = gr < g.m ? S * max(0, min(E, g.k - gk)) : 0;
      async_group::copy<16>(as + r * LDA + kc, bytes ? g.a + gr * g.lda + gk : g.a, bytes);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / E / NT; ++i) {
      const int q = tid + i * NT, r = q / (BN / E), nc = (q % (BN / E)) * E, gk = p0 + r, gc = n0 + nc;
      const int bytes = gk < g.k ? S * max(0, min(E, g.n - gc)) : 0;
      async_group::copy<16>(bs + r * LDB + nc, bytes ? g.b + gk * g.ldb + gc : g.b, bytes);
    }
  } else {
#pragma unroll 4
    for (int i = 0; i < BM * BK / NT; ++i) {
      const int q = tid + i * NT, r = q / BK, kc = q % BK, gr = m0 + r, gk = p0 + kc;
      const bool ok = gr < g.m && gk < g.k;
      async_group::copy<S>(as + r * LDA + kc, ok ? g.a + gr * g.lda + gk : g.a, ok ? S : 0);
    }
#pragma unroll 4
    for (int i = 0; i < BK * BN / NT; ++i) {
      const int q = tid + i * NT, r = q / BN, nc = q % BN, gk = p0 + r, gc = n0 + nc;
      const bool ok = gk < g.k && gc < g.n;
      async_group::copy<S>(bs + r * LDB + nc, ok ? g.b + gk * g.ldb + gc : g.b, ok ? S : 0);
    }
  }
}

// copy_tiles' 16-byte copies (the same vectors into the same places) for a block wholly inside C whose
// A and B allow them (vec): then fast, and PIECES copies a thread and K step come from two pointers
// set up once, without bounds, predicates or source sizes. copy_tiles spends ~25 SASS instructions on
// each of its copies (parameter reloads, 64-bit products, bounds predicates); these are a copy and an
// address add. Where fast is false the pointers are the matrices' bases and no piece may be issued.
template <class T, int BM, int BN, int BK, int NT, int LDA, int LDB>
struct WholeStepCopies {
  static constexpr int E = 16 / int(sizeof(T));
  static constexpr int A_VROW = BK / E, B_VROW = BN / E;        // 16-byte vectors a row
  static constexpr int A_RS = NT / A_VROW, B_RS = NT / B_VROW;  // rows between a thread's copies
  static constexpr int A_PER = BM / A_RS, PIECES = A_PER + BK / B_RS;
  static_assert(NT % A_VROW == 0 && NT % B_VROW == 0 && BM % A_RS == 0 && BK % B_RS == 0,
                "whole rows of 16-byte copies per pass");
  const bool fast;
  const T* a;
  const T* b;
  int lda, ldb, a_dst, b_dst;
  __device__ WholeStepCopies(const GemmParams<T>& g, int m0, int n0, int tid, int vec)
      : fast(vec && m0 + BM <= g.m && n0 + BN <= g.n),
        a(g.a + (fast ? (m0 + tid / A_VROW) * g.lda + (tid % A_VROW) * E : 0)),
        b(g.b + (fast ? (tid / B_VROW) * g.ldb + n0 + (tid % B_VROW) * E : 0)), lda(g.lda), ldb(g.ldb),
        a_dst((tid / A_VROW) * LDA + (tid % A_VROW) * E), b_dst((tid / B_VROW) * LDB + (tid % B_VROW) * E) {}
  // Copy q (a compile-time index once unrolled) of the step starting at p0, into a stage's A (as) and B (bs).
  __device__ __forceinline__ void piece(T* as, T* bs, int p0, int q) const {
    if (q < A_PER)
      async_group::copy_full<16>(as + a_dst + q * A_RS * LDA, a + q * A_RS * lda + p0);
    else
      async_group::copy_full<16>(bs + b_dst + (q - A_PER) * B_RS * LDB, b + (p0 + (q - A_PER) * B_RS) * ldb);
  }
  // A compute hook that issues the step's copies PIECES / PARTS at a time, part i before the i-th of
  // PARTS pieces of a step's compute, rather than all at the step's top: their issue then queues
  // between the fragment loads and MMAs.
  template <int PARTS>
  __device__ __forceinline__ auto spread(T* as, T* bs, int p0) const {
    static_assert(PIECES % PARTS == 0, "whole copies per part");
    return [this, as, bs, p0](int i) {
#pragma unroll
      for (int q = i * (PIECES / PARTS); q < (i + 1) * (PIECES / PARTS); ++q) piece(as, bs, p0, q);
    };
  }
};

// Two adjacent columns of C at c (column col of n), v0 and v1 already times alpha: one 8- or 16-byte
// store where C allows it (cvec: aligned base, even ldc) and both columns are inside, else one
// element at a time. beta == 0 never reads C (it may hold NaN).
template <class T, class V2>
__device__ __forceinline__ void store_pair(T* c, int col, int n, T v0, T v1, T beta, int cvec) {
  if (cvec && col + 1 < n) {
    V2 out;
    out.x = v0;
    out.y = v1;
    if (beta != T(0)) {
      const V2 old = *reinterpret_cast<const V2*>(c);
      out.x += beta * old.x;
      out.y += beta * old.y;
    }
    *reinterpret_cast<V2*>(c) = out;
  } else {
    if (col < n) c[0] = beta == T(0) ? v0 : v0 + beta * c[0];
    if (col + 1 < n) c[1] = beta == T(0) ? v1 : v1 + beta * c[1];
  }
}

// The K loop of a cp.async pipeline kStages deep: load(stage, p0) issues the copies of the step
// starting at p0 into a stage, compute(stage) consumes one. Before step t's compute, this thread's
// copies of step t are complete (at most kStages - 2 younger groups pending) and the barrier makes
// everyone's visible. The same barrier means every warp has finished step t - 1, whose stage the
// copies issued next reuse. Every iteration commits a group (empty past the end), so the count of
// pending groups stays exact.
//
// fast: the block's copies need no bounds (it lies wholly inside C and its operands allow the
// copies steady issues). Its steps whose copies are a whole K step then run steady(t, read, write)
// instead: the copies of step t + kStages - 1 into stage write and the compute of stage read, with
// no condition left in the step, so the compiler can interleave the copies' instructions with the
// compute's (behind a condition they ran alone at the step's top, after the barrier, while the
// tensor or FMA units waited: docs/design/gpu-dgemm-dmma.md).
template <int kStages, int BK, class Load, class Compute, class Steady, class Barrier>
__device__ __forceinline__ void k_pipeline(int k, bool fast, Load&& load, Compute&& compute, Steady&& steady,
                                           Barrier&& barrier) {
  const int steps = (k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load(s, s * BK);
    async_group::commit();
  }
  int t = 0;
  if (fast)
    for (int read = 0, write = kStages - 1; t + kStages - 1 < k / BK; ++t) {
      async_group::wait<kStages - 2>();
      barrier();
      steady(t, read, write);
      async_group::commit();
      read = read + 1 == kStages ? 0 : read + 1;
      write = write + 1 == kStages ? 0 : write + 1;
    }
  for (; t < steps; ++t) {
    async_group::wait<kStages - 2>();
    barrier();
    const int next = t + kStages - 1;
    if (next < steps) load(next % kStages, next * BK);
    async_group::commit();
    compute(t % kStages);
  }
}

// Warp MMA accumulators (MI x NJ tiles of 16 x 8, four values a thread each) set to zero.
template <class T, int MI, int NJ>
__device__ __forceinline__ void zero_fragments(T (&acc)[MI][NJ][4]) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = T(0);
}

// The epilogue of warp MMA accumulators in the m16n8 layout: acc[i][j][2 h + v] is C[row0 + 16 i +
// 8 h][col0 + 8 j + v], (row0, col0) this thread's first element (fragment row g, column 2 t), two
// adjacent columns stored by store_pair, times alpha.
template <class T, class V2, int MI, int NJ>
__device__ __forceinline__ void store_fragments(const GemmParams<T>& g, const T (&acc)[MI][NJ][4], int row0, int col0,
                                                int cvec) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 16 * i + 8 * h;
      if (row >= g.m) continue;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int col = col0 + 8 * j;
        store_pair<T, V2>(g.c + row * g.ldc + col, col, g.n, g.alpha * acc[i][j][2 * h], g.alpha * acc[i][j][2 * h + 1],
                          g.beta, cvec);
      }
    }
}

}  // namespace gemm_parts

}  // namespace tilekit::gpu
