// Matrices of 2^31 elements or more through the BLAS entry points, linked against libtilekit_blas
// alone, on whichever backend TILEKIT_BLAS_BACKEND names:
//
//   tilekit_blas_huge strided
//       sgemm_ (N, T) and dgemm_ (T, N) whose A, B and C all pass 2^31 elements by their leading
//       dimensions (33,554,496 or 65,600) while only 64 rows or columns of each are used: every
//       element offset the call forms passes 2^31, yet only a few hundred MB are touched. Every
//       entry of C is checked against a double-precision reference, and the element after each
//       used column of C must keep its sentinel. Seconds on any backend (ctest large.blas_offsets).
//   tilekit_blas_huge dense float|double N NN|NT|TN|TT
//       one square gemm of N x N matrices (N = 50000 float: 10 GB a matrix), C = A B with C full of
//       NaN before (beta = 0), timed after a small warm-up call; 64 sampled entries of C checked
//       against a double reference. Meant for GPU backends (bench/device/blas_gpu.sh, stage huge).
//
// Prints a RESULT line per call and, for dense, a JSON row (op blas-huge) for bench/run.py. Exit
// status: 0 every check passed, 1 a wrong result, 2 bad usage, 77 not enough memory (skipped).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
}

namespace {

using Index = long long;

// Bytes the kernel says it could give without swapping.
Index mem_available() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  Index kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

// Zero-filled address space: pages never touched cost nothing.
template <class T>
T* reserve(Index elements) {
  void* p = std::calloc(std::size_t(elements), sizeof(T));
  if (!p) {
    std::printf("skipped: cannot reserve %lld elements of address space\n", elements);
    std::exit(77);
  }
  return static_cast<T*>(p);
}

template <class T>
void gemm(char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
          int ldc) {
  if constexpr (std::is_same_v<T, float>)
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  else
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
}

double value(Index i, Index j, unsigned salt) { return double((i * 131 + j * 7 + salt * 29) % 1023) / 511.0 - 1.0; }

int failures = 0;

// op(X)(i, p) of a column-major X with leading dimension ld.
template <class T>
T at(const T* x, Index ld, bool trans, Index i, Index p) {
  return trans ? x[i * ld + p] : x[p * ld + i];
}

// C (m x n, col-major, ldc) = op(A) op(B) with 64 x 64 outputs, k deep, every matrix past 2^31
// elements by its leading dimension; every entry checked.
template <class T>
void strided(char ta, char tb, int k, Index lda, Index ldb, Index ldc) {
  constexpr int m = 64, n = 64;
  const bool tra = ta == 'T', trb = tb == 'T';
  // Stored shapes: A is m x k (k x m transposed), B is k x n (n x k transposed).
  const Index a_cols = tra ? m : k, a_rows = tra ? k : m, b_cols = trb ? k : n, b_rows = trb ? n : k;
  const Index ea = lda * a_cols, eb = ldb * b_cols, ec = ldc * n;
  if (ea < (Index(1) << 31) || eb < (Index(1) << 31) || ec < (Index(1) << 31)) {
    std::printf("FAIL: the case does not pass 2^31 elements (%lld, %lld, %lld)\n", ea, eb, ec);
    ++failures;
    return;
  }
  T* a = reserve<T>(ea);
  T* b = reserve<T>(eb);
  T* c = reserve<T>(ec);
  for (Index p = 0; p < a_cols; ++p)
    for (Index i = 0; i < a_rows; ++i) a[p * lda + i] = T(value(i, p, 1));
  for (Index p = 0; p < b_cols; ++p)
    for (Index i = 0; i < b_rows; ++i) b[p * ldb + i] = T(value(i, p, 2));
  const T sentinel = T(7.25);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < m; ++i) c[j * ldc + i] = std::numeric_limits<T>::quiet_NaN();  // beta = 0: never read
    c[j * ldc + m] = sentinel;
  }
  const auto t0 = std::chrono::steady_clock::now();
  gemm<T>(ta, tb, m, n, k, T(1), a, int(lda), b, int(ldb), T(0), c, int(ldc));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double tol = std::numeric_limits<T>::epsilon() * 4 * std::sqrt(double(k));  // relative to sum |a b|
  double worst = 0;
  int bad_sentinel = 0;
  for (Index j = 0; j < n; ++j) {
    if (c[j * ldc + m] != sentinel) ++bad_sentinel;
    for (Index i = 0; i < m; ++i) {
      double ref = 0, mag = 0;
      for (Index p = 0; p < k; ++p) {
        const double x = double(at(a, lda, tra, i, p)) * double(at(b, ldb, trb, p, j));
        ref += x;
        mag += std::fabs(x);
      }
      const double e = std::fabs(double(c[j * ldc + i]) - ref) / (mag + 1e-300);
      if (!(e <= worst)) worst = e;
    }
  }
  const char* dt = std::is_same_v<T, float> ? "sgemm_" : "dgemm_";
  const bool ok = worst <= tol && bad_sentinel == 0;
  std::printf("%s %c%c m=%d n=%d k=%d lda=%lld ldb=%lld ldc=%lld (elements %lld, %lld, %lld): %.3f s, max rel. error "
              "%.2g (tolerance %.2g), sentinels overwritten %d: %s\n",
              dt, ta, tb, m, n, k, lda, ldb, ldc, ea, eb, ec, s, worst, tol, bad_sentinel, ok ? "ok" : "FAILED");
  std::printf("RESULT blas_huge_strided routine=%s trans=%c%c k=%d elements_a=%lld elements_b=%lld elements_c=%lld "
              "seconds=%.4f rel_error=%.3g ok=%d\n",
              dt, ta, tb, k, ea, eb, ec, s, worst, ok ? 1 : 0);
  if (!ok) ++failures;
  std::free(a);
  std::free(b);
  std::free(c);
}

// fn over [0, n) on every core.
void parallel(Index n, const std::function<void(Index, Index)>& fn) {
  const unsigned t = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (unsigned i = 0; i < t; ++i) th.emplace_back(fn, n * i / t, n * (i + 1) / t);
  for (auto& x : th) x.join();
}

template <class T>
int dense(int n, char ta, char tb) {
  const Index count = Index(n) * n;
  const Index need = 3 * count * Index(sizeof(T)) + (Index(1) << 30);
  if (mem_available() < need) {
    std::printf("skipped: dense %d needs %.1f GB of available memory, %.1f GB available\n", n, double(need) * 1e-9,
                double(mem_available()) * 1e-9);
    return 77;
  }
  // Filled by every core (one thread takes most of a minute at 50000).
  std::unique_ptr<T[]> a(new T[std::size_t(count)]), b(new T[std::size_t(count)]), c(new T[std::size_t(count)]);
  parallel(count, [&](Index lo, Index hi) {
    for (Index e = lo; e < hi; ++e) {
      a[std::size_t(e)] = T(value(e % n, e / n, 1));
      b[std::size_t(e)] = T(value(e % n, e / n, 2));
      c[std::size_t(e)] = std::numeric_limits<T>::quiet_NaN();
    }
  });
  {  // the process's first call (a GPU's context and staging buffers) outside the timing
    const int w = 256;
    std::vector<T> x(std::size_t(w) * w, T(1)), y(std::size_t(w) * w, T(0));
    gemm<T>('N', 'N', w, w, w, T(1), x.data(), w, x.data(), w, T(0), y.data(), w);
  }
  const auto t0 = std::chrono::steady_clock::now();
  gemm<T>(ta, tb, n, n, n, T(1), a.get(), n, b.get(), n, T(0), c.get(), n);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool tra = ta == 'T', trb = tb == 'T';
  double worst = 0;
  unsigned r = 12345;
  for (int t = 0; t < 64; ++t) {
    r = r * 1103515245u + 12345u;
    const Index i = Index(r >> 8) % n;
    r = r * 1103515245u + 12345u;
    const Index j = Index(r >> 8) % n;
    double ref = 0, mag = 0;
    for (Index p = 0; p < n; ++p) {
      const double x = double(at(a.get(), n, tra, i, p)) * double(at(b.get(), n, trb, p, j));
      ref += x;
      mag += std::fabs(x);
    }
    const double e = std::fabs(double(c[std::size_t(j * n + i)]) - ref) / (mag + 1e-300);
    if (!(e <= worst)) worst = e;
  }
  const double tol = (std::is_same_v<T, float> ? 1e-5 : 1e-13) * 8;
  const bool ok = worst <= tol;
  const char* dt = std::is_same_v<T, float> ? "float" : "double";
  const double gflops = 2.0 * double(n) * double(n) * double(n) / s * 1e-9;
  const char* be = std::getenv("TILEKIT_BLAS_BACKEND");
  std::printf("%s %c%c %d x %d x %d (%lld elements a matrix, %.1f GB): %.3f s, %.1f GFLOP/s, sampled max rel. error "
              "%.2g (tolerance %.2g): %s\n",
              dt, ta, tb, n, n, n, count, double(count * Index(sizeof(T))) * 1e-9, s, gflops, worst, tol,
              ok ? "ok" : "FAILED");
  std::printf("RESULT blas_huge_dense dtype=%s n=%d trans=%c%c elements=%lld seconds=%.4f gflops=%.1f rel_error=%.3g "
              "ok=%d\n",
              dt, n, ta, tb, count, s, gflops, worst, ok ? 1 : 0);
  std::printf("{\"op\": \"blas-huge\", \"dtype\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"trans\": \"%c%c\", "
              "\"backend\": \"%s\", \"variant\": \"blas\", \"elements\": %lld, \"seconds\": %.4f, \"gflops\": %.1f, "
              "\"metric\": \"gflops\", \"reps\": 1, \"memory\": \"pageable host\", \"verified\": %s, "
              "\"rel_error\": %.3g, \"check\": \"64 sampled entries, relative to sum |a b|, tolerance %.0e\"}\n",
              dt, n, n, n, ta, tb, be ? be : "auto", count, s, gflops, ok ? "true" : "false", worst, tol);
  std::fflush(stdout);
  return ok ? 0 : 1;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s strided | dense float|double N NN|NT|TN|TT\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "strided";
  if (what == "strided") {
    // A passes 2^31 with 65,600 x 32,768 (only 64 rows used); B (transposed, 64 x 32,768) the same;
    // C is 64 x 64 with ldc 2^25 + 64.
    constexpr Index wide = 65600, tall = (Index(1) << 25) + 64;
    strided<float>('N', 'T', 32768, wide, wide, tall);
    // op(A) = A^T with A 4096 x 64 (lda 2^25 + 64), B 4096 x 64 (the same), C as above.
    strided<double>('T', 'N', 4096, tall, tall, tall);
    std::fflush(stdout);  // before the library's summary line on stderr, at exit
    return failures ? 1 : 0;
  }
  if (what == "dense" && argc == 5) {
    const std::string dt = argv[2], tr = argv[4];
    const int n = std::atoi(argv[3]);
    if (n < 1 || tr.size() != 2 || std::string("NT").find(tr[0]) == std::string::npos ||
        std::string("NT").find(tr[1]) == std::string::npos)
      return usage(argv[0]);
    if (dt == "float") return dense<float>(n, tr[0], tr[1]);
    if (dt == "double") return dense<double>(n, tr[0], tr[1]);
  }
  return usage(argv[0]);
}
