// The gemm peer: OpenBLAS, the library a CPU user would otherwise call, timed beside the
// kernels in `tilekit compare` with the same thread count.
#include <cblas.h>

#include <algorithm>

#include <fmt/format.h>

#include "openmp.hpp"

namespace tilekit::openmp {
namespace {

// OpenBLAS reads its thread count from the environment once; follow omp_get_max_threads()
// at every call so `OMP_NUM_THREADS=n` and omp_set_num_threads() govern both sides alike.
void match_threads() {
  const int want = max_threads();
  if (openblas_get_num_threads() != want) openblas_set_num_threads(want);
}
// CBLAS insists on ld >= 1 even when the matrix has no columns.
int ld(index_t v) { return int(std::max<index_t>(1, v)); }

}  // namespace

std::string openblas_description() {
  return fmt::format("{} (kernels: {})", openblas_get_config(), openblas_get_corename());
}

void openblas_gemm(const GemmArgs<float>& g) {
  match_threads();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.m), int(g.n), int(g.k), g.alpha, g.a, ld(g.lda), g.b,
              ld(g.ldb), g.beta, g.c, ld(g.ldc));
}

void openblas_gemm(const GemmArgs<double>& g) {
  match_threads();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.m), int(g.n), int(g.k), g.alpha, g.a, ld(g.lda), g.b,
              ld(g.ldb), g.beta, g.c, ld(g.ldc));
}

}  // namespace tilekit::openmp
