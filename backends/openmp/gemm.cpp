// gemm, all three variants; its SIMD kernels stay in gemm_simd.cpp (Highway's foreach_target needs its own TU).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "openmp.hpp"
#include "tilekit/config.hpp"
#include "tilekit/tunings.hpp"

namespace tilekit::openmp {

// ---------------------------------------------------------------- naive
// The naive variants: the serial backend's plain loops with the outermost loop split across the
// OpenMP threads, nothing else. They show what threads alone buy when every access pattern is
// left as the textbook writes it.

// One dot product per element of C, walking B down a column: every step touches a new cache
// line of B, so beyond the L2 each multiply waits on memory, on every thread at once.
template <class T>
void gemm_naive(const GemmArgs<T>& g) {
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < g.m; ++i)
    for (index_t j = 0; j < g.n; ++j) {
      T acc = 0;
      for (index_t p = 0; p < g.k; ++p) acc += g.a[i * g.lda + p] * g.b[p * g.ldb + j];
      T& c = g.c[i * g.ldc + j];
      // beta == 0 must not read C: it may hold NaN.
      c = g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * c;
    }
}

// ---------------------------------------------------------------- tiled
// The tiled variant is the portable one (backends/portable/gemm_tiled.hpp), run by backend.cpp.

// ---------------------------------------------------------------- optimized
// The optimized variants' drivers: tile choice, the static split of the work across the OpenMP
// threads, and per-thread workspaces. The arithmetic is in the dispatched kernels (simd.hpp).

namespace {

struct Grid {
  int rows = 1, cols = 1;
};

// k == 0: C = beta * C (beta == 0 writes zeros without reading C, which may hold NaN).
template <class T>
void scale_c(const GemmArgs<T>& g) {
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < g.m; ++i) {
    T* c = g.c + i * g.ldc;
    for (index_t j = 0; j < g.n; ++j) c[j] = g.beta == T(0) ? T(0) : g.beta * c[j];
  }
}

}  // namespace

// The host's blocking (backends/common/host/packed.cpp), which kokkos on a host space shares.
TileConfig gemm_optimized_tile(const DeviceInfo& info, DType t) { return host::gemm_packed_tile(info, t); }

namespace {

using host::even_block;

// One claim counter per thread and K-step parity, each on its own cache line.
struct alignas(64) Counter {
  std::atomic<index_t> next{0};
};
// Takes the next of `units` from `c`, if any is left.
bool claim(std::atomic<index_t>& c, index_t units, index_t& u) {
  index_t v = c.load(std::memory_order_relaxed);
  while (v < units)
    if (c.compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) {
      u = v;
      return true;
    }
  return false;
}

// One block of C (rows [ic, ic + mb) x columns [jc, jc + nb), whose A and B panels fit the L3)
// on the team's rows x cols grid: thread t owns one cell, cut into units of at most mc rows
// (at least 8 per cell, so a slowed thread's work can be taken over) by L2 chunks of nc columns.
struct BlockPlan {
  index_t ic, mb, jc, nb, mr, nr, pm, pn, mc, nc;
  Grid grid;

  struct Cell {
    index_t r0, r1, c0, c1, chunks, pieces;  // micro-panels of the block
  };
  Cell cell(int t) const {
    const index_t r = t / grid.cols, c = t % grid.cols;
    Cell x{pm * r / grid.rows, pm * (r + 1) / grid.rows, pn * c / grid.cols, pn * (c + 1) / grid.cols, 0, 0};
    if (x.r1 > x.r0 && x.c1 > x.c0) {
      x.chunks = ceil_div((x.c1 - x.c0) * nr, nc);
      x.pieces = std::min(x.r1 - x.r0, std::max(ceil_div((x.r1 - x.r0) * mr, mc), ceil_div(8, x.chunks)));
    }
    return x;
  }
  index_t units(int t) const {
    const Cell x = cell(t);
    return x.chunks * x.pieces;
  }
  // Unit u of thread t's cell, chunk-major so that consecutive units share the chunk in L2.
  simd::GemmBlock unit(int t, index_t u, index_t pc, index_t kb, index_t m, index_t n) const {
    const Cell x = cell(t);
    const index_t ch = u / x.pieces, pi = u % x.pieces, rows = x.r1 - x.r0, cols = x.c1 - x.c0;
    const index_t r0 = x.r0 + rows * pi / x.pieces, r1 = x.r0 + rows * (pi + 1) / x.pieces;
    const index_t c0 = x.c0 + cols * ch / x.chunks, c1 = x.c0 + cols * (ch + 1) / x.chunks;
    return {ic + r0 * mr, std::min(m, ic + r1 * mr), jc + c0 * nr, std::min(n, jc + c1 * nr), ic, jc, pc, kb, true};
  }
};

// The grid for the shared-panel driver: per K step a cell of pm x pn micro-panels costs its
// FMAs (mr * nr per micro-tile and step, about 32 per cycle with two 16-lane FMA units) plus
// what it reads from the L3 (its A rows once per L2 chunk of columns, its B columns once; about
// 8 elements per cycle). 16 threads on 2048^2 give 4 x 4, on 4096^2 2 x 8; 2 on 2048^2 1 x 2.
Grid shared_grid(index_t pm, index_t pn, index_t mr, index_t nr, index_t nc, int threads) {
  Grid best;
  double best_cost = -1;
  for (int r = 1; r <= threads; ++r) {
    if (threads % r) continue;
    const int c = threads / r;
    const index_t cm = ceil_div(pm, r), cn = ceil_div(pn, c);
    const double cost =
        double(cm * cn) * double(mr * nr) / 32.0 + double(cm * mr * ceil_div(cn * nr, nc) + cn * nr) / 8.0;
    if (best_cost < 0 || cost < best_cost) {
      best = {r, c};
      best_cost = cost;
    }
  }
  return best;
}

// openmp.gemm.grid=RxC forces the grid when R * C is the team size.
Grid forced_grid(const GemmOptions& o, int threads, Grid fallback) {
  if (o.grid_rows > 0 && o.grid_cols > 0 && o.grid_rows * o.grid_cols == threads) return {o.grid_rows, o.grid_cols};
  return fallback;
}

}  // namespace

// The shared-panel driver (BLIS's parallel structure, mirrored for row-major C): per K step the
// whole team packs the A panel (all rows of the block x kc) and the B panel (kc x all columns),
// each thread an equal slice, then one barrier; every element of A and B is packed once per
// block, not once per grid cell. Each thread then computes the units of its own cell of C from
// the shared panels (B chunk in its L2, A micro-panels streaming from the L3 through L1), and
// when its cell is done takes units left in other cells (a thread slowed by another process
// then holds no one at the barrier). The panels are double-buffered, so one barrier per step.
template <class T>
void gemm_optimized(const GemmArgs<T>& g, const TileConfig& t, std::size_t l3_bytes, const GemmOptions& o) {
  if (g.k == 0) return scale_c(g);
  const bool scalar_a = o.scalar_a;
  // Off by default: measured 2-5% faster without on a 16-core Xeon and ~1-3% on one
  // Zen 4 core; the hardware prefetchers follow the packed panel.
  const bool prefetch_a = o.prefetch_a;
  const simd::MicroTile mt = simd::gemm_micro_tile(dtype_of<T>());
  const index_t mr = index_t(mt.mr), nr = index_t(mt.nr);
  const index_t panels_m = ceil_div(g.m, mr), panels_n = ceil_div(g.n, nr);
  const int threads = int(std::min<index_t>(max_threads(), panels_m * panels_n));
  // K in equal steps of at most kc (2048 = 6 x 344 rather than 5 x 384 + 128: the short step
  // would pay a whole pass over C and a barrier for a third of the work).
  const index_t kc = host::gemm_packed_kc(g.k, t);
  const index_t mc = std::max(index_t(t.rows), mr), nc = std::max(index_t(t.cols) / nr, index_t(1)) * nr;
  // Blocks of C whose panels (each double-buffered) take at most half the L3 together.
  const index_t cap = std::max<index_t>(index_t(l3_bytes / 8 / (std::size_t(kc) * sizeof(T))), 8 * std::max(mr, nr));
  const index_t mc3 = even_block(g.m, cap, mr), nc3 = even_block(g.n, cap, nr);
  // The B panels start on a 64-byte line (the micro-kernel and PackB use aligned vectors): the
  // A panels before them are rounded up to whole lines (kc may be odd with an explicit tile).
  constexpr std::size_t line = 64 / sizeof(T);
  const std::size_t a_elems = (std::size_t(mc3 * kc) + line - 1) / line * line, b_elems = std::size_t(nc3 * kc);
  const std::size_t bytes = 2 * (a_elems + b_elems) * sizeof(T);
  T* const buffers = static_cast<T*>(tls_b_panels.get(bytes));
  if (!buffers) throw Error(fmt::format("backend 'openmp': cannot allocate {} bytes for the packed panels", bytes));
  std::vector<Counter> counters(2 * std::size_t(threads));
  Counter pack_next;
  // openmp.gemm.profile=on: per thread, seconds packing, waiting at the barriers, computing its
  // own units and others', printed to stderr per call (experiments on many-core hosts).
  const bool profile = o.profile;
  enum { kPackA, kPackB, kWait, kOwn, kOthers, kParts };
  struct alignas(64) Profile {
    double seconds[kParts] = {};
    index_t stolen_units = 0;
  };
  std::vector<Profile> prof(profile ? std::size_t(threads) : 0);
  const double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
  {
    const int id = omp_get_thread_num();
    double t0 = profile ? omp_get_wtime() : 0;
    auto lap = [&](int what) {
      if (!profile) return;
      const double t = omp_get_wtime();
      prof[std::size_t(id)].seconds[what] += t - t0;
      t0 = t;
    };
    index_t step = 0, pack_base = 0;
    for (index_t jc = 0; jc < g.n; jc += nc3)
      for (index_t ic = 0; ic < g.m; ic += mc3) {
        const index_t mb = std::min(mc3, g.m - ic), nb = std::min(nc3, g.n - jc);
        BlockPlan plan{ic, mb, jc, nb, mr, nr, ceil_div(mb, mr), ceil_div(nb, nr), mc, nc, {}};
        plan.grid = forced_grid(o, threads, shared_grid(plan.pm, plan.pn, mr, nr, nc, threads));
        for (index_t pc = 0; pc < g.k; pc += kc, ++step) {
          const index_t kb = std::min(kc, g.k - pc);
          // A thread packing step s + 1 writes the other buffers than step s reads, and before
          // anyone packs step s + 2 into these, step s + 1's barrier has seen everyone finish s.
          T* const ap = buffers + std::size_t(step % 2) * a_elems;
          T* const bp = buffers + 2 * a_elems + std::size_t(step % 2) * b_elems;
          // The panels in pieces of a few micro-panels (about 4 per thread each), claimed from
          // one counter that only grows: step s's pieces are numbered from `pack_base` on, and
          // every piece of step s - 1 was claimed before its barrier. A thread slowed by another
          // process packs fewer pieces instead of holding everyone at the barrier.
          const index_t a_items = std::min(plan.pm, 4 * index_t(threads));
          const index_t b_items = std::min(plan.pn, 4 * index_t(threads));
          for (index_t i; claim(pack_next.next, pack_base + a_items + b_items, i);) {
            i -= pack_base;
            if (i < a_items) {
              simd::gemm_pack_a_panel(
                  g, simd::GemmPanel{pc, kb, ic, mb, plan.pm * i / a_items, plan.pm * (i + 1) / a_items, scalar_a}, ap);
              lap(kPackA);
            } else {
              i -= a_items;
              simd::gemm_pack_panel(
                  g, simd::GemmPanel{pc, kb, jc, nb, plan.pn * i / b_items, plan.pn * (i + 1) / b_items}, bp);
              lap(kPackB);
            }
          }
          pack_base += a_items + b_items;
#pragma omp barrier
          lap(kWait);
          // Everyone is past step s - 1 now, so its counters can be reset for step s + 1.
          counters[std::size_t(((step + 1) % 2) * threads + id)].next.store(0, std::memory_order_relaxed);
          Counter* const now = counters.data() + (step % 2) * threads;
          for (int d = 0; d < threads; ++d) {
            const int v = (id + d) % threads;
            const index_t units = plan.units(v);
            for (index_t u; claim(now[v].next, units, u);) {
              simd::GemmBlock block = plan.unit(v, u, pc, kb, g.m, g.n);
              block.prefetch_a = prefetch_a;
              simd::gemm_compute_block(g, block, ap, bp);
              if (profile && d > 0) ++prof[std::size_t(id)].stolen_units;
            }
            lap(d == 0 ? kOwn : kOthers);
          }
        }
      }
  }
  if (profile) {
    const double wall = omp_get_wtime() - start;
    double sum[kParts] = {}, max[kParts] = {};
    index_t stolen = 0;
    const Grid first = forced_grid(
        o, threads, shared_grid(ceil_div(std::min(mc3, g.m), mr), ceil_div(std::min(nc3, g.n), nr), mr, nr, nc, threads));
    for (const Profile& p : prof) {
      for (int i = 0; i < kParts; ++i) sum[i] += p.seconds[i], max[i] = std::max(max[i], p.seconds[i]);
      stolen += p.stolen_units;
    }
    fmt::print(stderr,
               "gemm profile {}x{}x{}, {} threads, grid {}x{} (first block), kc {}: wall {:.3f} ms; per thread avg/max "
               "ms: pack A {:.3f}/{:.3f}, pack B {:.3f}/{:.3f}, barrier wait {:.3f}/{:.3f}, own units {:.3f}/{:.3f}, others' units "
               "{:.3f}/{:.3f} ({} units taken over)\n",
               g.m, g.n, g.k, threads, first.rows, first.cols,
               kc, wall * 1e3, sum[0] / threads * 1e3, max[0] * 1e3, sum[1] / threads * 1e3, max[1] * 1e3,
               sum[2] / threads * 1e3, max[2] * 1e3, sum[3] / threads * 1e3, max[3] * 1e3, sum[4] / threads * 1e3,
               max[4] * 1e3, stolen);
  }
}

GemmOptions gemm_options() {
  GemmOptions o;
#ifdef TILEKIT_HAS_SWEEPS
  o.scalar_a = tuning_choice<bool>("openmp.gemm.pack_a", {{"vector", false}, {"scalar", true}});
  o.prefetch_a = tuning_choice<bool>("openmp.gemm.prefetch_a", {{"off", false}, {"on", true}});
  o.profile = tuning_choice<bool>("openmp.gemm.profile", {{"off", false}, {"on", true}});
  const std::string grid = tuning("openmp.gemm.grid");
  if (grid != "auto" && std::sscanf(grid.c_str(), "%dx%d", &o.grid_rows, &o.grid_cols) != 2) o.grid_rows = o.grid_cols = 0;
#endif
  return o;
}

std::string gemm_optimized_launch(DType t, const TileConfig& tile) {
  const simd::MicroTile mt = simd::gemm_micro_tile(t);
  const std::size_t e = size_of(t);
  return fmt::format(
      "{} threads in a 2-D grid over C, {} micro-kernel {}x{}; per K step of {} the team packs the A and B panels "
      "(L3) once, each thread computes its cell in units of up to {} rows x {} columns (the B chunk, {} KiB, in L2)",
      max_threads(), simd::target_name(), mt.mr, mt.nr, tile.depth, tile.rows, tile.cols,
      std::size_t(tile.depth) * std::size_t(tile.cols) * e / 1024);
}

template void gemm_naive<float>(const GemmArgs<float>&);
template void gemm_naive<double>(const GemmArgs<double>&);
template void gemm_optimized<float>(const GemmArgs<float>&, const TileConfig&, std::size_t, const GemmOptions&);
template void gemm_optimized<double>(const GemmArgs<double>&, const TileConfig&, std::size_t, const GemmOptions&);

}  // namespace tilekit::openmp
