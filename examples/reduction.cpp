// A block sum written once on tilekit's tile layer: each tile adds up `lanes x kPerLane`
// consecutive elements (every lane sums its share into lane state, then a tree reduction in
// scratch halves the active lanes at every level, with a barrier per level) and writes one
// partial sum. Compared on every backend this program was compiled for; public headers only.
//
//   tilekit_example_reduction [--small] [N]
// exits 0 when every backend that ran matched the plain loop, 1 when one did not, 77 when no
// backend could run here.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tilekit/tile.hpp>
#include <tilekit/tilekit.hpp>

using tilekit::index_t;
namespace tile = tilekit::tile;

struct BlockSum {
  static constexpr int kPerLane = 8;  // elements each lane adds before the tree
  const double* x;
  double* partial;  // one per tile
  index_t n;
  int lanes;  // a power of two

  index_t per_tile() const { return index_t(lanes) * kPerLane; }
  tile::Shape shape() const {
    return {(n + per_tile() - 1) / per_tile(), 1, {lanes, 1}, tile::scratch_bytes<double>(1, lanes), "block_sum"};
  }

  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto buf = tile::scratch<double>(t, 1, lanes);
    auto sum = tile::lane_state<double>(t);
    const index_t base = t.x() * index_t(lanes) * kPerLane;
    // Lane l adds elements l, l + lanes, l + 2 lanes...: consecutive lanes read consecutive
    // elements (coalesced on GPUs, one vector on CPUs).
    t.for_lanes([&](tile::Lane l) {
      double s = 0;
      for (int k = 0; k < kPerLane; ++k) {
        const index_t i = base + index_t(k) * lanes + l.x;
        s += i < n ? x[i] : 0.0;
      }
      sum[l] = s;
    });
    t.for_lanes([&](tile::Lane l) { buf(0, l.x) = sum[l]; });
    t.barrier();
    for (int active = lanes / 2; active > 0; active /= 2) {  // tile-uniform: every lane sees the same levels
      t.for_lanes({active, 1}, [&](tile::Lane l) { sum[l] = buf(0, l.x) + buf(0, l.x + active); });
      t.barrier();  // every read of this level is done before anyone overwrites
      t.for_lanes({active, 1}, [&](tile::Lane l) { buf(0, l.x) = sum[l]; });
      t.barrier();  // and every write before the next level reads
    }
    t.for_lanes({1, 1}, [&](tile::Lane) { partial[t.x()] = buf(0, 0); });
  }
};

int main(int argc, char** argv) {
  index_t n = index_t(1) << 26;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) n = 1000003;  // prime: the last tile is partial
    else n = std::atoll(argv[i]);
  }
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [--small] [N >= 1]\n", argv[0]);
    return 2;
  }
  std::vector<double> x(static_cast<std::size_t>(n));
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (double& v : x) v = u(rng);

  tile::Study study;
  study.name = "block sums of " + std::to_string(n) + " doubles";
  study.bytes = double(n) * sizeof(double);
  study.flops = double(n);
  study.tolerance = 1e-12;
  study.tiles = {64, 256, 1024};

  std::unique_ptr<tilekit::Matrix<double>> in, out;
  const auto setup = [&](tilekit::Backend& be, int lanes) {
    const BlockSum k{nullptr, nullptr, n, lanes};
    const index_t tiles = k.shape().tiles_x;
    in = std::make_unique<tilekit::Matrix<double>>(be, 1, n);
    out = std::make_unique<tilekit::Matrix<double>>(be, 1, tiles);
    in->upload(x);
    tile::Trial trial;
    trial.run = [&be, lanes, this_n = n, xi = in->data(), po = out->data()] {
      const BlockSum kern{xi, po, this_n, lanes};
      tile::launch(be, kern.shape(), kern);
    };
    trial.output = [&out] {
      const std::vector<double> r = out->download();
      return r;
    };
    return trial;
  };
  // The reference depends on the tile (one partial sum per tile): compare per tile size.
  bool ok = true, ran = false;
  for (int lanes : study.tiles) {
    tile::Study one = study;
    one.tiles = {lanes};
    const index_t per = index_t(lanes) * BlockSum::kPerLane, tiles = (n + per - 1) / per;
    one.reference.assign(std::size_t(tiles), 0.0);
    for (index_t i = 0; i < n; ++i) one.reference[std::size_t(i / per)] += x[std::size_t(i)];
    const auto rows = tile::compare(one, setup);
    ok = tile::print(one, rows) && ok;
    for (const tile::Row& r : rows) ran = ran || r.skipped.empty();
  }
  return !ran ? 77 : ok ? 0 : 1;
}
