// Transpose kernels, out = in^T (out-of-place, row-major), written once for CUDA and HIP.
// A transpose does no arithmetic: the whole game is making both the reads and the writes of
// global memory coalesced.
//   naive      a warp reads a row segment (coalesced) and writes a column segment: every
//              write lands in a different memory segment.
//   tiled      stage a tile in shared memory, then write it out row by row (coalesced both
//              ways), unpadded: written once for every backend on the tile layer,
//              backends/common/portable/transpose_tiled.hpp (launched by transpose.cu via tiled.cuh).
//   optimized  a padded tile (row length cols + 1 shifts each row by one bank), 16-byte
//              vector loads and stores, and several vectors per thread in flight.
#pragma once

#include "common/gpu/device_common.cuh"
#include "kernels.hpp"

namespace tilekit::gpu {

template <class T>
__global__ void transpose_naive_kernel(TransposeParams<T> t, int tiles_x) {
  const BlockXY b = block_xy(tiles_x);
  const int col = b.x * blockDim.x + threadIdx.x, row = b.y * blockDim.y + threadIdx.y;
  if (row < t.rows && col < t.cols) t.out[col * t.ld_out + row] = t.in[row * t.ld_in + col];
}

// TR x TC input tile per block of 256 threads. kVec: pointers 16-byte aligned and rows,
// cols, ld_in, ld_out multiples of the vector width, so every vector is wholly inside or
// wholly outside the matrix; otherwise the same kernel moves single elements.
template <class T, int TR, int TC, bool kVec>
__global__ TILEKIT_LAUNCH_BOUNDS(256) void transpose_optimized_kernel(TransposeParams<T> t, int tiles_x) {
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int W = V::n, NT = 256, LD = TC + 1;
  constexpr int LOADS = TR * (TC / W) / NT, STORES = TC * (TR / W) / NT;
  static_assert(LOADS * NT == TR * (TC / W) && STORES * NT == TC * (TR / W), "tile must split evenly");
  __shared__ T tile[TR * LD];
  const BlockXY b = block_xy(tiles_x);
  const int i0 = b.y * TR, j0 = b.x * TC, tid = threadIdx.x;

  // All of a thread's loads are issued before any is used: LOADS x 16 bytes in flight.
  T v[LOADS][W];
#pragma unroll
  for (int l = 0; l < LOADS; ++l) {
    const int q = tid + l * NT, r = q / (TC / W), c = (q % (TC / W)) * W, i = i0 + r, j = j0 + c;
    if constexpr (kVec) {
      if (i < t.rows && j < t.cols) V::unpack(*reinterpret_cast<const VT*>(t.in + i * t.ld_in + j), v[l]);
      else for (int e = 0; e < W; ++e) v[l][e] = T(0);
    } else {
#pragma unroll
      for (int e = 0; e < W; ++e) v[l][e] = (i < t.rows && j + e < t.cols) ? t.in[i * t.ld_in + j + e] : T(0);
    }
  }
#pragma unroll
  for (int l = 0; l < LOADS; ++l) {
    const int q = tid + l * NT, r = q / (TC / W), c = (q % (TC / W)) * W;
#pragma unroll
    for (int e = 0; e < W; ++e) tile[r * LD + c + e] = v[l][e];
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < STORES; ++s) {
    // Output row r (input column j0 + r), W consecutive output columns from input rows c..c+W-1.
    const int q = tid + s * NT, r = q / (TR / W), c = (q % (TR / W)) * W, j = j0 + r, i = i0 + c;
    T o[W];
#pragma unroll
    for (int e = 0; e < W; ++e) o[e] = tile[(c + e) * LD + r];
    if constexpr (kVec) {
      if (j < t.cols && i < t.rows) *reinterpret_cast<VT*>(t.out + j * t.ld_out + i) = V::pack(o);
    } else {
#pragma unroll
      for (int e = 0; e < W; ++e)
        if (j < t.cols && i + e < t.rows) t.out[j * t.ld_out + i + e] = o[e];
    }
  }
}

}  // namespace tilekit::gpu
