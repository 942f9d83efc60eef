// An inclusive scan (prefix sum) of n integers written once on tilekit's tile layer: PMPP's
// hierarchical scan (ch. 11). Every tile scans its share of the values and writes its total; the
// totals are scanned the same way (again and again until one tile holds them), then every tile
// adds the scanned total of the tiles before it. Within a tile:
//   - on GPUs, one value a lane: the block collective tile::inclusive_scan (warp shuffles and
//     shared memory, as CUB's BlockScan) scans the lanes' values;
//   - on CPUs, a run of values a lane (PMPP's coarsened scan, 11.5) and a tile of one lane: the
//     lane scans its run as a plain loop would, tile::exclusive_scan the lanes' totals, and each
//     lane adds the total of the lanes before it (a scan is serial: vector lanes buy nothing).
// Public headers only.
//
#include <algorithm>
#include <chrono>
#include <cstdio>
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
using T = int;

// Step 1: tile t scans its lanes x items values into out (lane l owns the `items` values from
// l * items on), and writes its total. kFixedLanes > 0 compiles the lanes in (kLanes: on GPUs
// the collective's loop over the warps then unrolls, as CUB's does for its BLOCK_THREADS), and
// kItems > 0 the values a lane (as CUB's ITEMS_PER_THREAD: the GPU's one-value kernel then
// carries no registers for the coarsened path it never takes).
template <int kFixedLanes = 0, int kItems = 0>
struct BlockScan {
  static constexpr tile::Dim2 kLanes{kFixedLanes, kFixedLanes > 0 ? 1 : 0};
  const T* in;
  T* out;
  T* totals;  // one per tile; null: not needed (a single tile)
  index_t n;
  int run;  // values a lane, unless kItems compiles them in
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    const int items = kItems > 0 ? kItems : run;
    const int lanes = t.lanes().count();
    const index_t base = t.x() * index_t(lanes) * items;
    auto x = tile::lane_state<T>(t);
    T total;
    if (items == 1) {  // tile-uniform: the scan in registers, one write a value
      t.for_lanes([&](tile::Lane l) { x[l] = base + l.id < n ? in[base + l.id] : T(0); });
      total = tile::inclusive_scan(t, x, x);
      t.for_lanes([&](tile::Lane l) {
        if (base + l.id < n) out[base + l.id] = x[l];
      });
    } else {
      t.for_lanes([&](tile::Lane l) {
        const index_t first = base + index_t(l.id) * items, last = first + items < n ? first + items : n;
        // Four values an iteration: one a time is a five-instruction loop whose speed depends on
        // where the linker puts it (the same instructions run 1.0x or 1.3x the plain loop's time
        // as it lands inside a 64-byte line or across one); four a time are bound by the chain
        // of adds wherever they land (docs/design/tile-layer-collectives.md).
        T run = 0;
        index_t i = first;
        for (; i + 4 <= last; i += 4) {
          out[i] = run += in[i];
          out[i + 1] = run += in[i + 1];
          out[i + 2] = run += in[i + 2];
          out[i + 3] = run += in[i + 3];
        }
        for (; i < last; ++i) out[i] = run += in[i];
        x[l] = run;
      });
      total = tile::exclusive_scan(t, x, x);
      t.for_lanes([&](tile::Lane l) {
        if (l.id == 0) return;  // the lanes before lane 0 add nothing
        const index_t first = base + index_t(l.id) * items, last = first + items < n ? first + items : n;
        const T before = x[l];  // a local: out may alias the lane state, which would be reloaded
        for (index_t i = first; i < last; ++i) out[i] += before;
      });
    }
    if (totals) t.for_lanes({1, 1}, [&](tile::Lane) { totals[t.x()] = total; });
  }
};

// Step 3: tile t adds the total of tiles 0..t-1 (scanned) to its per_tile values.
struct AddPrefix {
  T* out;
  const T* scanned_totals;
  index_t n, per_tile;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    if (t.x() == 0) return;  // tile-uniform
    const index_t base = t.x() * per_tile;
    const T prefix = scanned_totals[t.x() - 1];
    T* mine = out + base;
    t.for_each(int(n - base < per_tile ? n - base : per_tile), [&](int i) { mine[i] += prefix; });
  }
};

// A tile's lanes and values a lane: 256 x 1 on GPUs, 1 x 4096 on CPUs.
struct Layout {
  int lanes, items;
  index_t per_tile() const { return index_t(lanes) * items; }
};
Layout scan_layout(const tilekit::Backend& be) {
  return be.info().kind == tilekit::DeviceKind::gpu ? Layout{256, 1} : Layout{1, 4096};
}

tile::Shape block_shape(index_t n, Layout lay, const char* name) {
  return tile::Shape::grid((n + lay.per_tile() - 1) / lay.per_tile()).with_lanes(lay.lanes).named(name);
}

// out = the inclusive scan of in (n values in be's memory; in == out allowed).
void scan(tilekit::Backend& be, const T* in, T* out, index_t n) {
  const Layout lay = scan_layout(be);
  const tile::Shape s = block_shape(n, lay, "block_scan");
  tilekit::Matrix<T> totals(be, 1, s.tiles() > 1 ? s.tiles() : 0);
  T* t = s.tiles() > 1 ? totals.data() : nullptr;
  if (lay.lanes == 256 && lay.items == 1)
    tile::launch(be, s, BlockScan<256, 1>{in, out, t, n, lay.items});
  else
    tile::launch(be, s, BlockScan<>{in, out, t, n, lay.items});
  if (!t) return;
  scan(be, totals.data(), totals.data(), s.tiles());
  tile::launch(be, block_shape(n, lay, "add_prefix"), AddPrefix{out, totals.data(), n, lay.per_tile()});
  be.synchronize();  // totals is freed on return
}

#if defined(__CUDACC__)
// The baseline on CUDA: cub::BlockScan on the same blocks, one value per thread.
template <int kThreads, cub::BlockScanAlgorithm kAlgorithm>
__global__ void cub_block_scan(const T* in, T* out, T* totals, index_t n) {
  using Scan = cub::BlockScan<T, kThreads, kAlgorithm>;
  __shared__ typename Scan::TempStorage temp;
  const index_t i = index_t(blockIdx.x) * kThreads + threadIdx.x;
  T v = i < n ? in[i] : T(0), total;
  Scan(temp).InclusiveSum(v, v, total);
  if (i < n) out[i] = v;
  if (threadIdx.x == 0) totals[blockIdx.x] = total;
}
#endif

// The baseline on CPUs: a plain loop over the same blocks, four values an iteration as the
// kernel's runs are (so that neither side's speed depends on where its loop lands).
void loop_block_scan(const T* in, T* out, T* totals, index_t n, index_t per_block, int threads) {
  const index_t blocks = (n + per_block - 1) / per_block;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (index_t b = 0; b < blocks; ++b) {
    const index_t end = std::min(n, (b + 1) * per_block);
    T run = 0;
    index_t i = b * per_block;
    for (; i + 4 <= end; i += 4) {
      out[i] = run += in[i];
      out[i + 1] = run += in[i + 1];
      out[i + 2] = run += in[i + 2];
      out[i + 3] = run += in[i + 3];
    }
    for (; i < end; ++i) out[i] = run += in[i];
    totals[b] = run;
  }
  (void)threads;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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

void print_json(const std::string& backend, index_t n, double s, const char* baseline, double b) {
  std::printf("{\"name\": \"block_scan\", \"backend\": \"%s\", \"n\": %lld, \"seconds\": %.6g, \"baseline\": \"%s\", "
              "\"baseline_seconds\": %.6g, \"ratio\": %.4f}\n",
              backend.c_str(), (long long)n, s, baseline, b, s / b);
}

int main(int argc, char** argv) {
  index_t n = index_t(1) << 26;
  bool bench = false, small = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) small = true;
    else if (std::strcmp(argv[i], "--bench") == 0) bench = true;
    else n = std::atoll(argv[i]);
  }
  if (small) n = 1000003;  // prime: partial last tiles at every level
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [--small] [--bench] [N >= 1]\n", argv[0]);
    return 2;
  }
  std::vector<T> data(static_cast<std::size_t>(n));
  std::mt19937 rng(3);
  for (T& v : data) v = T(rng() % 4);  // sums stay below 2^31 for n < 2^29
  std::vector<T> want(data.size());
  long long run = 0;
  for (std::size_t i = 0; i < data.size(); ++i) want[i] = T(run += data[i]);

  bool ok = true, ran = false;
  // Both layouts of the block scan under the checking executor first (host memory, a few tiles).
  for (const Layout lay : {Layout{64, 1}, Layout{3, 50}}) {
    const index_t m = std::min<index_t>(n, 1000);
    std::vector<T> got(std::size_t(m), T(-1)), totals(std::size_t((m + lay.per_tile() - 1) / lay.per_tile()));
    tile::check(block_shape(m, lay, "block_scan"), BlockScan<>{data.data(), got.data(), totals.data(), m, lay.items});
    for (index_t i = 0, run = 0; i < m; ++i) {
      run = i % lay.per_tile() == 0 ? data[std::size_t(i)] : run + data[std::size_t(i)];
      if (got[std::size_t(i)] != run) {
        std::printf("checked block scan (%d lanes x %d values) WRONG at %lld\n", lay.lanes, lay.items, (long long)i);
        ok = false;
        break;
      }
    }
  }
  for (const std::string& name : tile::launchable_backends()) {
    tilekit::Backend* be = tilekit::find_backend(name);
    if (!be || !be->available()) {
      std::printf("%-8s skipped: %s\n", name.c_str(), be ? be->unavailable_reason().c_str() : "not compiled");
      continue;
    }
    tilekit::Matrix<T> in(*be, 1, n), out(*be, 1, n);
    in.upload(data);
    scan(*be, in.data(), out.data(), n);
    const bool right = out.download() == want;
    std::printf("%-8s inclusive scan of %lld ints, tiles of %d lanes x %d values: %s\n", name.c_str(), (long long)n,
                scan_layout(*be).lanes, scan_layout(*be).items, right ? "ok" : "WRONG");
    ok = ok && right;
    ran = true;
    if (!bench || !bench_here(name)) continue;

    // The block scan (step 1) against the baseline on the same blocks, alternating, medians.
    const Layout lay = scan_layout(*be);
    const tile::Shape s = block_shape(n, lay, "block_scan");
    tilekit::Matrix<T> totals(*be, 1, s.tiles()), base_out(*be, 1, n), base_totals(*be, 1, s.tiles());
    const BlockScan<256, 1> gpu_kernel{in.data(), out.data(), totals.data(), n, lay.items};
    const BlockScan<> kernel{in.data(), out.data(), totals.data(), n, lay.items};
    std::vector<double> mine, base, base2;
    for (int rep = 0; rep < 21; ++rep) {
      mine.push_back(be->time_seconds([&] {
        if (lay.lanes == 256 && lay.items == 1)
          tile::launch(*be, s, gpu_kernel);
        else
          tile::launch(*be, s, kernel);
      }));
#if defined(__CUDACC__)
      const auto stream = static_cast<cudaStream_t>(be->native_queue());
      const unsigned blocks = unsigned(s.tiles());
      base.push_back(be->time_seconds([&] {
        cub_block_scan<256, cub::BLOCK_SCAN_RAKING>
            <<<blocks, 256, 0, stream>>>(in.data(), base_out.data(), base_totals.data(), n);
      }));
      base2.push_back(be->time_seconds([&] {
        cub_block_scan<256, cub::BLOCK_SCAN_WARP_SCANS>
            <<<blocks, 256, 0, stream>>>(in.data(), base_out.data(), base_totals.data(), n);
      }));
#else
      const int threads = name == "openmp" ? be->info().compute_units : 1;
      const auto t0 = std::chrono::steady_clock::now();
      loop_block_scan(in.data(), base_out.data(), base_totals.data(), n, lay.per_tile(), threads);
      base.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
#endif
    }
    if (out.download() != base_out.download() || totals.download() != base_totals.download()) {
      std::printf("%-8s block scan and baseline DIFFER\n", name.c_str());
      ok = false;
    }
#if defined(__CUDACC__)
    print_json(name, n, median(mine), "cub::BlockScan<int, 256, BLOCK_SCAN_RAKING>::InclusiveSum", median(base));
    print_json(name, n, median(mine), "cub::BlockScan<int, 256, BLOCK_SCAN_WARP_SCANS>::InclusiveSum", median(base2));
#elif defined(_OPENMP)
    print_json(name, n, median(mine), "OpenMP loop over the same blocks", median(base));
#else
    print_json(name, n, median(mine), "plain loop over the same blocks", median(base));
#endif
  }
  return !ran ? 77 : ok ? 0 : 1;
}
