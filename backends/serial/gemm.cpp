#include <algorithm>
#include <vector>

#include "serial.hpp"

namespace tilekit::serial {

// One dot product per element of C: row i of A against column j of B. Walking B down a
// column touches a new cache line every step: the CPU picture of the naive GPU kernel that
// reads global memory for every multiply.
template <class T>
void gemm_naive(const GemmArgs<T>& g) {
  for (index_t i = 0; i < g.m; ++i)
    for (index_t j = 0; j < g.n; ++j) {
      T acc = 0;
      for (index_t p = 0; p < g.k; ++p) acc += g.a[i * g.lda + p] * g.b[p * g.ldb + j];
      T& c = g.c[i * g.ldc + j];
      c = g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * c;
    }
}

// Loop tiling: C is computed block by block; for each block of C the K dimension is walked in
// steps of `depth`, so an A block (rows x depth) and a B block (depth x cols) are reused from
// cache for every element of the C block, as a GPU thread block reuses its shared-memory tiles.
// The partial sums of one C block live in a small accumulator instead of C itself, so C is read
// once (for beta) and written once.
template <class T>
void gemm_tiled(const GemmArgs<T>& g, const TileConfig& t) {
  const index_t tm = t.rows, tn = t.cols, tk = t.depth;
  std::vector<T> acc(std::size_t(tm * tn));
  for (index_t i0 = 0; i0 < g.m; i0 += tm) {
    const index_t i1 = std::min(g.m, i0 + tm);
    for (index_t j0 = 0; j0 < g.n; j0 += tn) {
      const index_t j1 = std::min(g.n, j0 + tn), w = j1 - j0;
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
      for (index_t i = i0; i < i1; ++i)
        for (index_t j = j0; j < j1; ++j) {
          T& c = g.c[i * g.ldc + j];
          const T v = g.alpha * acc[std::size_t((i - i0) * tn + (j - j0))];
          c = g.beta == T(0) ? v : v + g.beta * c;
        }
    }
  }
}

template void gemm_naive<float>(const GemmArgs<float>&);
template void gemm_naive<double>(const GemmArgs<double>&);
template void gemm_tiled<float>(const GemmArgs<float>&, const TileConfig&);
template void gemm_tiled<double>(const GemmArgs<double>&, const TileConfig&);

}  // namespace tilekit::serial
