// A user's header: a tile kernel and a plain inline function that launches it, included by the
// .cpp file and by the .cu file of one program. The linker keeps one copy of run_and_check.
#pragma once

#include <string>
#include <vector>

#include <tilekit/tile.hpp>
#include <tilekit/tilekit.hpp>

// Each tile sums its 64 values with tile::reduce and reverses them through scratch.
struct SumReverse {
  float* x;
  float* sums;
  tilekit::index_t n;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto buf = tilekit::tile::scratch<float>(t, 1, 64);
    auto v = tilekit::tile::lane_state<float>(t);
    const tilekit::index_t base = t.x() * 64;
    t.for_lanes([&](tilekit::tile::Lane l) {
      v[l] = base + l.x < n ? x[base + l.x] : 0.f;
      buf(0, l.x) = v[l];
    });
    const float sum = tilekit::tile::reduce(t, v);  // a barrier too
    t.for_lanes([&](tilekit::tile::Lane l) {
      if (base + l.x < n) x[base + l.x] = buf(0, 63 - l.x);
    });
    t.for_lanes({1, 1}, [&](tilekit::tile::Lane) { sums[t.x()] = sum; });
  }
};

// Which compiler made the copy of run_and_check that runs (for the report only).
inline const char* compiled_by() {
#if defined(__CUDACC__)
  return "nvcc";
#else
  return "the host compiler";
#endif
}

// "" when the kernel ran right on `be`, else what went wrong.
inline std::string run_and_check(tilekit::Backend& be) {
  const tilekit::index_t n = 1000, tiles = (n + 63) / 64;
  std::vector<float> h(static_cast<std::size_t>(n));
  for (tilekit::index_t i = 0; i < n; ++i) h[std::size_t(i)] = float(i % 97);
  try {
    tilekit::Matrix<float> x(be, 1, n), sums(be, 1, tiles);
    x.upload(h);
    tilekit::tile::launch(be, {tiles, 1, {64, 1}, tilekit::tile::scratch_bytes<float>(1, 64), "sum_reverse"},
                          SumReverse{x.data(), sums.data(), n});
    const std::vector<float> got = x.download(), s = sums.download();
    for (tilekit::index_t t = 0; t < tiles; ++t) {
      float want = 0;
      for (tilekit::index_t i = t * 64; i < std::min(n, t * 64 + 64); ++i) want += h[std::size_t(i)];
      if (s[std::size_t(t)] != want) return "tile " + std::to_string(t) + " sum " + std::to_string(s[std::size_t(t)]);
    }
    for (tilekit::index_t i = 0; i < n; ++i) {
      const tilekit::index_t src = i / 64 * 64 + 63 - i % 64;
      if (got[std::size_t(i)] != (src < n ? h[std::size_t(src)] : 0.f)) return "element " + std::to_string(i);
    }
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}
