// tilekit_campaign: a seeded randomized campaign against the double-precision reference.
//
//   tilekit_campaign --backend B [--cases N] [--seed S] [--first I] [--op OP] [--dtype D] [--variant V]
//
// Case i is drawn from (seed, i) alone, so any failure replays with one command (printed with
// it): --first I --cases 1. The generator favours the shapes kernels get wrong: 1s, primes,
// tile sizes +- 1, thin and short-wide matrices, long k and k = 0; leading dimensions beyond
// the columns (input padding is NaN, so a kernel that reads it fails; output padding must
// survive); alpha/beta in {0, 1, -1, ...} with NaN in C when beta = 0 and NaN in A and B when alpha = 0;
// both dtypes; automatic and explicit tiles. A tile the backend refuses must leave the output
// bit-for-bit unchanged; it is counted, not failed.
#include <chrono>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tilekit/tilekit.hpp"
#include "tilekit/verify.hpp"

namespace {
using namespace tilekit;

struct Case {
  Op op;
  DType dtype;
  Variant variant;
  index_t m = 0, n = 0, k = 0;         // conv2d: H, W, R; transpose: rows, cols
  index_t pad_x = 0, pad_y = 0, pad_z = 0;  // ld = cols + pad of A/in, B, C/out
  double alpha = 1, beta = 0;
  bool poison_ab = false;              // alpha == 0: A and B are NaN
  TileConfig tile;
  std::string str() const {
    return fmt::format("{} {} {} m={} n={} k={} ld pads {}/{}/{} alpha={} beta={}{} tile {}", to_string(op),
                       to_string(variant), to_string(dtype), m, n, k, pad_x, pad_y, pad_z, alpha, beta,
                       poison_ab ? " (A, B NaN)" : "", tile.str());
  }
};

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  index_t uniform(index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class C>
  auto pick(const C& c) { return c[std::size_t(uniform(0, index_t(std::size(c)) - 1))]; }

  // A dimension: 1, a prime, a power-of-two tile edge +- 1, or anything up to `most`.
  index_t dim(index_t most = 80) {
    static constexpr index_t primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 97};
    static constexpr index_t edges[] = {4, 8, 16, 32, 64};
    switch (uniform(0, 9)) {
      case 0: case 1: return 1;
      case 2: case 3: case 4: return pick(primes);
      case 5: case 6: return pick(edges) + uniform(-1, 1);
      default: return uniform(1, most);
    }
  }
  // 1, -1 and 0.5 are exact; the rest arbitrary (zeros are drawn separately).
  double scalar() {
    static constexpr double common[] = {1.0, -1.0, 0.5, 2.5};
    if (chance(0.7)) return pick(common);
    return double(uniform(-300, 300)) / 100.0;
  }
  index_t pad() { return chance(0.5) ? 0 : uniform(1, 9); }

  Case draw(const Backend& be, std::optional<Op> op, std::optional<DType> dt, std::optional<Variant> v) {
    Case c;
    c.op = op ? *op : pick(kGemmHeavy);
    c.dtype = dt ? *dt : (chance(0.5) ? DType::f32 : DType::f64);
    const auto vs = be.variants();
    c.variant = v ? *v : vs[std::size_t(uniform(0, index_t(vs.size()) - 1))];
    c.pad_x = pad();
    c.pad_y = pad();
    c.pad_z = pad();
    switch (c.op) {
      case Op::gemm:
        if (chance(0.1)) {  // long k, thin output
          c.m = uniform(1, 9);
          c.n = uniform(1, 9);
          c.k = uniform(100, 2000);
        } else if (chance(0.03)) {  // past the CPU cache blocks
          c.m = uniform(150, 260);
          c.n = uniform(150, 260);
          c.k = uniform(150, 260);
        } else {
          c.m = dim();
          c.n = dim();
          c.k = chance(0.03) ? 0 : dim();  // k = 0: C = beta * C
        }
        c.alpha = chance(0.15) ? 0.0 : scalar();
        c.beta = chance(0.35) ? 0.0 : scalar();
        c.poison_ab = c.alpha == 0 && chance(0.7);
        break;
      case Op::transpose:
        c.m = chance(0.05) ? uniform(100, 400) : dim(120);
        c.n = chance(0.05) ? uniform(100, 400) : dim(120);
        break;
      case Op::conv2d:
        c.m = chance(0.05) ? uniform(100, 200) : dim(90);
        c.n = chance(0.05) ? uniform(100, 200) : dim(90);
        c.k = chance(0.75) ? pick(kSmallFilters) : 2 * uniform(0, 15) + 1;
        c.pad_y = 0;  // filters are dense
        break;
    }
    if (chance(0.4)) {
      auto edge = [&] { return int(chance(0.5) ? dim(64) : pick(kEdges)); };
      c.tile = {edge(), edge(), c.op == Op::gemm ? edge() : 0};
    }
    return c;
  }

 private:
  static constexpr Op kGemmHeavy[] = {Op::gemm, Op::gemm, Op::transpose, Op::conv2d};
  static constexpr index_t kSmallFilters[] = {1, 3, 5, 7};
  static constexpr index_t kEdges[] = {8, 16, 32};
  std::mt19937_64 rng_;
};

// Seeds of neighbouring cases must not be neighbours (splitmix64).
std::uint64_t case_seed(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

enum class Outcome { pass, refused, fail };

template <class T>
std::vector<T> image(index_t rows, index_t cols, index_t ld, std::uint64_t seed, T pad, bool all_nan = false) {
  std::vector<T> v = verify::random_values<T>(std::size_t(rows * ld), seed);
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < ld; ++j)
      if (j >= cols || all_nan) v[std::size_t(i * ld + j)] = j >= cols ? pad : std::numeric_limits<T>::quiet_NaN();
  return v;
}

template <class T>
Outcome run_case(Backend& be, const Case& c, std::uint64_t seed, std::string& why) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), sentinel = T(1234.5);
  Matrix<T> x, y, z;
  std::vector<T> hx, hy, hz;
  index_t z_rows = 0, z_cols = 0, ldz = 0;
  verify::Reference ref;
  switch (c.op) {
    case Op::gemm: {
      const index_t lda = c.k + c.pad_x, ldb = c.n + c.pad_y;
      ldz = c.n + c.pad_z;
      z_rows = c.m;
      z_cols = c.n;
      hx = image<T>(c.m, c.k, lda, seed + 1, nan, c.poison_ab);
      hy = image<T>(c.k, c.n, ldb, seed + 2, nan, c.poison_ab);
      hz = image<T>(c.m, c.n, ldz, seed + 3, sentinel, c.beta == 0);
      x = Matrix<T>(be, c.m, c.k, lda);
      y = Matrix<T>(be, c.k, c.n, ldb);
      ref = verify::gemm<T>(c.m, c.n, c.k, T(c.alpha), hx, lda, hy, ldb, T(c.beta), hz, ldz);
      break;
    }
    case Op::transpose: {
      const index_t ld_in = c.n + c.pad_x;
      ldz = c.m + c.pad_z;
      z_rows = c.n;
      z_cols = c.m;
      hx = image<T>(c.m, c.n, ld_in, seed + 1, nan);
      hz = image<T>(c.n, c.m, ldz, seed + 3, sentinel, true);
      x = Matrix<T>(be, c.m, c.n, ld_in);
      ref = verify::transpose<T>(c.m, c.n, hx, ld_in);
      break;
    }
    case Op::conv2d: {
      const index_t ld_in = c.n + c.pad_x;
      ldz = c.n + c.pad_z;
      z_rows = c.m;
      z_cols = c.n;
      hx = image<T>(c.m, c.n, ld_in, seed + 1, nan);
      hy = verify::random_values<T>(std::size_t(c.k * c.k), seed + 2);
      hz = image<T>(c.m, c.n, ldz, seed + 3, sentinel, true);
      x = Matrix<T>(be, c.m, c.n, ld_in);
      y = Matrix<T>(be, c.k, c.k);
      ref = verify::conv2d<T>(c.m, c.n, hx, ld_in, hy, int(c.k));
      break;
    }
  }
  z = Matrix<T>(be, z_rows, z_cols, ldz);
  x.upload(hx);
  if (c.op != Op::transpose) y.upload(hy);
  z.upload(hz);
  try {
    switch (c.op) {
      case Op::gemm: gemm<T>(c.variant, T(c.alpha), x, y, T(c.beta), z, c.tile); break;
      case Op::transpose: transpose<T>(c.variant, x, z, c.tile); break;
      case Op::conv2d: conv2d<T>(c.variant, x, y, z, c.tile); break;
    }
  } catch (const DeviceError&) {
    throw;
  } catch (const Error& e) {
    if (c.tile.is_auto()) {
      why = fmt::format("rejected an automatic-tile call: {}", e.what());
      return Outcome::fail;
    }
    const auto out = z.download();
    if (std::memcmp(out.data(), hz.data(), out.size() * sizeof(T)) != 0) {
      why = fmt::format("refused tile ({}) but the output changed", e.what());
      return Outcome::fail;
    }
    return Outcome::refused;
  }
  const auto out = z.download();
  const verify::Check check = verify::compare<T>(ref, out, ldz);
  if (!check.ok) {
    why = check.message;
    return Outcome::fail;
  }
  for (index_t i = 0; i < z_rows; ++i)
    for (index_t j = z_cols; j < ldz; ++j)
      if (std::memcmp(&out[std::size_t(i * ldz + j)], &sentinel, sizeof(T)) != 0) {
        why = fmt::format("output padding ({}, {}) was written", i, j);
        return Outcome::fail;
      }
  return Outcome::pass;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tilekit_campaign: seeded randomized cases against the double-precision reference"};
  std::string backend_name = "serial", op_name, dtype_name, variant_name;
  std::uint64_t cases = 1000, seed = 1, first = 0;
  app.add_option("--backend", backend_name, "Backend")->capture_default_str();
  app.add_option("--cases", cases, "Number of cases")->capture_default_str()->check(CLI::Range(std::uint64_t(1), std::uint64_t(1) << 40));
  app.add_option("--seed", seed, "Campaign seed")->capture_default_str();
  app.add_option("--first", first, "Index of the first case (to replay one: --first I --cases 1)")->capture_default_str();
  app.add_option("--op", op_name, "Only this operation");
  app.add_option("--dtype", dtype_name, "Only this dtype");
  app.add_option("--variant", variant_name, "Only this variant");
  bool verbose = false;
  app.add_flag("--verbose", verbose, "Print every case");
  CLI11_PARSE(app, argc, argv);

  try {
    Backend& be = backend(backend_name);
    std::optional<Op> op;
    std::optional<DType> dt;
    std::optional<Variant> var;
    if (!op_name.empty()) op = parse_op(op_name);
    if (!dtype_name.empty()) dt = parse_dtype(dtype_name);
    if (!variant_name.empty()) {
      var = parse_variant(variant_name);
      if (!be.supports(*var)) throw Error(fmt::format("backend '{}' has no '{}' variant", be.name(), variant_name));
    }
    const std::string filters = (op ? " --op " + op_name : "") + (dt ? " --dtype " + dtype_name : "") +
                                (var ? " --variant " + variant_name : "");
    std::map<std::string, std::uint64_t> by_kind;
    std::uint64_t passed = 0, refused = 0, failed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = first; i < first + cases; ++i) {
      const std::uint64_t s = case_seed(seed, i);
      Gen gen(s);
      const Case c = gen.draw(be, op, dt, var);
      std::string why;
      Outcome o;
      try {
        o = c.dtype == DType::f32 ? run_case<float>(be, c, s, why) : run_case<double>(be, c, s, why);
      } catch (const std::exception& e) {
        o = Outcome::fail;
        why = fmt::format("threw: {}", e.what());
      }
      ++by_kind[fmt::format("{} {} {}", to_string(c.op), to_string(c.variant), to_string(c.dtype))];
      if (verbose) fmt::print("case {}: {}\n", i, c.str());
      if (o == Outcome::pass) ++passed;
      if (o == Outcome::refused) ++refused;
      if (o == Outcome::fail) {
        ++failed;
        fmt::print("FAIL case {} of seed {} on {}: {}\n  {}\n  reproduce: {} --backend {} --seed {} --first {} --cases 1{}\n", i,
                   seed, be.name(), c.str(), why, argv[0], be.name(), seed, i, filters);
        std::fflush(stdout);
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("campaign backend={} seed={} cases {}..{}: {} passed, {} explicit tiles refused with the output unchanged, "
               "{} failed ({:.1f} s)\n",
               be.name(), seed, first, first + cases - 1, passed, refused, failed, secs);
    for (const auto& [kind, count] : by_kind) fmt::print("  {:<28} {}\n", kind, count);
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tilekit_campaign: {}\n", e.what());
    return 2;
  }
}
