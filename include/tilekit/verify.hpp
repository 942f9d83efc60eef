// Host-side double-precision references and the error measure every check in tilekit uses
// (the conformance suite and `tilekit run` alike). Independent of every backend: plain loops
// over std::vector, accumulating in double.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilekit/types.hpp"

namespace tilekit::verify {

// A reference result with, per element, the magnitude sum_k |terms| that bounds rounding error
// (|computed - exact| <= gamma * bound for a sum of K terms); element-wise checks use it so a
// single wrong element cannot hide in a norm.
struct Reference {
  std::vector<double> value;  // checked rows x cols, dense
  std::vector<double> bound;  // same shape
  index_t rows = 0, cols = 0; // of the whole output
  index_t terms = 0;          // K of the longest sum (gemm: k + beta term, conv: R*R)
  index_t row_step = 1;       // rows 0, step, 2*step, ... and the last are checked against values;
                              // every element of the other rows must still be finite (written)
  bool checks_row(index_t i) const { return i % row_step == 0 || i == rows - 1; }
  index_t slot(index_t i) const { return i == rows - 1 && i % row_step ? i / row_step + 1 : i / row_step; }
};

// sample_rows > 0 computes only about that many evenly spaced rows of C (for problems whose full
// double-precision product would take minutes on the host); 0 computes all of them. Rows are
// spread over the host's threads.
template <class T>
Reference gemm(index_t m, index_t n, index_t k, T alpha, const std::vector<T>& a, index_t lda,
               const std::vector<T>& b, index_t ldb, T beta, const std::vector<T>& c, index_t ldc,
               index_t sample_rows = 0);
template <class T>
Reference transpose(index_t rows, index_t cols, const std::vector<T>& in, index_t ld_in);
template <class T>
Reference conv2d(index_t h, index_t w, const std::vector<T>& in, index_t ld_in,
                 const std::vector<T>& filter, int r);

struct Check {
  bool ok = false;
  double rel_error = 0;       // ||out - ref||_F / ||ref||_F (absolute when ref == 0)
  double worst_ratio = 0;     // max_ij |out - ref| / (tolerance_ij); > 1 fails
  index_t worst_i = -1, worst_j = -1;
  index_t nonfinite = 0;      // NaN/Inf where the reference is finite (unwritten poison)
  std::string message;        // empty when ok
};

// Compares out (rows x cols with leading dimension ld) to the reference. Element (i,j)
// passes when |out - ref| <= (terms + 2) * eps(T) * bound(i,j) * slack, slack absorbing
// the different summation orders of blocked kernels.
template <class T>
Check compare(const Reference& ref, const std::vector<T>& out, index_t ld, double slack = 4.0);

// Deterministic uniform values in [-1, 1) from a seed (never zeros-only; reproducible).
template <class T>
std::vector<T> random_values(std::size_t count, std::uint64_t seed);

}  // namespace tilekit::verify
