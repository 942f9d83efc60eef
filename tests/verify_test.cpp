// The checker the whole suite relies on must itself fail when it should.
#include "harness.hpp"

namespace tilekit::test {
namespace {

TEST(Verify, GemmReferenceMatchesHandComputedValues) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]; alpha 2, beta 1 over C = 1.
  const std::vector<double> a{1, 2, 3, 4}, b{5, 6, 7, 8}, c{1, 1, 1, 1};
  const auto r = verify::gemm<double>(2, 2, 2, 2.0, a, 2, b, 2, 1.0, c, 2);
  EXPECT_EQ(r.value, (std::vector<double>{39, 45, 87, 101}));
}

TEST(Verify, BetaZeroIgnoresNaNInC) {
  const std::vector<float> a{1}, b{2}, c{std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(verify::gemm<float>(1, 1, 1, 1.f, a, 1, b, 1, 0.f, c, 1).value[0], 2.0);
}

TEST(Verify, ConvolutionReferenceZeroPads) {
  // 3x3 all-ones filter over a 2x2 image of ones: every output sees exactly 4 taps.
  const auto r = verify::conv2d<double>(2, 2, std::vector<double>(4, 1.0), 2, std::vector<double>(9, 1.0), 3);
  EXPECT_EQ(r.value, (std::vector<double>{4, 4, 4, 4}));
}

TEST(Verify, CompareCatchesOneWrongElementNaNAndAcceptsRounding) {
  const index_t n = 64;
  auto a = verify::random_values<float>(std::size_t(n * n), 1), b = verify::random_values<float>(std::size_t(n * n), 2);
  const auto ref = verify::gemm<float>(n, n, n, 1.f, a, n, b, n, 0.f, {}, n);
  std::vector<float> out(ref.value.begin(), ref.value.end());  // rounded to float: must pass
  EXPECT_TRUE(verify::compare<float>(ref, out, n).ok);
  auto wrong = out;
  wrong[std::size_t(17 * n + 3)] += 1e-3f;  // invisible in the norm, visible element-wise
  const auto c = verify::compare<float>(ref, wrong, n);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.worst_i, 17);
  EXPECT_EQ(c.worst_j, 3);
  auto nan = out;
  nan[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(verify::compare<float>(ref, nan, n).ok);
}

TEST(Verify, TransposeMustBeExact) {
  const auto in = verify::random_values<float>(6, 3);
  const auto ref = verify::transpose<float>(2, 3, in, 3);
  std::vector<float> out{in[0], in[3], in[1], in[4], in[2], in[5]};
  EXPECT_TRUE(verify::compare<float>(ref, out, 2).ok);
  out[2] = std::nextafter(out[2], 2.f);
  EXPECT_FALSE(verify::compare<float>(ref, out, 2).ok);
}

TEST(Verify, RandomValuesAreReproducibleAndNotDegenerate) {
  const auto x = verify::random_values<double>(1000, 9), y = verify::random_values<double>(1000, 9);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, verify::random_values<double>(1000, 10));
  double lo = 1, hi = -1;
  for (double v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
}

}  // namespace
}  // namespace tilekit::test

namespace tilekit::test {
namespace {
TEST(Verify, SampledGemmReferenceChecksSampledRowsAndFinitenessEverywhere) {
  const index_t m = 50, n = 20, k = 30;
  auto a = verify::random_values<double>(std::size_t(m * k), 4), b = verify::random_values<double>(std::size_t(k * n), 5);
  const auto full = verify::gemm<double>(m, n, k, 1.0, a, k, b, n, 0.0, {}, n);
  const auto sampled = verify::gemm<double>(m, n, k, 1.0, a, k, b, n, 0.0, {}, n, 8);
  EXPECT_GT(sampled.row_step, 1);
  EXPECT_TRUE(sampled.checks_row(m - 1));
  std::vector<double> out(full.value);
  EXPECT_TRUE(verify::compare<double>(sampled, out, n).ok);
  out[std::size_t(sampled.row_step * n + 4)] += 0.5;  // a checked row
  EXPECT_FALSE(verify::compare<double>(sampled, out, n).ok);
  out = full.value;
  out[std::size_t(1 * n + 2)] = std::numeric_limits<double>::quiet_NaN();  // an unchecked row, unwritten
  EXPECT_FALSE(sampled.checks_row(1));
  EXPECT_FALSE(verify::compare<double>(sampled, out, n).ok);
}
}  // namespace
}  // namespace tilekit::test
