// The optimized variants' drivers: tile choice, the static split of the work across the OpenMP
// threads, and per-thread workspaces. The arithmetic is in the dispatched kernels (simd.hpp).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "openmp.hpp"
#include "simd.hpp"

namespace tilekit::openmp {
namespace {

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

// A 64-byte aligned scratch buffer per thread, kept between calls so repeated calls (the
// benchmark loop, a solver's iterations) do not pay for allocation and page faults each time.
class Workspace {
 public:
  ~Workspace() { std::free(p_); }
  void* get(std::size_t bytes) {
    if (bytes > bytes_) {
      std::free(p_);
      bytes_ = (bytes + 63) / 64 * 64;
      p_ = std::aligned_alloc(64, bytes_);
      if (!p_) bytes_ = 0;
    }
    return p_;
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};
thread_local Workspace tls_a_pack, tls_b_panels;

struct Grid {
  int rows = 1, cols = 1;
};

// Splits `threads` into a rows x cols grid over C's micro-panels. The cost of a grid is the
// largest part's work per step of K: (pm * pn) micro-tiles of mr x nr FMAs (about mr * nr / 16
// cycles on a 16-lane FMA unit), plus the A rows it packs itself (pm * mr elements, about a
// cycle each), plus its share of the team's B panel (all columns / threads). E.g. 16 threads on
// a 2048^2 C: 4 x 4 rather than 1 x 16, whose threads would each pack all of A.
Grid thread_grid(index_t panels_m, index_t panels_n, index_t mr, index_t nr, int threads) {
  Grid best;
  double best_cost = -1;
  for (int r = 1; r <= threads; ++r) {
    if (threads % r) continue;
    const int c = threads / r;
    const index_t pm = ceil_div(panels_m, r), pn = ceil_div(panels_n, c);
    const double cost =
        double(pm * pn) * double(mr * nr) / 16.0 + double(pm * mr) + double(panels_n * nr) / double(threads);
    if (best_cost < 0 || cost < best_cost) {
      best = {r, c};
      best_cost = cost;
    }
  }
  return best;
}

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

TileConfig gemm_optimized_tile(const DeviceInfo& info, DType t) {
  const simd::MicroTile mt = simd::gemm_micro_tile(t);
  const std::size_t e = size_of(t), mr = mt.mr, nr = mt.nr;
  // kc: the A micro-panel (mr x kc) takes about half the L1, leaving the other half for the B
  // micro-panels streaming through and the C lines. At least 64 steps, so a micro-kernel call
  // amortizes its C load/store; a multiple of 16 keeps packed panels line-aligned.
  // At most 384: the narrow panels of 16-register ISAs (mr = 6) would allow 672 on a 32 KiB L1,
  // which measured ~3% slower than 256-384 with the AVX2 kernel on Zen 4 (the B micro-panels
  // streaming through L1 grow with kc too).
  std::size_t kc = std::min<std::size_t>(info.l1_bytes / 2 / (mr * e) / 16 * 16, 384);
  kc = std::max<std::size_t>(kc, 64);
  // nc: the B block (kc x nc) takes half the L2; mc: the A block takes most of the rest.
  std::size_t nc = std::max(nr, info.l2_bytes / 2 / (kc * e) / nr * nr);
  std::size_t mc = std::max(mr, (info.l2_bytes * 7 / 8 - kc * nc * e) / (kc * e) / mr * mr);
  return {int(mc), int(nc), int(kc)};
}

template <class T>
void gemm_optimized(const GemmArgs<T>& g, const TileConfig& t, std::size_t l3_bytes) {
  if (g.k == 0) return scale_c(g);
  const simd::MicroTile mt = simd::gemm_micro_tile(dtype_of<T>());
  const index_t mr = index_t(mt.mr), nr = index_t(mt.nr);
  const index_t panels_m = ceil_div(g.m, mr), panels_n = ceil_div(g.n, nr);
  const int threads = int(std::min<index_t>(max_threads(), panels_m * panels_n));
  const Grid grid = thread_grid(panels_m, panels_n, mr, nr, threads);
  const index_t mc = t.rows, nc = t.cols, kc = t.depth;
  // The B panel, shared by the team: two buffers (one packed while the other is read) of
  // kc x nc3 within half the L3, nc3 a whole number of micro-panels.
  const index_t nc3 = std::min(panels_n * nr,
                               std::max(nr, index_t(l3_bytes / 4 / (std::size_t(kc) * sizeof(T))) / nr * nr));
  const std::size_t panel_elems = std::size_t(nc3 * kc);
  const std::size_t a_bytes = std::size_t(ceil_div(mc, mr) * mr * kc) * sizeof(T);
  // The panels live in the calling thread's workspace: concurrent calls from different threads
  // get different buffers, repeated calls from one thread reuse them.
  T* panels = static_cast<T*>(tls_b_panels.get(2 * panel_elems * sizeof(T)));
  if (!panels)
    throw Error(fmt::format("backend 'openmp': cannot allocate {} bytes for the packed B panels",
                            2 * panel_elems * sizeof(T)));
  // The work of one K step: the grid's column parts times row chunks, about 8 units per
  // thread, handed out in order from a shared counter. When every core is free the threads
  // take turns and end up with equal shares, as a static split would; when another process
  // takes a core, its thread takes fewer units instead of holding everyone at the barrier.
  // Unit boundaries are whole micro-panels fixed by the problem and thread count, and each
  // element's sum does not depend on which thread computes it, so results stay bitwise
  // reproducible.
  const index_t col_parts = grid.cols;
  const index_t chunks = std::min(panels_m, ceil_div(8 * index_t(threads), col_parts));
  const index_t units = chunks * col_parts;
  std::atomic<index_t> next_unit{0};
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel num_threads(threads)
  {
    const int id = omp_get_thread_num();
    void* a_pack = tls_a_pack.get(a_bytes);
    if (!a_pack) out_of_memory = true;
    // Units are numbered step * units + u across all steps; a thread that draws one of the
    // next step's units keeps it for that step.
    index_t mine = next_unit.fetch_add(1, std::memory_order_relaxed);
    index_t step = 0;
    for (index_t jc = 0; jc < g.n; jc += nc3) {
      const index_t nb = std::min(nc3, g.n - jc), np = ceil_div(nb, nr);
      for (index_t pc = 0; pc < g.k; pc += kc, ++step) {
        const index_t kb = std::min(kc, g.k - pc);
        // Double buffering needs one barrier per step: a thread packing step s + 1 writes the
        // other buffer than the one step s reads, and before anyone packs step s + 2 into this
        // one, step s + 1's barrier has seen every thread finish step s.
        T* panel = panels + std::size_t(step % 2) * panel_elems;
        simd::gemm_pack_panel(g, simd::GemmPanel{pc, kb, jc, nb, np * id / threads, np * (id + 1) / threads}, panel);
#pragma omp barrier
        for (const index_t end = (step + 1) * units; mine < end; mine = next_unit.fetch_add(1, std::memory_order_relaxed)) {
          const index_t u = mine - step * units, q = u / col_parts, c = u % col_parts;
          const index_t m0 = std::min(g.m, panels_m * q / chunks * mr);
          const index_t m1 = std::min(g.m, panels_m * (q + 1) / chunks * mr);
          const index_t c0 = std::max(std::min(g.n, panels_n * c / col_parts * nr), jc);
          const index_t c1 = std::min(std::min(g.n, panels_n * (c + 1) / col_parts * nr), jc + nb);
          if (a_pack && m1 > m0 && c1 > c0)
            simd::gemm_compute_step(g, simd::GemmStep{m0, m1, c0, c1, pc, kb, jc, mc, nc, a_pack}, panel);
        }
      }
    }
  }
  if (out_of_memory)
    throw Error(fmt::format("backend 'openmp': cannot allocate {} bytes of packing workspace per thread", a_bytes));
}

std::string gemm_optimized_launch(DType t, const TileConfig& tile) {
  const simd::MicroTile mt = simd::gemm_micro_tile(t);
  const std::size_t e = size_of(t);
  return fmt::format(
      "{} threads in a 2-D grid over C, {} micro-kernel {}x{}, per thread: packed A block {}x{} ({} KiB) and B "
      "chunks {}x{} ({} KiB) in L2; B panel packed by the team, in L3",
      max_threads(), simd::target_name(), mt.mr, mt.nr, tile.rows, tile.depth,
      std::size_t(tile.rows) * std::size_t(tile.depth) * e / 1024, tile.depth, tile.cols,
      std::size_t(tile.depth) * std::size_t(tile.cols) * e / 1024);
}

// ---------------------------------------------------------------- transpose

TileConfig transpose_optimized_tile(const DeviceInfo& info, DType t) {
  // Every input line is consumed by one register square and every output line written by one,
  // so the block does not need to fit a cache for reuse; its size sets how many lines each
  // visit to a page (a TLB entry, a DRAM row) covers: rows * e bytes of each output row and
  // cols * e of each input row. Measured on a Zen 4 (1 MiB L2) at 8192^2 floats: 128 x 128
  // blocks ran ~10% slower than 256 x 256; larger ones gained nothing. So: a square of a
  // quarter of the L2 (256 x 256 floats there), inside the tile rule.
  const index_t lanes = index_t(simd::transpose_lanes(t));
  index_t side = index_t(std::sqrt(double(info.l2_bytes) / 4.0 / double(size_of(t))));
  side = std::max(lanes, side / lanes * lanes);
  return {int(side), int(side), 0};
}

template <class T>
void transpose_optimized(const TransposeArgs<T>& a, const TileConfig& t, std::size_t stream_above) {
  // Non-temporal stores pay off only when the output would not stay in the caches anyway.
  const bool stream = std::size_t(a.rows * a.cols) * sizeof(T) > stream_above;
  const index_t tiles_r = ceil_div(a.rows, t.rows), tiles_c = ceil_div(a.cols, t.cols);
#pragma omp parallel
  {
#pragma omp for schedule(static) collapse(2) nowait
    for (index_t bi = 0; bi < tiles_r; ++bi)
      for (index_t bj = 0; bj < tiles_c; ++bj)
        simd::transpose_block(a, bi * t.rows, std::min(a.rows, (bi + 1) * t.rows), bj * t.cols,
                              std::min(a.cols, (bj + 1) * t.cols), stream);
    if (stream) simd::stream_fence();
  }
}

std::string transpose_optimized_launch(DType dt, const TileConfig& t) {
  const std::size_t lanes = simd::transpose_lanes(dt);
  return fmt::format("{} threads over {} blocks, {} in-register {}x{} transposes, streaming stores beyond the L3",
                     max_threads(), t.str(), simd::target_name(), lanes, lanes);
}

// ---------------------------------------------------------------- conv2d

TileConfig conv2d_optimized_tile(const DeviceInfo& info, const Problem& p) {
  const std::size_t e = size_of(p.dtype), bc = simd::conv2d_block_cols(p.dtype);
  const std::size_t halo = std::size_t(std::max<index_t>(p.k - 1, 0));
  // Width: one register block's input rows (4 outputs + halo) across the tile in half the L1,
  // so the input rows a block of output rows shares with the next are still there.
  std::size_t cols = info.l1_bytes / 2 / ((4 + halo) * e) / bc * bc;
  cols = std::max(cols, bc);
  // Height: the whole halo-padded tile in a quarter of the L2; tall tiles amortize the halo.
  const std::size_t tile_row = (cols + halo) * e;
  std::size_t rows = info.l2_bytes / 4 / tile_row;
  rows = rows > halo + 4 ? (rows - halo) / 4 * 4 : 4;
  return {int(rows), int(cols), 0};
}

template <class T>
void conv2d_optimized(const Conv2dArgs<T>& a, const TileConfig& t) {
  const index_t half = a.r / 2, bc = index_t(simd::conv2d_block_cols(dtype_of<T>()));
  // The tile buffer: the tile plus halo, columns padded to whole register blocks, rows of a
  // whole number of cache lines so every row starts line-aligned.
  const index_t cols_needed = ceil_div(t.cols, bc) * bc + a.r - 1;
  const index_t ld = ceil_div(cols_needed, index_t(64 / sizeof(T))) * index_t(64 / sizeof(T));
  const std::size_t bytes = std::size_t((t.rows + a.r - 1) * ld) * sizeof(T);
  const index_t tiles_r = ceil_div(a.h, t.rows), tiles_c = ceil_div(a.w, t.cols);
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel
  {
    T* tile = static_cast<T*>(tls_a_pack.get(bytes));
    if (!tile) out_of_memory = true;
#pragma omp for schedule(static) collapse(2)
    for (index_t bi = 0; bi < tiles_r; ++bi)
      for (index_t bj = 0; bj < tiles_c; ++bj) {
        if (!tile) continue;
        const index_t i0 = bi * t.rows, j0 = bj * t.cols;
        const index_t th = std::min<index_t>(t.rows, a.h - i0), tw = std::min<index_t>(t.cols, a.w - j0);
        const index_t width = ceil_div(tw, bc) * bc + a.r - 1;  // what the kernel will read
        // Load phase: whole rows of the image by memcpy, zeros for the halo outside it.
        const index_t x_lo = std::max<index_t>(0, half - j0);                    // first column inside
        const index_t x_hi = std::max(x_lo, std::min<index_t>(width, a.w - j0 + half));  // one past the last
        for (index_t y = 0; y < th + a.r - 1; ++y) {
          T* dst = tile + y * ld;
          const index_t gy = i0 + y - half;
          if (gy < 0 || gy >= a.h) {
            std::fill(dst, dst + width, T(0));
            continue;
          }
          std::fill(dst, dst + x_lo, T(0));
          std::memcpy(dst + x_lo, a.in + gy * a.ld_in + (j0 + x_lo - half), std::size_t(x_hi - x_lo) * sizeof(T));
          std::fill(dst + x_hi, dst + width, T(0));
        }
        simd::conv2d_tile(a, tile, ld, i0, j0, th, tw);
      }
  }
  if (out_of_memory)
    throw Error(fmt::format("backend 'openmp': cannot allocate {} bytes of conv2d tile buffer per thread", bytes));
}

std::string conv2d_optimized_launch(const Problem& p, const TileConfig& t) {
  const std::size_t bc = simd::conv2d_block_cols(p.dtype);
  return fmt::format("{} threads over {} tiles (+{} halo) copied to L2, {} register blocks of 4 rows x {} columns",
                     max_threads(), t.str(), std::max<index_t>(p.k - 1, 0), simd::target_name(), bc);
}

template void gemm_optimized<float>(const GemmArgs<float>&, const TileConfig&, std::size_t);
template void gemm_optimized<double>(const GemmArgs<double>&, const TileConfig&, std::size_t);
template void transpose_optimized<float>(const TransposeArgs<float>&, const TileConfig&, std::size_t);
template void transpose_optimized<double>(const TransposeArgs<double>&, const TileConfig&, std::size_t);
template void conv2d_optimized<float>(const Conv2dArgs<float>&, const TileConfig&);
template void conv2d_optimized<double>(const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::openmp
