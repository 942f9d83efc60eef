// The conformance suite: every case below runs for every compiled backend x variant x element
// type, so a backend is covered the moment it registers. GPU backends without a device skip
// with the runtime's reason.
#include <random>

#include "harness.hpp"

namespace tilekit::test {
namespace {

class Conformance : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override { be_ = backend_or_skip(GetParam()); }
  Variant v() const { return GetParam().variant; }
  Backend* be_ = nullptr;
};

#define TILEKIT_BODY \
  if (!be_) return;  \
  const auto& P = GetParam();

// ---------------------------------------------------------------- gemm
template <class T>
void gemm_cases(Backend& be, Variant v, const std::vector<GemmCase>& cases) {
  std::uint64_t seed = base_seed();
  for (const auto& g : cases) check_gemm<T>(be, v, g, seed++);
}

TEST_P(Conformance, GemmOneByOne) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(), {{1, 1, 1}, {1, 1, 1, 2.0, 0.5}});
}

TEST_P(Conformance, GemmEmptyDimensions) {
  TILEKIT_BODY
  // m or n = 0: nothing to write. k = 0: C = beta * C (beta = 0 gives zeros over NaN).
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(),
                         {{0, 5, 7}, {5, 0, 7}, {0, 0, 0}, {6, 5, 0, 1.0, 0.0}, {6, 5, 0, 1.0, 2.5}, {3, 4, 0, 0.5, 1.0}});
}

TEST_P(Conformance, GemmPrimes) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(), {{97, 89, 83}, {13, 7, 131}, {127, 131, 137}});
}

TEST_P(Conformance, GemmNonMultiplesOfTiles) {
  TILEKIT_BODY
  // One past and one short of every power of two a tile is likely to use (8 ... 256).
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(),
                         {{9, 17, 33}, {65, 129, 31}, {127, 63, 257}, {257, 255, 129}, {200, 300, 100}});
}

TEST_P(Conformance, GemmFullTiles) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(), {{256, 256, 256}, {128, 512, 64}});
}

TEST_P(Conformance, GemmTallSkinnyAndShortWide) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(),
                         {{1000, 3, 17}, {3, 1000, 17}, {1, 1, 999}, {77, 65, 1}, {1, 513, 40}, {513, 1, 40}});
}

TEST_P(Conformance, GemmLeadingDimensions) {
  TILEKIT_BODY
  // ld > cols on each operand in turn and together; odd pads break any 16-byte alignment.
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(),
                         {{33, 45, 27, 1, 0, 3, 0, 0},
                          {33, 45, 27, 1, 0, 0, 5, 0},
                          {33, 45, 27, 1, 0, 0, 0, 7},
                          {64, 64, 64, 1, 0, 1, 1, 1},
                          {128, 96, 80, 1, 0, 4, 8, 12}});
}

TEST_P(Conformance, GemmAlphaBeta) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(),
                         {{41, 37, 29, 1.0, 0.0},
                          {41, 37, 29, -0.5, 0.0},
                          {41, 37, 29, 1.0, 1.0},
                          {41, 37, 29, 2.0, -1.5},
                          {41, 37, 29, 0.0, 0.75},
                          {150, 70, 90, 0.25, 3.0}});
}

TEST_P(Conformance, GemmRandomShapes) {
  TILEKIT_BODY
  std::mt19937_64 gen(base_seed());
  std::uniform_int_distribution<int> dim(1, 200), pad(0, 3), coin(0, 1);
  std::vector<GemmCase> cases;
  for (int i = 0; i < 12; ++i)
    cases.push_back({dim(gen), dim(gen), dim(gen), coin(gen) ? 1.0 : -0.75, coin(gen) ? 0.0 : 0.5, pad(gen), pad(gen),
                     pad(gen)});
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(), cases);
}

TEST_P(Conformance, GemmExplicitTile) {
  TILEKIT_BODY
  // The automatic tile for this problem, passed back explicitly, must validate and give the same answer.
  const Problem p{Op::gemm, P.dtype, 70, 90, 110};
  const TileConfig t = resolve_tile(*be_, v(), p, {});
  if (t.is_auto()) GTEST_SKIP() << "variant has no tile";
  GemmCase g{70, 90, 110};
  g.tile = t;
  TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(), {g});
}

TEST_P(Conformance, GemmWideExplicitTiles) {
  TILEKIT_BODY
  // Tiles the automatic choice takes only on large problems, run here on small ones: 64x128x8 is
  // the cuda and kokkos backends' 8-deep double block (m16n8k8, three stages), 128x128x16 the cuda
  // backend's double block on sm_80 and its sm_90 float one. Steady steps need blocks wholly inside
  // C and K steps to spare; the edges, odd ld and a partial last step take the general copies. A
  // backend or variant that does not take a tile skips it.
  for (const TileConfig& t : {TileConfig{64, 128, 8}, TileConfig{128, 128, 16}}) {
    try {
      (void)resolve_tile(*be_, v(), Problem{Op::gemm, P.dtype, 128, 288, 80}, t);
    } catch (const Error&) {
      continue;
    }
    std::vector<GemmCase> cases = {{128, 288, 80}, {256, 384, 160, 1.0, 0.5, 2, 2, 2}, {257, 385, 129, -0.75, 0.0, 1, 3, 0}};
    for (GemmCase& g : cases) g.tile = t;
    TILEKIT_DISPATCH_DTYPE(P, gemm_cases, *be_, v(), cases);
  }
}

// ---------------------------------------------------------------- transpose
template <class T>
void transpose_cases(Backend& be, Variant v, const std::vector<std::array<index_t, 4>>& cases) {
  std::uint64_t seed = base_seed();
  for (const auto& c : cases) check_transpose<T>(be, v, c[0], c[1], c[2], c[3], seed++);
}

TEST_P(Conformance, TransposeSmallAndEmpty) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, transpose_cases, *be_, v(), {{{1, 1, 0, 0}, {0, 5, 0, 0}, {5, 0, 0, 0}, {1, 7, 0, 0}, {7, 1, 0, 0}}});
}

TEST_P(Conformance, TransposePrimesAndNonMultiples) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, transpose_cases, *be_, v(),
                         {{{97, 89, 0, 0}, {33, 65, 0, 0}, {1025, 31, 0, 0}, {31, 1025, 0, 0}, {255, 257, 0, 0}}});
}

TEST_P(Conformance, TransposeFullTilesAndSkinny) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, transpose_cases, *be_, v(), {{{256, 512, 0, 0}, {1000, 3, 0, 0}, {3, 1000, 0, 0}}});
}

TEST_P(Conformance, TransposeLeadingDimensions) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, transpose_cases, *be_, v(), {{{45, 67, 3, 0}, {45, 67, 0, 5}, {64, 64, 1, 1}, {128, 96, 4, 8}}});
}

// Outputs of 4-8 MiB with vector-aligned output rows: where the host's optimized transpose streams
// them past the caches (Intel CPUs: outputs beyond a core's L2), its streaming path with blocks,
// groups and squares cut at the edges (rows and columns not multiples of 16, ld > cols).
TEST_P(Conformance, TransposeStreamedSizes) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, transpose_cases, *be_, v(), {{{1033, 1031, 0, 7}, {2048, 1031, 5, 0}, {1040, 1037, 3, 0}}});
}

TEST_P(Conformance, TransposeRandomShapes) {
  TILEKIT_BODY
  std::mt19937_64 gen(base_seed() + 7);
  std::uniform_int_distribution<index_t> dim(1, 400), pad(0, 3);
  std::vector<std::array<index_t, 4>> cases;
  for (int i = 0; i < 12; ++i) cases.push_back({dim(gen), dim(gen), pad(gen), pad(gen)});
  TILEKIT_DISPATCH_DTYPE(P, transpose_cases, *be_, v(), cases);
}

// ---------------------------------------------------------------- conv2d
struct ConvCase {
  index_t h, w;
  int r;
  index_t pad_in = 0, pad_out = 0;
};

template <class T>
void conv_cases(Backend& be, Variant v, const std::vector<ConvCase>& cases) {
  std::uint64_t seed = base_seed();
  for (const auto& c : cases) check_conv2d<T>(be, v, c.h, c.w, c.r, c.pad_in, c.pad_out, seed++);
}

TEST_P(Conformance, Conv2dFilterSizes) {
  TILEKIT_BODY
  std::vector<ConvCase> cases;
  for (int r : {1, 3, 5, 7, 9, 11, 13, 15, 31}) cases.push_back({67, 45, r});
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(), cases);
}

TEST_P(Conformance, Conv2dSmallAndEmpty) {
  TILEKIT_BODY
  // Images smaller than the filter: every tap of the halo is zero padding.
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(),
                         {{1, 1, 1}, {1, 1, 5}, {0, 9, 3}, {9, 0, 3}, {3, 3, 7}, {1, 40, 3}, {40, 1, 5}, {2, 2, 31}});
}

TEST_P(Conformance, Conv2dPrimesAndNonMultiples) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(), {{97, 89, 5}, {33, 65, 3}, {257, 129, 7}, {130, 250, 15}});
}

TEST_P(Conformance, Conv2dLeadingDimensions) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(), {{45, 67, 5, 3, 0}, {45, 67, 5, 0, 5}, {64, 64, 3, 1, 1}});
}

TEST_P(Conformance, Conv2dTallVectorShapes) {
  TILEKIT_BODY
  // Widths and leading dimensions in whole 16-byte vectors (the GPU kernels' vector paths),
  // tall enough for several tiles down a column (and the tall tiles of gpu.conv2d.optimized=
  // aligned<N> in sweep builds), with a partial last tile and a nearly empty last tile column.
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(),
                         {{300, 256, 5}, {517, 132, 3, 4, 4}, {1000, 64, 7}, {96, 200, 9, 0, 4}, {33, 8, 1}, {520, 12, 5}});
}

// Outputs of 3.6-8 MiB: where the host's optimized conv2d streams them past the caches (Intel
// CPUs: outputs beyond a core's L2) and fetches the next tile while computing one; vector-aligned
// output rows (ld_out a multiple of 16), widths ending inside a strip, ld_in > cols, and an image
// wider than one tile.
TEST_P(Conformance, Conv2dStreamedSizes) {
  TILEKIT_BODY
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(),
                         {{1031, 1024, 5}, {1000, 1000, 5, 3, 24}, {900, 1040, 3, 1, 0}, {700, 1536, 7}, {200, 4500, 5}});
}

TEST_P(Conformance, Conv2dSmallExplicitTiles) {
  TILEKIT_BODY
  // The host's optimized kernels on tiles much smaller than the automatic ones: tiles shorter
  // than the filter, widths that end inside a register strip (every strip width the kernels use
  // for R = 3, 5, 7 and the 4-row blocks for other R), many tile edges inside one image.
  if (be_->name() != "openmp" || resolve_tile(*be_, v(), Problem{Op::conv2d, P.dtype, 8, 8, 3}, {}).is_auto())
    GTEST_SKIP() << "host tiles only";
  const std::vector<TileConfig> tiles{{1, 1, 0}, {2, 5, 0}, {3, 17, 0}, {7, 24, 0}, {13, 40, 0}, {40, 9, 0}, {6, 100, 0}};
  for (int r : {1, 3, 5, 7, 9, 11})
    for (const TileConfig& t : tiles) {
      if (P.dtype == DType::f32)
        check_conv2d<float>(*be_, v(), 37, 53 + r, r, r % 3, 1, base_seed() + std::uint64_t(r), t);
      else
        check_conv2d<double>(*be_, v(), 37, 53 + r, r, r % 3, 1, base_seed() + std::uint64_t(r), t);
    }
}

TEST_P(Conformance, Conv2dInteriorInPlace) {
  TILEKIT_BODY
  // The host's strips read a tile's interior from the image in place and copy only the frame
  // whose windows reach outside it: widths one strip and a halo either side of whole strips
  // (AVX-512: 64 columns for R = 3, 5 and 48 for R = 7; AVX2: 24, 16, 8), tiles whose top or
  // bottom rows are the image's, a frame wider than the interior, and ld > cols.
  if (be_->name() != "openmp" || resolve_tile(*be_, v(), Problem{Op::conv2d, P.dtype, 8, 8, 3}, {}).is_auto())
    GTEST_SKIP() << "host tiles only";
  const std::vector<TileConfig> tiles{{}, {13, 64, 0}, {13, 128, 0}, {40, 48, 0}, {2, 192, 0}};
  std::uint64_t seed = base_seed() + 500;
  for (int r : {3, 5, 7})
    for (index_t w : {97, 129, 131, 146, 190, 194})
      for (const TileConfig& t : tiles) {
        if (P.dtype == DType::f32)
          check_conv2d<float>(*be_, v(), 41, w, r, w % 3, 0, seed++, t);
        else
          check_conv2d<double>(*be_, v(), 41, w, r, w % 3, 0, seed++, t);
      }
}

TEST_P(Conformance, Conv2dRandomShapes) {
  TILEKIT_BODY
  std::mt19937_64 gen(base_seed() + 11);
  std::uniform_int_distribution<index_t> dim(1, 300), pad(0, 3);
  std::uniform_int_distribution<int> half(0, 7);
  std::vector<ConvCase> cases;
  for (int i = 0; i < 10; ++i) cases.push_back({dim(gen), dim(gen), 2 * half(gen) + 1, pad(gen), pad(gen)});
  TILEKIT_DISPATCH_DTYPE(P, conv_cases, *be_, v(), cases);
}

// ---------------------------------------------------------------- determinism
TEST_P(Conformance, RepeatedRunsAgreeBitwise) {
  TILEKIT_BODY
  // A moving result on the same inputs is a race (missing barrier) or an order-dependent reduction.
  auto twice = [&](auto zero) {
    using T = decltype(zero);
    Matrix<T> a(*be_, 150, 130), b(*be_, 130, 170), c(*be_, 150, 170);
    a.upload(verify::random_values<T>(std::size_t(a.storage_elements()), 1));
    b.upload(verify::random_values<T>(std::size_t(b.storage_elements()), 2));
    gemm<T>(v(), T(1), a, b, T(0), c);
    const auto first = c.download();
    gemm<T>(v(), T(1), a, b, T(0), c);
    EXPECT_EQ(first, c.download());
  };
  if (P.dtype == DType::f32) twice(0.0f); else twice(0.0);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Conformance, testing::ValuesIn(all_params()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Conformance);

}  // namespace
}  // namespace tilekit::test
