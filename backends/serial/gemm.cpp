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

template void gemm_naive<float>(const GemmArgs<float>&);
template void gemm_naive<double>(const GemmArgs<double>&);

}  // namespace tilekit::serial
