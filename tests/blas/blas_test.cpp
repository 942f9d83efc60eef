// libtilekit_blas as a program sees it: this test is linked against libtilekit_blas alone (no
// -lblas), calls its routines through the BLAS and CBLAS interfaces, and compares with a
// double-precision reference. The backend is the one TILEKIT_BLAS_BACKEND names (ctest runs it
// once per host backend). It defines xerbla_ and cblas_xerbla, as the netlib testers do, to see
// the positions the routines report.
#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*, std::size_t, std::size_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, std::size_t, std::size_t);
void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
extern int RowMajorStrg;
// Forwarded to the system BLAS: a float return, many arguments on the stack, CBLAS.
float sdot_(const int*, const float*, const int*, const float*, const int*);
double ddot_(const int*, const double*, const int*, const double*, const int*);
void ssymm_(const char*, const char*, const int*, const int*, const float*, const float*, const int*, const float*,
            const int*, const float*, float*, const int*, std::size_t, std::size_t);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*, const double*,
            const int*, double*, const int*, std::size_t, std::size_t, std::size_t, std::size_t);
void cblas_dgemv(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
float cblas_sdot(int, const float*, int, const float*, int);
}

namespace {

constexpr int kRow = 101, kCol = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// ---- what xerbla_ and cblas_xerbla were called with ----------------------------------------
struct Reported {
  std::string name;
  int info = 0;
  int row_major = -1;
  int calls = 0;
};
Reported fortran_error, cblas_error;

}  // namespace

extern "C" void xerbla_(const char* srname, const int* info, std::size_t len) {
  fortran_error.name.assign(srname, len);
  fortran_error.info = *info;
  ++fortran_error.calls;
}
extern "C" void cblas_xerbla(int info, const char* rout, const char*, ...) {
  cblas_error.name = rout;
  cblas_error.info = info;
  cblas_error.row_major = RowMajorStrg;
  ++cblas_error.calls;
}

namespace {

template <class T>
void gemm_f(char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
            int ldc) {
  if constexpr (std::is_same_v<T, float>)
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  else
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}
template <class T>
void gemm_c(int layout, int ta, int tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb,
            T beta, T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_dgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// A matrix as BLAS stores it: `outer` lines of `ld` elements, of which `inner` belong to the
// matrix (column-major: lines are columns; row-major: rows). The rest is padding, filled with
// NaN (inputs: reading it would show) or a sentinel (outputs: writing it would show).
template <class T>
struct Stored {
  int inner, outer, ld;
  std::vector<T> v;
  Stored(int inner_, int outer_, int pad, T fill_pad, std::mt19937& rng)
      : inner(inner_), outer(outer_), ld(std::max(1, inner_ + pad)), v(std::size_t(ld) * std::max(outer_, 1), fill_pad) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (int o = 0; o < outer; ++o)
      for (int i = 0; i < inner; ++i) v[std::size_t(o) * ld + i] = T(d(rng));
  }
  T& at(int i, int o) { return v[std::size_t(o) * ld + i]; }
  T at(int i, int o) const { return v[std::size_t(o) * ld + i]; }
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kSentinel = 12345.0f;

// Column-major reference: op(A) is m x k, op(B) k x n. Returns the bound each element's error
// must stay within (a multiple of eps times the sum of absolute values that made it).
template <class T>
void check_colmajor(const char* what, char ta, char tb, int m, int n, int k, T alpha, const Stored<T>& a,
                    const Stored<T>& b, T beta, const Stored<T>& c0, const Stored<T>& c) {
  const bool nota = ta == 'N' || ta == 'n', notb = tb == 'N' || tb == 'n';
  const double eps = std::numeric_limits<T>::epsilon();
  int bad = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0, abs_s = 0;
      if (alpha != T(0))
        for (int p = 0; p < k; ++p) {
          const double x = nota ? a.at(i, p) : a.at(p, i), y = notb ? b.at(p, j) : b.at(j, p);
          s += x * y;
          abs_s += std::fabs(x * y);
        }
      const double ref = double(alpha) * s + (beta == T(0) ? 0.0 : double(beta) * double(c0.at(i, j)));
      const double bound = 4.0 * (k + 2) * eps *
                           (std::fabs(double(alpha)) * abs_s + (beta == T(0) ? 0.0 : std::fabs(double(beta) * c0.at(i, j)))) +
                           std::numeric_limits<T>::min();
      const double got = c.at(i, j);
      if (!(std::fabs(got - ref) <= bound) && bad++ < 3)
        ADD_FAILURE() << what << " " << ta << tb << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha
                      << " beta=" << beta << ": C(" << i << "," << j << ") = " << got << ", expected " << ref
                      << " (bound " << bound << ")";
    }
  for (int j = 0; j < c.outer; ++j)
    for (int i = c.inner; i < c.ld; ++i)
      if (c.at(i, j) != T(kSentinel) && bad++ < 3) ADD_FAILURE() << what << ": padding of C written at (" << i << "," << j << ")";
  EXPECT_EQ(bad, 0) << what;
}

struct Shape {
  int m, n, k;
};
const Shape kShapes[] = {{1, 1, 1},  {1, 7, 3},   {5, 1, 4},    {3, 4, 0},     {2, 3, 1},     {7, 5, 9},
                         {16, 16, 16}, {17, 33, 65}, {64, 65, 63}, {130, 67, 129}, {33, 200, 17}, {157, 129, 100}};

template <class T>
void fortran_suite() {
  std::mt19937 rng(11);
  int cases = 0;
  for (const Shape& s : kShapes)
    for (const char* tt : {"NN", "NT", "TN", "TT", "nC", "cn", "tT"})
      for (int pad : {0, 3})
        for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{0.7, 1.3}, std::pair{-1.25, 1.0}, std::pair{0.0, 0.5}}) {
          const char ta = tt[0], tb = tt[1];
          const bool nota = ta == 'N' || ta == 'n', notb = tb == 'N' || tb == 'n';
          Stored<T> a(nota ? s.m : s.k, nota ? s.k : s.m, pad, T(kNaN), rng);
          Stored<T> b(notb ? s.k : s.n, notb ? s.n : s.k, pad, T(kNaN), rng);
          Stored<T> c0(s.m, s.n, pad, T(kSentinel), rng);
          if (beta == 0.0)  // beta = 0 must not read C
            for (int j = 0; j < s.n; ++j)
              for (int i = 0; i < s.m; ++i) c0.at(i, j) = T(kNaN);
          Stored<T> c = c0;
          gemm_f<T>(ta, tb, s.m, s.n, s.k, T(alpha), a.v.data(), a.ld, b.v.data(), b.ld, T(beta), c.v.data(), c.ld);
          check_colmajor<T>("gemm_", ta, tb, s.m, s.n, s.k, T(alpha), a, b, T(beta), c0, c);
          ++cases;
        }
  EXPECT_EQ(fortran_error.calls, 0) << "a valid call reported an error";
  EXPECT_GT(cases, 600);
}

TEST(Blas, SgemmMatchesTheReference) { fortran_suite<float>(); }
TEST(Blas, DgemmMatchesTheReference) { fortran_suite<double>(); }

// CBLAS in both layouts: a row-major m x n matrix is, read as column-major, its n x m transpose,
// so the row-major results are checked as the column-major product C^T = op(B)^T op(A)^T.
template <class T>
void cblas_suite() {
  std::mt19937 rng(5);
  for (const Shape& s : kShapes)
    for (int ta : {kNoTrans, kTrans, kConjTrans})
      for (int tb : {kNoTrans, kTrans})
        for (int layout : {kCol, kRow}) {
          const bool nota = ta == kNoTrans, notb = tb == kNoTrans;
          const T alpha = T(0.9), beta = T(-0.4);
          // Storage lines: column-major: A is rows(op A) x ... ; row-major swaps the roles.
          const int a_rows = nota ? s.m : s.k, a_cols = nota ? s.k : s.m;
          const int b_rows = notb ? s.k : s.n, b_cols = notb ? s.n : s.k;
          const bool col = layout == kCol;
          Stored<T> a(col ? a_rows : a_cols, col ? a_cols : a_rows, 2, T(kNaN), rng);
          Stored<T> b(col ? b_rows : b_cols, col ? b_cols : b_rows, 1, T(kNaN), rng);
          Stored<T> c0(col ? s.m : s.n, col ? s.n : s.m, 3, T(kSentinel), rng);
          Stored<T> c = c0;
          gemm_c<T>(layout, ta, tb, s.m, s.n, s.k, alpha, a.v.data(), a.ld, b.v.data(), b.ld, beta, c.v.data(), c.ld);
          const char cta = nota ? 'N' : 'T', ctb = notb ? 'N' : 'T';
          if (col)
            check_colmajor<T>("cblas col-major", cta, ctb, s.m, s.n, s.k, alpha, a, b, beta, c0, c);
          else  // C^T (n x m) = op(B)^T op(A)^T, with B and A in column-major storage as given
            check_colmajor<T>("cblas row-major", ctb, cta, s.n, s.m, s.k, alpha, b, a, beta, c0, c);
        }
  EXPECT_EQ(cblas_error.calls, 0) << "a valid call reported an error";
}

TEST(Blas, CblasSgemmBothLayouts) { cblas_suite<float>(); }
TEST(Blas, CblasDgemmBothLayouts) { cblas_suite<double>(); }

TEST(Blas, AlphaZeroReadsNeitherAnorB) {
  std::vector<double> a(12, kNaN), b(12, kNaN), c{1, 2, 3, 4, 5, 6};
  gemm_f<double>('N', 'N', 2, 3, 4, 0.0, a.data(), 2, b.data(), 4, 2.0, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{2, 4, 6, 8, 10, 12}));
  gemm_f<double>('T', 'N', 2, 3, 4, 0.0, a.data(), 4, b.data(), 4, 0.0, c.data(), 2);
  EXPECT_EQ(c, std::vector<double>(6, 0.0));
}

TEST(Blas, QuickReturnsTouchNothing) {
  std::vector<float> a(4, float(kNaN)), b(4, float(kNaN)), c{1, 2, 3, 4};
  gemm_f<float>('N', 'N', 2, 2, 2, 0.0f, a.data(), 2, b.data(), 2, 1.0f, c.data(), 2);  // alpha = 0, beta = 1
  gemm_f<float>('N', 'N', 2, 2, 0, 3.0f, a.data(), 2, b.data(), 1, 1.0f, c.data(), 2);  // k = 0, beta = 1
  gemm_f<float>('N', 'N', 0, 2, 2, 3.0f, a.data(), 1, b.data(), 2, 5.0f, c.data(), 1);  // m = 0
  gemm_f<float>('N', 'N', 2, 0, 2, 3.0f, a.data(), 2, b.data(), 2, 5.0f, c.data(), 2);  // n = 0
  EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(fortran_error.calls, 0);
}

TEST(Blas, KZeroScalesC) {
  const float s = kSentinel;
  std::vector<float> c{1, 2, s, 4, 5, s};
  gemm_f<float>('N', 'T', 2, 2, 0, 3.0f, nullptr, 2, nullptr, 2, 0.5f, c.data(), 3);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1, s, 2, 2.5f, s})) << "C (2 x 2, ldc 3) = 0.5 C, its padding untouched";
}

// The positions reported, in the reference's order of checks: netlib's SGEMM numbering (1..13).
TEST(Blas, FortranErrorsAreNumberedAsTheReference) {
  float a[4] = {}, b[4] = {}, c[4] = {};
  struct Case {
    char ta, tb;
    int m, n, k, lda, ldb, ldc, info;
  };
  const Case cases[] = {{'X', 'N', 0, 0, 0, 1, 1, 1, 1},  {'N', '/', 0, 0, 0, 1, 1, 1, 2},  {'N', 'N', -1, 0, 0, 1, 1, 1, 3},
                        {'N', 'N', 0, -1, 0, 1, 1, 1, 4}, {'N', 'N', 0, 0, -1, 1, 1, 1, 5}, {'N', 'N', 2, 0, 0, 1, 1, 2, 8},
                        {'T', 'N', 0, 0, 2, 1, 2, 1, 8},  {'N', 'N', 0, 0, 2, 1, 1, 1, 10}, {'N', 'T', 0, 2, 0, 1, 1, 1, 10},
                        {'N', 'N', 2, 0, 0, 2, 1, 1, 13}, {'x', 'y', -1, -1, -1, 0, 0, 0, 1}, {'t', 'c', 3, 0, 0, 0, 0, 0, 8}};
  for (const Case& t : cases) {
    fortran_error = {};
    for (int single = 0; single < 2; ++single) {
      fortran_error = {};
      if (single)
        gemm_f<float>(t.ta, t.tb, t.m, t.n, t.k, 1.0f, a, t.lda, b, t.ldb, 0.0f, c, t.ldc);
      else {
        double da[4] = {}, db[4] = {}, dc[4] = {};
        gemm_f<double>(t.ta, t.tb, t.m, t.n, t.k, 1.0, da, t.lda, db, t.ldb, 0.0, dc, t.ldc);
      }
      EXPECT_EQ(fortran_error.calls, 1) << t.ta << t.tb << " expected info " << t.info;
      EXPECT_EQ(fortran_error.name, single ? "SGEMM " : "DGEMM ");
      EXPECT_EQ(fortran_error.info, t.info) << t.ta << t.tb << " m=" << t.m << " n=" << t.n << " k=" << t.k;
    }
  }
}

// CBLAS numbering: layout 1, TransA 2, TransB 3, M 4, N 5, K 6, lda 9, ldb 11, ldc 14. In a
// row-major call the routine reports the positions of the swapped operands (M as 5, lda as 11...)
// with RowMajorStrg set, and cblas_xerbla swaps them back, as in the reference CBLAS.
TEST(Blas, CblasErrorsAreNumberedAsTheReference) {
  fortran_error = {};
  float a[4] = {}, b[4] = {}, c[4] = {};
  struct Case {
    int layout, ta, tb, m, n, k, lda, ldb, ldc, reported, row_major;
  };
  const Case cases[] = {
      {7, kNoTrans, kNoTrans, 0, 0, 0, 1, 1, 1, 1, 0},    {kCol, 7, kNoTrans, 0, 0, 0, 1, 1, 1, 2, 0},
      {kCol, kNoTrans, 7, 0, 0, 0, 1, 1, 1, 3, 0},        {kCol, kNoTrans, kNoTrans, -1, 0, 0, 1, 1, 1, 4, 0},
      {kCol, kNoTrans, kNoTrans, 0, -1, 0, 1, 1, 1, 5, 0}, {kCol, kNoTrans, kNoTrans, 0, 0, -1, 1, 1, 1, 6, 0},
      {kCol, kNoTrans, kNoTrans, 2, 0, 0, 1, 1, 2, 9, 0},  {kCol, kNoTrans, kNoTrans, 0, 0, 2, 1, 1, 1, 11, 0},
      {kCol, kNoTrans, kNoTrans, 2, 0, 0, 2, 1, 1, 14, 0}, {kRow, 7, kNoTrans, 0, 0, 0, 1, 1, 1, 2, 1},
      {kRow, kNoTrans, 7, 0, 0, 0, 1, 1, 1, 3, 1},        {kRow, kNoTrans, kNoTrans, -1, 0, 0, 1, 1, 1, 5, 1},
      {kRow, kNoTrans, kNoTrans, 0, -1, 0, 1, 1, 1, 4, 1}, {kRow, kNoTrans, kNoTrans, 0, 0, -1, 1, 1, 1, 6, 1},
      {kRow, kNoTrans, kNoTrans, 0, 0, 2, 1, 1, 1, 11, 1}, {kRow, kNoTrans, kNoTrans, 0, 2, 0, 1, 1, 1, 9, 1},
      {kRow, kNoTrans, kNoTrans, 0, 2, 0, 1, 2, 1, 14, 1},
  };
  for (const Case& t : cases) {
    cblas_error = {};
    gemm_c<float>(t.layout, t.ta, t.tb, t.m, t.n, t.k, 1.0f, a, t.lda, b, t.ldb, 0.0f, c, t.ldc);
    EXPECT_EQ(cblas_error.calls, 1);
    EXPECT_EQ(cblas_error.name, "cblas_sgemm");
    EXPECT_EQ(cblas_error.info, t.reported) << "layout " << t.layout << " m=" << t.m << " n=" << t.n << " k=" << t.k
                                            << " ld " << t.lda << "," << t.ldb << "," << t.ldc;
    EXPECT_EQ(cblas_error.row_major, t.row_major);
    EXPECT_EQ(RowMajorStrg, 0) << "reset after the call, as the reference does";
  }
  EXPECT_EQ(fortran_error.calls, 0) << "CBLAS errors go to cblas_xerbla";
}

// Several host threads at once (numpy and ScaLAPACK call BLAS from threads).
TEST(Blas, ConcurrentCallsFromThreads) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t, &failures] {
      std::mt19937 rng(100 + t);
      for (int rep = 0; rep < 12; ++rep) {
        const int m = 20 + 13 * t + rep, n = 31 + 7 * rep, k = 17 + 5 * t;
        Stored<double> a(m, k, 1, kNaN, rng), b(n, k, 2, kNaN, rng), c(m, n, 0, kSentinel, rng);
        const Stored<double> c0 = c;
        gemm_f<double>('N', 'T', m, n, k, 1.5, a.v.data(), a.ld, b.v.data(), b.ld, -0.5, c.v.data(), c.ld);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i) {
            double s = 0, abs_s = 0;
            for (int p = 0; p < k; ++p) s += a.at(i, p) * b.at(j, p), abs_s += std::fabs(a.at(i, p) * b.at(j, p));
            const double ref = 1.5 * s - 0.5 * c0.at(i, j);
            if (std::fabs(c.at(i, j) - ref) > 1e-13 * (abs_s + 1)) failures++;
          }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// Routines tilekit does not implement reach the system BLAS through libtilekit_blas's own entry
// points (this program has no other BLAS): values, arguments on the stack and returns intact.
TEST(Blas, OtherRoutinesAreForwarded) {
  Dl_info di{};
  ASSERT_TRUE(dladdr(reinterpret_cast<void*>(&sdot_), &di));
  EXPECT_NE(std::string(di.dli_fname).find("tilekit_blas"), std::string::npos) << di.dli_fname;

  const int n = 5, one = 1;
  const float x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 0, -1, 0.5f, 1};
  EXPECT_FLOAT_EQ(sdot_(&n, x, &one, y, &one), 2 + 0 - 3 + 2 + 5);
  EXPECT_FLOAT_EQ(cblas_sdot(5, x, 1, y, 1), 6.0f);
  const double dx[3] = {1, 2, 3}, dy[3] = {4, 5, 6};
  const int three = 3;
  EXPECT_DOUBLE_EQ(ddot_(&three, dx, &one, dy, &one), 32.0);

  // ssymm: C = alpha A B + beta C, A symmetric 2 x 2 (upper triangle given), B 2 x 3.
  const int m = 2, nn = 3, lda = 2, ldb = 2, ldc = 2;
  const float alpha = 2, beta = 1;
  const float a[4] = {1, -99, 2, 3};  // column-major, upper: a11 = 1, a12 = 2, a22 = 3 (a21 ignored)
  const float b[6] = {1, 0, 0, 1, 1, 1};
  float c[6] = {1, 1, 1, 1, 1, 1};
  ssymm_("L", "U", &m, &nn, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  // A B = [1 2; 2 3] [1 0 1; 0 1 1] = [1 2 3; 2 3 5]
  const float want[6] = {3, 5, 5, 7, 7, 11};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(c[i], want[i]) << i;

  // dtrsm: solve L X = alpha B, L lower 2 x 2 = [2 0; 1 4], B = [2; 9] -> X = [1; 2].
  const double l[4] = {2, 1, -99, 4};
  double rhs[2] = {2, 9};
  const double dalpha = 1;
  const int two = 2;
  dtrsm_("L", "L", "N", "N", &two, &one, &dalpha, l, &two, rhs, &two, 1, 1, 1, 1);
  EXPECT_DOUBLE_EQ(rhs[0], 1.0);
  EXPECT_DOUBLE_EQ(rhs[1], 2.0);

  // cblas_dgemv, row-major: y = A x, A = [1 2; 3 4].
  const double am[4] = {1, 2, 3, 4}, xv[2] = {1, 1};
  double yv[2] = {0, 0};
  cblas_dgemv(kRow, kNoTrans, 2, 2, 1.0, am, 2, xv, 1, 0.0, yv, 1);
  EXPECT_DOUBLE_EQ(yv[0], 3.0);
  EXPECT_DOUBLE_EQ(yv[1], 7.0);
}

}  // namespace
