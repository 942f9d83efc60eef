// A tiled 2-D 5-point Jacobi step, written once on tilekit's tile layer and compared on every
// backend this program was compiled for: shared memory on GPUs, team scratch on Kokkos, cache
// blocks on CPUs. Only public headers are used.
//
//   out(i, j) = (in(i-1, j) + in(i+1, j) + in(i, j-1) + in(i, j+1)) / 4   inside the grid
//   out(i, j) = in(i, j)                                                on its border
//
// A tile of T x T outputs loads its (T + 2) x (T + 2) input window (the tile plus a one-cell
// halo, zero outside the grid) into scratch once; after a barrier, every output reads its four
// neighbours from there instead of from memory: each input is read from memory about once
// instead of four times.
//
//   tilekit_example_stencil [--small] [N]
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

// T: the tile's side. Lanes are T wide; on a GPU 8 rows of them (a lane computes every 8th row
// of its column: 256 to 512 threads a block), on a CPU T rows (a lane per output, so that the
// lane loop, the CPU's vector loop, has no loop inside it).
template <int T>
struct Jacobi {
  const float* in;
  float* out;
  index_t n;

  static tile::Shape shape(index_t n, const tilekit::Backend& be) {
    const int lanes_y = be.info().kind == tilekit::DeviceKind::gpu ? 8 : T;
    return {(n + T - 1) / T, (n + T - 1) / T, {T, lanes_y}, tile::scratch_bytes<float>(T + 2, T + 2), "jacobi"};
  }

  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto win = tile::scratch<float, T + 2>(t, T + 2);  // row length fixed at compile time
    const index_t i0 = t.y() * T, j0 = t.x() * T;
    t.load(win, tile::GlobalView<float>{in, n, n, n}, i0 - 1, j0 - 1);
    t.barrier();  // the window is complete before anyone reads a neighbour's cell
    const int rows = int(n - i0 < T ? n - i0 : T), cols = int(n - j0 < T ? n - j0 : T);
    t.for_lanes({cols, rows}, [&](tile::Lane l) {
      for (int r = l.y; r < rows; r += t.lanes().y) {
        const index_t i = i0 + r, j = j0 + l.x;
        const bool border = i == 0 || j == 0 || i == n - 1 || j == n - 1;
        const float c = win(r + 1, l.x + 1);
        const float avg = 0.25f * (win(r, l.x + 1) + win(r + 2, l.x + 1) + win(r + 1, l.x) + win(r + 1, l.x + 2));
        out[i * n + j] = border ? c : avg;
      }
    });
  }
};

int main(int argc, char** argv) {
  index_t n = 4096;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) n = 509;  // prime: partial tiles on two sides
    else n = std::atoll(argv[i]);
  }
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [--small] [N >= 1]\n", argv[0]);
    return 2;
  }

  std::vector<float> grid(static_cast<std::size_t>(n * n));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (float& x : grid) x = u(rng);

  // The reference: the plain loop, in double.
  tile::Study study;
  study.name = "jacobi 5-point step, " + std::to_string(n) + " x " + std::to_string(n) + " float";
  study.reference.resize(grid.size());
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      const auto at = [&](index_t a, index_t b) { return double(grid[std::size_t(a * n + b)]); };
      const bool border = i == 0 || j == 0 || i == n - 1 || j == n - 1;
      study.reference[std::size_t(i * n + j)] =
          border ? at(i, j) : 0.25 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1));
    }
  study.bytes = 2.0 * double(n) * double(n) * sizeof(float);  // read the grid once, write it once
  study.flops = 4.0 * double(n) * double(n);
  study.tiles = {16, 32, 64};

  // For each backend and tile: the grids in that backend's memory, the kernel, the result.
  struct Buffers {
    tilekit::Matrix<float> in, out;
  };
  std::vector<std::unique_ptr<Buffers>> keep;  // the row being measured's; freed for the next
  const auto rows = tile::compare(study, [&](tilekit::Backend& be, int t) {
    keep.clear();
    keep.push_back(std::make_unique<Buffers>(Buffers{tilekit::Matrix<float>(be, n, n), tilekit::Matrix<float>(be, n, n)}));
    Buffers& b = *keep.back();
    b.in.upload(grid);
    tile::Trial trial;
    const float* in = b.in.data();
    float* out = b.out.data();
    tile::with_size<16, 32, 64>(t, [&](auto side) {
      constexpr int T = decltype(side)::value > 0 ? decltype(side)::value : 32;
      trial.run = [&be, in, out, n] { tile::launch(be, Jacobi<T>::shape(n, be), Jacobi<T>{in, out, n}); };
    });
    trial.output = [&b] {
      const std::vector<float> r = b.out.download();
      return std::vector<double>(r.begin(), r.end());
    };
    return trial;
  });

  const bool ok = tile::print(study, rows);
  bool ran = false;
  for (const tile::Row& r : rows) ran = ran || r.skipped.empty();
  return !ran ? 77 : ok ? 0 : 1;
}
