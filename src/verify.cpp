#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <algorithm>

#include <fmt/format.h>

#include "tilekit/verify.hpp"

namespace tilekit::verify {

namespace {
// Runs body(i) for i in [0, count) over the host's threads, in contiguous chunks.
template <class Body>
void parallel_rows(index_t count, Body&& body) {
  const index_t threads = std::max<index_t>(1, std::min<index_t>(count / 8, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  const index_t chunk = (count + threads - 1) / threads;
  for (index_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (index_t i = t * chunk; i < std::min(count, (t + 1) * chunk); ++i) body(i);
    });
  for (auto& th : pool) th.join();
}
}  // namespace

template <class T>
Reference gemm(index_t m, index_t n, index_t k, T alpha, const std::vector<T>& a, index_t lda,
               const std::vector<T>& b, index_t ldb, T beta, const std::vector<T>& c, index_t ldc,
               index_t sample_rows) {
  Reference r;
  r.rows = m;
  r.cols = n;
  r.terms = k + 1;
  r.row_step = sample_rows > 0 && sample_rows < m ? (m + sample_rows - 1) / sample_rows : 1;
  const index_t checked = m == 0 ? 0 : r.slot(m - 1) + 1;
  r.value.assign(std::size_t(checked * n), 0.0);
  r.bound.assign(std::size_t(checked * n), 0.0);
  parallel_rows(checked, [&](index_t s) {
    const index_t i = std::min(m - 1, s * r.row_step);
    double* acc = r.value.data() + s * n;
    double* mag = r.bound.data() + s * n;
    // alpha == 0 reads neither A nor B (NaN or Inf there must not reach C), as reference BLAS.
    const index_t kk = alpha == T(0) ? 0 : k;
    for (index_t p = 0; p < kk; ++p) {  // i-p-j order: contiguous rows of B
      const double aip = double(a[std::size_t(i * lda + p)]);
      const T* brow = b.data() + p * ldb;
      for (index_t j = 0; j < n; ++j) {
        const double t = aip * double(brow[j]);
        acc[j] += t;
        mag[j] += std::fabs(t);
      }
    }
    for (index_t j = 0; j < n; ++j) {
      // beta == 0 must ignore C entirely (it may hold NaN), so its term is skipped, not multiplied.
      const double cij = beta == T(0) ? 0.0 : double(beta) * double(c[std::size_t(i * ldc + j)]);
      acc[j] = (kk ? double(alpha) * acc[j] : 0.0) + cij;
      mag[j] = (kk ? std::fabs(double(alpha)) * mag[j] : 0.0) + std::fabs(cij);
    }
  });
  return r;
}

template <class T>
Reference transpose(index_t rows, index_t cols, const std::vector<T>& in, index_t ld_in) {
  Reference r{std::vector<double>(std::size_t(rows * cols)), std::vector<double>(std::size_t(rows * cols)), cols, rows, 0, 1};
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) r.value[std::size_t(j * rows + i)] = double(in[std::size_t(i * ld_in + j)]);
  return r;  // bound stays 0: a transpose must be exact
}

template <class T>
Reference conv2d(index_t h, index_t w, const std::vector<T>& in, index_t ld_in, const std::vector<T>& filter, int r) {
  Reference ref{std::vector<double>(std::size_t(h * w)), std::vector<double>(std::size_t(h * w)), h, w, index_t(r) * r, 1};
  const int half = r / 2;
  parallel_rows(h, [&](index_t i) {
    for (index_t j = 0; j < w; ++j) {
      double acc = 0, mag = 0;
      for (int fi = 0; fi < r; ++fi) {
        const index_t y = i + fi - half;
        if (y < 0 || y >= h) continue;
        for (int fj = 0; fj < r; ++fj) {
          const index_t x = j + fj - half;
          if (x < 0 || x >= w) continue;
          const double t = double(filter[std::size_t(fi * r + fj)]) * double(in[std::size_t(y * ld_in + x)]);
          acc += t;
          mag += std::fabs(t);
        }
      }
      ref.value[std::size_t(i * w + j)] = acc;
      ref.bound[std::size_t(i * w + j)] = mag;
    }
  });
  return ref;
}

template <class T>
Check compare(const Reference& ref, const std::vector<T>& out, index_t ld, double slack) {
  Check c;
  if (index_t(out.size()) < (ref.rows > 0 ? (ref.rows - 1) * ld + ref.cols : 0)) {
    c.message = fmt::format("output holds {} values, too few for {} x {} with ld {}", out.size(), ref.rows, ref.cols, ld);
    return c;
  }
  const double eps = std::numeric_limits<T>::epsilon();
  const double gamma = double(ref.terms + 2) * eps * slack;
  // Results below the smallest normal are flushed by some kernels (FTZ); allow that much.
  const double floor = double(std::numeric_limits<T>::min()) * 4;
  double diff2 = 0, ref2 = 0;
  for (index_t i = 0; i < ref.rows; ++i)
    for (index_t j = 0; j < ref.cols; ++j) {
      const double v = double(out[std::size_t(i * ld + j)]);
      if (!ref.checks_row(i) && std::isfinite(v)) continue;  // sampled reference: written is all we know
      const double e = ref.checks_row(i) ? ref.value[std::size_t(ref.slot(i) * ref.cols + j)] : 0.0;
      const double b = ref.checks_row(i) ? ref.bound[std::size_t(ref.slot(i) * ref.cols + j)] : 0.0;
      if (!std::isfinite(v)) {
        ++c.nonfinite;
        if (c.worst_ratio != std::numeric_limits<double>::infinity()) {
          c.worst_ratio = std::numeric_limits<double>::infinity();
          c.worst_i = i;
          c.worst_j = j;
        }
        continue;
      }
      const double d = std::fabs(v - e);
      diff2 += d * d;
      ref2 += e * e;
      // A transpose (terms == 0) must be exact; the rounding of the element to T is allowed.
      const double tol = ref.terms == 0 ? std::fabs(e) * eps * 0.5 : gamma * b + floor;
      const double ratio = tol > 0 ? d / tol : (d > 0 ? std::numeric_limits<double>::infinity() : 0.0);
      if (ratio > c.worst_ratio) {
        c.worst_ratio = ratio;
        c.worst_i = i;
        c.worst_j = j;
      }
    }
  c.rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.ok = c.nonfinite == 0 && c.worst_ratio <= 1.0;
  if (!c.ok) {
    const double got = c.worst_i >= 0 ? double(out[std::size_t(c.worst_i * ld + c.worst_j)]) : 0;
    const double want =
        c.worst_i >= 0 && ref.checks_row(c.worst_i) ? ref.value[std::size_t(ref.slot(c.worst_i) * ref.cols + c.worst_j)] : 0;
    c.message = fmt::format("{} non-finite values; worst element ({}, {}) = {} expected {} ({:.3g}x tolerance); "
                            "relative error {:.3g}",
                            c.nonfinite, c.worst_i, c.worst_j, got, want, c.worst_ratio, c.rel_error);
  }
  return c;
}

template <class T>
std::vector<T> random_values(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(count);
  for (auto& x : v) x = T(dist(gen));
  return v;
}

#define TILEKIT_INSTANTIATE(T)                                                                                    \
  template Reference gemm<T>(index_t, index_t, index_t, T, const std::vector<T>&, index_t, const std::vector<T>&, \
                             index_t, T, const std::vector<T>&, index_t, index_t);                                 \
  template Reference transpose<T>(index_t, index_t, const std::vector<T>&, index_t);                              \
  template Reference conv2d<T>(index_t, index_t, const std::vector<T>&, index_t, const std::vector<T>&, int);     \
  template Check compare<T>(const Reference&, const std::vector<T>&, index_t, double);                            \
  template std::vector<T> random_values<T>(std::size_t, std::uint64_t);
TILEKIT_INSTANTIATE(float)
TILEKIT_INSTANTIATE(double)
#undef TILEKIT_INSTANTIATE

}  // namespace tilekit::verify
