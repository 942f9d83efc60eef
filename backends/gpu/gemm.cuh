// GEMM kernels, C = alpha * A * B + beta * C on row-major matrices, written once for CUDA and
// HIP. Three steps of one idea, fewer trips to global memory per multiply-add:
//   naive      every thread reads its row of A and column of B from global memory: 2 loads
//              per FMA, and the same values are fetched by many threads.
//   tiled      PMPP Fig. 5.13, written once for every backend on the tile layer:
//              backends/common/portable/gemm_tiled.hpp (launched by gemm.cu through tiled.cuh).
//   optimized  register tiling (a thread owns TMxTN outputs, so one shared-memory value feeds
//              TN or TM FMAs), 16-byte vector loads, a padded k-major A tile for conflict-free
//              vector reads, and two shared-memory stages so the next tile's global loads are
//              in flight while this one is computed (one __syncthreads per K step).
// Every kernel handles any m, n, k (zero fill at the borders) and any ld; beta == 0 never
// reads C, since C may hold NaN.
#pragma once

#include "common/gpu/device_common.cuh"
#include "kernels.hpp"

namespace tilekit::gpu {

template <class T>
__device__ __forceinline__ T gemm_epilogue(T acc, const GemmParams<T>& g, const T* c) {
  return g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * *c;
}

// ---- naive: one thread per element of C. threadIdx.x runs along a row of C, so a warp
// reads one row of B coalesced and broadcasts its element of A.
template <class T>
__global__ void gemm_naive_kernel(GemmParams<T> g, int tiles_x) {
  const BlockXY b = block_xy(tiles_x);
  const int col = b.x * blockDim.x + threadIdx.x, row = b.y * blockDim.y + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  T acc = 0;
  for (int p = 0; p < g.k; ++p) acc += g.a[row * g.lda + p] * g.b[p * g.ldb + col];
  T* c = g.c + row * g.ldc + col;
  *c = gemm_epilogue(acc, g, c);
}

// ---- optimized: BM x BN of C per block of (BM/TM)*(BN/TN) threads, BK deep per step.
// kVec: every operand allows 16-byte vector access (aligned pointers, ld and the vector
// dimensions multiples of the vector width); otherwise the same kernel loads element-wise.
// Launch bounds ask for two blocks per SM for float (at most 128 registers a thread for 256
// threads): one block of 8 warps cannot hide the latency of its own barriers.
template <class T, int BM, int BN, int BK, int TM, int TN, bool kVec>
__global__ TILEKIT_LAUNCH_BOUNDS_OCC((BM / TM) * (BN / TN), sizeof(T) == 4 ? 2 : 1) void gemm_optimized_kernel(
    GemmParams<T> g, int tiles_x, int tiles_y) {
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int W = V::n;                  // elements per vector
  constexpr int NT = (BM / TM) * (BN / TN);
  // +W elements per row: the transposed stores of A (4 rows of one column per thread) and the
  // vector reads both stay free of bank conflicts, and rows stay 16-byte aligned.
  constexpr int LDA_S = BM + W, LDB_S = BN + W;
  constexpr int A_VECS = BM * BK / W, B_VECS = BK * BN / W;            // vectors per tile
  constexpr int A_PER = (A_VECS + NT - 1) / NT, B_PER = (B_VECS + NT - 1) / NT;  // per thread
  constexpr int SM = (BM / TM) * W, SN = (BN / TN) * W;  // distance between a thread's groups
  static_assert(BK % W == 0 && BN % W == 0 && TM % W == 0 && TN % W == 0, "tile must be whole vectors");
  __shared__ __align__(16) T as[2][BK][LDA_S];
  __shared__ __align__(16) T bs[2][BK][LDB_S];

  // Grouped block order: 8 block-rows of C are walked together, so the A rows and B columns
  // they share are still in L2 when the neighbouring blocks need them.
  constexpr int kGroup = 8;
  const int pid = blockIdx.x, per_group = kGroup * tiles_x, first = (pid / per_group) * kGroup;
  const int gsize = min(tiles_y - first, kGroup);
  const int by = first + (pid % per_group) % gsize, bx = (pid % per_group) / gsize;
  const int m0 = by * BM, n0 = bx * BN;

  // Thread (tr, tc) of the (BM/TM) x (BN/TN) thread grid. Each 32 consecutive threads form a
  // 4 x 8 patch of it rather than a 2 x 16 strip, so per K index they read 4 distinct A
  // vectors and 8 distinct B vectors (one 128-byte shared-memory wavefront each) instead of 2
  // and 16. Only speed depends on this grouping (any warp size computes the same result).
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  constexpr int GC = (BN / TN) / 8;  // 4 x 8 patches per row of the thread grid
  const int patch = tid / 32, lane = tid % 32;
  const int tr = (patch / GC) * 4 + lane / 8, tc = (patch % GC) * 8 + lane % 8;
  static_assert((BM / TM) % 4 == 0 && (BN / TN) % 8 == 0 && NT % 32 == 0, "thread grid must tile by 4 x 8");
  VT a_reg[A_PER], b_reg[B_PER];

  // Global -> registers for the K step starting at p0 (zeros outside the matrices).
  auto load_a = [&](int p0) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int q = tid + i * NT;
      const int r = q / (BK / W), kv = (q % (BK / W)) * W, gr = m0 + r, gk = p0 + kv;
      T v[W];
      if (A_VECS % NT == 0 || q < A_VECS) {
        if constexpr (kVec) {
          if (gr < g.m && gk < g.k) V::unpack(*reinterpret_cast<const VT*>(g.a + gr * g.lda + gk), v);
          else for (int e = 0; e < W; ++e) v[e] = T(0);
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) v[e] = (gr < g.m && gk + e < g.k) ? g.a[gr * g.lda + gk + e] : T(0);
        }
        a_reg[i] = V::pack(v);
      }
    }
  };
  auto load_b = [&](int p0) {
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int q = tid + i * NT;
      const int r = q / (BN / W), nv = (q % (BN / W)) * W, gk = p0 + r, gc = n0 + nv;
      T v[W];
      if (B_VECS % NT == 0 || q < B_VECS) {
        if constexpr (kVec) {
          if (gk < g.k && gc < g.n) V::unpack(*reinterpret_cast<const VT*>(g.b + gk * g.ldb + gc), v);
          else for (int e = 0; e < W; ++e) v[e] = T(0);
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) v[e] = (gk < g.k && gc + e < g.n) ? g.b[gk * g.ldb + gc + e] : T(0);
        }
        b_reg[i] = V::pack(v);
      }
    }
  };
  // Registers -> shared stage s: A transposed (k-major) so a thread's TM rows are vectors.
  auto store_a = [&](int s) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int q = tid + i * NT;
      if (A_VECS % NT == 0 || q < A_VECS) {
        const int r = q / (BK / W), kv = (q % (BK / W)) * W;
        T v[W];
        V::unpack(a_reg[i], v);
#pragma unroll
        for (int e = 0; e < W; ++e) as[s][kv + e][r] = v[e];
      }
    }
  };
  // With asynchronous copies (sm_80+) B goes straight from global to shared stage s, no
  // register holding it across the compute (the registers are what the 16-deep tile lacks);
  // A still goes through registers, because it is stored transposed.
  constexpr bool kAsyncB = kVec && TILEKIT_GPU_ASYNC_COPY;
  auto copy_b = [&](int s, int p0) {
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int q = tid + i * NT;
      if (B_VECS % NT == 0 || q < B_VECS) {
        const int r = q / (BN / W), nv = (q % (BN / W)) * W, gk = p0 + r, gc = n0 + nv;
        const bool ok = gk < g.k && gc < g.n;
        copy_async16(reinterpret_cast<VT*>(&bs[s][r][nv]),
                     reinterpret_cast<const VT*>(ok ? g.b + gk * g.ldb + gc : g.b), ok);
      }
    }
  };
  auto store_b = [&](int s) {
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int q = tid + i * NT;
      if (B_VECS % NT == 0 || q < B_VECS) {
        const int r = q / (BN / W), nv = (q % (BN / W)) * W;
        *reinterpret_cast<VT*>(&bs[s][r][nv]) = b_reg[i];
      }
    }
  };

  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

  // One K step of outer products from stage `cur`: TM + TN shared loads feed TM * TN FMAs.
  auto compute = [&](int cur) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T af[TM], bf[TN];
#pragma unroll
      for (int gi = 0; gi < TM / W; ++gi)
        V::unpack(*reinterpret_cast<const VT*>(&as[cur][kk][gi * SM + tr * W]), af + gi * W);
#pragma unroll
      for (int gj = 0; gj < TN / W; ++gj)
        V::unpack(*reinterpret_cast<const VT*>(&bs[cur][kk][gj * SN + tc * W]), bf + gj * W);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += af[i] * bf[j];
    }
  };

  const int steps = (g.k + BK - 1) / BK;
  if (steps > 0) {
    load_a(0);
    if constexpr (kAsyncB)
      copy_b(0, 0);
    else
      load_b(0);
    store_a(0);
    if constexpr (kAsyncB)
      copy_async_wait_all();
    else
      store_b(0);
  }
  __syncthreads();
  for (int t = 0; t < steps; ++t) {
    const int cur = t & 1, nxt = cur ^ 1;
    const bool more = t + 1 < steps;
    // Issue the next step's global loads now; they complete while this step computes. The
    // other stage was last read in step t-1, which every thread finished before the barrier
    // that ended it: it can be overwritten (B's copies land there) without a second barrier.
    if (more) {
      load_a((t + 1) * BK);
      if constexpr (kAsyncB)
        copy_b(nxt, (t + 1) * BK);
      else
        load_b((t + 1) * BK);
    }
    compute(cur);
    if (more) {
      store_a(nxt);
      if constexpr (kAsyncB)
        copy_async_wait_all();
      else
        store_b(nxt);
    }
    __syncthreads();
  }

  // Epilogue: thread rows gi*SM + tr*W + e, columns gj*SN + tc*W + e.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + (i / W) * SM + tr * W + i % W;
    if (row >= g.m) continue;
#pragma unroll
    for (int gj = 0; gj < TN / W; ++gj) {
      const int col = n0 + gj * SN + tc * W;
      T* c = g.c + row * g.ldc + col;
      if constexpr (kVec) {
        if (col < g.n) {
          T v[W], old[W];
          if (g.beta != T(0)) V::unpack(*reinterpret_cast<const VT*>(c), old);
#pragma unroll
          for (int e = 0; e < W; ++e)
            v[e] = g.beta == T(0) ? g.alpha * acc[i][gj * W + e] : g.alpha * acc[i][gj * W + e] + g.beta * old[e];
          *reinterpret_cast<VT*>(c) = V::pack(v);
        }
      } else {
#pragma unroll
        for (int e = 0; e < W; ++e)
          if (col + e < g.n) c[e] = gemm_epilogue(acc[i][gj * W + e], g, c + e);
      }
    }
  }
}

}  // namespace tilekit::gpu
