// Shared machinery of the conformance suite: one parameter per compiled backend x variant x
// element type, and checkers that poison outputs, guard padding, and compare with the
// double-precision reference of include/tilekit/verify.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tilekit/tilekit.hpp"
#include "tilekit/tunings.hpp"
#include "tilekit/verify.hpp"

namespace tilekit::test {

struct Param {
  std::string backend;
  Variant variant;
  DType dtype;
};
std::vector<Param> all_params();  // every compiled backend x its variants x {float, double}
std::string param_name(const testing::TestParamInfo<Param>& info);
void PrintTo(const Param& p, std::ostream* os);  // readable names in failure messages

// The backend of a parameter, or nullptr after GTEST_SKIP-ing with the backend's reason.
Backend* backend_or_skip(const Param& p);

// Expects `fn` to throw tilekit::Error whose message contains every one of `needles`.
template <class Fn>
void expect_error(Fn&& fn, std::initializer_list<const char*> needles) {
  try {
    fn();
    ADD_FAILURE() << "expected a tilekit::Error";
  } catch (const Error& e) {
    for (const char* n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

// Sets a tuning for one scope and puts back the value it had. Throws tilekit::Error where
// set_tuning does (a sweep value outside a sweep build, say).
class TuningScope {
 public:
  TuningScope(std::string name, const std::string& value) : name_(std::move(name)), old_(tuning(name_)) {
    set_tuning(name_, value);
  }
  ~TuningScope() { set_tuning(name_, old_); }
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;

 private:
  std::string name_, old_;
};

// The tilekit program (TILEKIT_PROGRAM, from the environment or the build) run with `args`:
// its exit status (128 + the signal when one killed it) and its stdout (with stderr too when
// with_stderr).
struct ProgramResult {
  int code;
  std::string out;
};
ProgramResult run_program(const std::string& args, bool with_stderr);
// The same with extra environment variables for the program alone ("NAME=VALUE ...", through env(1)):
// this process's own environment stays as it is (tilekit reads its tunings from it once).
ProgramResult run_program(const std::string& env, const std::string& args, bool with_stderr);

// Seed of the random inputs: TILEKIT_TEST_SEED when set, else a fixed default. Every
// failure message carries it, so a failing random case can be replayed exactly.
std::uint64_t base_seed();

// Values no kernel may produce or may read without the result showing it.
template <class T> T poison() { return std::numeric_limits<T>::quiet_NaN(); }
template <class T> T sentinel() { return T(1234.5); }

// Host image of a rows x cols matrix with leading dimension ld: random in-bounds values,
// `pad` in the ld - cols padding of each row (NaN for inputs, so a kernel that reads padding
// poisons its result; a sentinel for outputs, checked unchanged afterwards).
template <class T>
std::vector<T> host_matrix(index_t rows, index_t cols, index_t ld, std::uint64_t seed, T pad) {
  std::vector<T> v = verify::random_values<T>(std::size_t(rows * ld), seed);
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = cols; j < ld; ++j) v[std::size_t(i * ld + j)] = pad;
  return v;
}

// Expects every padding element of out (rows x cols, ld) to still hold `pad`.
template <class T>
void expect_padding(const std::vector<T>& out, index_t rows, index_t cols, index_t ld, T pad) {
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = cols; j < ld; ++j)
      if (out[std::size_t(i * ld + j)] != pad) {
        ADD_FAILURE() << "padding element (" << i << ", " << j << ") of the output was written";
        return;
      }
}

template <class T>
void expect_close(const verify::Reference& ref, const std::vector<T>& out, index_t ld) {
  const verify::Check c = verify::compare<T>(ref, out, ld);
  EXPECT_TRUE(c.ok) << c.message;
}

struct GemmCase {
  index_t m, n, k;
  double alpha = 1, beta = 0;
  index_t pad_a = 0, pad_b = 0, pad_c = 0;  // ld = cols + pad
  TileConfig tile{};
};

template <class T>
void check_gemm(Backend& be, Variant v, const GemmCase& g, std::uint64_t seed) {
  SCOPED_TRACE(fmt::format("gemm {} {} {}: m={} n={} k={} alpha={} beta={} ld pads {}/{}/{} tile {} seed={}",
                           be.name(), to_string(v), to_string(dtype_of<T>()), g.m, g.n, g.k, g.alpha, g.beta,
                           g.pad_a, g.pad_b, g.pad_c, g.tile.str(), seed));
  const index_t lda = g.k + g.pad_a, ldb = g.n + g.pad_b, ldc = g.n + g.pad_c;
  auto ha = host_matrix<T>(g.m, g.k, lda, seed + 1, poison<T>());
  auto hb = host_matrix<T>(g.k, g.n, ldb, seed + 2, poison<T>());
  // beta == 0: C's contents must be ignored, so it starts as NaN. Otherwise C is an input.
  auto hc = host_matrix<T>(g.m, g.n, ldc, seed + 3, sentinel<T>());
  if (g.beta == 0)
    for (index_t i = 0; i < g.m; ++i)
      for (index_t j = 0; j < g.n; ++j) hc[std::size_t(i * ldc + j)] = poison<T>();
  Matrix<T> a(be, g.m, g.k, lda), b(be, g.k, g.n, ldb), c(be, g.m, g.n, ldc);
  a.upload(ha);
  b.upload(hb);
  c.upload(hc);
  gemm<T>(v, T(g.alpha), a, b, T(g.beta), c, g.tile);
  const auto out = c.download();
  expect_close(verify::gemm<T>(g.m, g.n, g.k, T(g.alpha), ha, lda, hb, ldb, T(g.beta), hc, ldc), out, ldc);
  expect_padding(out, g.m, g.n, ldc, sentinel<T>());
}

template <class T>
void check_transpose(Backend& be, Variant v, index_t rows, index_t cols, index_t pad_in, index_t pad_out,
                     std::uint64_t seed, TileConfig tile = {}) {
  SCOPED_TRACE(fmt::format("transpose {} {} {}: {}x{} ld pads {}/{} tile {} seed={}", be.name(), to_string(v),
                           to_string(dtype_of<T>()), rows, cols, pad_in, pad_out, tile.str(), seed));
  const index_t ld_in = cols + pad_in, ld_out = rows + pad_out;
  auto hin = host_matrix<T>(rows, cols, ld_in, seed + 1, poison<T>());
  auto hout = host_matrix<T>(cols, rows, ld_out, seed + 2, sentinel<T>());
  for (index_t i = 0; i < cols; ++i)
    for (index_t j = 0; j < rows; ++j) hout[std::size_t(i * ld_out + j)] = poison<T>();
  Matrix<T> in(be, rows, cols, ld_in), out(be, cols, rows, ld_out);
  in.upload(hin);
  out.upload(hout);
  transpose<T>(v, in, out, tile);
  const auto res = out.download();
  expect_close(verify::transpose<T>(rows, cols, hin, ld_in), res, ld_out);
  expect_padding(res, cols, rows, ld_out, sentinel<T>());
}

template <class T>
void check_conv2d(Backend& be, Variant v, index_t h, index_t w, int r, index_t pad_in, index_t pad_out,
                  std::uint64_t seed, TileConfig tile = {}) {
  SCOPED_TRACE(fmt::format("conv2d {} {} {}: {}x{} r={} ld pads {}/{} tile {} seed={}", be.name(), to_string(v),
                           to_string(dtype_of<T>()), h, w, r, pad_in, pad_out, tile.str(), seed));
  const index_t ld_in = w + pad_in, ld_out = w + pad_out;
  auto hin = host_matrix<T>(h, w, ld_in, seed + 1, poison<T>());
  auto hf = verify::random_values<T>(std::size_t(r * r), seed + 2);
  auto hout = host_matrix<T>(h, w, ld_out, seed + 3, sentinel<T>());
  for (index_t i = 0; i < h; ++i)
    for (index_t j = 0; j < w; ++j) hout[std::size_t(i * ld_out + j)] = poison<T>();
  Matrix<T> in(be, h, w, ld_in), f(be, r, r), out(be, h, w, ld_out);
  in.upload(hin);
  f.upload(hf);
  out.upload(hout);
  conv2d<T>(v, in, f, out, tile);
  const auto res = out.download();
  expect_close(verify::conv2d<T>(h, w, hin, ld_in, hf, r), res, ld_out);
  expect_padding(res, h, w, ld_out, sentinel<T>());
}

// Runs fn<float> or fn<double> for the parameter's dtype.
#define TILEKIT_DISPATCH_DTYPE(param, FN, ...)                  \
  do {                                                          \
    if ((param).dtype == ::tilekit::DType::f32) FN<float>(__VA_ARGS__); \
    else FN<double>(__VA_ARGS__);                               \
  } while (0)

}  // namespace tilekit::test
