// The openmp optimized gemm gives the same bits whatever the thread count, the thread grid and
// whether threads take over each other's units: every element's sum depends only on the K
// steps. Run with more threads than cores too (stealing then happens), and on shapes whose grid
// has empty cells (fewer micro-panels than threads), short M (1 x T grids) and ld > cols.
#include <omp.h>

#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "tilekit/tilekit.hpp"
#include "tilekit/verify.hpp"

namespace tilekit::test {
namespace {

struct Shape {
  index_t m, n, k, pad;
  TileConfig tile{};  // an odd depth puts kc * rows off the 64-byte lines the B panels need
};

template <class T>
std::vector<T> run(Backend& be, const Shape& s, int threads, const char* steal, const char* grid) {
  Matrix<T> a(be, s.m, s.k, s.k + s.pad), b(be, s.k, s.n, s.n + s.pad), c(be, s.m, s.n, s.n + s.pad);
  a.upload(verify::random_values<T>(std::size_t(a.storage_elements()), 1));
  b.upload(verify::random_values<T>(std::size_t(b.storage_elements()), 2));
  c.upload(verify::random_values<T>(std::size_t(c.storage_elements()), 3));
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  steal ? setenv("TILEKIT_OMP_GEMM_STEAL", steal, 1) : unsetenv("TILEKIT_OMP_GEMM_STEAL");
  grid ? setenv("TILEKIT_OMP_GEMM_GRID", grid, 1) : unsetenv("TILEKIT_OMP_GEMM_GRID");
  gemm<T>(Variant::optimized, T(0.75), a, b, T(-0.5), c, s.tile);
  unsetenv("TILEKIT_OMP_GEMM_STEAL");
  unsetenv("TILEKIT_OMP_GEMM_GRID");
  omp_set_num_threads(before);
  return c.download();
}

template <class T>
void same_bits(Backend& be) {
  for (const Shape& s : {Shape{300, 500, 700, 0}, Shape{97, 89, 83, 3}, Shape{13, 1031, 401, 1}, Shape{701, 29, 257, 0},
                         Shape{1, 64, 5, 0}, Shape{97, 89, 83, 3, {28, 64, 21}}, Shape{44, 1, 21, 0, {14, 32, 21}}}) {
    SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k << " pad " << s.pad);
    const std::vector<T> one = run<T>(be, s, 1, nullptr, nullptr);
    for (int t : {2, 3, 5, 16}) {
      EXPECT_EQ(one, run<T>(be, s, t, nullptr, nullptr)) << t << " threads";
      EXPECT_EQ(one, run<T>(be, s, t, "0", nullptr)) << t << " threads, no stealing";
    }
    EXPECT_EQ(one, run<T>(be, s, 4, nullptr, "1x4")) << "grid 1x4";
    EXPECT_EQ(one, run<T>(be, s, 4, nullptr, "4x1")) << "grid 4x1";
  }
}

TEST(openmp_gemm, SameBitsForAnyThreadCountGridAndStealing) {
  Backend* be = find_backend("openmp");
  if (!be || !be->available()) GTEST_SKIP() << "openmp backend not available";
  same_bits<float>(*be);
  same_bits<double>(*be);
}

}  // namespace
}  // namespace tilekit::test
