// The BLAS interface of libtilekit_blas: sgemm_ and dgemm_ as the reference (netlib) BLAS
// defines them (Fortran calling convention, column-major, LP64 integers), cblas_sgemm and
// cblas_dgemm as the reference CBLAS does, with their argument checks, error numbering and
// quick returns. The computation is engine.cpp's; errors go to xerbla_ and cblas_xerbla
// (errors.cpp), called so that a program's own definitions replace the defaults.
#include <type_traits>

#include "engine.hpp"
#include "errors.hpp"

namespace tilekit::blas {
namespace {

bool is(char c, char upper) { return c == upper || c == upper - 'A' + 'a'; }

// The reference's checks in its order; 0 when the arguments are valid, else the (1-based)
// position of the first bad one among the Fortran routine's 13.
int gemm_info(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc) {
  const bool nota = is(ta, 'N'), notb = is(tb, 'N');
  const int nrowa = nota ? m : k, nrowb = notb ? k : n;
  auto at_least_one = [](int v) { return v > 1 ? v : 1; };
  if (!nota && !is(ta, 'C') && !is(ta, 'T')) return 1;
  if (!notb && !is(tb, 'C') && !is(tb, 'T')) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < at_least_one(nrowa)) return 8;
  if (ldb < at_least_one(nrowb)) return 10;
  if (ldc < at_least_one(m)) return 13;
  return 0;
}

bool quick_return(int m, int n, int k, double alpha, double beta) {
  return m == 0 || n == 0 || ((alpha == 0.0 || k == 0) && beta == 1.0);
}

// Checked Fortran-convention GEMM. The CBLAS entry points come here after their own checks, with
// the operands in column-major order; their errors go to cblas_xerbla, numbered as the reference
// CBLAS numbers them (the Fortran position plus one, its layout argument coming first; in
// row-major calls, positions of the swapped operands, which cblas_xerbla swaps back).
template <class T>
void checked_gemm(Entry entry, char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
                  int ldb, T beta, T* c, int ldc) {
  constexpr bool single = std::is_same_v<T, float>;
  if (const int info = gemm_info(ta, tb, m, n, k, lda, ldb, ldc)) {
    if (entry == Entry::fortran)
      call_xerbla(single ? "SGEMM " : "DGEMM ", info);
    else
      cblas_xerbla(info + 1, single ? "cblas_sgemm" : "cblas_dgemm", "");
    return;
  }
  if (quick_return(m, n, k, double(alpha), double(beta))) return;
  gemm(entry, is(ta, 'N') ? 'N' : 'T', is(tb, 'N') ? 'N' : 'T', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

enum { kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113 };

bool trans_char(int t, char* out) {
  switch (t) {
    case kNoTrans: *out = 'N'; return true;
    case kTrans: *out = 'T'; return true;
    case kConjTrans: *out = 'C'; return true;
    default: return false;
  }
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the Fortran routine with the
// operands (and m, n) swapped. RowMajorStrg and CBLAS_CallFromC are set as the reference CBLAS
// sets them around every call (its testers read RowMajorStrg in their cblas_xerbla).
template <class T>
void cblas_gemm(int layout, int trans_a, int trans_b, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
                int ldb, T beta, T* c, int ldc) {
  const char* rout = std::is_same_v<T, float> ? "cblas_sgemm" : "cblas_dgemm";
  count_call(std::is_same_v<T, float> ? Routine::sgemm : Routine::dgemm);
  RowMajorStrg = 0;
  CBLAS_CallFromC = 1;
  char ta = 0, tb = 0;
  if (layout == kColMajor || layout == kRowMajor) {
    if (layout == kRowMajor) RowMajorStrg = 1;
    if (!trans_char(trans_a, &ta)) {
      cblas_xerbla(2, rout, "Illegal TransA setting, %d\n", trans_a);
    } else if (!trans_char(trans_b, &tb)) {
      cblas_xerbla(3, rout, "Illegal TransB setting, %d\n", trans_b);
    } else if (layout == kColMajor) {
      checked_gemm(Entry::cblas_col, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else {
      checked_gemm(Entry::cblas_row, tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    }
  } else {
    cblas_xerbla(1, rout, "Illegal layout setting, %d\n", layout);
  }
  CBLAS_CallFromC = 0;
  RowMajorStrg = 0;
}

}  // namespace
}  // namespace tilekit::blas

using tilekit::blas::Entry;

extern "C" {

// Data the reference CBLAS defines and its testers use (they hold copies of their own, which
// these accesses reach: the program's definition interposes).
int RowMajorStrg = 0;
int CBLAS_CallFromC = 0;

// Trailing hidden string lengths of the Fortran convention are not declared: a C callee may
// ignore arguments its caller passes.
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc) {
  tilekit::blas::count_call(tilekit::blas::Routine::sgemm);
  tilekit::blas::checked_gemm(Entry::fortran, *transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
}

void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc) {
  tilekit::blas::count_call(tilekit::blas::Routine::dgemm);
  tilekit::blas::checked_gemm(Entry::fortran, *transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
}

void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
  tilekit::blas::cblas_gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_dgemm(int layout, int trans_a, int trans_b, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc) {
  tilekit::blas::cblas_gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // extern "C"
