// The host-memory GEMM engine (backends/gpu/host_gemm.hpp) on fake devices: plain host memory,
// and three streams whose work runs only when something waits for it, in a random interleaving
// that respects each stream's order and the events. A missing event (a staging buffer refilled
// before its copy ran, a gemm before its panel arrived, a download before its gemm) makes the
// copy read the wrong data, so the result is wrong and the test fails. Odd shapes, tiny tiles
// and tiny staging buffers (many tiles, many chunks), every transpose, beta 0 on a C full of NaN,
// alpha 0, k 0, ld > cols, several devices, and device memory too small to keep every panel.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <vector>

#include "gpu/host_gemm.hpp"

namespace {

using tilekit::HostGemm;
using tilekit::index_t;
using namespace tilekit::gpu::staging;

// Every fake device's state is under one lock: a device's streams may wait for another's events
// (peer copies), and a thread waiting on its device then runs the other's work too.
std::recursive_mutex& fake_lock() {
  static std::recursive_mutex m;
  return m;
}

class FakeDevice : public Device {
 public:
  // lazy: query() never lets work run, so the engine sees every gemm still running and prefetches
  // as much as it can.
  FakeDevice(unsigned seed, std::size_t staging_bytes, int staging_count, std::size_t budget, bool lazy = false,
             bool peers = false)
      : rng_(seed), staging_bytes_(staging_bytes), budget_(budget), lazy_(lazy), peers_(peers), pool_(2) {
    for (int i = 0; i < staging_count; ++i) staging_.emplace_back(staging_bytes, 0xA5);
  }
  ~FakeDevice() override { EXPECT_EQ(allocated_.size(), 0u) << "device memory left allocated"; }

  std::size_t memory_budget() override { return budget_; }
  index_t max_matrix_elements() const override { return (index_t(1) << 31) - 1; }
  int allocations_left = 1 << 30;  // then allocate throws ResourceError, as a full device does
  int gemms_left = 1 << 30;        // then gemm throws ResourceError (a failure after C was written)
  void* allocate(std::size_t bytes) override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    if (allocations_left-- <= 0) throw tilekit::ResourceError("fake device: out of memory");
    // Filled with NaN-like bytes: a gemm that reads C with beta == 0, or a panel never uploaded, shows.
    auto* p = new unsigned char[bytes + 1];
    std::memset(p, 0xFF, bytes + 1);
    allocated_.insert(p);
    peak_ = std::max(peak_, used_ += bytes);
    sizes_[p] = bytes;
    return p;
  }
  void release(void* p) noexcept override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    auto* q = static_cast<unsigned char*>(p);
    used_ -= sizes_[q];
    allocated_.erase(q);
    delete[] q;
  }
  int staging_count() const override { return int(staging_.size()); }
  std::size_t staging_bytes() const override { return staging_bytes_; }
  void* staging(int i) override { return staging_.at(std::size_t(i)).data(); }
  Pool& pool() override { return pool_; }

  void copy_up(void* dst, const void* src, std::size_t bytes) override {
    push(Stream::up, [=] { std::memcpy(dst, src, bytes); });
    ++copies_up_;
  }
  bool peer(Device& other) override { return peers_ && &other != this; }
  void copy_from_peer(void* dst, Device& other, const void* src, std::size_t bytes, int e) override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    auto& o = static_cast<FakeDevice&>(other);
    if (o.recorded_[e] > 0) q_[int(Stream::up)].push_back(Op{nullptr, e, o.recorded_[e], &o});
    q_[int(Stream::up)].push_back(Op{[=] { std::memcpy(dst, src, bytes); }, -1, 0, nullptr});
    ++copies_peer_;
  }
  void copy_down(void* dst, const void* src, std::size_t bytes) override {
    push(Stream::down, [=] { std::memcpy(dst, src, bytes); });
  }
  void transpose(const tilekit::TransposeArgs<float>& a) override { push(Stream::up, [=] { tr(a); }); }
  void transpose(const tilekit::TransposeArgs<double>& a) override { push(Stream::up, [=] { tr(a); }); }
  void gemm(const tilekit::GemmArgs<float>& a) override { count_gemm(); push(Stream::compute, [=] { mm(a); }); }
  void gemm(const tilekit::GemmArgs<double>& a) override { count_gemm(); push(Stream::compute, [=] { mm(a); }); }
  void count_gemm() {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    if (gemms_left-- <= 0) throw tilekit::ResourceError("fake device: launch failed");
    ++gemms_;
  }

  void record(int e, Stream s) override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    const long gen = ++recorded_[e];
    q_[int(s)].push_back(Op{[this, e, gen] { fired_[e] = gen; }, -1, 0, nullptr});
  }
  void wait(Stream s, int e) override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    if (recorded_[e] > 0) q_[int(s)].push_back(Op{nullptr, e, recorded_[e], nullptr});
  }
  void host_wait(int e) override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    const long target = recorded_[e];
    while (fired_[e] < target) step();
  }
  // Lets the device progress a little (one random step), so the engine's prefetch sees gemms end.
  bool query(int e) override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    if (!lazy_ && runnable()) step();
    return fired_[e] >= recorded_[e];
  }
  void finish() override {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    while (!q_[0].empty() || !q_[1].empty() || !q_[2].empty()) step();
  }

  std::size_t peak() const { return peak_; }
  long copies_up() const { return copies_up_; }
  long gemms() const { return gemms_; }
  long copies_peer() const { return copies_peer_; }

 private:
  struct Op {
    std::function<void()> run;
    int wait_event;
    long wait_gen;
    FakeDevice* other;  // the device whose event it waits for (a peer copy's), else this one
  };
  void push(Stream s, std::function<void()> f) {
    std::lock_guard<std::recursive_mutex> l(fake_lock());
    q_[int(s)].push_back(Op{std::move(f), -1, 0, nullptr});
  }
  bool ready(const Op& h) { return h.wait_event < 0 || (h.other ? h.other : this)->fired_[h.wait_event] >= h.wait_gen; }
  bool runnable() {
    for (int s = 0; s < 3; ++s)
      if (!q_[s].empty() && ready(q_[s].front())) return true;
    return false;
  }
  // Runs the head of a random stream that can run (or, when only another device's event holds
  // them, a step of that device); throws on a deadlock.
  void step(int depth = 0) {
    int ready_s[3], n = 0;
    for (int s = 0; s < 3; ++s) {
      if (q_[s].empty()) continue;
      if (!ready(q_[s].front())) continue;
      ready_s[n++] = s;
    }
    if (n == 0) {
      for (int s = 0; s < 3 && depth < 8; ++s)
        if (!q_[s].empty() && q_[s].front().other) return q_[s].front().other->step(depth + 1);
      throw std::runtime_error("fake device: every stream waits (deadlock)");
    }
    const int s = ready_s[std::uniform_int_distribution<int>(0, n - 1)(rng_)];
    Op op = std::move(q_[s].front());
    q_[s].pop_front();
    if (op.run) op.run();
  }
  template <class T>
  static void tr(const tilekit::TransposeArgs<T>& a) {
    for (index_t r = 0; r < a.rows; ++r)
      for (index_t c = 0; c < a.cols; ++c) a.out[c * a.ld_out + r] = a.in[r * a.ld_in + c];
  }
  template <class T>
  static void mm(const tilekit::GemmArgs<T>& g) {
    for (index_t i = 0; i < g.m; ++i)
      for (index_t j = 0; j < g.n; ++j) {
        T acc = 0;
        for (index_t p = 0; p < g.k; ++p) acc += g.a[i * g.lda + p] * g.b[p * g.ldb + j];
        T& c = g.c[i * g.ldc + j];
        c = g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * c;
      }
  }

  std::mt19937 rng_;
  std::size_t staging_bytes_, budget_;
  bool lazy_, peers_;
  std::vector<std::vector<unsigned char>> staging_;
  Pool pool_;
  std::deque<Op> q_[3];
  std::map<int, long> recorded_, fired_;
  std::set<unsigned char*> allocated_;
  std::map<unsigned char*, std::size_t> sizes_;
  std::size_t used_ = 0, peak_ = 0;
  long copies_up_ = 0, gemms_ = 0, copies_peer_ = 0;
};

struct Case {
  bool ta, tb;
  index_t m, n, k;
  double alpha, beta;
  index_t pad;  // ld - (the columns the operand needs)
  index_t tile;
  int devices;
  std::size_t budget = std::size_t(1) << 30;
};

template <class T>
void check(const Case& cs, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  HostGemm<T> g;
  g.trans_a = cs.ta;
  g.trans_b = cs.tb;
  g.m = cs.m;
  g.n = cs.n;
  g.k = cs.k;
  g.alpha = T(cs.alpha);
  g.beta = T(cs.beta);
  const index_t ar = cs.ta ? cs.k : cs.m, ac = cs.ta ? cs.m : cs.k;
  const index_t br = cs.tb ? cs.n : cs.k, bc = cs.tb ? cs.k : cs.n;
  g.lda = ac + cs.pad;
  g.ldb = bc + cs.pad;
  g.ldc = cs.n + cs.pad;
  std::vector<T> a(std::size_t(std::max<index_t>(ar * g.lda, 1))), b(std::size_t(std::max<index_t>(br * g.ldb, 1)));
  std::vector<T> c(std::size_t(std::max<index_t>(cs.m * g.ldc, 1)));
  for (auto& x : a) x = T(d(rng));
  for (auto& x : b) x = T(d(rng));
  for (auto& x : c) x = cs.beta == 0 ? std::numeric_limits<T>::quiet_NaN() : T(d(rng));
  const std::vector<T> c0 = c;
  g.a = a.data();
  g.b = b.data();
  g.c = c.data();

  // Staging buffers of a few rows of the widest operand row.
  const index_t widest = std::max({cs.m, cs.n, cs.k, index_t(1)});
  std::vector<std::unique_ptr<FakeDevice>> devs;
  std::vector<Device*> ptrs;
  for (int i = 0; i < cs.devices; ++i) {
    // Two seeds in three with peer copies (the devices share the panels they all need).
    devs.push_back(std::make_unique<FakeDevice>(seed * 7 + unsigned(i), std::size_t(widest) * sizeof(T) * 3,
                                                2 + i % 3, cs.budget, seed % 2 == 1, seed % 3 != 0));
    ptrs.push_back(devs.back().get());
  }
  ASSERT_TRUE(fits_staging(g, ptrs));
  run(ptrs, g, cs.tile);

  const double eps = std::numeric_limits<T>::epsilon();
  for (index_t i = 0; i < cs.m; ++i) {
    for (index_t j = 0; j < g.ldc; ++j) {
      const T got = c[std::size_t(i * g.ldc + j)];
      if (j >= cs.n) {  // the padding is not touched
        const T was = c0[std::size_t(i * g.ldc + j)];
        ASSERT_TRUE((std::isnan(was) && std::isnan(got)) || was == got) << "padding of C written at " << i << "," << j;
        continue;
      }
      double ref = 0, mag = 0;
      if (cs.alpha != 0)
        for (index_t p = 0; p < cs.k; ++p) {
          const double x = cs.ta ? a[std::size_t(p * g.lda + i)] : a[std::size_t(i * g.lda + p)];
          const double y = cs.tb ? b[std::size_t(j * g.ldb + p)] : b[std::size_t(p * g.ldb + j)];
          ref += x * y;
          mag += std::fabs(x * y);
        }
      ref *= cs.alpha;
      mag *= std::fabs(cs.alpha);
      if (cs.beta != 0) {
        ref += cs.beta * double(c0[std::size_t(i * g.ldc + j)]);
        mag += std::fabs(cs.beta * double(c0[std::size_t(i * g.ldc + j)]));
      }
      ASSERT_LE(std::fabs(double(got) - ref), 4 * eps * (mag + 1) * (cs.k + 2))
          << "C(" << i << "," << j << ") = " << got << ", expected " << ref << " (m=" << cs.m << " n=" << cs.n
          << " k=" << cs.k << " ta=" << cs.ta << " tb=" << cs.tb << " tile=" << cs.tile << " devices=" << cs.devices
          << ")";
    }
  }
}

TEST(HostGemmEngine, SquareOrderNeedsOnePanelPerTile) {
  for (index_t r = 1; r <= 6; ++r)
    for (index_t c = 1; c <= 6; ++c) {
      const auto order = square_order(r, c);
      ASSERT_EQ(index_t(order.size()), r * c);
      std::set<std::pair<index_t, index_t>> seen(order.begin(), order.end());
      ASSERT_EQ(index_t(seen.size()), r * c);
      std::set<index_t> rows, cols;
      for (std::size_t t = 0; t < order.size(); ++t) {
        const int fresh = int(rows.insert(order[t].first).second) + int(cols.insert(order[t].second).second);
        EXPECT_LE(fresh, t == 0 ? 2 : 1) << r << "x" << c << " tile " << t;
      }
    }
}

TEST(HostGemmEngine, AutoTile) {
  EXPECT_EQ(auto_tile(1), 1);
  EXPECT_EQ(auto_tile(1000), 1000);
  EXPECT_EQ(auto_tile(2048), 1024);
  EXPECT_EQ(auto_tile(16384), 4096);
  EXPECT_EQ(auto_tile(10000), 3456);  // 3 tiles of at most 4096, rounded to 128
}

TEST(HostGemmEngine, EveryTransposeOddShapesManyTiles) {
  unsigned seed = 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int devices : {1, 2, 3})
        for (index_t tile : {1, 3, 5, 64}) {
          check<double>({ta, tb, 13, 11, 7, 1.5, 0.0, 3, tile, devices}, seed++);
          check<float>({ta, tb, 9, 17, 5, -0.5, 0.75, 0, tile, devices}, seed++);
        }
}

TEST(HostGemmEngine, SpecialScalarsAndSizes) {
  unsigned seed = 100;
  for (int devices : {1, 2}) {
    check<double>({false, false, 7, 5, 0, 1.0, 0.0, 2, 2, devices}, seed++);   // k = 0, beta = 0: zeros
    check<double>({true, false, 7, 5, 0, 1.0, 2.0, 2, 2, devices}, seed++);    // k = 0: C = beta C
    check<double>({false, true, 6, 8, 4, 0.0, -1.0, 1, 3, devices}, seed++);   // alpha = 0
    check<double>({false, false, 1, 1, 1, 2.0, 0.0, 0, 0, devices}, seed++);   // 1 x 1 x 1
    check<float>({true, true, 1, 23, 19, 1.0, 1.0, 5, 4, devices}, seed++);    // one row
    check<float>({false, true, 23, 1, 19, 1.0, 0.0, 5, 4, devices}, seed++);   // one column
    check<double>({true, true, 31, 29, 37, 0.3, 0.2, 1, 0, devices}, seed++);  // auto tile: one tile
    check<double>({false, false, 0, 5, 3, 1.0, 0.0, 1, 2, devices}, seed++);   // m = 0: nothing
  }
}

TEST(HostGemmEngine, DeviceTooSmallForEveryPanel) {
  // Room for exactly four panels of 4 x 20 doubles beside the C tiles and twins: panels are
  // evicted and uploaded again.
  const index_t m = 24, n = 24, k = 20, tile = 4;
  const std::size_t twins = std::size_t(24) * 8 * 3 * 2, ctiles = 2 * 16 * 8, slot = 4 * k * 8;
  unsigned seed = 300;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) check<double>({ta, tb, m, n, k, 1.0, 0.5, 2, tile, 1, twins + ctiles + 4 * slot}, seed++);
}

TEST(HostGemmEngine, TooLittleMemoryShrinksTilesOrRefuses) {
  HostGemm<double> g;
  g.m = g.n = g.k = 8;
  std::vector<double> a(64, 1), b(64, 1), c(64, 0);
  g.a = a.data();
  g.b = b.data();
  g.c = c.data();
  g.lda = g.ldb = g.ldc = 8;
  FakeDevice tiny(1, 64, 2, 200);
  std::vector<Device*> devs{&tiny};
  EXPECT_THROW(run(devs, g, 0), tilekit::ResourceError);
  FakeDevice small(1, 64, 2, 64 * 2 + 2 * 16 * 8 + 4 * 4 * 8 * 8);
  std::vector<Device*> devs2{&small};
  run(devs2, g, 0);  // tiles shrink to 4
  for (double x : c) EXPECT_EQ(x, 8.0);
}

// C (40 x 30) = A B with A and B all ones, k = 9: every entry of C is 9.
struct Ones {
  std::vector<float> a = std::vector<float>(40 * 9, 1), b = std::vector<float>(9 * 30, 1), c = std::vector<float>(40 * 30, 0);
  HostGemm<float> g;
  Ones() {
    g.m = 40;
    g.n = 30;
    g.k = 9;
    g.a = a.data();
    g.b = b.data();
    g.c = c.data();
    g.lda = 9;
    g.ldb = 30;
    g.ldc = 30;
  }
};

TEST(HostGemmEngine, EachPanelUploadedOnceWhenItFits) {
  Ones o;
  HostGemm<float>& g = o.g;
  std::vector<float>& c = o.c;
  // Staging holds a whole panel: one copy per panel (8 A panels, 6 B panels of tile 5).
  FakeDevice dev(5, 4096, 3, std::size_t(1) << 20);
  std::vector<Device*> devs{&dev};
  run(devs, g, 5);
  EXPECT_EQ(dev.copies_up(), 8 + 6);
  EXPECT_EQ(dev.gemms(), 8 * 6);
  for (float x : c) EXPECT_EQ(x, 9.0f);
  // The same with every gemm seen running: panels are prefetched, still each uploaded once.
  std::fill(c.begin(), c.end(), 0.0f);
  FakeDevice lazy(6, 4096, 3, std::size_t(1) << 20, true);
  std::vector<Device*> devs2{&lazy};
  run(devs2, g, 5);
  EXPECT_EQ(lazy.copies_up(), 8 + 6);
  for (float x : c) EXPECT_EQ(x, 9.0f);
}

TEST(HostGemmEngine, SharedPanelsPackedOnce) {
  // Two devices split C's 8 x 6 tile grid by tile rows: each needs its 4 A panels and all 6 B
  // panels. With peer copies the host packs every panel once (8 + 6 uploads), and each B panel
  // reaches the device that does not own it by one peer copy; without, B goes up twice.
  Ones o;
  HostGemm<float>& g = o.g;
  std::vector<float>& c = o.c;
  for (bool peers : {true, false})
    for (bool lazy : {false, true}) {
      std::fill(c.begin(), c.end(), 0.0f);
      FakeDevice d0(11, 4096, 3, std::size_t(1) << 20, lazy, peers), d1(12, 4096, 2, std::size_t(1) << 20, lazy, peers);
      std::vector<Device*> devs{&d0, &d1};
      run(devs, g, 5);
      EXPECT_EQ(d0.copies_up() + d1.copies_up(), peers ? 8 + 6 : 8 + 2 * 6) << "peers " << peers << " lazy " << lazy;
      EXPECT_EQ(d0.copies_peer() + d1.copies_peer(), peers ? 6 : 0);
      EXPECT_EQ(d0.copies_peer(), peers ? 3 : 0);  // B panels 1, 3, 5 are device 1's
      for (float x : c) ASSERT_EQ(x, 9.0f);
    }
}

TEST(HostGemmEngine, PrefetchedPanelsInChunks) {
  // Panels of several chunks each, prefetched a chunk at a time while gemms are seen running.
  unsigned seed = 501;  // odd: lazy devices
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check<double>({ta, tb, 40, 36, 30, 1.0, 0.0, 1, 6, 1}, seed);
      check<float>({ta, tb, 40, 36, 30, 0.5, 2.0, 2, 7, 2}, seed + 2);
      seed += 4;
    }
}

TEST(HostGemmEngine, ShortOfMemoryFailsBeforeWritingC) {
  HostGemm<double> g;
  g.m = g.n = 12;
  g.k = 5;
  std::vector<double> a(60, 1), b(60, 1), c(144, -7);
  g.a = a.data();
  g.b = b.data();
  g.c = c.data();
  g.lda = 5;
  g.ldb = g.ldc = 12;
  FakeDevice d0(1, 1024, 2, std::size_t(1) << 20), d1(2, 1024, 2, std::size_t(1) << 20);
  d1.allocations_left = 3;  // the second device cannot allocate its panels
  std::vector<Device*> devs{&d0, &d1};
  EXPECT_THROW(run(devs, g, 4), tilekit::ResourceError);
  for (double x : c) ASSERT_EQ(x, -7.0) << "C written by a call that failed for memory";
  // A failure after C was written is not a ResourceError (the caller must not run the call again).
  FakeDevice d2(3, 1024, 2, std::size_t(1) << 20);
  d2.gemms_left = 3;
  std::vector<Device*> devs2{&d2};
  try {
    run(devs2, g, 4);
    ADD_FAILURE() << "no error";
  } catch (const tilekit::ResourceError&) {
    ADD_FAILURE() << "ResourceError after C was written";
  } catch (const tilekit::DeviceError&) {
  }
}

TEST(HostGemmEngine, CopyRowAnyAlignmentAndLength) {
  // The packing copy (streaming stores past 256 bytes): every byte copied, none beside it written.
  std::vector<unsigned char> src(4096 + 64), dst(4096 + 64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = (unsigned char)(i * 37 + 11);
  for (std::size_t so = 0; so < 16; so += 3)
    for (std::size_t d_off = 0; d_off < 16; ++d_off)
      for (std::size_t n : {0, 1, 15, 255, 256, 257, 319, 320, 1000, 4000}) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        copy_row(dst.data() + 8 + d_off, src.data() + so, n);
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= 8 + d_off && i < 8 + d_off + n;
          ASSERT_EQ(dst[i], inside ? src[so + i - 8 - d_off] : 0xEE)
              << "byte " << i << ", src offset " << so << ", dst offset " << d_off << ", " << n << " bytes";
        }
      }
}

TEST(HostGemmEngine, PoolCoversEveryIndexOnce) {
  Pool pool(4);
  for (index_t n : {1, 3, 4, 5, 1000}) {
    std::vector<int> hits(std::size_t(n), 0);
    pool.run(n, std::size_t(1) << 20, [&](index_t a, index_t e) {
      for (index_t i = a; i < e; ++i) ++hits[std::size_t(i)];
    });
    for (int h : hits) EXPECT_EQ(h, 1);
  }
  EXPECT_THROW(pool.run(8, std::size_t(1) << 20,
                        [](index_t a, index_t) {
                          if (a > 0) throw std::runtime_error("worker failed");
                        }),
               std::runtime_error);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.run(8, std::size_t(1) << 20,
                        [&](index_t a, index_t) {
                          if (a == 0) throw std::runtime_error("caller's part failed");
                          std::this_thread::sleep_for(std::chrono::milliseconds(20));
                          ++ran;
                        }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 3);  // the workers' parts finished before run returned
}

}  // namespace
