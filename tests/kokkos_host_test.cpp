// kokkos on a host execution space runs the host's fast path for the optimized variants: the
// plan says so, its tiles are the openmp backend's, and its results are bitwise the openmp
// backend's (the same packed micro-kernel, in-register transposes and register-blocked conv2d:
// every element's summation order depends only on the tile, never on the threads). A kernel of
// its own, however accurate, would differ in the last bits somewhere on these shapes.
// (Correctness over odd shapes is the conformance suite's, which runs on kokkos too.)
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "tilekit/tilekit.hpp"
#include "tilekit/verify.hpp"

namespace tilekit::test {
namespace {

struct Pair {
  Backend* kokkos = nullptr;
  Backend* openmp = nullptr;
};

// Both backends, with kokkos on a host space whose optimized gemm is the packed one; else skips.
Pair host_backends() {
  Pair p{find_backend("kokkos"), find_backend("openmp")};
  if (!p.kokkos || !p.kokkos->available()) return {};
  if (p.kokkos->info().kind != DeviceKind::cpu) return {};
  return p;
}

TEST(kokkos_host, OptimizedPlansAreTheHostKernels) {
  const Pair be = host_backends();
  if (!be.kokkos) GTEST_SKIP() << "no kokkos backend on a host space";
  for (DType t : {DType::f32, DType::f64}) {
    const Problem g{Op::gemm, t, 512, 512, 512}, tr{Op::transpose, t, 512, 512, 0}, cv{Op::conv2d, t, 512, 512, 5};
    const Plan pg = plan(*be.kokkos, Variant::optimized, g), pt = plan(*be.kokkos, Variant::optimized, tr),
               pc = plan(*be.kokkos, Variant::optimized, cv);
    EXPECT_NE(be.kokkos->describe_launch(pg).find("the host's packed gemm"), std::string::npos)
        << be.kokkos->describe_launch(pg);
    EXPECT_NE(be.kokkos->describe_launch(pt).find("the host's transpose"), std::string::npos)
        << be.kokkos->describe_launch(pt);
    EXPECT_NE(be.kokkos->describe_launch(pc).find("the host's conv2d"), std::string::npos)
        << be.kokkos->describe_launch(pc);
    if (!be.openmp || !be.openmp->available()) continue;
    EXPECT_EQ(pg.tile.str(), plan(*be.openmp, Variant::optimized, g).tile.str());
    EXPECT_EQ(pt.tile.str(), plan(*be.openmp, Variant::optimized, tr).tile.str());
    // The conv2d strips' row bands are evened out over the backend's threads (Kokkos' Serial
    // space has one): the same tile where the thread counts agree, the same width always.
    const TileConfig oc = plan(*be.openmp, Variant::optimized, cv).tile;
    if (be.kokkos->info().compute_units == be.openmp->info().compute_units)
      EXPECT_EQ(pc.tile.str(), oc.str());
    else
      EXPECT_EQ(pc.tile.cols, oc.cols);
  }
}

template <class T>
std::vector<T> gemm_on(Backend& be, index_t m, index_t n, index_t k, index_t pad, T beta) {
  Matrix<T> a(be, m, k, k + pad), b(be, k, n, n + pad), c(be, m, n, n + pad);
  a.upload(verify::random_values<T>(std::size_t(a.storage_elements()), 1));
  b.upload(verify::random_values<T>(std::size_t(b.storage_elements()), 2));
  c.upload(verify::random_values<T>(std::size_t(c.storage_elements()), 3));
  gemm<T>(Variant::optimized, T(0.75), a, b, beta, c);
  return c.download();
}

template <class T>
std::vector<T> transpose_on(Backend& be, index_t rows, index_t cols) {
  Matrix<T> in(be, rows, cols), out(be, cols, rows);
  in.upload(verify::random_values<T>(std::size_t(in.storage_elements()), 4));
  transpose<T>(Variant::optimized, in, out);
  return out.download();
}

template <class T>
std::vector<T> conv2d_on(Backend& be, index_t h, index_t w, index_t r) {
  Matrix<T> in(be, h, w), f(be, r, r), out(be, h, w);
  in.upload(verify::random_values<T>(std::size_t(in.storage_elements()), 5));
  f.upload(verify::random_values<T>(std::size_t(f.storage_elements()), 6));
  conv2d<T>(Variant::optimized, in, f, out);
  return out.download();
}

template <class T>
void same_bits(const Pair& be) {
  struct G {
    index_t m, n, k, pad;
  };
  for (const G& s : {G{300, 500, 700, 0}, G{97, 89, 83, 3}, G{13, 1031, 401, 1}, G{701, 29, 257, 0}, G{1, 64, 5, 0},
                     G{1, 1, 1, 0}, G{131, 67, 0, 2}}) {
    SCOPED_TRACE(testing::Message() << "gemm " << s.m << "x" << s.n << "x" << s.k << " pad " << s.pad);
    EXPECT_EQ(gemm_on<T>(*be.kokkos, s.m, s.n, s.k, s.pad, T(-0.5)), gemm_on<T>(*be.openmp, s.m, s.n, s.k, s.pad, T(-0.5)));
    EXPECT_EQ(gemm_on<T>(*be.kokkos, s.m, s.n, s.k, s.pad, T(0)), gemm_on<T>(*be.openmp, s.m, s.n, s.k, s.pad, T(0)));
  }
  for (index_t side : {1, 17, 300, 1029}) {
    SCOPED_TRACE(testing::Message() << "transpose/conv2d " << side << " x " << side + 5);
    EXPECT_EQ(transpose_on<T>(*be.kokkos, side, side + 5), transpose_on<T>(*be.openmp, side, side + 5));
    for (index_t r : {1, 5, 7})
      EXPECT_EQ(conv2d_on<T>(*be.kokkos, side, side + 5, r), conv2d_on<T>(*be.openmp, side, side + 5, r)) << "R " << r;
  }
}

TEST(kokkos_host, OptimizedGivesTheOpenmpBits) {
  const Pair be = host_backends();
  if (!be.kokkos) GTEST_SKIP() << "no kokkos backend on a host space";
  if (!be.openmp || !be.openmp->available()) GTEST_SKIP() << "no openmp backend to compare with";
  same_bits<float>(be);
  same_bits<double>(be);
}

}  // namespace
}  // namespace tilekit::test
