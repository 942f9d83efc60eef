// A BLAS whose dgemm_ and sgemm_ compute the right product and then spoil one entry of C.
// Preloaded under every rank, it must make scripts/scalapack.sh fail: the example's verification
// and ScaLAPACK's testers have to be reading what the BLAS computed, or they prove nothing.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace {
template <class T>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                      const T*, const int*, const T*, T*, const int*);

template <class T>
Gemm<T> next(const char* name) {
  auto f = reinterpret_cast<Gemm<T>>(dlsym(RTLD_NEXT, name));
  if (!f) {
    std::fprintf(stderr, "wrong_blas: no %s after this library (%s)\n", name, dlerror());
    std::abort();
  }
  return f;
}

template <class T>
void spoiled(Gemm<T> real, const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* alpha,
             const T* a, const int* lda, const T* b, const int* ldb, const T* beta, T* c, const int* ldc) {
  real(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (*m > 0 && *n > 0) c[0] += T(0.01) * (T(1) + std::fabs(c[0]));
}
}  // namespace

extern "C" {
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc) {
  static const Gemm<double> real = next<double>("dgemm_");
  spoiled(real, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc) {
  static const Gemm<float> real = next<float>("sgemm_");
  spoiled(real, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
}
