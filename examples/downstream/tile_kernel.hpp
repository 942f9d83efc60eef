// A tile kernel of this project's own, written against tilekit's public tile layer
// (<tilekit/tile.hpp>): each tile of 256 lanes loads its 256 values into scratch, waits at the
// barrier, then writes them back in reverse order, doubled. The same source runs on the host
// backends (compiled by the C++ compiler) and on tilekit's cuda backend (compiled by nvcc).
#pragma once

#include <vector>

#include <tilekit/tile.hpp>
#include <tilekit/tilekit.hpp>

struct ReverseScale {
  float* x;
  tilekit::index_t n;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto buf = tilekit::tile::scratch<float>(t, 1, 256);
    t.for_lanes([&](tilekit::tile::Lane l) {
      const auto i = t.x() * 256 + l.x;
      buf(0, l.x) = i < n ? x[i] : 0.f;
    });
    t.barrier();
    t.for_lanes([&](tilekit::tile::Lane l) {
      const auto i = t.x() * 256 + l.x;
      if (i < n) x[i] = 2.f * buf(0, 255 - l.x);
    });
  }
};

// Runs ReverseScale on `be` over 1000 values and checks every one. In an unnamed namespace:
// main.cpp, kokkos_kernel.cpp and reverse_scale.cu each compile their own copy, and each copy
// launches on the backends its file is compiled for (a plain inline function would be one copy
// for the whole program, the linker's pick, which could not launch on kokkos or cuda from every
// file; docs/tile-kernels.md, "One program, several compilers").
namespace {
bool reverse_scale_ok(tilekit::Backend& be) {
  const tilekit::index_t n = 1000;
  std::vector<float> h(n);
  for (tilekit::index_t i = 0; i < n; ++i) h[i] = float(i);
  tilekit::Matrix<float> m(be, 1, n);
  m.upload(h);
  tilekit::tile::launch(be, {(n + 255) / 256, 1, {256, 1}, tilekit::tile::scratch_bytes<float>(1, 256), "reverse_scale"},
                        ReverseScale{m.data(), n});
  const std::vector<float> out = m.download();
  for (tilekit::index_t i = 0; i < n; ++i) {
    const tilekit::index_t src = i / 256 * 256 + 255 - i % 256;
    if (out[i] != (src < n ? 2.f * h[src] : 0.f)) return false;
  }
  return true;
}
}  // namespace
