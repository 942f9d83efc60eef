// The host's packed gemm driver (backends/common/host/packed.hpp: gemm_packed) on a team of real
// threads, as a Kokkos OpenMP or Threads space runs it: the threads take each K step's units of C
// and the next step's panel pieces from a shared count, so which thread computes what changes from
// run to run. C must not: every team size gives the bits of a team of one (each element's sum
// depends only on the K steps), and those are within the double reference's bound (harness.hpp). CI's
// Kokkos is Serial (a team of one); this test gives the driver more threads than the machine has
// cores, on shapes with partial micro-panels, ld > cols, several L3 blocks and K steps, k = 0.
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/host/host_backend.hpp"
#include "common/host/packed.hpp"
#include "harness.hpp"
#include "tilekit/verify.hpp"

namespace tilekit::test {
namespace {

// A reusable barrier for `n` threads (C++17 has none).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t gen = gen_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, arrived_ = 0;
  std::uint64_t gen_ = 0;
};

// team(f): f(rank, size, barrier) on `size` threads at once (the caller is rank 0).
struct ThreadTeam {
  int size;
  template <class F>
  void operator()(const F& f) const {
    Barrier b(size);
    const auto barrier = [&] { b.wait(); };
    std::vector<std::thread> others;
    for (int r = 1; r < size; ++r) others.emplace_back([&, r] { f(r, size, barrier); });
    f(0, size, barrier);
    for (std::thread& t : others) t.join();
  }
};

struct Case {
  index_t m, n, k, pad;
  double beta;
  TileConfig tile;         // {} : the automatic tile
  std::size_t l3_bytes;    // small ones split C into several L3 blocks
};

// The inputs of a case, made once: A, B and C's starting values (NaN where beta = 0: C must not be read).
template <class T>
struct Inputs {
  index_t lda, ldb, ldc;
  std::vector<T> a, b, c;
  explicit Inputs(const Case& c_)
      : lda(c_.k + c_.pad), ldb(c_.n + c_.pad), ldc(c_.n + c_.pad),
        a(verify::random_values<T>(std::size_t(c_.m * lda), 1)),
        b(verify::random_values<T>(std::size_t(c_.k * ldb), 2)),
        c(c_.beta == 0 ? std::vector<T>(std::size_t(c_.m * ldc), std::numeric_limits<T>::quiet_NaN())
                       : verify::random_values<T>(std::size_t(c_.m * ldc), 3)) {}
};

template <class T>
std::vector<T> run(const Case& c, const Inputs<T>& in, int threads) {
  std::vector<T> out = in.c;
  const TileConfig t = c.tile.is_auto() ? host::gemm_packed_tile(host::cpu_device_info(threads), dtype_of<T>()) : c.tile;
  const GemmArgs<T> g{c.m, c.n, c.k, T(1.5), in.a.data(), in.lda, in.b.data(), in.ldb, T(c.beta), out.data(), in.ldc};
  host::gemm_packed(g, t, c.l3_bytes, threads, ThreadTeam{threads});
  return out;
}

template <class T>
void check(const Case& c) {
  SCOPED_TRACE(testing::Message() << c.m << "x" << c.n << "x" << c.k << " pad " << c.pad << " beta " << c.beta
                                  << " tile " << c.tile.str() << " l3 " << c.l3_bytes);
  const Inputs<T> in(c);
  const std::vector<T> one = run<T>(c, in, 1);
  expect_close(verify::gemm<T>(c.m, c.n, c.k, T(1.5), in.a, in.lda, in.b, in.ldb, T(c.beta), in.c, in.ldc), one, in.ldc);
  for (int threads : {2, 3, 5}) {
    const std::vector<T> many = run<T>(c, in, threads);
    for (index_t i = 0; i < c.m; ++i)
      for (index_t j = 0; j < c.n; ++j) {
        const std::size_t e = std::size_t(i * in.ldc + j);
        ASSERT_EQ(std::memcmp(&many[e], &one[e], sizeof(T)), 0)
            << threads << " threads: C(" << i << ", " << j << ") " << many[e] << " against " << one[e];
      }
  }
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {1, 1, 1, 0, 0.0, {}, std::size_t(64) << 20},
      {97, 89, 83, 3, 0.5, {}, std::size_t(64) << 20},
      {257, 385, 129, 1, 0.0, {}, std::size_t(64) << 20},
      // Small tiles and a small L3: many K steps (kc 32), several blocks of C in both directions.
      {150, 230, 301, 2, -0.75, {24, 64, 32}, std::size_t(96) << 10},
      {33, 500, 64, 0, 1.0, {16, 32, 16}, std::size_t(48) << 10},
      // k = 0: C = beta C (beta 0 writes zeros over NaN).
      {45, 67, 0, 1, 0.0, {}, std::size_t(64) << 20},
      {45, 67, 0, 1, 2.0, {}, std::size_t(64) << 20},
  };
  return c;
}

TEST(HostGemmTeam, AnyTeamGivesTheBitsOfOneThreadFloat) {
  for (const Case& c : cases()) check<float>(c);
}

TEST(HostGemmTeam, AnyTeamGivesTheBitsOfOneThreadDouble) {
  for (const Case& c : cases()) check<double>(c);
}

}  // namespace
}  // namespace tilekit::test
