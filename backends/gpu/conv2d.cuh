// conv2d kernels: same-size output, zero padding, odd R x R filter, cross-correlation (no
// flip), written once for CUDA and HIP.
//   naive      one thread per output, the R x R window and the filter read from global
//              memory (the window overlaps its neighbours', so each input is fetched R*R times
//              through the caches).
//   tiled      PMPP's input tile: a block loads its output tile plus the R-1 halo into shared
//              memory once (zeros outside the image), then computes from there; the filter
//              sits in __constant__ memory, broadcast to the warp. Small filters are compiled
//              with R fixed so the loops unroll and each tap is one shared load and one FMA.
//   optimized  as tiled, plus register blocking: a thread computes kConvRowsPerThread outputs
//              down a column and reads each shared value once for all the outputs it touches
//              ((ROWS + R - 1) * R shared loads instead of ROWS * R * R).
#pragma once

#include "device_common.cuh"
#include "tilekit/ops.hpp"

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

// Load phase shared by the tiled and optimized kernels: the (tr + R - 1) x (tc + R - 1) input
// window of the output tile at (i0, j0), zero outside the image. The window is walked as one
// flat range so every lane of every warp has work (its rows are not a multiple of the warp),
// and each thread issues kBatch independent loads before storing any: one load at a time per
// thread leaves far too few bytes in flight to cover DRAM latency.
template <class T>
__device__ __forceinline__ void conv2d_load_tile(const Conv2dParams<T>& c, T* tile, int r, int tr, int tc, int i0,
                                                 int j0) {
  constexpr int kBatch = 8;
  const int half = r / 2, sw = tc + r - 1, n = (tr + r - 1) * sw;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nthreads = blockDim.x * blockDim.y;
  // (y, x) of element q = tid + i * nthreads, stepped without a division per element.
  const int dy = nthreads / sw, dx = nthreads - dy * sw;
  int q = tid, y = tid / sw, x = tid - y * sw;
  while (q < n) {
    T v[kBatch];
    int at[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int gy = i0 + y - half, gx = j0 + x - half;
      at[i] = q < n ? q : -1;
      v[i] = (q < n && gy >= 0 && gy < c.h && gx >= 0 && gx < c.w) ? c.in[gy * c.ld_in + gx] : T(0);
      q += nthreads;
      y += dy;
      x += dx;
      if (x >= sw) x -= sw, ++y;
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i)
      if (at[i] >= 0) tile[at[i]] = v[i];
  }
}

// Block: tile cols x (rows / outputs per thread) threads. kR > 0: R fixed at compile time.
template <class T, int kR>
__global__ void conv2d_tiled_kernel(Conv2dParams<T> c, int tile_rows, int tiles_x) {
  extern __shared__ __align__(16) unsigned char conv2d_smem[];
  T* tile = reinterpret_cast<T*>(conv2d_smem);
  const int r = kR > 0 ? kR : c.r, tr = tile_rows, tc = blockDim.x, sw = tc + r - 1;
  const BlockXY b = block_xy(tiles_x);
  const int i0 = b.y * tr, j0 = b.x * tc;
  conv2d_load_tile(c, tile, r, tr, tc, i0, j0);
  __syncthreads();
  const int tx = threadIdx.x, j = j0 + tx;
  for (int ty = threadIdx.y; ty < tr; ty += blockDim.y) {
    const int i = i0 + ty;
    if (i >= c.h || j >= c.w) continue;
    const T* win = tile + ty * sw + tx;
    T acc = 0;
    if constexpr (kR > 0) {
#pragma unroll
      for (int fi = 0; fi < kR; ++fi)
#pragma unroll
        for (int fj = 0; fj < kR; ++fj) acc += conv_filter<T>(fi * kR + fj) * win[fi * sw + fj];
    } else {
      for (int fi = 0; fi < r; ++fi)
        for (int fj = 0; fj < r; ++fj) acc += conv_filter<T>(fi * r + fj) * win[fi * sw + fj];
    }
    c.out[i * c.ld_out + j] = acc;
  }
}

// Block: tile cols x (tile rows / ROWS) threads; thread (tx, ty) owns the ROWS outputs of
// column tx from row ty * ROWS. For each filter column it walks the ROWS + R - 1 input values
// below it once, adding each into every output whose window contains it.
template <class T, int R, int ROWS>
__global__ TILEKIT_LAUNCH_BOUNDS(1024) void conv2d_optimized_kernel(Conv2dParams<T> c, int tile_rows, int tiles_x) {
  extern __shared__ __align__(16) unsigned char conv2d_smem[];
  T* tile = reinterpret_cast<T*>(conv2d_smem);
  const int tr = tile_rows, tc = blockDim.x, sw = tc + R - 1;
  const BlockXY b = block_xy(tiles_x);
  const int i0 = b.y * tr, j0 = b.x * tc;
  conv2d_load_tile(c, tile, R, tr, tc, i0, j0);
  __syncthreads();
  const int tx = threadIdx.x, r0 = threadIdx.y * ROWS, j = j0 + tx;
  T acc[ROWS];
#pragma unroll
  for (int o = 0; o < ROWS; ++o) acc[o] = T(0);
  const T* col = tile + r0 * sw + tx;
#pragma unroll
  for (int fj = 0; fj < R; ++fj) {
#pragma unroll
    for (int y = 0; y < ROWS + R - 1; ++y) {
      const T v = col[y * sw + fj];
#pragma unroll
      for (int o = 0; o < ROWS; ++o) {
        const int fi = y - o;  // compile-time after unrolling: the branch disappears
        if (fi >= 0 && fi < R) acc[o] += conv_filter<T>(fi * R + fj) * v;
      }
    }
  }
  if (j < c.w) {
#pragma unroll
    for (int o = 0; o < ROWS; ++o)
      if (i0 + r0 + o < c.h) c.out[(i0 + r0 + o) * c.ld_out + j] = acc[o];
  }
}

}  // namespace tilekit::gpu
