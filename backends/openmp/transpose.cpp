// transpose, all three variants; the optimized one's in-register kernels are in transpose_simd.cpp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "openmp.hpp"

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

// The host's blocking (backends/common/host/packed.cpp), which kokkos on a host space shares.
TileConfig transpose_optimized_tile(const DeviceInfo& info, DType t) { return host::transpose_packed_tile(info, t); }

template <class T>
void transpose_optimized(const TransposeArgs<T>& a, const TileConfig& t, std::size_t stream_above) {
  const bool stream = host::transpose_packed_streams(std::size_t(a.rows * a.cols) * sizeof(T), stream_above);
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
  return fmt::format("{} threads over {} blocks, {} in-register {}x{} transposes, streaming stores for outputs the caches cannot keep",
                     max_threads(), t.str(), simd::target_name(), lanes, lanes);
}

template void transpose_naive<float>(const TransposeArgs<float>&);
template void transpose_naive<double>(const TransposeArgs<double>&);
template void transpose_optimized<float>(const TransposeArgs<float>&, const TileConfig&, std::size_t);
template void transpose_optimized<double>(const TransposeArgs<double>&, const TileConfig&, std::size_t);

}  // namespace tilekit::openmp
