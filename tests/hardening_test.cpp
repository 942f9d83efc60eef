// BLAS semantics, aliasing, checked sizes, the memory guard and concurrent callers, on every
// compiled backend x variant x dtype (issue 14).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include <gmock/gmock.h>

#include "harness.hpp"

namespace tilekit::test {
namespace {

using testing::HasSubstr;

// Bit-for-bit equality (NaN payloads included): what a rejected call must leave behind.
template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

class Hardening : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override { be_ = backend_or_skip(GetParam()); }
  Variant v() const { return GetParam().variant; }
  Backend* be_ = nullptr;
};

// alpha == 0 reads neither A nor B: NaN and Inf there never reach C, which becomes beta * C
// exactly (reference BLAS), and the double reference agrees.
template <class T>
void alpha_zero(Backend& be, Variant v, T beta, T bad) {
  SCOPED_TRACE(fmt::format("alpha = 0, beta = {}, A and B hold {}", beta, bad));
  const index_t m = 37, n = 29, k = 41;
  std::vector<T> ha(std::size_t(m * k), bad), hb(std::size_t(k * n), bad);
  auto hc = verify::random_values<T>(std::size_t(m * n), base_seed());
  if (beta == T(0)) std::fill(hc.begin(), hc.end(), poison<T>());  // beta == 0 never reads C either
  Matrix<T> a(be, m, k), b(be, k, n), c(be, m, n);
  a.upload(ha);
  b.upload(hb);
  c.upload(hc);
  gemm<T>(v, T(0), a, b, beta, c);
  const auto out = c.download();
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T want = beta == T(0) ? T(0) : beta * hc[i];
    if (!(out[i] == want)) {
      ADD_FAILURE() << "element " << i << " = " << out[i] << ", expected beta * C = " << want;
      break;
    }
  }
  const auto ref = verify::gemm<T>(m, n, k, T(0), ha, k, hb, n, beta, hc, n);
  EXPECT_TRUE(verify::compare<T>(ref, out, n).ok) << "the double reference must follow the same rule";
}

TEST_P(Hardening, AlphaZeroNeverReadsAOrB) {
  if (!be_) return;
  const auto inf = [](auto t) { return std::numeric_limits<decltype(t)>::infinity(); };
  if (GetParam().dtype == DType::f32) {
    for (float beta : {0.0f, 1.0f, -1.0f, 2.5f}) alpha_zero<float>(*be_, v(), beta, poison<float>());
    alpha_zero<float>(*be_, v(), 0.0f, inf(0.0f));
  } else {
    for (double beta : {0.0, 1.0, -1.0, 2.5}) alpha_zero<double>(*be_, v(), beta, poison<double>());
    alpha_zero<double>(*be_, v(), 0.0, inf(0.0));
  }
}

template <class T>
void beta_zero(Backend& be, Variant v, TileConfig tile) {
  // C is NaN and Inf: beta == 0 must overwrite, not scale, it.
  const index_t m = 33, n = 17, k = 19;
  auto ha = verify::random_values<T>(std::size_t(m * k), base_seed() + 1);
  auto hb = verify::random_values<T>(std::size_t(k * n), base_seed() + 2);
  std::vector<T> hc(std::size_t(m * n));
  for (std::size_t i = 0; i < hc.size(); ++i) hc[i] = i % 2 ? poison<T>() : std::numeric_limits<T>::infinity();
  Matrix<T> a(be, m, k), b(be, k, n), c(be, m, n);
  a.upload(ha);
  b.upload(hb);
  c.upload(hc);
  gemm<T>(v, T(1.5), a, b, T(0), c, tile);
  expect_close(verify::gemm<T>(m, n, k, T(1.5), ha, k, hb, n, T(0), hc, n), c.download(), n);
}

TEST_P(Hardening, BetaZeroNeverReadsC) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), beta_zero, *be_, v(), TileConfig{});
  // ...and an explicit tile for the tiled variants (the optimized kernels' explicit tiles differ
  // per backend: compiled shapes on GPUs, the team scratch on Kokkos hosts).
  if (v() == Variant::tiled) TILEKIT_DISPATCH_DTYPE(GetParam(), beta_zero, *be_, v(), (TileConfig{16, 16, 8}));
}

// Every way a call can be rejected leaves every output bit-for-bit as it was (NaN payloads,
// padding and all).
template <class T>
void rejected_untouched(Backend& be, Variant v) {
  const index_t m = 12, n = 10, k = 8;
  Matrix<T> a(be, m, k), b(be, k, n), c(be, m, n, n + 3), t(be, n, m), f(be, 3, 3), f4(be, 4, 4);
  auto fill = [](Matrix<T>& x, std::uint64_t seed) {
    auto h = verify::random_values<T>(std::size_t(x.storage_elements()), seed);
    for (std::size_t i = 0; i < h.size(); i += 7) h[i] = poison<T>();
    x.upload(h);
    return h;
  };
  fill(a, 1);
  fill(b, 2);
  fill(f, 5);
  fill(f4, 6);
  const auto hc = fill(c, 3), ht = fill(t, 4);
  Matrix<T> wrong(be, m + 1, n);
  fill(wrong, 7);
  auto check = [&](const char* what, auto&& call) {
    SCOPED_TRACE(what);
    EXPECT_THROW(call(), Error);
    EXPECT_TRUE(same_bits(c.download(), hc)) << "C changed";
    EXPECT_TRUE(same_bits(t.download(), ht)) << "the transpose output changed";
  };
  check("gemm shape", [&] { gemm<T>(v, T(1), a, a, T(0), c); });
  if (v != Variant::naive)  // naive variants take no tile, so an oversized one is not an error there
    check("gemm tile", [&] { gemm<T>(v, T(1), a, b, T(1), c, TileConfig{1 << 14, 1 << 14, 1 << 14}); });
  check("gemm alias", [&] { gemm<T>(v, T(1), c, b, T(0), c); });
  check("transpose shape", [&] { transpose<T>(v, wrong, t); });
  check("transpose tile", [&] { transpose<T>(v, a, t, TileConfig{-1, 4, 0}); });
  check("conv2d even filter", [&] { conv2d<T>(v, c, f4, c); });
  check("variant", [&] { gemm<T>(Variant(7), T(1), a, b, T(0), c); });
}

TEST_P(Hardening, RejectedCallLeavesOutputsBitForBit) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), rejected_untouched, *be_, v());
}

template <class T>
void aliasing(Backend& be, Variant v) {
  Matrix<T> a(be, 8, 8), b(be, 8, 8), f(be, 3, 3);
  a.upload(verify::random_values<T>(64, 1));
  b.upload(verify::random_values<T>(64, 2));
  f.upload(verify::random_values<T>(9, 3));
  const auto before = a.download();
  expect_error([&] { transpose<T>(v, a, a); }, {"output out overlaps input in"});
  expect_error([&] { gemm<T>(v, T(1), a, b, T(0), a); }, {"output C overlaps input A"});
  expect_error([&] { gemm<T>(v, T(1), b, a, T(0), a); }, {"output C overlaps input B"});
  expect_error([&] { conv2d<T>(v, a, f, a); }, {"output out overlaps input in"});
  EXPECT_TRUE(same_bits(a.download(), before));
}

TEST_P(Hardening, OutputOverlappingAnInputIsRejected) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), aliasing, *be_, v());
}

// Several host threads, each with its own matrices, calling at once: every answer right.
template <class T>
void concurrent(Backend& be, Variant v) {
  constexpr int kThreads = 6, kRounds = 4;
  std::vector<std::thread> pool;
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int round = 0; round < kRounds; ++round) {
          const std::uint64_t seed = base_seed() + std::uint64_t(t * 100 + round);
          const index_t m = 40 + t * 7, n = 33 + round * 5, k = 29 + t;
          auto ha = verify::random_values<T>(std::size_t(m * k), seed);
          auto hb = verify::random_values<T>(std::size_t(k * n), seed + 1);
          auto hf = verify::random_values<T>(9, seed + 2);
          Matrix<T> a(be, m, k), b(be, k, n), c(be, m, n), at(be, k, m), f(be, 3, 3), co(be, m, k);
          a.upload(ha);
          b.upload(hb);
          f.upload(hf);
          gemm<T>(v, T(1), a, b, T(0), c);
          transpose<T>(v, a, at);
          conv2d<T>(v, a, f, co);
          const auto cg = verify::compare<T>(verify::gemm<T>(m, n, k, T(1), ha, k, hb, n, T(0), {}, n), c.download(), n);
          const auto ct = verify::compare<T>(verify::transpose<T>(m, k, ha, k), at.download(), m);
          const auto cc = verify::compare<T>(verify::conv2d<T>(m, k, ha, k, hf, 3), co.download(), k);
          for (const auto* ch : {&cg, &ct, &cc})
            if (!ch->ok) throw Error(fmt::format("thread {} round {}: {}", t, round, ch->message));
        }
      } catch (const std::exception& e) {
        failures[std::size_t(t)] = e.what();
      }
    });
  for (auto& th : pool) th.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
}

TEST_P(Hardening, ConcurrentHostThreadsGetRightAnswers) {
  if (!be_) return;
  TILEKIT_DISPATCH_DTYPE(GetParam(), concurrent, *be_, v());
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Hardening, testing::ValuesIn(all_params()), param_name);

// ---- sizes: checked arithmetic and the memory guard (backend independent: serial)

TEST(Sizes, CheckedArithmeticThrowsOnOverflow) {
  EXPECT_EQ(checked_mul(index_t(1) << 31, index_t(1) << 31, "x"), index_t(1) << 62);
  expect_error([] { checked_mul(index_t(1) << 32, index_t(1) << 32, "the thing"); }, {"the thing", "too large"});
  expect_error([] { checked_add(std::numeric_limits<index_t>::max(), 1, "sum"); }, {"sum", "too large"});
  expect_error([] { checked_bytes(index_t(1) << 31, index_t(1) << 31, 8, "bytes"); }, {"bytes", "too large"});
  expect_error([] { checked_mul(-1, 2, "neg"); }, {"negative"});
}

TEST(Sizes, HugeMatrixIsRefusedNotAllocated) {
  Backend& be = backend("serial");
  // rows * ld overflows 64 bits: the constructor refuses before anything else happens.
  expect_error([&] { Matrix<float>(be, index_t(1) << 32, index_t(1) << 32); }, {"too large"});
  // Representable, but more than any host has: refused with both numbers.
  try {
    Matrix<float> m(be, index_t(1) << 22, index_t(1) << 22);
    ADD_FAILURE() << "a 64 TiB matrix was allocated";
  } catch (const ResourceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs 70368744177664 bytes"));
    EXPECT_THAT(e.what(), HasSubstr("available"));
  }
}

TEST(Sizes, ProblemsAreValidatedBeforeAllocation) {
  validate_problem({Op::gemm, DType::f32, 3, 4, 5});
  expect_error([] { validate_problem({Op::transpose, DType::f32, 1, 3000000000, 0}); }, {"2^31"});
  expect_error([] { validate_problem({Op::gemm, DType::f32, -1, 4, 5}); }, {"non-negative"});
  expect_error([] { validate_problem({Op::conv2d, DType::f32, 8, 8, 4}); }, {"odd"});
  EXPECT_EQ(operand_bytes({Op::gemm, DType::f64, 2, 3, 4}), std::size_t(8 * (8 + 12 + 6)));
  EXPECT_EQ(operand_bytes({Op::conv2d, DType::f32, 5, 6, 3}), std::size_t(4 * (60 + 9)));
  expect_error([] { operand_bytes({Op::gemm, DType::f64, index_t(1) << 62, 4, 4}); }, {"too large"});
}

TEST(Sizes, EveryBackendReportsAvailableMemory) {
  for (const auto& name : compiled_backends()) {
    Backend* be = find_backend(name);
    if (!be->available()) continue;
    EXPECT_GT(be->memory_available(), std::size_t(1) << 20) << name;
  }
}

// Matrices start on a 256-byte boundary on every backend that states one: the kokkos backend
// re-aligns kokkos_malloc's pointers (128 bytes past a boundary), which cost the GPU transpose 8%;
// a matrix must also free cleanly through the re-aligned pointer.
TEST(Sizes, KokkosMatricesAre256ByteAligned) {
  Backend* be = find_backend("kokkos");
  if (!be || !be->available()) GTEST_SKIP() << "kokkos not compiled or not available";
  for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(4096), std::size_t(1) << 20}) {
    void* p = be->allocate(bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u) << bytes << " bytes";
    be->deallocate(p);
  }
  expect_error([&] { set_tuning("kokkos.align", "sideways"); }, {"kokkos.align", "sideways", "256"});
}

// Host matrices of 4 MiB and more start on a 2 MiB boundary (whole transparent huge pages, asked
// for with madvise on Linux); smaller ones on a cache line. host.huge_pages=off leaves them on a
// cache line; a value it does not take is refused by name.
TEST(Sizes, LargeHostMatricesStartOnHugePages) {
  Backend* be = find_backend("serial");
  ASSERT_NE(be, nullptr);
  const std::size_t mib = std::size_t(1) << 20;
  for (std::size_t bytes : {std::size_t(1), mib, 4 * mib, 9 * mib + 5}) {
    void* p = be->allocate(bytes);
    const std::size_t want = bytes >= 4 * mib ? 2 * mib : 64;
#if !defined(__linux__)
    if (want > 64) continue;
#endif
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % want, 0u) << bytes << " bytes";
    std::memset(p, 0x5a, bytes);  // the whole request is usable
    be->deallocate(p);
  }
  {
    TuningScope off("host.huge_pages", "off");
    void* p = be->allocate(4 * mib);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    std::memset(p, 0x5a, 4 * mib);
    be->deallocate(p);
  }
  expect_error([&] { set_tuning("host.huge_pages", "yes"); }, {"host.huge_pages", "'yes'", "on or off"});
}

}  // namespace
}  // namespace tilekit::test
