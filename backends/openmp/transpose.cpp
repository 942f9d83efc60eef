// transpose, all three variants; the optimized one's in-register kernels are in transpose_simd.cpp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "openmp.hpp"
#include "simd.hpp"

namespace tilekit::openmp {

// ---------------------------------------------------------------- naive
// The naive variants: the serial backend's plain loops with the outermost loop split across the
// OpenMP threads, nothing else. They show what threads alone buy when every access pattern is
// left as the textbook writes it.

// Reads rows, writes columns: each thread's writes land one cache line apart.
template <class T>
void transpose_naive(const TransposeArgs<T>& a) {
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < a.cols; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
}

// ---------------------------------------------------------------- tiled
// The tiled variant is the portable one (backends/common/portable/transpose_tiled.hpp), run by
// backend.cpp over tiles of this shape, on every thread.
TileConfig transpose_tiled_tile(const DeviceInfo& info, DType t) {
  // The tile's output rows are ld_out elements apart: for the power-of-two sizes everyone
  // benchmarks they all fall into one L1 set, which holds 8 lines (8-way). So the tile is 8
  // input columns wide: its 8 output rows, written 4 at a time by the host executor
  // (tile/host.hpp's row groups), stay resident while the whole tile writes into them; and a
  // quarter of the L1 tall: 256 x 8 floats on a 32 KiB L1 (the shape of the hand-written kernel
  // the portable one replaced). Measured on 2 Zen 4 cores against that kernel
  // (docs/design/tile-layer-host-executor.md):
  // 256 x 8 0.9-1.15x its time at 4096^2 and 1.09-1.16x at 8192^2; 512 x 8 0.8-1.1x at 4096^2
  // but 1.85x at 8192^2; 16 columns 1.4-2x; 64 x 64 (best when the executor wrote row by row)
  // 1.2-1.6x.
  constexpr int kWays = 8;
  const int rows = std::max(kWays, int(info.l1_bytes / 4 / (kWays * size_of(t))) / kWays * kWays);
  return {rows, kWays, 0};
}

// ---------------------------------------------------------------- optimized
// The optimized variants' drivers: tile choice, the static split of the work across the OpenMP
// threads, and per-thread workspaces. The arithmetic is in the dispatched kernels (simd.hpp).

TileConfig transpose_optimized_tile(const DeviceInfo& info, DType t) {
  // Every input line is consumed by one register square and every output line written by one,
  // so the block does not need to fit a cache for reuse; its shape sets how many lines each
  // visit to a page (a TLB entry, a DRAM row) covers: rows * e bytes of each output row and
  // cols * e of each input row, and how many pages a group of rows (one square tall) writes
  // into: one line into each of `cols` output rows.
  const int lanes = int(simd::transpose_lanes(t));
  if (host::cpu_is_amd_family_26()) {
    // Zen 5 (2 cores, 8192^2 floats, streaming; docs/design/openmp-transpose-blocks.md):
    // 512 x 64 30-38 GB/s against 256 x 256 20-24: 64 output rows per group stay inside the L1
    // DTLB, 256 do not. (The 16-core Xeon host measured the opposite: 512 x 64 55-62 GB/s,
    // 256 x 256 75-86; the Zen 4 machine ran 256 x 256 at 109% of its copy.)
    return {std::max(lanes, 512 / lanes * lanes), std::max(lanes, 64 / lanes * lanes), 0};
  }
  // Elsewhere a square of a quarter of the L2 (256 x 256 floats on a 1 MiB L2): on a Zen 4, 128 x
  // 128 blocks ran ~10% slower and larger ones gained nothing.
  index_t side = index_t(std::sqrt(double(info.l2_bytes) / 4.0 / double(size_of(t))));
  side = std::max(index_t(lanes), side / lanes * lanes);
  return {int(side), int(side), 0};
}

// The largest last-level cache one core can fill: a core uses its own CCD's or tile's L3 (32-96
// MiB on current x86), while a virtual machine may report the whole socket's (this project's
// Zen 5 machine: 508 MiB). Outputs above this stream past the caches.
constexpr std::size_t kMaxL3Reach = std::size_t(96) << 20;

template <class T>
void transpose_optimized(const TransposeArgs<T>& a, const TileConfig& t, std::size_t stream_above) {
  // Non-temporal stores pay off only when the output would not stay in the caches anyway.
  const bool stream = std::size_t(a.rows * a.cols) * sizeof(T) > std::min(stream_above, kMaxL3Reach);
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

template void transpose_naive<float>(const TransposeArgs<float>&);
template void transpose_naive<double>(const TransposeArgs<double>&);
template void transpose_optimized<float>(const TransposeArgs<float>&, const TileConfig&, std::size_t);
template void transpose_optimized<double>(const TransposeArgs<double>&, const TileConfig&, std::size_t);

}  // namespace tilekit::openmp
