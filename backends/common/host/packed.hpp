// The host's fast path, shared by every backend that runs on CPU threads (openmp, and kokkos on a
// host execution space): the blocking of the optimized kernels (tiles from the caches read at run
// time and the dispatched micro-kernel's register block), the per-tile work around the SIMD
// kernels (simd.hpp), and a gemm driver for backends whose parallel loops run to completion
// (a Kokkos parallel_for). The openmp backend keeps its own gemm driver (one parallel region with
// barriers and work taken over between threads), around the same kernels and blocking.
//
// Nothing here includes Highway: the kernels behind simd.hpp are compiled where the build found
// it (TilekitHostSimd.cmake), and code that calls them is compiled only then.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "common/host/host_backend.hpp"
#include "common/host/simd.hpp"

namespace tilekit::host {

inline index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

// The block size that splits `extent` into as few blocks of at most `limit` as possible, all of
// equal size rounded up to a multiple of `unit`.
inline index_t even_block(index_t extent, index_t limit, index_t unit) {
  const index_t blocks = ceil_div(extent, std::max(limit, unit));
  return ceil_div(ceil_div(extent, std::max<index_t>(blocks, 1)), unit) * unit;
}

// A 64-byte aligned scratch buffer per thread, kept between calls so repeated calls (the
// benchmark loop, a solver's iterations) do not pay for allocation and page faults each time.
class Workspace {
 public:
  ~Workspace() { std::free(p_); }
  void* get(std::size_t bytes) {
    if (bytes > bytes_) {
      std::free(p_);
      bytes_ = (bytes + 63) / 64 * 64;
      p_ = alloc_aligned(bytes_);
      if (!p_) bytes_ = 0;
    }
    return p_;
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};
// Per thread: the packed gemm panels, and the optimized conv2d's tile buffer.
extern thread_local Workspace tls_a_pack, tls_b_panels;

// ---- gemm
// The automatic gemm tile: rows = mc, cols = nc, depth = kc: the packed A block (mc x kc) and
// the chunk of the packed B panel (kc x nc) that share the L2, derived from the L1 and L2 sizes
// and the dispatched micro-kernel's register block.
TileConfig gemm_packed_tile(const DeviceInfo& info, DType t);
// K in equal steps of at most the tile's depth: every element's summation order depends on
// this alone (never on the threads or the other blocks), so every driver of the packed kernels
// gives bitwise the same C for the same tile.
inline index_t gemm_packed_kc(index_t k, const TileConfig& t) {
  return std::min(even_block(k, index_t(t.depth), 8), std::max<index_t>(t.depth, 1));
}

// C = beta * C where k == 0 (beta == 0 writes zeros without reading C, which may hold NaN):
// rows [i0, i1).
template <class T>
void gemm_scale_rows(const GemmArgs<T>& g, index_t i0, index_t i1) {
  for (index_t i = i0; i < i1; ++i) {
    T* c = g.c + i * g.ldc;
    for (index_t j = 0; j < g.n; ++j) c[j] = g.beta == T(0) ? T(0) : g.beta * c[j];
  }
}

// The packed gemm for a team of threads that run one function together: team(f) calls
// f(rank, size, barrier) on `size` threads at once, barrier() waiting for all of them, and returns
// when all are done. Per block of C whose panels fit the L3 and per K step, the threads take the
// step's work an item at a time from a shared count: first the units of C (up to mc rows x one L2
// chunk of nc columns, chunk-major so consecutive units share the chunk), computed from this step's
// panels, then the pieces of the next step's A and B panels, packed into the other of two sets. One
// barrier a K step; a thread done with its units packs, so packing fills the others' tails. Which
// thread takes a unit never changes what it computes: C is the same to the bit. `threads`: the
// team's size (for the split). Throws tilekit::Error when the panels cannot be allocated.
template <class T, class Team>
void gemm_packed(const GemmArgs<T>& g, const TileConfig& t, std::size_t l3_bytes, int threads, const Team& team) {
  if (g.k == 0) {
    const index_t step = std::max<index_t>(1, ceil_div(g.m, 4 * index_t(threads)));
    const index_t n = ceil_div(g.m, step);
    team([&](int rank, int size, const auto&) {
      for (index_t b = n * rank / size; b < n * (rank + 1) / size; ++b)
        gemm_scale_rows(g, b * step, std::min(g.m, (b + 1) * step));
    });
    return;
  }
  const simd::MicroTile mt = simd::gemm_micro_tile(dtype_of<T>());
  const index_t mr = index_t(mt.mr), nr = index_t(mt.nr);
  const index_t kc = gemm_packed_kc(g.k, t);
  const index_t mc = std::max(index_t(t.rows), mr), nc = std::max(index_t(t.cols) / nr, index_t(1)) * nr;
  // Blocks of C whose two sets of panels take at most a quarter of the L3 together.
  const index_t cap =
      std::max<index_t>(index_t(l3_bytes / 16 / (std::size_t(kc) * sizeof(T))), 8 * std::max(mr, nr));
  const index_t mc3 = even_block(g.m, cap, mr), nc3 = even_block(g.n, cap, nr);
  constexpr std::size_t line = 64 / sizeof(T);
  const std::size_t a_elems = (std::size_t(mc3 * kc) + line - 1) / line * line;
  const std::size_t set = a_elems + (std::size_t(nc3 * kc) + line - 1) / line * line;
  T* const panels = static_cast<T*>(tls_b_panels.get(2 * set * sizeof(T)));
  if (!panels) throw Error("cannot allocate " + std::to_string(2 * set * sizeof(T)) + " bytes for the packed gemm panels");
  // The items of the team's q-th step are counted in taken[q % 2]; the other count is cleared
  // during the step, for the next one (the barrier between them orders the two).
  std::atomic<index_t> taken[2];
  taken[0] = 0;
  taken[1] = 0;
  team([&](int rank, int, const auto& barrier) {
    index_t s = 0;  // K steps computed so far, over every block: set s % 2 holds the next one's panels
    index_t q = 0;  // the team's steps so far (packing alone included)
    for (index_t jc = 0; jc < g.n; jc += nc3)
      for (index_t ic = 0; ic < g.m; ic += mc3) {
        const index_t mb = std::min(mc3, g.m - ic), nb = std::min(nc3, g.n - jc);
        const index_t pm = ceil_div(mb, mr), pn = ceil_div(nb, nr);
        const index_t chunks = ceil_div(pn * nr, nc);
        // Rows in pieces of at most mc, and enough units for every thread to take two.
        const index_t pieces = std::min(pm, std::max(ceil_div(pm * mr, mc), ceil_div(2 * index_t(threads), chunks)));
        const index_t units = chunks * pieces;
        const index_t a_items = std::min(pm, 4 * index_t(threads)), b_items = std::min(pn, 4 * index_t(threads));
        auto pack = [&](index_t i, index_t pc, T* ap) {
          const index_t kb = std::min(kc, g.k - pc);
          if (i < a_items)
            simd::gemm_pack_a_panel(g, simd::GemmPanel{pc, kb, ic, mb, pm * i / a_items, pm * (i + 1) / a_items}, ap);
          else
            simd::gemm_pack_panel(
                g, simd::GemmPanel{pc, kb, jc, nb, pn * (i - a_items) / b_items, pn * (i - a_items + 1) / b_items},
                ap + a_elems);
        };
        auto compute = [&](index_t u, index_t pc, const T* ap) {
          const index_t ch = u / pieces, pi = u % pieces;
          const index_t r0 = pm * pi / pieces, r1 = pm * (pi + 1) / pieces;
          const index_t c0 = pn * ch / chunks, c1 = pn * (ch + 1) / chunks;
          const simd::GemmBlock block{ic + r0 * mr, std::min(g.m, ic + r1 * mr), jc + c0 * nr,
                                      std::min(g.n, jc + c1 * nr), ic, jc, pc, std::min(kc, g.k - pc), false};
          simd::gemm_compute_block(g, block, ap, ap + a_elems);
        };
        // One step: units of C from set `cur` (none before the first), then pieces of the panels at
        // K offset `next` into the other set (none after the last).
        auto step = [&](index_t pc, bool compute_step, index_t next) {
          T* const cur = panels + (s % 2) * set;
          T* const other = panels + ((s + 1) % 2) * set;
          const index_t n_units = compute_step ? units : 0, n_items = next < g.k ? a_items + b_items : 0;
          std::atomic<index_t>& count = taken[q % 2];
          if (rank == 0) taken[(q + 1) % 2].store(0, std::memory_order_relaxed);
          for (index_t i = count.fetch_add(1, std::memory_order_relaxed); i < n_units + n_items;
               i = count.fetch_add(1, std::memory_order_relaxed)) {
            if (i < n_units)
              compute(i, pc, cur);
            else
              pack(i - n_units, next, compute_step ? other : cur);
          }
          barrier();
          ++q;
          if (compute_step) ++s;
        };
        step(0, false, 0);  // the first panels, into set s % 2
        for (index_t pc = 0; pc < g.k; pc += kc) step(pc, true, pc + kc);
      }
  });
}

// ---- transpose
// rows x cols blocks of the input, each one thread's (see packed.cpp for the shape).
TileConfig transpose_packed_tile(const DeviceInfo& info, DType t);
// Whether the output goes past the caches with streaming stores (outputs beyond the L3 a core
// can reach, at most `l3_bytes`; on Intel CPUs beyond a core's L2).
bool transpose_packed_streams(std::size_t out_bytes, std::size_t l3_bytes);

// ---- conv2d
// rows x cols output tiles, copied with their halo into a per-thread buffer.
TileConfig conv2d_packed_tile(const DeviceInfo& info, const Problem& p);
// The tile buffer's row stride (elements) and size (bytes) for tile `t`.
struct Conv2dBuffer {
  index_t ld = 0;
  std::size_t bytes = 0;
};
Conv2dBuffer conv2d_packed_buffer(DType dt, index_t r, const TileConfig& t);
// How every tile of one call runs, read once per call (the tunings host.conv2d.stream,
// host.conv2d.read and host.conv2d.schedule): whether the outputs stream past the caches (auto:
// the size rule of transpose_packed_streams), whether the strips (R = 3, 5, 7) read the tile's
// interior from the image where it stands, copying only the frame whose windows reach outside it,
// and whether the drivers hand the tiles out one at a time (else statically, each thread's
// consecutive, the next one fetched into the L2 while this one is computed).
struct Conv2dCall {
  bool stream = false;
  bool in_place = false;
  bool dynamic = true;
};
template <class T>
Conv2dCall conv2d_packed_call(const Conv2dArgs<T>& a);
// Output tile (bi, bj) of tile `t`: its input region with the halo (zeros outside the image)
// copied into `buf` (conv2d_packed_buffer's size and stride), or read in place where `call` says
// so, then the register-blocked kernel.
template <class T>
void conv2d_packed_tile_run(const Conv2dArgs<T>& a, const TileConfig& t, index_t bi, index_t bj, T* buf, index_t ld,
                            const Conv2dCall& call);

// ---- how the optimized kernels run, for describe_launch
std::string gemm_packed_kernel(DType t);       // "AVX2 micro-kernel 6x16"
std::string transpose_packed_kernel(DType t);  // "AVX2 in-register 8x8 transposes"
// "AVX2 strips of 16 columns sliding down the tile in bands of 20 rows, 5 rows of accumulators"
// (R = 3, 5, 7),
// "AVX2 register blocks of 4 rows x 16 columns" (other R); both when r < 0 (not known)
std::string conv2d_packed_kernel(DType t, index_t r = -1);

}  // namespace tilekit::host
