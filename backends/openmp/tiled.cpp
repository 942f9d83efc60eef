// The tiled variants: cache blocking, the CPU analogue of the textbook shared-memory GPU kernel.
// A GPU block copies its tiles into shared memory by hand; here the tile sizes alone (derived
// from the cache sizes at run time, see backend.cpp) make the caches keep each tile while it is
// reused. Threads take whole output tiles, statically, so no two threads write one cache line
// of the output except at tile borders, and every element is summed in the same order each run.
#include <algorithm>
#include <vector>

#include "openmp.hpp"

namespace tilekit::openmp {

// Each thread owns whole tiles of C. For one tile, K is walked in steps of `depth`: the A block
// (rows x depth) and the B block (depth x cols) stay in the L2 while every element of the C
// block uses them, as a thread block reuses its shared-memory tiles. Partial sums live in a
// per-thread accumulator, so C is read once (for beta) and written once.
template <class T>
void gemm_tiled(const GemmArgs<T>& g, const TileConfig& t) {
  const index_t tm = t.rows, tn = t.cols, tk = t.depth;
  const index_t tiles_m = (g.m + tm - 1) / tm, tiles_n = (g.n + tn - 1) / tn;
#pragma omp parallel
  {
    std::vector<T> acc(std::size_t(tm * tn));
#pragma omp for schedule(static) collapse(2)
    for (index_t bi = 0; bi < tiles_m; ++bi)
      for (index_t bj = 0; bj < tiles_n; ++bj) {
        const index_t i0 = bi * tm, i1 = std::min(g.m, i0 + tm);
        const index_t j0 = bj * tn, j1 = std::min(g.n, j0 + tn), w = j1 - j0;
        std::fill(acc.begin(), acc.end(), T(0));
        for (index_t p0 = 0; p0 < g.k; p0 += tk) {
          const index_t p1 = std::min(g.k, p0 + tk);
          for (index_t i = i0; i < i1; ++i) {
            T* arow = acc.data() + (i - i0) * tn;
            for (index_t p = p0; p < p1; ++p) {
              const T aip = g.a[i * g.lda + p];
              const T* brow = g.b + p * g.ldb + j0;
              for (index_t j = 0; j < w; ++j) arow[j] += aip * brow[j];  // unit stride: vectorizes
            }
          }
        }
        for (index_t i = i0; i < i1; ++i) {
          const T* arow = acc.data() + (i - i0) * tn;
          T* crow = g.c + i * g.ldc + j0;
          if (g.beta == T(0))
            for (index_t j = 0; j < w; ++j) crow[j] = g.alpha * arow[j];
          else
            for (index_t j = 0; j < w; ++j) crow[j] = g.alpha * arow[j] + g.beta * crow[j];
        }
      }
  }
}

TileConfig transpose_tiled_tile(const DeviceInfo& info, DType t) {
  // The block's output rows are ld_out elements apart. For the power-of-two sizes everyone
  // benchmarks, that stride maps every one of them to the same L1 set, and an 8-way L1 (every
  // current x86 core) keeps only 8 lines of a set: a square block of 40 x 40 (what half the L1
  // would hold) has its output lines evicted between consecutive writes to them. So the block
  // is 8 input columns wide (8 output rows, resident while the whole block writes into them)
  // and as tall as a quarter of the L1 allows: 256 x 8 floats on a 32 KiB L1, measured 3.5x the
  // bandwidth of 40 x 40 at 8192^2 on Zen 4.
  constexpr int kWays = 8;
  const int rows = std::max(kWays, int(info.l1_bytes / 4 / (kWays * size_of(t))) / kWays * kWays);
  return {rows, kWays, 0};
}

// Blocks whose output lines stay in L1 (see transpose_tiled_tile), so each output line is
// written completely before it is evicted, and each input line is read once per block.
template <class T>
void transpose_tiled(const TransposeArgs<T>& a, const TileConfig& t) {
  const index_t tiles_r = (a.rows + t.rows - 1) / t.rows, tiles_c = (a.cols + t.cols - 1) / t.cols;
#pragma omp parallel for schedule(static) collapse(2)
  for (index_t bi = 0; bi < tiles_r; ++bi)
    for (index_t bj = 0; bj < tiles_c; ++bj) {
      const index_t i0 = bi * t.rows, i1 = std::min(a.rows, i0 + t.rows);
      const index_t j0 = bj * t.cols, j1 = std::min(a.cols, j0 + t.cols);
      for (index_t i = i0; i < i1; ++i)
        for (index_t j = j0; j < j1; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
    }
}

// The PMPP input-tile scheme: each thread copies its output tile's input plus the R-1 halo
// into a private buffer (zeros outside the image, so the compute loops need no border checks),
// then computes the whole output tile from that buffer while it sits in L1.
template <class T>
void conv2d_tiled(const Conv2dArgs<T>& a, const TileConfig& t) {
  const index_t half = a.r / 2, sw = t.cols + a.r - 1;
  const index_t tiles_r = (a.h + t.rows - 1) / t.rows, tiles_c = (a.w + t.cols - 1) / t.cols;
#pragma omp parallel
  {
    std::vector<T> tile(std::size_t((t.rows + a.r - 1) * sw)), acc(std::size_t(t.cols));
#pragma omp for schedule(static) collapse(2)
    for (index_t bi = 0; bi < tiles_r; ++bi)
      for (index_t bj = 0; bj < tiles_c; ++bj) {
        const index_t i0 = bi * t.rows, j0 = bj * t.cols;
        const index_t th = std::min<index_t>(t.rows, a.h - i0), tw = std::min<index_t>(t.cols, a.w - j0);
        for (index_t y = 0; y < th + a.r - 1; ++y)  // load phase: tile plus halo, zero fill
          for (index_t x = 0; x < tw + a.r - 1; ++x) {
            const index_t gy = i0 + y - half, gx = j0 + x - half;
            tile[std::size_t(y * sw + x)] =
                (gy >= 0 && gy < a.h && gx >= 0 && gx < a.w) ? a.in[gy * a.ld_in + gx] : T(0);
          }
        // Compute phase, no border checks. Taps outermost and columns innermost: the inner loop
        // is unit stride (it vectorizes), and each output still sums its taps in (fi, fj) order.
        for (index_t i = 0; i < th; ++i) {
          std::fill(acc.begin(), acc.begin() + tw, T(0));
          for (index_t fi = 0; fi < a.r; ++fi)
            for (index_t fj = 0; fj < a.r; ++fj) {
              const T f = a.filter[fi * a.r + fj];
              const T* src = tile.data() + (i + fi) * sw + fj;
              for (index_t j = 0; j < tw; ++j) acc[std::size_t(j)] += f * src[j];
            }
          std::copy(acc.begin(), acc.begin() + tw, a.out + (i0 + i) * a.ld_out + j0);
        }
      }
  }
}

template void gemm_tiled<float>(const GemmArgs<float>&, const TileConfig&);
template void gemm_tiled<double>(const GemmArgs<double>&, const TileConfig&);
template void transpose_tiled<float>(const TransposeArgs<float>&, const TileConfig&);
template void transpose_tiled<double>(const TransposeArgs<double>&, const TileConfig&);
template void conv2d_tiled<float>(const Conv2dArgs<float>&, const TileConfig&);
template void conv2d_tiled<double>(const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::openmp
