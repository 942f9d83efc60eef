// A block sum written once on tilekit's tile layer: each tile adds up `lanes x kPerLane`
// consecutive elements (every lane sums its share into lane state, then a tree reduction in
// scratch halves the active lanes at every level, with a barrier per level) and writes one
// partial sum. The same with the block collective tile::reduce in place of the tree
// (BlockSumReduce: warp shuffles on GPUs, as CUB's BlockReduce). Compared on every backend
// this program was compiled for; public headers only.
//
//   tilekit_example_reduction [--small] [--bench] [N]
// exits 0 when every backend that ran matched the plain loop, 1 when one did not, 77 when no
// backend could run here. --bench times BlockSumReduce against a baseline on the backends this
// build is for, one JSON line per measurement: on CPUs a plain OpenMP loop over the same
// blocks, on CUDA cub::BlockReduce.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tilekit/tile.hpp>
#include <tilekit/tilekit.hpp>

#if defined(__CUDACC__)
#include <cub/cub.cuh>
#endif

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

// The same sums with the collective: each lane's share, then tile::reduce hands the tile's
// sum to lane 0.
struct BlockSumReduce {
  static constexpr int kPerLane = BlockSum::kPerLane;
  const double* x;
  double* partial;
  index_t n;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    const int lanes = t.lanes().count();
    const index_t base = t.x() * index_t(lanes) * kPerLane;
    auto sum = tile::lane_state<double>(t);
    t.for_lanes([&](tile::Lane l) {
      double s = 0;
      for (int k = 0; k < kPerLane; ++k) {
        const index_t i = base + index_t(k) * lanes + l.id;
        s += i < n ? x[i] : 0.0;
      }
      sum[l] = s;
    });
    tile::reduce(t, sum, tile::Sum{}, [&](double total) { partial[t.x()] = total; });
  }
};

#if defined(__CUDACC__)
// The baseline on CUDA: the same loads, cub::BlockReduce for the tile's sum.
template <int kThreads>
__global__ void cub_block_sum(const double* x, double* partial, index_t n) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const index_t base = index_t(blockIdx.x) * kThreads * BlockSum::kPerLane;
  double s = 0;
  for (int k = 0; k < BlockSum::kPerLane; ++k) {
    const index_t i = base + index_t(k) * kThreads + threadIdx.x;
    s += i < n ? x[i] : 0.0;
  }
  const double total = Reduce(temp).Sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}
#endif

// The baseline on CPUs: a plain loop over the same blocks.
void loop_block_sums(const double* x, double* partial, index_t n, int lanes, int threads) {
  const index_t per = index_t(lanes) * BlockSum::kPerLane, blocks = (n + per - 1) / per;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (index_t b = 0; b < blocks; ++b) {
    const index_t end = std::min(n, (b + 1) * per);
    double s = 0;
    for (index_t i = b * per; i < end; ++i) s += x[i];
    partial[b] = s;
  }
  (void)threads;
}

bool bench_here(const std::string& backend) {
#if defined(__CUDACC__)
  return backend == "cuda";
#elif TILEKIT_TILE_HAS_KOKKOS
  return backend == "kokkos";
#else
  return backend == "serial" || backend == "openmp";
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// --bench: BlockSumReduce against the baseline, 256 lanes a tile on GPUs, 1024 on CPUs.
bool bench_block_reduce(const std::vector<double>& host, index_t n) {
  bool ok = true;
  for (const std::string& name : tile::launchable_backends()) {
    tilekit::Backend* be = tilekit::find_backend(name);
    if (!be || !be->available() || !bench_here(name)) continue;
    const int lanes = be->info().kind == tilekit::DeviceKind::gpu ? 256 : 1024;
    const index_t per = index_t(lanes) * BlockSum::kPerLane, tiles = (n + per - 1) / per;
    tilekit::Matrix<double> x(*be, 1, n), mine_out(*be, 1, tiles), base_out(*be, 1, tiles);
    x.upload(host);
    const tile::Shape s = tile::Shape::grid(tiles).with_lanes(lanes).named("block_sum_reduce");
    const BlockSumReduce kernel{x.data(), mine_out.data(), n};
    std::vector<double> mine, base;
    for (int rep = 0; rep < 21; ++rep) {
      mine.push_back(be->time_seconds([&] { tile::launch(*be, s, kernel); }));
#if defined(__CUDACC__)
      const auto stream = static_cast<cudaStream_t>(be->native_queue());
      base.push_back(be->time_seconds(
          [&] { cub_block_sum<256><<<unsigned(tiles), 256, 0, stream>>>(x.data(), base_out.data(), n); }));
      const char* baseline = "cub::BlockReduce<double, 256>::Sum";
#else
      const int threads = name == "openmp" ? be->info().compute_units : 1;
      const auto t0 = std::chrono::steady_clock::now();
      loop_block_sums(x.data(), base_out.data(), n, lanes, threads);
      base.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      const char* baseline = "OpenMP loop over the same blocks";
#endif
      if (rep == 20) {
        const std::vector<double> a = mine_out.download(), b = base_out.download();
        for (std::size_t i = 0; i < a.size(); ++i)
          if (std::abs(a[i] - b[i]) > 1e-9 * std::max(1.0, std::abs(b[i]))) {
            std::printf("%-8s block sums and baseline DIFFER at %zu: %.17g vs %.17g\n", name.c_str(), i, a[i], b[i]);
            ok = false;
            break;
          }
        std::printf("{\"name\": \"block_reduce\", \"backend\": \"%s\", \"n\": %lld, \"seconds\": %.6g, "
                    "\"baseline\": \"%s\", \"baseline_seconds\": %.6g, \"ratio\": %.4f}\n",
                    name.c_str(), (long long)n, median(mine), baseline, median(base), median(mine) / median(base));
      }
    }
  }
  return ok;
}

int main(int argc, char** argv) {
  index_t n = index_t(1) << 26;
  bool bench = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) n = 1000003;  // prime: the last tile is partial
    else if (std::strcmp(argv[i], "--bench") == 0) bench = true;
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
  // The same with tile::reduce.
  const auto setup_reduce = [&](tilekit::Backend& be, int lanes) {
    const index_t per = index_t(lanes) * BlockSum::kPerLane, tiles = (n + per - 1) / per;
    in = std::make_unique<tilekit::Matrix<double>>(be, 1, n);
    out = std::make_unique<tilekit::Matrix<double>>(be, 1, tiles);
    in->upload(x);
    tile::Trial trial;
    trial.run = [&be, lanes, tiles, this_n = n, xi = in->data(), po = out->data()] {
      tile::launch(be, tile::Shape::grid(tiles).with_lanes(lanes).named("block_sum_reduce"),
                   BlockSumReduce{xi, po, this_n});
    };
    trial.output = [&out] { return out->download(); };
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
    for (const bool collective : {false, true}) {
      if (collective) one.name = study.name + ", tile::reduce";
      const auto rows = tile::compare(one, collective ? tile::Setup(setup_reduce) : tile::Setup(setup));
      ok = tile::print(one, rows) && ok;
      for (const tile::Row& r : rows) ran = ran || r.skipped.empty();
    }
  }
  if (bench) ok = bench_block_reduce(x, n) && ok;
  return !ran ? 77 : ok ? 0 : 1;
}
