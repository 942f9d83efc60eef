// Output rows each GPU lane of the tiled conv2d's compiled 64-wide tile (conv2d_tiled.hpp)
// computes down its column, for filter size r and element size: one rule for every GPU backend
// that runs the kernel (the cuda backend's tile_choice, the kokkos backend's plan). Measured on
// the H200 at 8192^2 (docs/design/gpu-conv2d-tiled.md): 8 rows with 16-byte asynchronous window
// copies (float R = 5: 80% of memcpy), except double R = 5, where 16 rows measured best.
#pragma once

namespace tilekit::portable {

inline constexpr int kConv2dTiledGpuRows = 8;

constexpr int conv2d_tiled_gpu_rows(int r, int elem_bytes, bool async_copy) {
  return async_copy && elem_bytes == 8 && r == 5 ? 16 : kConv2dTiledGpuRows;
}

// The tiles an SM the compiled 64-wide kernel's registers are bounded for (its launch bounds, with
// 256 lanes): 8 in float, 6 in double, 4 where a lane computes more than 8 rows.
constexpr int conv2d_tiled_gpu_min_tiles(int rows_per_lane, int elem_bytes) {
  return rows_per_lane > 8 ? 4 : elem_bytes == 4 ? 8 : 6;
}

}  // namespace tilekit::portable
