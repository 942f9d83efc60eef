// Bad input gets a clear error that names the problem, and no output is written. Each case
// fills the output with a sentinel, makes the bad call, and checks the sentinel survived.
#include <gmock/gmock.h>

#include "harness.hpp"

namespace tilekit::test {
namespace {

using testing::HasSubstr;

template <class T>
void expect_untouched(const Matrix<T>& m) {
  for (T x : m.download())
    if (x != sentinel<T>()) {
      ADD_FAILURE() << "an output element was written by a call that failed";
      return;
    }
}

template <class T>
Matrix<T> filled(Backend& be, index_t r, index_t c, index_t ld = 0) {
  Matrix<T> m(be, r, c, ld);
  m.upload(std::vector<T>(std::size_t(m.storage_elements()), sentinel<T>()));
  return m;
}

class Errors : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override { be_ = backend_or_skip(GetParam()); }
  Backend* be_ = nullptr;
};

template <class T>
void bad_gemm_shapes(Backend& be, Variant v) {
  auto a = filled<T>(be, 4, 5), b = filled<T>(be, 6, 7), c = filled<T>(be, 4, 7);
  expect_error([&] { gemm<T>(v, T(1), a, b, T(0), c); }, {"gemm shapes do not match", "4x5", "6x7"});
  expect_untouched(c);
  auto b2 = filled<T>(be, 5, 7), c2 = filled<T>(be, 5, 7);
  expect_error([&] { gemm<T>(v, T(1), a, b2, T(0), c2); }, {"gemm shapes do not match"});
  expect_untouched(c2);
}

template <class T>
void bad_transpose_shapes(Backend& be, Variant v) {
  auto in = filled<T>(be, 4, 5), out = filled<T>(be, 4, 5);
  expect_error([&] { transpose<T>(v, in, out); }, {"transpose shapes do not match", "need 5x4"});
  expect_untouched(out);
}

template <class T>
void bad_conv_inputs(Backend& be, Variant v) {
  auto in = filled<T>(be, 8, 9), out = filled<T>(be, 8, 9);
  auto even = filled<T>(be, 4, 4), rect = filled<T>(be, 3, 5), big = filled<T>(be, kMaxFilter + 2, kMaxFilter + 2);
  for (auto* f : {&even, &rect, &big}) {
    expect_error([&] { conv2d<T>(v, in, *f, out); }, {"filter must be square with an odd size"});
    expect_untouched(out);
  }
  auto f3 = filled<T>(be, 3, 3), wrong = filled<T>(be, 9, 8);
  expect_error([&] { conv2d<T>(v, in, f3, wrong); }, {"conv2d output must match the input"});
  expect_untouched(wrong);
}

template <class T>
void tile_too_large(Backend& be, Variant v) {
  auto a = filled<T>(be, 64, 64), b = filled<T>(be, 64, 64), c = filled<T>(be, 64, 64);
  // 8192 x 8192 x 8192 tiles need 2^30 elements of scratch: no device or cache offers that.
  const TileConfig huge{8192, 8192, 8192};
  expect_error([&] { gemm<T>(v, T(1), a, b, T(0), c, huge); }, {"needs", "bytes of scratch", "offers"});
  expect_untouched(c);
  auto out = filled<T>(be, 64, 64);
  expect_error([&] { transpose<T>(v, a, out, TileConfig{16384, 16384, 0}); }, {"needs", "offers"});
  expect_untouched(out);
  expect_error([&] { transpose<T>(v, a, out, TileConfig{-4, 8, 0}); }, {"non-negative"});
  expect_error([&] { gemm<T>(v, T(1), a, b, T(0), c, TileConfig{16, 16, 0}); }, {"depth"});
  expect_untouched(c);
}

TEST_P(Errors, MismatchedGemmShapes) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), bad_gemm_shapes, *be_, GetParam().variant);
}
TEST_P(Errors, MismatchedTransposeShapes) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), bad_transpose_shapes, *be_, GetParam().variant);
}
TEST_P(Errors, BadConvFilterOrOutput) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), bad_conv_inputs, *be_, GetParam().variant);
}
TEST_P(Errors, TileThatDoesNotFit) {
  if (!be_) return;
  if (GetParam().variant == Variant::naive) GTEST_SKIP() << "naive variants take no tile";
  TILEKIT_DISPATCH_DTYPE(GetParam(), tile_too_large, *be_, GetParam().variant);
}
TEST_P(Errors, NegativeSizesAndSmallLeadingDimension) {
  if (!be_) return;
  expect_error([&] { Matrix<float>(*be_, -1, 4); }, {"non-negative", "-1"});
  expect_error([&] { Matrix<double>(*be_, 3, -2); }, {"non-negative"});
  expect_error([&] { Matrix<float>(*be_, 3, 8, 5); }, {"leading dimension 5", "8 columns"});
}
TEST_P(Errors, UploadOfWrongSize) {
  if (!be_) return;
  auto m = filled<float>(*be_, 3, 4);
  expect_error([&] { m.upload(std::vector<float>(5)); }, {"upload of 5 values"});
  expect_untouched(m);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Errors, testing::ValuesIn(all_params()), param_name);

// ---- errors that concern backends rather than calls
TEST(Registry, UnknownBackendIsAnError) {
  expect_error([] { backend("nosuch"); }, {"unknown backend 'nosuch'", "serial"});
}

TEST(Registry, SerialIsAlwaysCompiledAndBestIsAvailable) {
  const auto names = compiled_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "serial"), names.end());
  EXPECT_TRUE(best_backend().available());
}

TEST(Registry, AbsentBackendNamesItsCMakeOption) {
  for (const auto& name : known_backends()) {
    const auto compiled = compiled_backends();
    if (std::find(compiled.begin(), compiled.end(), name) != compiled.end()) continue;
    std::string upper;
    for (char ch : name) upper += char(std::toupper(ch));
    expect_error([&] { backend(name); }, {"not compiled into this build", ("TILEKIT_ENABLE_" + upper).c_str()});
  }
}

TEST(Registry, SerialRefusesOptimized) {
  Backend& s = backend("serial");
  auto a = filled<float>(s, 2, 2), b = filled<float>(s, 2, 2), c = filled<float>(s, 2, 2);
  expect_error([&] { gemm<float>(Variant::optimized, 1.f, a, b, 0.f, c); }, {"no 'optimized' variant", "naive, tiled"});
  expect_untouched(c);
}

TEST(Registry, MatricesFromAnotherBackendAreRefused) {
  Backend* other = nullptr;
  for (const auto& n : compiled_backends())
    if (Backend* b = find_backend(n); n != "serial" && b->available()) other = b;
  if (!other) GTEST_SKIP() << "only one available backend in this build";
  Backend& s = backend("serial");
  auto a = filled<float>(*other, 2, 2), b = filled<float>(s, 2, 2), c = filled<float>(s, 2, 2);
  expect_error([&] { gemm<float>(Variant::naive, 1.f, a, b, 0.f, c); }, {"belongs to backend"});
  expect_untouched(c);
}

TEST(Parsing, NamesRoundTripAndUnknownNamesAreErrors) {
  for (Op o : kAllOps) EXPECT_EQ(parse_op(to_string(o)), o);
  for (Variant v : kAllVariants) EXPECT_EQ(parse_variant(to_string(v)), v);
  EXPECT_EQ(parse_dtype("f32"), DType::f32);
  EXPECT_EQ(parse_dtype("double"), DType::f64);
  expect_error([] { parse_variant("fast"); }, {"unknown variant 'fast'", "naive, tiled, optimized"});
  expect_error([] { parse_op("fft"); }, {"unknown operation 'fft'"});
  expect_error([] { parse_dtype("half"); }, {"unknown dtype 'half'"});
}

}  // namespace
}  // namespace tilekit::test
