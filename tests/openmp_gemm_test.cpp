// The openmp optimized gemm gives the same bits whatever the thread count and the thread grid
// (forced with openmp.gemm.grid in sweep builds), and however threads take over each other's
// units: every element's sum depends only on the K steps. Run with more threads than cores too
// (stealing then happens), and on shapes whose grid has empty cells (fewer micro-panels than
// threads), short M (1 x T grids) and ld > cols.
#include <omp.h>

#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "tilekit/tilekit.hpp"
#include "tilekit/tunings.hpp"
#include "tilekit/verify.hpp"

namespace tilekit::test {
namespace {

struct Shape {
  index_t m, n, k, pad;
  TileConfig tile{};  // an odd depth puts kc * rows off the 64-byte lines the B panels need
};

template <class T>
std::vector<T> run(Backend& be, const Shape& s, int threads, const char* grid) {
  Matrix<T> a(be, s.m, s.k, s.k + s.pad), b(be, s.k, s.n, s.n + s.pad), c(be, s.m, s.n, s.n + s.pad);
  a.upload(verify::random_values<T>(std::size_t(a.storage_elements()), 1));
  b.upload(verify::random_values<T>(std::size_t(b.storage_elements()), 2));
  c.upload(verify::random_values<T>(std::size_t(c.storage_elements()), 3));
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  {
    test::TuningScope forced("openmp.gemm.grid", grid ? grid : "auto");
    gemm<T>(Variant::optimized, T(0.75), a, b, T(-0.5), c, s.tile);
  }
  omp_set_num_threads(before);
  return c.download();
}

template <class T>
void same_bits(Backend& be) {
  for (const Shape& s : {Shape{300, 500, 700, 0}, Shape{97, 89, 83, 3}, Shape{13, 1031, 401, 1}, Shape{701, 29, 257, 0},
                         Shape{1, 64, 5, 0}, Shape{97, 89, 83, 3, {28, 64, 21}}, Shape{44, 1, 21, 0, {14, 32, 21}}}) {
    SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k << " pad " << s.pad);
    const std::vector<T> one = run<T>(be, s, 1, nullptr);
    for (int t : {2, 3, 5, 16}) EXPECT_EQ(one, run<T>(be, s, t, nullptr)) << t << " threads";
    if (sweeps_built()) {
      EXPECT_EQ(one, run<T>(be, s, 4, "1x4")) << "grid 1x4";
      EXPECT_EQ(one, run<T>(be, s, 4, "4x1")) << "grid 4x1";
    }
  }
}

TEST(openmp_gemm, SameBitsForAnyThreadCountAndGrid) {
  Backend* be = find_backend("openmp");
  if (!be || !be->available()) GTEST_SKIP() << "openmp backend not available";
  same_bits<float>(*be);
  same_bits<double>(*be);
}

}  // namespace
}  // namespace tilekit::test
