// A byte histogram written once on tilekit's tile layer: PMPP's privatized histogram (ch. 9).
// Every tile counts its share of the bytes into 256 bins of its own scratch with atomic updates
// (shared-memory atomics on GPUs, a plain read-modify-write on CPUs, where one thread runs a
// tile), then adds its bins to the global histogram with one atomic update per bin: the
// contention on global memory is one update per bin per tile instead of one per byte.
// tile::histogram is that algorithm, checked by tile::check like any kernel. Public headers only.
//
//   tilekit_example_histogram [--small] [--bench] [N]
// checks every backend this program can launch on against a plain loop; exits 0 when every one
// that ran matched, 1 when one did not, 77 when none could run here. --bench times the kernel
// against a baseline on the backends this build is for, one JSON line per measurement: on CPUs
// a plain OpenMP loop with per-thread bins, on CUDA a hand-written privatized histogram kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tilekit/tile.hpp>
#include <tilekit/tilekit.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

using tilekit::index_t;
namespace tile = tilekit::tile;

struct Histogram {
  static constexpr int kBins = 256;
  const unsigned char* data;
  unsigned* bins;  // kBins counters in the backend's memory, added to
  index_t n, per_tile;

  // The scratch this kernel carves, written once: the launch sizes scratch from it.
  TILEKIT_TILE_FN static constexpr auto scratch() { return tile::array<unsigned, kBins>(1); }

  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto local = scratch()(t);
    const index_t first = t.x() * per_tile;
    const int items = int(n - first < per_tile ? n - first : per_tile);
    const unsigned char* mine = data + first;
    tile::histogram(t, local, items, [&](int i) { return int(mine[i]); }, bins);
  }
};

// Tiles and lanes: on a GPU a few blocks of 512 threads per multiprocessor, each a contiguous
// share of the bytes (its threads read consecutive bytes); on a CPU a few tiles per thread.
tile::Shape histogram_shape(const tilekit::Backend& be, index_t n, index_t* per_tile) {
  const bool gpu = be.info().kind == tilekit::DeviceKind::gpu;
  const index_t want = std::max<index_t>(1, index_t(std::max(1, be.info().compute_units)) * (gpu ? 4 : 4));
  const index_t tiles = std::max<index_t>(1, std::min(want, (n + 4095) / 4096));
  *per_tile = (n + tiles - 1) / tiles;
  return tile::Shape::grid((n + *per_tile - 1) / *per_tile).with_lanes(gpu ? 512 : 64).named("histogram");
}

#if defined(__CUDACC__)
// The baseline on CUDA: the same algorithm written by hand (PMPP Fig. 9.10 with the same
// partitioning: a block's contiguous share, its threads interleaved).
__global__ void hand_histogram(const unsigned char* data, unsigned* bins, index_t n, index_t per_block) {
  __shared__ unsigned local[Histogram::kBins];
  for (int b = threadIdx.x; b < Histogram::kBins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  const index_t first = index_t(blockIdx.x) * per_block;
  const int items = int(n - first < per_block ? n - first : per_block);
  for (int i = threadIdx.x; i < items; i += blockDim.x) atomicAdd(&local[data[first + i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < Histogram::kBins; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}
#endif

// The baseline on CPUs: a plain loop, per-thread bins merged at the end.
void loop_histogram(const unsigned char* data, unsigned* bins, index_t n, int threads) {
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
  {
    unsigned local[Histogram::kBins] = {};
#pragma omp for schedule(static) nowait
    for (index_t i = 0; i < n; ++i) ++local[data[i]];
    for (int b = 0; b < Histogram::kBins; ++b)
      if (local[b]) {
#pragma omp atomic
        bins[b] += local[b];
      }
  }
#else
  (void)threads;
  for (index_t i = 0; i < n; ++i) ++bins[data[i]];
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The backends --bench measures in this build: the one it is compiled for.
bool bench_here(const std::string& backend) {
#if defined(__CUDACC__)
  return backend == "cuda";
#elif TILEKIT_TILE_HAS_KOKKOS
  return backend == "kokkos";
#else
  return backend == "serial" || backend == "openmp";
#endif
}

int main(int argc, char** argv) {
  index_t n = index_t(1) << 28;
  bool bench = false, small = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) small = true;
    else if (std::strcmp(argv[i], "--bench") == 0) bench = true;
    else n = std::atoll(argv[i]);
  }
  if (small) n = 1000003;  // prime: the last tile is partial
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [--small] [--bench] [N >= 1]\n", argv[0]);
    return 2;
  }
  // Bytes of a skewed distribution (text-like: a few bins take most of the counts, so lanes of a
  // tile often update the same bin).
  std::vector<unsigned char> data(static_cast<std::size_t>(n));
  std::mt19937 rng(9);
  std::geometric_distribution<int> skew(0.02);
  for (unsigned char& c : data) c = static_cast<unsigned char>(std::min(skew(rng), 255));
  std::vector<unsigned> want(Histogram::kBins, 0);
  for (unsigned char c : data) ++want[c];

  bool ok = true, ran = false;
  for (const std::string& name : tile::launchable_backends()) {
    tilekit::Backend* be = tilekit::find_backend(name);
    if (!be || !be->available()) {
      std::printf("%-8s skipped: %s\n", name.c_str(), be ? be->unavailable_reason().c_str() : "not compiled");
      continue;
    }
    tilekit::Matrix<unsigned char> d(*be, 1, n);
    tilekit::Matrix<unsigned> bins(*be, 1, Histogram::kBins);
    d.upload(data);
    const std::vector<unsigned> zero(Histogram::kBins, 0);
    bins.upload(zero);
    index_t per_tile = 0;
    const tile::Shape shape = histogram_shape(*be, n, &per_tile);
    const Histogram kernel{d.data(), bins.data(), n, per_tile};
    tile::launch(*be, shape, kernel);
    const bool right = bins.download() == want;
    std::printf("%-8s histogram of %lld bytes, %lld tiles of %d lanes: %s\n", name.c_str(), (long long)n,
                (long long)shape.tiles(), shape.lanes.count(), right ? "ok" : "WRONG");
    ok = ok && right;
    ran = true;
    if (!bench || !bench_here(name)) continue;

    // Kernel and baseline alternate, each on the same data, the median of their times kept.
    std::vector<double> mine, base;
    for (int rep = 0; rep < 11; ++rep) {
      bins.upload(zero);
      mine.push_back(be->time_seconds([&] { tile::launch(*be, shape, kernel); }));
      bins.upload(zero);
#if defined(__CUDACC__)
      const auto stream = static_cast<cudaStream_t>(be->native_queue());
      base.push_back(be->time_seconds([&] {
        hand_histogram<<<unsigned(shape.tiles()), unsigned(shape.lanes.count()), 0, stream>>>(d.data(), bins.data(), n,
                                                                                            per_tile);
      }));
#else
      const int threads = name == "openmp" ? be->info().compute_units : 1;
      const auto t0 = std::chrono::steady_clock::now();
      loop_histogram(d.data(), bins.data(), n, threads);
      base.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
#endif
      if (bins.download() != want) {
        std::printf("%-8s baseline histogram WRONG\n", name.c_str());
        ok = false;
      }
    }
    const double s = median(mine), b = median(base);
#if defined(__CUDACC__)
    const char* baseline = "hand-written privatized histogram kernel";
#elif defined(_OPENMP)
    const char* baseline = "OpenMP loop, per-thread bins";
#else
    const char* baseline = "plain loop";
#endif
    std::printf("{\"name\": \"histogram\", \"backend\": \"%s\", \"n\": %lld, \"seconds\": %.6g, \"baseline\": \"%s\", "
                "\"baseline_seconds\": %.6g, \"ratio\": %.4f}\n",
                name.c_str(), (long long)n, s, baseline, b, s / b);
  }
  return !ran ? 77 : ok ? 0 : 1;
}
