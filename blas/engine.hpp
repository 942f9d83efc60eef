// How libtilekit_blas runs a GEMM on tilekit: the backend a call goes to, the mapping of the
// column-major BLAS operation onto tilekit's row-major gemm, and the counts the summary line
// reports.
#pragma once

namespace tilekit::blas {

enum class Routine { sgemm, dgemm };

// The entry point a call came through, for the per-call lines of TILEKIT_BLAS_VERBOSE=2.
enum class Entry { fortran, cblas_col, cblas_row };

// Counts a call of `r` (every call, the refused and the empty ones included).
void count_call(Routine r);

// C = alpha op(A) op(B) + beta C in column-major storage, with arguments that passed the
// reference checks and not a quick return (m, n > 0; not (alpha == 0 or k == 0) with beta == 1).
// ta, tb: 'N' or 'T' ('C' is 'T' for real matrices).
template <class T>
void gemm(Entry entry, char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb,
          T beta, T* c, int ldc);

}  // namespace tilekit::blas
