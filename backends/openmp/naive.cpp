// The naive variants: the serial backend's plain loops with the outermost loop split across the
// OpenMP threads, nothing else. They show what threads alone buy when every access pattern is
// left as the textbook writes it.
#include "openmp.hpp"

namespace tilekit::openmp {

// One dot product per element of C, walking B down a column: every step touches a new cache
// line of B, so beyond the L2 each multiply waits on memory, on every thread at once.
template <class T>
void gemm_naive(const GemmArgs<T>& g) {
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < g.m; ++i)
    for (index_t j = 0; j < g.n; ++j) {
      T acc = 0;
      for (index_t p = 0; p < g.k; ++p) acc += g.a[i * g.lda + p] * g.b[p * g.ldb + j];
      T& c = g.c[i * g.ldc + j];
      // beta == 0 must not read C: it may hold NaN.
      c = g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * c;
    }
}

// Reads rows, writes columns: each thread's writes land one cache line apart.
template <class T>
void transpose_naive(const TransposeArgs<T>& a) {
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < a.cols; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
}

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

template void gemm_naive<float>(const GemmArgs<float>&);
template void gemm_naive<double>(const GemmArgs<double>&);
template void transpose_naive<float>(const TransposeArgs<float>&);
template void transpose_naive<double>(const TransposeArgs<double>&);
template void conv2d_naive<float>(const Conv2dArgs<float>&);
template void conv2d_naive<double>(const Conv2dArgs<double>&);

}  // namespace tilekit::openmp
