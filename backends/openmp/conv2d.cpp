// conv2d, all three variants; the optimized one's register-blocked kernels are in conv2d_simd.cpp.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "openmp.hpp"
#include "simd.hpp"

namespace tilekit::openmp {

// ---------------------------------------------------------------- naive
// The naive variants: the serial backend's plain loops with the outermost loop split across the
// OpenMP threads, nothing else. They show what threads alone buy when every access pattern is
// left as the textbook writes it.

// Every output reads its R x R neighbourhood straight from the image, checking the borders on
// every tap.
template <class T>
void conv2d_naive(const Conv2dArgs<T>& a) {
  const index_t half = a.r / 2;
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < a.h; ++i)
    for (index_t j = 0; j < a.w; ++j) {
      T acc = 0;
      for (index_t fi = 0; fi < a.r; ++fi) {
        const index_t y = i + fi - half;
        if (y < 0 || y >= a.h) continue;
        for (index_t fj = 0; fj < a.r; ++fj) {
          const index_t x = j + fj - half;
          if (x >= 0 && x < a.w) acc += a.filter[fi * a.r + fj] * a.in[y * a.ld_in + x];
        }
      }
      a.out[i * a.ld_out + j] = acc;
    }
}

// ---------------------------------------------------------------- tiled
// The tiled variant is the portable one (backends/common/portable/conv2d_tiled.hpp), run by backend.cpp.

// ---------------------------------------------------------------- optimized
// The optimized variants' drivers: tile choice, the static split of the work across the OpenMP
// threads, and per-thread workspaces. The arithmetic is in the dispatched kernels (simd.hpp).

TileConfig conv2d_optimized_tile(const DeviceInfo& info, const Problem& p) {
  const std::size_t e = size_of(p.dtype), bc = simd::conv2d_block_cols(p.dtype);
  const std::size_t halo = std::size_t(std::max<index_t>(p.k - 1, 0));
  // Width: one register block's input rows (4 outputs + halo) across the tile in half the L1,
  // so the input rows a block of output rows shares with the next are still there.
  std::size_t cols = info.l1_bytes / 2 / ((4 + halo) * e) / bc * bc;
  cols = std::max(cols, bc);
  // Height: the whole halo-padded tile in a quarter of the L2; tall tiles amortize the halo.
  const std::size_t tile_row = (cols + halo) * e;
  std::size_t rows = info.l2_bytes / 4 / tile_row;
  rows = rows > halo + 4 ? (rows - halo) / 4 * 4 : 4;
  return {int(rows), int(cols), 0};
}

template <class T>
void conv2d_optimized(const Conv2dArgs<T>& a, const TileConfig& t) {
  const index_t half = a.r / 2, bc = index_t(simd::conv2d_block_cols(dtype_of<T>()));
  // The tile buffer: the tile plus halo, columns padded to whole register blocks, rows of a
  // whole number of cache lines so every row starts line-aligned.
  const index_t cols_needed = ceil_div(t.cols, bc) * bc + a.r - 1;
  const index_t ld = ceil_div(cols_needed, index_t(64 / sizeof(T))) * index_t(64 / sizeof(T));
  const std::size_t bytes = std::size_t((t.rows + a.r - 1) * ld) * sizeof(T);
  const index_t tiles_r = ceil_div(a.h, t.rows), tiles_c = ceil_div(a.w, t.cols);
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel
  {
    T* tile = static_cast<T*>(tls_a_pack.get(bytes));
    if (!tile) out_of_memory = true;
#pragma omp for schedule(static) collapse(2)
    for (index_t bi = 0; bi < tiles_r; ++bi)
      for (index_t bj = 0; bj < tiles_c; ++bj) {
        if (!tile) continue;
        const index_t i0 = bi * t.rows, j0 = bj * t.cols;
        const index_t th = std::min<index_t>(t.rows, a.h - i0), tw = std::min<index_t>(t.cols, a.w - j0);
        const index_t width = ceil_div(tw, bc) * bc + a.r - 1;  // what the kernel will read
        // Load phase: whole rows of the image by memcpy, zeros for the halo outside it.
        const index_t x_lo = std::max<index_t>(0, half - j0);                    // first column inside
        const index_t x_hi = std::max(x_lo, std::min<index_t>(width, a.w - j0 + half));  // one past the last
        for (index_t y = 0; y < th + a.r - 1; ++y) {
          T* dst = tile + y * ld;
          const index_t gy = i0 + y - half;
          if (gy < 0 || gy >= a.h) {
            std::fill(dst, dst + width, T(0));
            continue;
          }
          std::fill(dst, dst + x_lo, T(0));
          std::memcpy(dst + x_lo, a.in + gy * a.ld_in + (j0 + x_lo - half), std::size_t(x_hi - x_lo) * sizeof(T));
          std::fill(dst + x_hi, dst + width, T(0));
        }
        simd::conv2d_tile(a, tile, ld, i0, j0, th, tw);
      }
  }
  if (out_of_memory)
    throw Error(fmt::format("backend 'openmp': cannot allocate {} bytes of conv2d tile buffer per thread", bytes));
}

std::string conv2d_optimized_launch(const Problem& p, const TileConfig& t) {
  const std::size_t bc = simd::conv2d_block_cols(p.dtype);
  return fmt::format("{} threads over {} tiles (+{} halo) copied to L2, {} register blocks of 4 rows x {} columns",
                     max_threads(), t.str(), std::max<index_t>(p.k - 1, 0), simd::target_name(), bc);
}

template void conv2d_naive<float>(const Conv2dArgs<float>&);
template void conv2d_naive<double>(const Conv2dArgs<double>&);
template void conv2d_optimized<float>(const Conv2dArgs<float>&, const TileConfig&);
template void conv2d_optimized<double>(const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::openmp
