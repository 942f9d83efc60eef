// The tile layer itself (include/tilekit/tile.hpp) on every backend this test program can
// launch on, and the checking executor catching broken kernels. Compiled as C++ into
// tilekit_tests (serial, openmp, kokkos) and as CUDA into tilekit_tile_tests_cuda.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/portable/conv2d_tiled.hpp"
#include "common/portable/gemm_tiled.hpp"
#include "common/portable/transpose_tiled.hpp"
#include "tilekit/tile.hpp"
#include "tilekit/tilekit.hpp"
#include "tilekit/verify.hpp"

namespace tk = tilekit;
namespace tile = tilekit::tile;

namespace {

// Each tile reverses its block of `width` elements through scratch: what lane x writes, lane
// width - 1 - x reads, so the result is right only if the barrier between them holds.
struct ReverseBlocks {
  float* x;
  tk::index_t n;
  int width;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto buf = tile::scratch<float>(t, 1, width);
    const tk::index_t base = t.x() * width;
    t.for_lanes([&](tile::Lane l) { buf(0, l.x) = base + l.x < n ? x[base + l.x] : -1.f; });
    t.barrier();
    t.for_lanes([&](tile::Lane l) {
      if (base + l.x < n) x[base + l.x] = buf(0, width - 1 - l.x);
    });
  }
};

// The same with its lanes fixed at compile time (kLanes): launches with other lanes are refused.
struct FixedReverse : ReverseBlocks {
  static constexpr tile::Dim2 kLanes{8, 1};
};

// Lane state across many barriers: each of `phases` phases adds the neighbour's previous value.
struct ManyBarriers {
  double* out;
  int phases;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    const int nl = t.lanes().count();
    auto buf = tile::scratch<double>(t, 1, nl);
    auto acc = tile::lane_state<double>(t);
    t.for_lanes([&](tile::Lane l) { acc[l] = double(l.id); });
    for (int p = 0; p < phases; ++p) {
      t.for_lanes([&](tile::Lane l) { buf(0, l.id) = acc[l]; });
      t.barrier();
      t.for_lanes([&](tile::Lane l) { acc[l] += 0.5 * buf(0, (l.id + 1) % nl); });
      t.barrier();
    }
    t.for_lanes([&](tile::Lane l) { out[t.x() * nl + l.id] = acc[l]; });
  }
};
// The same on the host, for the expected values.
std::vector<double> many_barriers_expected(int lanes, int phases) {
  std::vector<double> a(std::size_t(lanes), 0.0);
  for (int i = 0; i < lanes; ++i) a[std::size_t(i)] = i;
  for (int p = 0; p < phases; ++p) {
    const std::vector<double> b = a;
    for (int i = 0; i < lanes; ++i) a[std::size_t(i)] += 0.5 * b[std::size_t((i + 1) % lanes)];
  }
  return a;
}

// Fills all of its declared scratch, then every lane writes the sum of one row of it.
struct FillScratch {
  float* out;
  int rows, cols;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto s = tile::scratch<float>(t, rows, cols);
    t.for_each(rows, cols, [&](int r, int c) { s(r, c) = float(r + c); });
    t.barrier();
    t.for_lanes([&](tile::Lane l) {
      if (l.id >= rows) return;
      float sum = 0;
      for (int c = 0; c < cols; ++c) sum += s(l.id, c);
      out[t.x() * rows + l.id] = sum;
    });
  }
};

// load(): a block of a padded matrix at an offset that hangs over every border, zero outside.
struct LoadBlock {
  tile::GlobalView<float> src;
  float* out;  // tiles x (rows x cols)
  int rows, cols;
  tk::index_t row0, col0;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto s = tile::scratch<float>(t, rows, cols, 1);
    t.load(s, src, row0 + t.x(), col0 - t.x());
    t.barrier();
    t.for_each(rows, cols, [&](int r, int c) { out[(t.x() * rows + r) * cols + c] = s(r, c); });
  }
};

// block_walk(): `steps` blocks from a corner that hangs over the top-left border, moving by
// (dr, dc) and out over the bottom-right one; each block is copied out as loaded.
struct WalkBlocks {
  tile::GlobalView<float> src;
  float* out;  // tiles x steps x (rows x cols)
  int rows, cols, steps;
  tk::index_t row0, col0, dr, dc;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto s = tile::scratch<float>(t, rows, cols);
    auto w = tile::block_walk(t, s, src, row0 + t.x(), col0, dr, dc);
    for (int i = 0; i < steps; ++i, w.next()) {
      t.load(w);
      t.barrier();
      float* o = out + (t.x() * steps + i) * rows * cols;
      t.for_each(rows, cols, [&](int r, int c) { o[r * cols + c] = s(r, c); });
      t.barrier();
    }
  }
};


// Atomics: every lane adds into scratch bins (several lanes per bin) and into counters in memory
// that every tile updates; min/max over lane ids; the bins go out after a barrier.
struct Atomics {
  int* bins_out;        // tiles x kBins
  int* icount;          // 1
  float* fsum;          // 1
  double* dsum;         // 1
  long long* lsum;      // 1
  unsigned long long* umax;  // 1
  int* imin;            // 1
  unsigned* fetched;    // tiles x lanes: old values returned by the scratch atomic
  static constexpr int kBins = 5;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto bins = tile::scratch<int>(t, 1, kBins);
    auto fb = tile::scratch<float>(t, 1, kBins);
    auto db = tile::scratch<double>(t, 1, kBins);
    const int nl = t.lanes().count();
    t.for_each(kBins, [&](int b) {
      bins(0, b) = 0;
      fb(0, b) = 0.f;
      db(0, b) = 0.0;
    });
    t.barrier();
    t.for_lanes([&](tile::Lane l) {
      const int old = tile::atomic_add(t, bins, 0, l.id % kBins, 1);
      fetched[t.x() * nl + l.id] = unsigned(old);
      tile::atomic_add(t, fb, 0, l.id % kBins, 0.5f);
      tile::atomic_add(t, db, 0, l.id % kBins, 0.25);
      tile::atomic_add(t, icount, 1);
      tile::atomic_add(t, fsum, 0.5f);
      tile::atomic_add(t, dsum, 0.25);
      tile::atomic_add(t, lsum, -3LL);
      tile::atomic_max(t, umax, (unsigned long long)(t.x() * 1000 + l.id));
      tile::atomic_min(t, imin, int(-(t.x() * 1000 + l.id)));
    });
    t.barrier();
    t.for_each(kBins, [&](int b) {
      // 0.5 and 0.25 sums of at most a few hundred lanes are exact: compare them with the count
      const int c = bins(0, b);
      bins_out[t.x() * kBins + b] = (float(fb(0, b)) == 0.5f * float(c) && double(db(0, b)) == 0.25 * c) ? c : -1;
    });
  }
};

// Collectives over odd lane counts: the lane values are (id * 7919) % 1000 - 500 (ints, and the
// same as floats and doubles: exact sums), reduced to every lane and to lane 0, and scanned; three
// collectives in a row on each value type (the GPU executor alternates its slot sets).
struct Collectives {
  int* out;  // tiles x lanes x 8
  double* dout;  // tiles x 4
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    const int nl = t.lanes().count();
    auto x = tile::lane_state<int>(t);
    auto y = tile::lane_state<int>(t);
    auto d = tile::lane_state<double>(t);
    auto f = tile::lane_state<float>(t);
    t.for_lanes([&](tile::Lane l) {
      x[l] = int((l.id * 7919 + int(t.x()) * 13) % 1000) - 500;
      d[l] = double(x[l]);
      f[l] = float(x[l]);
    });
    const int sum = tile::reduce(t, x);
    const int mx = tile::reduce(t, x, tile::Max{});
    const int mn = tile::reduce(t, x, tile::Min{});
    const double dsum = tile::reduce(t, d);
    const float fmax = tile::reduce(t, f, tile::Max{});
    tile::reduce(t, d, tile::Min{}, [&](double m) { dout[t.x() * 4 + 2] = m; });
    const int total = tile::inclusive_scan(t, x, y);
    int* o = out + (t.x() * nl) * 8;
    t.for_lanes([&](tile::Lane l) {
      o[l.id * 8 + 0] = sum;
      o[l.id * 8 + 1] = mx;
      o[l.id * 8 + 2] = mn;
      o[l.id * 8 + 3] = y[l];
      o[l.id * 8 + 4] = total;
    });
    const int ex_total = tile::exclusive_scan(t, x, x);  // in place
    auto m = tile::lane_state<int>(t);
    t.for_lanes([&](tile::Lane l) { m[l] = o[l.id * 8 + 0] == sum ? int(l.id % 3) : 0; });
    const int max_scan = tile::inclusive_scan(t, m, m, tile::Max{});
    t.for_lanes([&](tile::Lane l) {
      o[l.id * 8 + 5] = x[l];
      o[l.id * 8 + 6] = ex_total;
      o[l.id * 8 + 7] = m[l] * 1000 + max_scan;
    });
    t.for_lanes({1, 1}, [&](tile::Lane) {
      dout[t.x() * 4 + 0] = dsum;
      dout[t.x() * 4 + 1] = double(fmax);
    });
  }
};

// Scans with the lanes compiled in (kLanes: on GPUs the loop over the warps' totals unrolls) on
// every value type: ints, unsigned and floats (on CUDA summed with the shuffle's own predicate)
// and doubles; whole warps, a partial last warp, 2-D lanes. The values make every sum exact
// (floats: halves, doubles: quarters), so any order of additions gives the same result.
template <int kX, int kY>
struct CompiledLaneScans {
  static constexpr tile::Dim2 kLanes{kX, kY};
  static constexpr int kCount = kX * kY;
  static int value(int lane, tk::index_t tile) { return int((lane * 7919 + int(tile) * 13) % 1000) - 500; }
  int* iout;  // per tile: kCount lanes' scans, then the total (kCount + 1 values)
  unsigned* uout;
  float* fout;
  double* dout;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto i = tile::lane_state<int>(t);
    auto u = tile::lane_state<unsigned>(t);
    auto f = tile::lane_state<float>(t);
    auto d = tile::lane_state<double>(t);
    t.for_lanes([&](tile::Lane l) {
      const int v = int((l.id * 7919 + int(t.x()) * 13) % 1000) - 500;
      i[l] = v;
      u[l] = unsigned(v + 500);
      f[l] = float(v) * 0.5f;
      d[l] = double(v) * 0.25;
    });
    const int it = tile::inclusive_scan(t, i, i);
    const unsigned ut = tile::exclusive_scan(t, u, u);
    const float ft = tile::inclusive_scan(t, f, f);
    const double dt = tile::exclusive_scan(t, d, d);
    const tk::index_t base = t.x() * (kCount + 1);
    t.for_lanes([&](tile::Lane l) {
      iout[base + l.id] = i[l];
      uout[base + l.id] = u[l];
      fout[base + l.id] = f[l];
      dout[base + l.id] = d[l];
    });
    t.for_lanes({1, 1}, [&](tile::Lane) {
      iout[base + kCount] = it;
      uout[base + kCount] = ut;
      fout[base + kCount] = ft;
      dout[base + kCount] = dt;
    });
  }
};

// tile::histogram over a tile's share of the keys (some outside the bins: skipped).
struct Histogram {
  const int* keys;
  unsigned* global;  // nbins
  tk::index_t n;
  int nbins, per_tile;
  TILEKIT_TILE_FN auto scratch() const { return tile::array<unsigned>(1, nbins); }
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto bins = scratch()(t);
    const tk::index_t base = t.x() * per_tile;
    tile::histogram(t, bins, per_tile, [&](int i) { return base + i < n ? keys[base + i] : -1; }, global);
  }
};

std::vector<std::string> launchable_available() {
  std::vector<std::string> out;
  for (const std::string& b : tile::launchable_backends())
    if (tk::find_backend(b) && tk::find_backend(b)->available()) out.push_back(b);
  return out;
}

class TileLayer : public ::testing::TestWithParam<std::string> {
 protected:
  tk::Backend& be() { return tk::backend(GetParam()); }
};

TEST_P(TileLayer, BarrierOrdersScratchOnOddGrid) {
  for (const int width : {1, 7, 32, 97}) {
    const tk::index_t n = 1009;  // prime: the last tile is partial
    std::vector<float> host(static_cast<std::size_t>(n));
    for (tk::index_t i = 0; i < n; ++i) host[std::size_t(i)] = float(i);
    tk::Matrix<float> m(be(), 1, n);
    m.upload(host);
    const tile::Shape s{(n + width - 1) / width, 1, {width, 1}, tile::scratch_bytes<float>(1, width), "reverse"};
    tile::launch(be(), s, ReverseBlocks{m.data(), n, width});
    const std::vector<float> got = m.download();
    for (tk::index_t i = 0; i < n; ++i) {
      const tk::index_t base = i / width * width, j = base + (width - 1 - (i - base));
      const float want = j < n ? float(j) : -1.f;
      ASSERT_EQ(got[std::size_t(i)], want) << "width " << width << " element " << i;
    }
  }
}

TEST_P(TileLayer, LaneStateSurvivesManyBarriers) {
  for (const int lanes : {1, 64, 256}) {
    const int tiles = 3, phases = 40;
    tk::Matrix<double> out(be(), tiles, lanes);
    out.upload(std::vector<double>(std::size_t(tiles * lanes), std::nan("")));
    tile::launch(be(), {tiles, 1, {lanes, 1}, tile::scratch_bytes<double>(1, lanes), "many_barriers"},
                 ManyBarriers{out.data(), phases});
    const std::vector<double> got = out.download(), want = many_barriers_expected(lanes, phases);
    for (int t = 0; t < tiles; ++t)
      for (int l = 0; l < lanes; ++l)
        ASSERT_DOUBLE_EQ(got[std::size_t(t * lanes + l)], want[std::size_t(l)]) << lanes << " lanes, tile " << t;
  }
}

TEST_P(TileLayer, MostLanesTheDeviceRuns) {
  const int most = be().info().max_tile_lanes > 0 ? be().info().max_tile_lanes : 4096;
  const int phases = 3;
  tk::Matrix<double> out(be(), 2, most);
  tile::launch(be(), {2, 1, {most, 1}, tile::scratch_bytes<double>(1, most), "most_lanes"},
               ManyBarriers{out.data(), phases});
  const std::vector<double> got = out.download(), want = many_barriers_expected(most, phases);
  for (int l = 0; l < most; ++l) ASSERT_DOUBLE_EQ(got[std::size_t(most + l)], want[std::size_t(l)]);
  if (be().info().max_tile_lanes > 0) {
    out.upload(std::vector<double>(std::size_t(2 * most), 7.0));
    try {
      tile::launch(be(), {2, 1, {most + 1, 1}, tile::scratch_bytes<double>(1, most + 1), "too_many_lanes"},
                   ManyBarriers{out.data(), phases});
      FAIL() << "a tile of " << most + 1 << " lanes was accepted";
    } catch (const tk::Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(most + 1)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(most)), std::string::npos) << e.what();
    }
    for (double v : out.download()) ASSERT_EQ(v, 7.0);  // nothing written
  }
}

TEST_P(TileLayer, ScratchAtTheLimitRunsAndOnePastIsRefused) {
  const std::size_t limit = be().info().scratch_bytes;
  ASSERT_GT(limit, 0u);
  const int cols = 16, rows = int(limit / (sizeof(float) * cols));  // 64-byte rows: exactly the limit when it is
  const std::size_t bytes = tile::scratch_bytes<float>(rows, cols);
  ASSERT_LE(bytes, limit);
  tk::Matrix<float> out(be(), 2, rows);
  out.upload(std::vector<float>(std::size_t(2 * rows), 0.f));  // the kernel writes part of it
  const int lanes = std::min(rows, be().info().max_tile_lanes > 0 ? be().info().max_tile_lanes : rows);
  tile::launch(be(), {2, 1, {lanes, 1}, bytes, "scratch_limit"}, FillScratch{out.data(), std::min(rows, lanes), cols});
  const std::vector<float> got = out.download();
  for (int r = 0; r < std::min(rows, lanes); ++r) ASSERT_EQ(got[std::size_t(r)], float(cols * r + cols * (cols - 1) / 2));

  out.upload(std::vector<float>(std::size_t(2 * rows), 3.f));
  try {
    tile::launch(be(), {2, 1, {lanes, 1}, limit + 1, "scratch_past_limit"}, FillScratch{out.data(), 1, 1});
    FAIL() << "scratch of " << limit + 1 << " bytes was accepted";
  } catch (const tk::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find(std::to_string(limit + 1)), std::string::npos) << w;
    EXPECT_NE(w.find(std::to_string(limit)), std::string::npos) << w;
  }
  for (float v : out.download()) ASSERT_EQ(v, 3.f);  // nothing written
}

TEST_P(TileLayer, LoadZeroFillsOutsideAPaddedMatrix) {
  const tk::index_t rows = 13, cols = 11, ld = 16;
  std::vector<float> host(std::size_t(rows * ld), std::nanf(""));  // padding must never be read
  for (tk::index_t i = 0; i < rows; ++i)
    for (tk::index_t j = 0; j < cols; ++j) host[std::size_t(i * ld + j)] = float(i * 100 + j);
  tk::Matrix<float> src(be(), rows, cols, ld);
  src.upload(host);
  const int br = 9, bc = 12, tiles = 5;
  const tk::index_t row0 = -3, col0 = 2;
  tk::Matrix<float> out(be(), tiles * br, bc);
  tile::launch(be(), {tiles, 1, {8, 4}, tile::scratch_bytes<float>(br, bc, 1), "load"},
               LoadBlock{{src.data(), rows, cols, ld}, out.data(), br, bc, row0, col0});
  const std::vector<float> got = out.download();
  for (int t = 0; t < tiles; ++t)
    for (int r = 0; r < br; ++r)
      for (int c = 0; c < bc; ++c) {
        const tk::index_t i = row0 + t + r, j = col0 - t + c;
        const float want = i >= 0 && i < rows && j >= 0 && j < cols ? float(i * 100 + j) : 0.f;
        ASSERT_EQ(got[std::size_t((t * br + r) * bc + c)], want) << "tile " << t << " (" << r << ", " << c << ")";
      }
}

// Blocks shaped like the lane grid (the GPU executors' per-lane form) and not (the general one).
TEST_P(TileLayer, BlockWalkVisitsEveryBlockZeroOutside) {
  const tk::index_t rows = 23, cols = 19, ld = 24;
  std::vector<float> host(std::size_t(rows * ld), std::nanf(""));
  for (tk::index_t i = 0; i < rows; ++i)
    for (tk::index_t j = 0; j < cols; ++j) host[std::size_t(i * ld + j)] = float(i * 100 + j);
  tk::Matrix<float> src(be(), rows, cols, ld);
  src.upload(host);
  struct Case {
    int br, bc;
    tk::index_t dr, dc;
  };
  for (const Case& k : {Case{4, 8, 3, 2}, Case{4, 8, 0, 8}, Case{4, 8, 4, 0}, Case{9, 12, 5, 3}, Case{3, 5, 0, 5}}) {
    const int tiles = 3, steps = 8;
    const tk::index_t row0 = -5, col0 = -7;
    tk::Matrix<float> out(be(), tiles * steps * k.br, k.bc);
    tile::launch(be(), {tiles, 1, {8, 4}, tile::scratch_bytes<float>(k.br, k.bc), "walk"},
                 WalkBlocks{{src.data(), rows, cols, ld}, out.data(), k.br, k.bc, steps, row0, col0, k.dr, k.dc});
    const std::vector<float> got = out.download();
    for (int t = 0; t < tiles; ++t)
      for (int s = 0; s < steps; ++s)
        for (int r = 0; r < k.br; ++r)
          for (int c = 0; c < k.bc; ++c) {
            const tk::index_t i = row0 + t + s * k.dr + r, j = col0 + s * k.dc + c;
            const float want = i >= 0 && i < rows && j >= 0 && j < cols ? float(i * 100 + j) : 0.f;
            ASSERT_EQ(got[std::size_t(((t * steps + s) * k.br + r) * k.bc + c)], want)
                << k.br << "x" << k.bc << " step (" << k.dr << ", " << k.dc << "): tile " << t << ", block " << s
                << " (" << r << ", " << c << ")";
          }
  }
}

TEST_P(TileLayer, RunsAfterTheBackendsOwnOperationsWithoutASynchronize) {
  // transpose (tilekit's operation) then a tile kernel on its output, on the same queue.
  const tk::index_t n = 257;
  std::vector<float> host(static_cast<std::size_t>(n * 3));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = float(i);
  tk::Matrix<float> in(be(), 3, n), out(be(), n, 3);
  in.upload(host);
  tk::transpose(tk::Variant::naive, in, out);
  tile::launch(be(), {(3 * n + 31) / 32, 1, {32, 1}, tile::scratch_bytes<float>(1, 32), "after_op"},
               ReverseBlocks{out.data(), 3 * n, 32});
  const std::vector<float> got = out.download();
  for (tk::index_t q = 0; q < 3 * n; ++q) {
    const tk::index_t base = q / 32 * 32, s = base + 31 - (q - base);
    const float want = s < 3 * n ? float((s % 3) * n + s / 3) : -1.f;
    ASSERT_EQ(got[std::size_t(q)], want) << q;
  }
}

TEST_P(TileLayer, BadShapesAreRefusedBeforeAnythingRuns) {
  tk::Matrix<float> m(be(), 1, 8);
  m.upload(std::vector<float>(8, 5.f));
  const ReverseBlocks k{m.data(), 8, 8};
  EXPECT_THROW(tile::launch(be(), {-1, 1, {8, 1}, 64, "neg"}, k), tk::Error);
  EXPECT_THROW(tile::launch(be(), {1, 1, {0, 1}, 64, "zero_lanes"}, k), tk::Error);
  EXPECT_THROW(tile::launch(be(), {1LL << 40, 1LL << 40, {8, 1}, 64, "overflow"}, k), tk::Error);
  tile::launch(be(), {0, 1, {8, 1}, 64, "empty"}, k);  // an empty grid runs nothing
  EXPECT_THROW(tile::launch(be(), {1, 1, {4, 2}, 64, "not_its_lanes"}, FixedReverse{k}), tk::Error);
  for (float v : m.download()) ASSERT_EQ(v, 5.f);
  tile::launch(be(), {1, 1, {8, 1}, 64, "its_lanes"}, FixedReverse{k});
  const std::vector<float> got = m.download();
  for (float v : got) ASSERT_EQ(v, 5.f);  // reversed fives
}


TEST_P(TileLayer, AtomicsOnScratchAndMemory) {
  for (const tile::Dim2 lanes : {tile::Dim2{1, 1}, tile::Dim2{37, 1}, tile::Dim2{16, 8}}) {
    const int tiles = 29, nl = lanes.count();
    tk::Matrix<int> bins(be(), tiles, Atomics::kBins), icount(be(), 1, 1), imin(be(), 1, 1);
    tk::Matrix<float> fsum(be(), 1, 1);
    tk::Matrix<double> dsum(be(), 1, 1);
    tk::Matrix<long long> lsum(be(), 1, 1);
    tk::Matrix<unsigned long long> umax(be(), 1, 1);
    tk::Matrix<unsigned> fetched(be(), tiles, nl);
    icount.upload({5});
    imin.upload({7});
    fsum.upload({1.f});
    dsum.upload({2.0});
    lsum.upload({10});
    umax.upload({3});
    tile::launch(be(), tile::Shape::grid(tiles).with_lanes(lanes.x, lanes.y).with_scratch(4096).named("atomics"),
                 Atomics{bins.data(), icount.data(), fsum.data(), dsum.data(), lsum.data(), umax.data(),
                         imin.data(), fetched.data()});
    const long long all = tiles * nl;
    const std::vector<int> b = bins.download();
    for (int t = 0; t < tiles; ++t)
      for (int k = 0; k < Atomics::kBins; ++k)
        ASSERT_EQ(b[std::size_t(t * Atomics::kBins + k)], (nl - k + Atomics::kBins - 1) / Atomics::kBins)
            << nl << " lanes, tile " << t << " bin " << k;
    EXPECT_EQ(icount.download()[0], 5 + all);
    EXPECT_EQ(fsum.download()[0], 1.f + 0.5f * float(all));
    EXPECT_EQ(dsum.download()[0], 2.0 + 0.25 * double(all));
    EXPECT_EQ(lsum.download()[0], 10 - 3 * all);
    EXPECT_EQ(umax.download()[0], (unsigned long long)((tiles - 1) * 1000 + nl - 1));
    EXPECT_EQ(imin.download()[0], -((tiles - 1) * 1000 + nl - 1));
    // The old values a bin's lanes got back are 0, 1, ..., in some order.
    const std::vector<unsigned> f = fetched.download();
    for (int t = 0; t < tiles; ++t)
      for (int k = 0; k < Atomics::kBins; ++k) {
        std::vector<unsigned> got;
        for (int l = k; l < nl; l += Atomics::kBins) got.push_back(f[std::size_t(t * nl + l)]);
        std::sort(got.begin(), got.end());
        for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], unsigned(i)) << "tile " << t << " bin " << k;
      }
  }
}

TEST_P(TileLayer, CollectivesOverOddLaneCounts) {
  const int most = be().info().max_tile_lanes > 0 ? be().info().max_tile_lanes : 1024;
  for (const tile::Dim2 lanes : {tile::Dim2{1, 1}, tile::Dim2{7, 1}, tile::Dim2{32, 1}, tile::Dim2{33, 1},
                                 tile::Dim2{64, 1}, tile::Dim2{100, 1}, tile::Dim2{8, 4}, tile::Dim2{33, 3},
                                 tile::Dim2{most, 1}}) {
    const int tiles = 5, nl = lanes.count();
    tk::Matrix<int> out(be(), tiles, nl * 8);
    tk::Matrix<double> dout(be(), tiles, 4);
    tile::launch(be(), {tiles, 1, lanes, 0, "collectives"}, Collectives{out.data(), dout.data()});
    const std::vector<int> o = out.download();
    const std::vector<double> d = dout.download();
    for (int t = 0; t < tiles; ++t) {
      std::vector<int> x(std::size_t(nl), 0);
      for (int l = 0; l < nl; ++l) x[std::size_t(l)] = (l * 7919 + t * 13) % 1000 - 500;
      const int sum = std::accumulate(x.begin(), x.end(), 0);
      const int mx = *std::max_element(x.begin(), x.end()), mn = *std::min_element(x.begin(), x.end());
      int run = 0, runmax = 0;
      for (int l = 0; l < nl; ++l) {
        const int* r = &o[std::size_t((t * nl + l) * 8)];
        const std::string where = std::to_string(lanes.x) + "x" + std::to_string(lanes.y) + " lanes, tile " +
                                  std::to_string(t) + ", lane " + std::to_string(l);
        ASSERT_EQ(r[0], sum) << where;
        ASSERT_EQ(r[1], mx) << where;
        ASSERT_EQ(r[2], mn) << where;
        ASSERT_EQ(r[5], run) << where << " (exclusive scan)";
        run += x[std::size_t(l)];
        ASSERT_EQ(r[3], run) << where << " (inclusive scan)";
        ASSERT_EQ(r[4], sum) << where;
        ASSERT_EQ(r[6], sum) << where;
        runmax = std::max(runmax, l % 3);
        ASSERT_EQ(r[7], runmax * 1000 + std::min(nl - 1, 2)) << where << " (max scan)";
      }
      ASSERT_EQ(d[std::size_t(t * 4 + 0)], double(sum)) << t;
      ASSERT_EQ(d[std::size_t(t * 4 + 1)], double(mx)) << t;
      ASSERT_EQ(d[std::size_t(t * 4 + 2)], double(mn)) << t;
    }
  }
}

// Output arrays for check_compiled_lane_scans: on a backend, or in host memory for the checker.
template <class T>
struct BackendArray {
  std::shared_ptr<tk::Matrix<T>> m;
  T* data() { return m->data(); }
  std::vector<T> get() const { return m->download(); }
};
template <class T>
struct HostArray {
  std::shared_ptr<std::vector<T>> v;
  T* data() { return v->data(); }
  std::vector<T> get() const { return *v; }
};

// Runs CompiledLaneScans<kX, kY> on 3 tiles through `run` (a launch, or the checker on host
// memory) and compares every lane's scans and the totals with a serial loop.
template <int kX, int kY, class Run, class Make>
void check_compiled_lane_scans(const Run& run, const Make& make) {
  using K = CompiledLaneScans<kX, kY>;
  const int tiles = 3, per = K::kCount + 1;
  auto io = make(int{}, tiles * per);
  auto uo = make(unsigned{}, tiles * per);
  auto fo = make(float{}, tiles * per);
  auto dox = make(double{}, tiles * per);
  run(tile::Shape::grid(tiles).with_lanes(kX, kY).named("compiled_lane_scans"),
      K{io.data(), uo.data(), fo.data(), dox.data()});
  const std::vector<int> i = io.get();
  const std::vector<unsigned> u = uo.get();
  const std::vector<float> f = fo.get();
  const std::vector<double> d = dox.get();
  for (int t = 0; t < tiles; ++t) {
    long long isum = 0, usum = 0;
    double fsum = 0, dsum = 0;
    for (int l = 0; l < K::kCount; ++l) {
      const std::size_t at = std::size_t(t * per + l);
      const std::string where = std::to_string(kX) + "x" + std::to_string(kY) + " lanes, tile " + std::to_string(t) +
                                ", lane " + std::to_string(l);
      const int v = K::value(l, t);
      ASSERT_EQ(u[at], unsigned(usum)) << where << " (unsigned exclusive)";
      ASSERT_EQ(d[at], dsum) << where << " (double exclusive)";
      isum += v;
      usum += v + 500;
      fsum += v * 0.5;
      dsum += v * 0.25;
      ASSERT_EQ(i[at], int(isum)) << where << " (int inclusive)";
      ASSERT_EQ(double(f[at]), fsum) << where << " (float inclusive)";
    }
    const std::size_t tot = std::size_t(t * per + K::kCount);
    ASSERT_EQ(i[tot], int(isum)) << "tile " << t;
    ASSERT_EQ(u[tot], unsigned(usum)) << "tile " << t;
    ASSERT_EQ(double(f[tot]), fsum) << "tile " << t;
    ASSERT_EQ(d[tot], dsum) << "tile " << t;
  }
}
template <class Run, class Make>
void check_compiled_lane_scans_all(const Run& run, const Make& make) {
  check_compiled_lane_scans<1, 1>(run, make);
  check_compiled_lane_scans<32, 1>(run, make);
  check_compiled_lane_scans<37, 1>(run, make);
  check_compiled_lane_scans<256, 1>(run, make);
  check_compiled_lane_scans<8, 4>(run, make);
  check_compiled_lane_scans<33, 3>(run, make);
  check_compiled_lane_scans<100, 10>(run, make);
}

TEST_P(TileLayer, ScansWithCompiledLanes) {
  tk::Backend& b = be();
  const auto make = [&b](auto zero, int n) {
    using T = decltype(zero);
    return BackendArray<T>{std::make_shared<tk::Matrix<T>>(b, 1, n)};
  };
  check_compiled_lane_scans_all([&b](const tile::Shape& s, const auto& k) { tile::launch(b, s, k); }, make);
}

TEST(TileCheck, ScansWithCompiledLanes) {
  const auto make = [](auto zero, int n) {
    using T = decltype(zero);
    return HostArray<T>{std::make_shared<std::vector<T>>(std::size_t(n))};
  };
  check_compiled_lane_scans_all([](const tile::Shape& s, const auto& k) { tile::check(s, k); }, make);
}

TEST_P(TileLayer, PrivatizedHistogram) {
  const tk::index_t n = 100003;  // prime: the last tile is partial
  std::vector<int> keys(static_cast<std::size_t>(n));
  std::mt19937 g(5);
  for (int& k : keys) k = int(g() % 300) - 20;  // some below and above the bins: skipped
  for (const int nbins : {1, 97, 256}) {
    std::vector<unsigned> want(std::size_t(nbins), 0);
    for (int k : keys)
      if (k >= 0 && k < nbins) ++want[std::size_t(k)];
    tk::Matrix<int> mk(be(), 1, n);
    mk.upload(keys);
    tk::Matrix<unsigned> hist(be(), 1, nbins);
    hist.upload(std::vector<unsigned>(std::size_t(nbins), 0));
    const int per_tile = 4099;
    tile::launch(be(), tile::Shape::grid((n + per_tile - 1) / per_tile).with_lanes(128).named("histogram"),
                 Histogram{mk.data(), hist.data(), n, nbins, per_tile});
    EXPECT_EQ(hist.download(), want) << nbins << " bins";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TileLayer, ::testing::ValuesIn(launchable_available()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TileLayer);

// ---- the checking executor: tilekit's own tiled kernels pass, broken kernels are caught.
#if !defined(__CUDACC__)  // host memory only: the plain C++ build runs these

std::mt19937_64& rng() {
  static std::mt19937_64 g(20261123);
  return g;
}
std::vector<double> random_values(std::size_t n) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng());
  return v;
}

// GPU shapes (a lane per element) and CPU shapes (compiled tiles: a lane sums 8 rows, or as
// many as the tile has), on sizes that leave partial tiles and partial lane groups.
template <bool kGpuShapes>
void check_tiled_gemm(tk::index_t m, tk::index_t n, tk::index_t k, const tk::TileConfig& t) {
  const std::vector<double> a = random_values(std::size_t(m * k)), b = random_values(std::size_t(k * n));
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), c(std::size_t(m * n), std::nanf(""));
  const tk::GemmArgs<float> g{m, n, k, 1.f, af.data(), k, bf.data(), n, 0.f, c.data(), n};
  tk::portable::gemm_tiled<kGpuShapes>(g, t, [](const tile::Shape& s, const auto& kern) { tile::check(s, kern); });
  for (tk::index_t i = 0; i < m; ++i)
    for (tk::index_t j = 0; j < n; ++j) {
      double want = 0;
      for (tk::index_t p = 0; p < k; ++p) want += double(af[std::size_t(i * k + p)]) * bf[std::size_t(p * n + j)];
      ASSERT_NEAR(c[std::size_t(i * n + j)], want, 1e-4)
          << (kGpuShapes ? "gpu " : "cpu ") << t.str() << " (" << i << ", " << j << ")";
    }
}

TEST(TileCheck, TiledGemmPassesOnOddShapesAndTiles) {
  for (const tk::TileConfig t : {tk::TileConfig{16, 16, 16}, tk::TileConfig{7, 5, 3}, tk::TileConfig{8, 8, 8}}) {
    check_tiled_gemm<true>(23, 19, 29, t);
    check_tiled_gemm<false>(23, 19, 29, t);
  }
  for (const int s : {64, 32})
    check_tiled_gemm<false>(71, 67, 131, tk::TileConfig{s, s, s});  // 8-row lanes, several depth steps
}

TEST(TileCheck, TiledTransposeAndConv2dPass) {
  const tk::index_t rows = 37, cols = 29;
  const std::vector<double> x = random_values(std::size_t(rows * cols));
  std::vector<float> in(x.begin(), x.end()), out(std::size_t(rows * cols), std::nanf(""));
  tk::portable::transpose_tiled(tk::TransposeArgs<float>{rows, cols, in.data(), cols, out.data(), rows},
                                tk::TileConfig{8, 16, 0}, {16, 4},
                                [](const tile::Shape& s, const auto& kern) { tile::check(s, kern); });
  for (tk::index_t i = 0; i < rows; ++i)
    for (tk::index_t j = 0; j < cols; ++j) ASSERT_EQ(out[std::size_t(j * rows + i)], in[std::size_t(i * cols + j)]);

  for (const int r : {1, 5, 11}) {
    const std::vector<double> f = random_values(std::size_t(r * r));
    std::vector<float> ff(f.begin(), f.end()), co(std::size_t(rows * cols), std::nanf(""));
    const tk::Conv2dArgs<float> a{rows, cols, in.data(), cols, ff.data(), r, co.data(), cols};
    // GPU shape (lanes step down 16-row tiles, 8 rows each) and CPU shape (a lane per output).
    tk::portable::conv2d_tiled<true>(a, tk::TileConfig{16, 64, 0}, {64, 1}, 8,
                                     [](const tile::Shape& s, const auto& kern) { tile::check(s, kern); });
    std::vector<float> cpu(std::size_t(rows * cols), std::nanf(""));
    tk::Conv2dArgs<float> b = a;
    b.out = cpu.data();
    tk::portable::conv2d_tiled<false>(b, tk::TileConfig{8, 8, 0}, {8, 8}, 1,
                                      [](const tile::Shape& s, const auto& kern) { tile::check(s, kern); });
    for (tk::index_t i = 0; i < rows; ++i)
      for (tk::index_t j = 0; j < cols; ++j) {
        double want = 0;
        for (int fi = 0; fi < r; ++fi)
          for (int fj = 0; fj < r; ++fj) {
            const tk::index_t y = i + fi - r / 2, xx = j + fj - r / 2;
            if (y >= 0 && y < rows && xx >= 0 && xx < cols) want += double(ff[std::size_t(fi * r + fj)]) * in[std::size_t(y * cols + xx)];
          }
        ASSERT_NEAR(co[std::size_t(i * cols + j)], want, 1e-4) << "R " << r << " (" << i << ", " << j << ")";
        ASSERT_NEAR(cpu[std::size_t(i * cols + j)], want, 1e-4) << "R " << r << " (" << i << ", " << j << ")";
      }
  }
}

// Expects tile::check(kernel) to throw an error whose message contains `what`.
template <class K>
void expect_caught(const tile::Shape& s, const K& k, const std::string& what) {
  try {
    tile::check(s, k);
    FAIL() << "the checking executor accepted a kernel with: " << what;
  } catch (const tk::Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// PMPP's reversal with its barrier left out: a read of another lane's write in the same phase.
struct NoBarrierAfterWrite {
  float* x;
  template <class Tile>
  void operator()(Tile& t) const {
    auto buf = tile::scratch<float>(t, 1, 8);
    t.for_lanes([&](tile::Lane l) { buf(0, l.x) = x[l.x]; });
    t.for_lanes([&](tile::Lane l) { x[l.x] = buf(0, 7 - l.x); });
  }
};
// The second barrier of the tiled gemm left out: the next step overwrites what others read.
struct NoBarrierBeforeOverwrite {
  float* x;
  template <class Tile>
  void operator()(Tile& t) const {
    auto buf = tile::scratch<float>(t, 1, 8);
    auto acc = tile::lane_state<float>(t);
    t.for_lanes([&](tile::Lane l) { acc[l] = 0; });
    for (int step = 0; step < 2; ++step) {
      t.for_lanes([&](tile::Lane l) { buf(0, l.x) = x[step * 8 + l.x]; });
      t.barrier();
      t.for_lanes([&](tile::Lane l) { acc[l] += buf(0, 7 - l.x); });
    }
    t.for_lanes([&](tile::Lane l) { x[l.x] = acc[l]; });
  }
};
struct ReadsUnwritten {
  float* x;
  template <class Tile>
  void operator()(Tile& t) const {
    auto buf = tile::scratch<float>(t, 1, 8);
    t.for_lanes([&](tile::Lane l) {
      if (l.x < 7) buf(0, l.x) = 1.f;  // the last element is never written
    });
    t.barrier();
    t.for_lanes([&](tile::Lane l) { x[l.x] = buf(0, 7 - l.x); });
  }
};
struct BarrierInsidePhase {
  template <class Tile>
  void operator()(Tile& t) const {
    t.for_lanes([&](tile::Lane) { t.barrier(); });
  }
};
struct ScratchOutsidePhase {
  template <class Tile>
  void operator()(Tile& t) const {
    auto buf = tile::scratch<float>(t, 1, 8);
    buf(0, 0) = 1.f;
  }
};
struct IndexOutside {
  template <class Tile>
  void operator()(Tile& t) const {
    auto buf = tile::scratch<float>(t, 2, 8);
    t.for_lanes([&](tile::Lane l) { buf(l.x, 0) = 1.f; });
  }
};
struct CarvesTooMuch {
  template <class Tile>
  void operator()(Tile& t) const {
    (void)tile::scratch<float>(t, 8, 8);
    (void)tile::scratch<float>(t, 1, 1);
  }
};
struct UninitialisedLaneState {
  float* x;
  template <class Tile>
  void operator()(Tile& t) const {
    auto acc = tile::lane_state<float>(t);
    t.for_lanes([&](tile::Lane l) { acc[l] += 1.f; });  // never set to zero
    t.for_lanes([&](tile::Lane l) { x[l.x] = acc[l]; });
  }
};


// Bins counted with a plain += from several lanes (what atomics are for).
struct PlainIncrement {
  const int* keys;
  template <class Tile>
  void operator()(Tile& t) const {
    auto bins = tile::scratch<int>(t, 1, 4);
    t.for_each(4, [&](int b) { bins(0, b) = 0; });
    t.barrier();
    t.for_lanes([&](tile::Lane l) { bins(0, keys[l.id] % 4) += 1; });
  }
};
// A lane reads a bin that others update atomically in the same phase (no barrier between).
struct ReadRacesAtomic {
  template <class Tile>
  void operator()(Tile& t) const {
    auto bins = tile::scratch<int>(t, 1, 4);
    t.for_each(4, [&](int b) { bins(0, b) = 0; });
    t.barrier();
    t.for_lanes([&](tile::Lane l) {
      tile::atomic_add(t, bins, 0, 1, 1);
      if (l.id == 3) (void)int(bins(0, 1));
    });
  }
};
struct WriteRacesAtomic {
  template <class Tile>
  void operator()(Tile& t) const {
    auto bins = tile::scratch<int>(t, 1, 4);
    t.for_each(4, [&](int b) { bins(0, b) = 0; });
    t.barrier();
    t.for_lanes([&](tile::Lane l) {
      if (l.id == 5) bins(0, 2) = 7;
      else tile::atomic_add(t, bins, 0, 2, 1);
    });
  }
};
struct AtomicOnUnwritten {
  template <class Tile>
  void operator()(Tile& t) const {
    auto bins = tile::scratch<int>(t, 1, 4);
    t.for_lanes([&](tile::Lane l) { tile::atomic_add(t, bins, 0, l.id % 4, 1); });
  }
};
struct AtomicOutside {
  template <class Tile>
  void operator()(Tile& t) const {
    auto bins = tile::scratch<int>(t, 1, 4);
    t.for_each(4, [&](int b) { bins(0, b) = 0; });
    t.barrier();
    t.for_lanes([&](tile::Lane l) { tile::atomic_add(t, bins, 0, 4 + l.id % 2, 1); });
  }
};
// A reduction called inside a phase (on a GPU: a barrier some threads never reach).
struct CollectiveInsidePhase {
  template <class Tile>
  void operator()(Tile& t) const {
    auto x = tile::lane_state<int>(t);
    t.for_lanes([&](tile::Lane l) {
      x[l] = 1;
      if (l.id == 0) (void)tile::reduce(t, x);
    });
  }
};
// Bins read after the histogram without... nothing: histogram ends with a barrier, so reusing
// its bins for a second histogram is legal; a kernel that reads its bins in the same phase
// as another lane's atomic update is not (ReadRacesAtomic).
struct TwoHistograms {
  const int* keys;
  unsigned* global;
  template <class Tile>
  void operator()(Tile& t) const {
    auto bins = tile::scratch<unsigned>(t, 1, 8);
    tile::histogram(t, bins, 64, [&](int i) { return keys[i] % 8; }, global);
    tile::histogram(t, bins, 64, [&](int i) { return (keys[i] + 1) % 8; }, global);
  }
};
// A scan whose result is read before the scan runs... and written from scratch across a missing
// barrier: lanes write scratch, then the scan (a barrier), then read: legal.
struct ScanAfterScratch {
  int* out;
  template <class Tile>
  void operator()(Tile& t) const {
    auto s = tile::scratch<int>(t, 1, 16);
    auto x = tile::lane_state<int>(t);
    t.for_lanes([&](tile::Lane l) { s(0, l.id) = l.id; });
    t.for_lanes([&](tile::Lane l) { x[l] = 1; });
    const int total = tile::exclusive_scan(t, x, x);
    t.for_lanes([&](tile::Lane l) { out[l.id] = s(0, 15 - l.id) * 100 + x[l] + 1000 * total; });
  }
};

TEST(TileCheck, CatchesBrokenKernels) {
  std::vector<float> x(16, 1.f);
  const tile::Shape s{3, 2, {8, 1}, tile::scratch_bytes<float>(1, 8), "broken"};
  expect_caught(s, NoBarrierAfterWrite{x.data()}, "missing barrier");
  expect_caught(s, NoBarrierBeforeOverwrite{x.data()}, "missing barrier");
  expect_caught(s, ReadsUnwritten{x.data()}, "uninitialised");
  expect_caught(s, BarrierInsidePhase{}, "inside a phase");
  expect_caught(s, ScratchOutsidePhase{}, "outside a phase");
  expect_caught({1, 1, {8, 1}, tile::scratch_bytes<float>(2, 8), "index"}, IndexOutside{}, "outside a 2 x 8");
  expect_caught({1, 1, {8, 1}, tile::scratch_bytes<float>(8, 8), "carve"}, CarvesTooMuch{}, "launch declared");

  // Lane state is poisoned: a kernel that never initialises its accumulator writes NaN.
  std::vector<float> y(8, 0.f);
  tile::check({1, 1, {8, 1}, 0, "poison"}, UninitialisedLaneState{y.data()});
  for (float v : y) EXPECT_TRUE(std::isnan(v));

  // ...and the same kernels with their barriers in place pass.
  std::vector<float> z(8);
  for (int i = 0; i < 8; ++i) z[std::size_t(i)] = float(i);
  tile::check({1, 1, {8, 1}, tile::scratch_bytes<float>(1, 8), "reverse"}, ReverseBlocks{z.data(), 8, 8});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(z[std::size_t(i)], float(7 - i));
}


TEST(TileCheck, AtomicsAndCollectivesAreChecked) {
  std::vector<int> keys(64);
  for (int i = 0; i < 64; ++i) keys[std::size_t(i)] = i * 5;
  const tile::Shape s{2, 1, {16, 1}, tile::scratch_bytes<int>(1, 4), "bins"};
  expect_caught(s, PlainIncrement{keys.data()}, "accumulate into one element: tile::atomic_add");
  expect_caught(s, ReadRacesAtomic{}, "updates atomically in the same phase");
  expect_caught(s, WriteRacesAtomic{}, "race");
  expect_caught(s, AtomicOnUnwritten{}, "uninitialised");
  expect_caught(s, AtomicOutside{}, "outside a 1 x 4");
  expect_caught({1, 1, {8, 1}, 0, "collective"}, CollectiveInsidePhase{}, "reduce called inside a phase");

  std::vector<unsigned> hist(8, 0);
  tile::check({3, 1, {16, 1}, tile::scratch_bytes<unsigned>(1, 8), "two histograms"},
              TwoHistograms{keys.data(), hist.data()});
  std::vector<unsigned> want(8, 0);
  for (int i = 0; i < 64; ++i) want[std::size_t(keys[std::size_t(i)] % 8)] += 3, want[std::size_t((keys[std::size_t(i)] + 1) % 8)] += 3;
  EXPECT_EQ(hist, want);
  std::vector<int> out(16);
  tile::check({1, 1, {16, 1}, tile::scratch_bytes<int>(1, 16), "scan after scratch"}, ScanAfterScratch{out.data()});
  for (int l = 0; l < 16; ++l) EXPECT_EQ(out[std::size_t(l)], (15 - l) * 100 + l + 16000);
}

TEST(TileCheck, LambdaKernelsAndDeclaredScratch) {
  std::vector<float> x(40);
  for (int i = 0; i < 40; ++i) x[std::size_t(i)] = float(i);
  float* p = x.data();
  const tk::index_t n = 40;
  // The scratch written once: the launch takes its size from the kernel.
  const auto reverse = tile::kernel(tile::array<float>(1, 8), [=] TILEKIT_TILE_LAMBDA(auto& t, auto buf) {
    const tk::index_t base = t.x() * 8;
    t.for_lanes([&](tile::Lane l) { buf(0, l.x) = base + l.x < n ? p[base + l.x] : 0.f; });
    t.barrier();
    t.for_lanes([&](tile::Lane l) {
      if (base + l.x < n) p[base + l.x] = buf(0, 7 - l.x);
    });
  });
  tile::check(tile::Shape::grid(5).with_lanes(8).named("lambda reverse"), reverse);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(x[std::size_t(i)], float(i / 8 * 8 + 7 - i % 8));
  tile::launch(tk::backend("serial"), tile::Shape::grid(5).with_lanes(8), reverse);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(x[std::size_t(i)], float(i));
  // Too little scratch for what the kernel declares: refused, naming both.
  try {
    tile::check(tile::Shape::grid(5).with_lanes(8).with_scratch(16).named("short"), reverse);
    FAIL() << "a launch with less scratch than the kernel declares ran";
  } catch (const tk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("declares 32 bytes"), std::string::npos) << e.what();
  }
  // The missing barrier is still caught in a lambda.
  const auto broken = tile::kernel(tile::array<float>(1, 8), [=](auto& t, auto buf) {
    t.for_lanes([&](tile::Lane l) { buf(0, l.x) = 1.f; });
    t.for_lanes([&](tile::Lane l) { p[l.x] = buf(0, 7 - l.x); });
  });
  expect_caught(tile::Shape::grid(1).with_lanes(8).named("broken lambda"), broken, "missing barrier");
}

#endif  // !__CUDACC__

}  // namespace
