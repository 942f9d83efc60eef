// conv2d kernels: same-size output, zero padding, odd R x R filter, cross-correlation (no
// flip), written once for CUDA and HIP.
//   naive      one thread per output, the R x R window and the filter read from global
//              memory (the window overlaps its neighbours', so each input is fetched R*R times
//              through the caches).
//   tiled      PMPP's input tile: a block loads its output tile plus the R-1 halo into shared
//              memory once (zeros outside the image), then computes from there. Written once
//              for every backend on the tile layer: backends/common/portable/conv2d_tiled.hpp.
//   optimized  as tiled (filter in __constant__ memory, broadcast to the warp), plus register
//              tiling in both directions: a thread computes 8 rows x
//              one 16-byte vector of columns, reading the window from shared memory as whole
//              vectors (~1 shared load per output instead of 7.5) and storing vectors.
#pragma once

#include "common/gpu/device_common.cuh"
#include "kernels.hpp"
#include "tilekit/ops.hpp"

#if !defined(__HIPCC__)
#include <cuda.h>  // CUtensorMap (aligned-tma)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#endif

namespace tilekit::gpu {

// The filter, copied from its device buffer before each launch (one stream orders the copy
// before the kernel and after the previous kernel that read it).
__constant__ float conv_filter_f32[kMaxFilter * kMaxFilter];
__constant__ double conv_filter_f64[kMaxFilter * kMaxFilter];
template <class T> __device__ __forceinline__ T conv_filter(int i);
template <> __device__ __forceinline__ float conv_filter<float>(int i) { return conv_filter_f32[i]; }
template <> __device__ __forceinline__ double conv_filter<double>(int i) { return conv_filter_f64[i]; }

template <class T>
__global__ void conv2d_naive_kernel(Conv2dParams<T> c, int tiles_x) {
  const BlockXY b = block_xy(tiles_x);
  const int j = b.x * blockDim.x + threadIdx.x, i = b.y * blockDim.y + threadIdx.y;
  if (i >= c.h || j >= c.w) return;
  const int half = c.r / 2;
  T acc = 0;
  for (int fi = 0; fi < c.r; ++fi) {
    const int y = i + fi - half;
    if (y < 0 || y >= c.h) continue;
    for (int fj = 0; fj < c.r; ++fj) {
      const int x = j + fj - half;
      if (x >= 0 && x < c.w) acc += c.filter[fi * c.r + fj] * c.in[y * c.ld_in + x];
    }
  }
  c.out[i * c.ld_out + j] = acc;
}

// The optimized kernel's window: row y of the shared window holds input columns
// j0 - P .. j0 + TC + P - 1, P = the halo R/2 rounded up to whole units of PU elements: a
// 16-byte vector (conv2d_optimized_pad), or with gpu.conv2d.optimized=aligned... a 32-byte sector,
// so that every vector is aligned and, the image width being a multiple of the vector width,
// wholly inside or outside the image. The window of output column x then starts at shared
// column x + P - R/2. Every vector of a thread is in flight before one wait (cp.async.cg, 16
// bytes), with no register holding it.
template <class T, int R, int PU>
inline constexpr int conv2d_pad_v = (R / 2 + PU - 1) / PU * PU;

// Rows [y_lo, y_hi) of that vector-padded window as 16-byte asynchronous copies (wait for them
// with copy_async_wait_all()). Row-major through the window, 32 consecutive vectors a warp
// instruction; a 36-vector row (float R = 5, sector padding) then puts each warp boundary inside a
// 128-byte line, so such a line is two L2 requests: 7 requests a row where 6 lines hold it.
// kLines (gpu.conv2d.optimized=aligned-lines): the tile's own columns first, TC / W vectors a row
// (whole lines: 32 vectors, one warp instruction, in float), then the padding columns (P / W
// vectors each side, one partial line each), so a row costs 6 requests.
// The copies are shared among the block's threads, or among threads [first, first + count) of it.
template <class T, int R, int TC, int PU = Vec16<T>::n, bool kLines = false>
__device__ __forceinline__ void conv2d_issue_rows_vec(const Conv2dParams<T>& c, T* tile, int y_lo, int y_hi, int i0,
                                                      int j0, int first = 0, int count = 0) {
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int W = V::n, HALF = R / 2, P = conv2d_pad_v<T, R, PU>, NV = (TC + 2 * P) / W;
  const int nt = count > 0 ? count : int(blockDim.x * blockDim.y),
            tid = int(threadIdx.y * blockDim.x + threadIdx.x) - first;
  VT* vt = reinterpret_cast<VT*>(tile);
  auto copy = [&](int y, int v) {  // vector v of window row y
    const int gy = i0 + y - HALF, gx = j0 - P + v * W;
    const bool ok = unsigned(gy) < unsigned(c.h) && unsigned(gx) < unsigned(c.w);
    copy_async16(vt + y * NV + v, reinterpret_cast<const VT*>(ok ? c.in + gy * c.ld_in + gx : c.in), ok);
  };
  if constexpr (kLines) {
    constexpr int NI = TC / W, NE = 2 * P / W;
#pragma unroll 4
    for (int q = y_lo * NI + tid; q < y_hi * NI; q += nt) copy(q / NI, P / W + q % NI);
    if constexpr (NE > 0)
      for (int q = y_lo * NE + tid; q < y_hi * NE; q += nt) {
        const int e = q % NE;
        copy(q / NE, e < NE / 2 ? e : NI + e);
      }
  } else {
#pragma unroll 4
    for (int q = y_lo * NV + tid; q < y_hi * NV; q += nt) {
      const int y = q / NV;
      copy(y, q - y * NV);
    }
  }
}

// Rows [y_lo, y_hi) of the vector-padded window element by element (4- or 8-byte
// asynchronous copies): the optimized kernel's path for images that do not allow 16-byte loads. SW, the padded row length, is a compile-time constant, so
// the division below is a multiply and a shift.
template <class T, int R, int TC, int PU = Vec16<T>::n>
__device__ __forceinline__ void conv2d_issue_rows_elem(const Conv2dParams<T>& c, T* tile, int y_lo, int y_hi, int i0,
                                                       int j0) {
  constexpr int HALF = R / 2, P = conv2d_pad_v<T, R, PU>, SW = TC + 2 * P;
  const int n = y_hi * SW, nt = blockDim.x * blockDim.y, tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int q = y_lo * SW + tid; q < n; q += nt) {
    const int y = q / SW, gy = i0 + y - HALF, gx = j0 - P + (q - y * SW);
    const bool ok = unsigned(gy) < unsigned(c.h) && unsigned(gx) < unsigned(c.w);
    copy_async(tile + q, ok ? c.in + gy * c.ld_in + gx : c.in, ok);
  }
}

// The optimized kernel's compute on one tile whose window (tr + R - 1 rows, padded by PU as
// above) is in shared memory, and the stores of its outputs (rows i0.., columns j0..).
// A thread computes a block of ROWS rows x CW columns, CW = one 16-byte vector (4 floats, 2
// doubles). For each window row below its block it reads the CW + R - 1 values its columns
// need as whole aligned vectors (NVR shared loads of 16 bytes, from the vector holding its
// first value) and feeds them to every output of the block whose window contains the row. At
// R = 5 in float that is 3 shared loads per window row for 4 columns, ~1.1 per output, where
// the tiled kernel (one column, one float per load) makes 7.5; shared-memory bandwidth per
// output drops from 30 to 18 bytes, and the outputs are stored as whole vectors.
template <class T, int R, int ROWS, bool kVec, int PU, int TC = kConvOptimizedCols>
__device__ __forceinline__ void conv2d_optimized_tile(const Conv2dParams<T>& c, const T* tile, int tr, int i0,
                                                      int j0) {
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int CW = V::n, HALF = R / 2;
  constexpr int P = conv2d_pad_v<T, R, PU>, SW = TC + 2 * P;
  // A thread's window row starts at shared column x0 + P - HALF: OFF values into a vector.
  constexpr int OFF = (P - HALF) % CW, NVR = (OFF + CW + R - 1 + CW - 1) / CW;
  const int x0 = int(threadIdx.x) * CW, j = j0 + x0;
  const VT* win = reinterpret_cast<const VT*>(tile) + (x0 + P - HALF - OFF) / CW;
  for (int r0 = int(threadIdx.y) * ROWS; r0 < tr; r0 += int(blockDim.y) * ROWS) {
    T acc[ROWS][CW];
#pragma unroll
    for (int o = 0; o < ROWS; ++o)
#pragma unroll
      for (int q = 0; q < CW; ++q) acc[o][q] = T(0);
    if constexpr (!kRolledConstantTaps) {
      // Fully unrolled (every index below is a compile-time constant after unrolling, so the
      // values stay in registers and each tap is an FFMA operand from constant memory).
#pragma unroll
      for (int y = 0; y < ROWS + R - 1; ++y) {
        T v[NVR * CW];
#pragma unroll
        for (int k = 0; k < NVR; ++k) V::unpack(win[(r0 + y) * (SW / CW) + k], v + k * CW);
#pragma unroll
        for (int o = 0; o < ROWS; ++o) {
          const int fi = y - o;  // compile-time: the branch disappears
          if (fi >= 0 && fi < R) {
#pragma unroll
            for (int fj = 0; fj < R; ++fj) {
              const T f = conv_filter<T>(fi * R + fj);
#pragma unroll
              for (int q = 0; q < CW; ++q) acc[o][q] += f * v[OFF + q + fj];
            }
          }
        }
      }
    } else {
      // AMD (portability.hpp): one filter column at a time, rolled, its values read from LDS
      // one by one. Unrolled, the R^2 taps would each hold a scalar register (double R = 13
      // spilled them to scratch).
      const T* col = tile + r0 * SW + x0 + (P - HALF);
      TILEKIT_UNROLL_CONSTANT_TAPS
      for (int fj = 0; fj < R; ++fj) {
#pragma unroll
        for (int y = 0; y < ROWS + R - 1; ++y) {
          T v[CW];
#pragma unroll
          for (int q = 0; q < CW; ++q) v[q] = col[y * SW + fj + q];
#pragma unroll
          for (int o = 0; o < ROWS; ++o) {
            const int fi = y - o;
            if (fi >= 0 && fi < R) {
              const T f = conv_filter<T>(fi * R + fj);
#pragma unroll
              for (int q = 0; q < CW; ++q) acc[o][q] += f * v[q];
            }
          }
        }
      }
    }
#pragma unroll
    for (int o = 0; o < ROWS; ++o) {
      const int i = i0 + r0 + o;
      if (i >= c.h) break;
      T* out = c.out + std::size_t(i) * c.ld_out + j;
      if constexpr (kVec) {
        if (j < c.w) *reinterpret_cast<VT*>(out) = V::pack(acc[o]);  // w is a multiple of CW
      } else {
#pragma unroll
        for (int q = 0; q < CW; ++q)
          if (j + q < c.w) out[q] = acc[o][q];
      }
    }
  }
}

template <class T, int R, int TC, bool kVec, int PU, bool kLines = false>
__device__ __forceinline__ void conv2d_issue_rows(const Conv2dParams<T>& c, T* tile, int y_lo, int y_hi, int i0,
                                                  int j0) {
  if constexpr (kVec)
    conv2d_issue_rows_vec<T, R, TC, PU, kLines>(c, tile, y_lo, y_hi, i0, j0);
  else
    conv2d_issue_rows_elem<T, R, TC, PU>(c, tile, y_lo, y_hi, i0, j0);
}

// The optimized kernel: the tiled kernel's window (vector-padded rows, loaded with 16-byte
// asynchronous copies), plus register tiling in both directions (conv2d_optimized_tile).
// Block: (tile columns / CW) x (tile rows / ROWS) threads, at most 256; R compiled (<= 15).
// kVec: the images allow 16-byte accesses.
// kSplit (gpu.conv2d.optimized=aligned-split): the window in two parts. Every thread copies a share
// of the rows the upper half of the row groups reads; the threads of the lower half then also
// copy the remaining rows, as a second cp.async group. After the first part is in (each thread
// waits for its own first group, then a barrier) the upper half computes while the second part
// is still in flight; the lower half waits for its second group and meets at named barrier 1
// (its threads only), which makes the rows it copied visible to each other. Taken where every
// thread has one pass of rows and the row groups halve (the automatic 32-row tile: 4 groups);
// other tiles load the window in one group.
// pf > 0 (gpu.conv2d.optimized=aligned-pf, sm_90): before its own loads, the block asks the L2 to
// fetch the window rows of block blockIdx.x + pf (about one wave of resident blocks ahead: the
// block that will most likely run on this slot next), one bulk prefetch per row, holding no
// register or shared memory. DRAM then streams during the compute phases too, and that block's
// copies hit L2.
template <class T, int R, int ROWS, bool kVec, int PU, bool kSplit = false, bool kLines = false>
__device__ __forceinline__ void conv2d_optimized_body(const Conv2dParams<T>& c, int tile_rows, int tiles_x,
                                                      int pf = 0) {
  constexpr int TC = kConvOptimizedCols;
  extern __shared__ __align__(16) unsigned char conv2d_smem[];
  T* tile = reinterpret_cast<T*>(conv2d_smem);
  const BlockXY b = block_xy(tiles_x);
  const int i0 = b.y * tile_rows, j0 = b.x * TC;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (pf > 0 && kVec && int(blockIdx.x) + pf < int(gridDim.x)) {
    constexpr int P = conv2d_pad_v<T, R, PU>;
    const int nb = int(blockIdx.x) + pf, pi0 = nb / tiles_x * tile_rows, pj0 = nb % tiles_x * TC;
    const int gx0 = max(pj0 - P, 0), gx1 = min(pj0 + TC + P, c.w);
    const unsigned bytes = unsigned(gx1 - gx0) * sizeof(T);  // a multiple of 16 (kVec images)
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int y = tid; y < tile_rows + R - 1; y += int(blockDim.x * blockDim.y)) {
      const int gy = pi0 + y - R / 2;
      if (unsigned(gy) < unsigned(c.h) && gx1 > gx0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(c.in + std::size_t(gy) * c.ld_in + gx0),
                     "r"(bytes)
                     : "memory");
    }
  }
#else
  (void)pf;  // the bulk L2 prefetch is sm_90's
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kSplit && kVec) {
    const int groups = int(blockDim.y);
    if (tile_rows == groups * ROWS && groups % 2 == 0) {
      const int upper = groups / 2 * ROWS + R - 1;  // window rows the upper half reads
      const int half = int(blockDim.x) * (groups / 2);  // threads per half (whole warps)
      const bool lower = int(threadIdx.y) >= groups / 2;
      conv2d_issue_rows_vec<T, R, TC, PU, kLines>(c, tile, 0, upper, i0, j0);
      async_group::commit();
      if (lower) {
        conv2d_issue_rows_vec<T, R, TC, PU, kLines>(c, tile, upper, tile_rows + R - 1, i0, j0, half, half);
        async_group::commit();
        async_group::wait<1>();
      } else {
        async_group::wait<0>();
      }
      __syncthreads();  // the upper rows are in
      if (lower) {
        async_group::wait<0>();
        asm volatile("bar.sync 1, %0;\n" ::"r"(half) : "memory");  // the lower rows too
      }
      conv2d_optimized_tile<T, R, ROWS, kVec, PU, TC>(c, tile, tile_rows, i0, j0);
      return;
    }
  }
#endif
  conv2d_issue_rows<T, R, TC, kVec, PU, kLines>(c, tile, 0, tile_rows + R - 1, i0, j0);
  copy_async_wait_all();
  __syncthreads();
  conv2d_optimized_tile<T, R, ROWS, kVec, PU, TC>(c, tile, tile_rows, i0, j0);
}

template <class T, int R, int ROWS, bool kVec, int PU = Vec16<T>::n>
__global__ TILEKIT_LAUNCH_BOUNDS(256) void conv2d_optimized_kernel(Conv2dParams<T> c, int tile_rows, int tiles_x) {
  conv2d_optimized_body<T, R, ROWS, kVec, PU>(c, tile_rows, tiles_x);
}

// aligned-split / -lines / -pf and their combinations, images that allow 16-byte vectors.
template <class T, int R, int ROWS, int PU, bool kSplit, bool kLines>
__global__ TILEKIT_LAUNCH_BOUNDS(256) void conv2d_optimized_opt_kernel(Conv2dParams<T> c, int tile_rows, int tiles_x,
                                                                       int pf) {
  conv2d_optimized_body<T, R, ROWS, true, PU, kSplit, kLines>(c, tile_rows, tiles_x, pf);
}

// The same with its registers capped (gpu.conv2d.optimized=aligned-occ): ptxas keeps to what lets
// kMinBlocks 256-thread blocks (twice as many of the 128-thread blocks the plan launches) reside.
// (A separate kernel: __launch_bounds__(256, 1) is not __launch_bounds__(256) to ptxas, which
// gave the uncapped kernel 56-64 registers instead of 48 under it.)
#if !defined(__HIPCC__)
// gpu.conv2d.optimized=aligned-tma (sm_90): the same window, sector-padded rows, brought in by the
// tensor memory accelerator: one thread issues one 2-D bulk tensor copy of the whole window
// (rows x SW elements from column j0 - P, row i0 - R/2; the map's bounds zero-fill what lies
// outside the image, negative coordinates included), completing on an mbarrier every thread
// waits on. No per-thread copies, address arithmetic or bounds tests; the copy engine makes the
// L2 requests. pf as in conv2d_optimized_body. Images that allow 16-byte vectors (the map needs
// 16-byte strides), windows of at most 256 rows and columns (the box limit).
template <class T, int R, int ROWS, int PU>
__global__ TILEKIT_LAUNCH_BOUNDS(256) void conv2d_optimized_tma_kernel(const __grid_constant__ CUtensorMap in_map,
                                                                       Conv2dParams<T> c, int tile_rows, int tiles_x,
                                                                       int pf) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int TC = kConvOptimizedCols, P = conv2d_pad_v<T, R, PU>, SW = TC + 2 * P;
  extern __shared__ __align__(128) unsigned char conv2d_tma_smem[];
  __shared__ __align__(8) unsigned long long window_full;  // the mbarrier
  T* tile = reinterpret_cast<T*>(conv2d_tma_smem);
  const BlockXY b = block_xy(tiles_x);
  const int i0 = b.y * tile_rows, j0 = b.x * TC;
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&window_full));
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
  if (leader) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    const unsigned bytes = unsigned(tile_rows + R - 1) * unsigned(SW) * unsigned(sizeof(T));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(&in_map)), "r"(j0 - P), "r"(i0 - R / 2), "r"(bar)
        : "memory");
  }
  if (pf > 0 && int(blockIdx.x) + pf < int(gridDim.x)) {  // as in conv2d_optimized_body
    const int nb = int(blockIdx.x) + pf, pi0 = nb / tiles_x * tile_rows, pj0 = nb % tiles_x * TC;
    const int gx0 = max(pj0 - P, 0), gx1 = min(pj0 + TC + P, c.w);
    const unsigned bytes = unsigned(gx1 - gx0) * sizeof(T);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int y = tid; y < tile_rows + R - 1; y += int(blockDim.x * blockDim.y)) {
      const int gy = pi0 + y - R / 2;
      if (unsigned(gy) < unsigned(c.h) && gx1 > gx0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(c.in + std::size_t(gy) * c.ld_in + gx0),
                     "r"(bytes)
                     : "memory");
    }
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(bar)
      : "memory");
  conv2d_optimized_tile<T, R, ROWS, true, PU, TC>(c, tile, tile_rows, i0, j0);
#endif
}
#endif

template <class T, int R, int ROWS, bool kVec, int PU, int kMinBlocks>
__global__ TILEKIT_LAUNCH_BOUNDS_OCC(256, kMinBlocks) void conv2d_optimized_capped_kernel(Conv2dParams<T> c,
                                                                                        int tile_rows, int tiles_x) {
  conv2d_optimized_body<T, R, ROWS, kVec, PU>(c, tile_rows, tiles_x);
}

}  // namespace tilekit::gpu
