// The tiled conv2d, written once on the tile layer for every backend: PMPP's input tile. A tile
// of rows x cols outputs loads its input window (the tile plus the R - 1 halo, zero outside the
// image) into scratch once, and every output then reads its R x R neighbourhood from there:
// each input is read from memory about once per tile instead of R^2 times.
// The window's rows carry the halo rounded up to whole 16-byte vectors each side, so that on a
// GPU the load is aligned 16-byte asynchronous copies (where the image allows them); output
// column x's window then starts at scratch column x + pad - R/2.
// With R compiled (kR) the taps unroll (on NVIDIA GPUs each tap is then an FFMA operand from
// constant memory, where the layer puts the launch's constants); with kRows > 1 a lane
// computes kRows outputs down a column (thread coarsening, PMPP 6.3): they share R - 1 of their
// R window rows, so each scratch value read feeds up to kRows multiply-adds ((kRows + R - 1) R
// reads for kRows R^2 FMAs: 7.5 per output instead of 25 at R = 5 and 8 rows).
#pragma once

#include "conv2d_tiled_rows.hpp"

#include "tilekit/tile.hpp"
#include "tilekit/types.hpp"

namespace tilekit::portable {

// Elements each side of the window's rows: R / 2 rounded up to whole 16-byte vectors.
template <class T>
TILEKIT_TILE_FN constexpr int conv2d_window_pad(int r) {
  constexpr int w = 16 / int(sizeof(T));
  return (r / 2 + w - 1) / w * w;
}

// kLanesCoverRows: lanes.y * kRows >= the tile's rows, so a lane computes one group of rows
// (the CPU executors' shape); otherwise lanes step down the tile (a GPU block of ~256 threads).
// kLy > 0 (GPUs, with kCols): the tile is kTileRows x kCols and its lanes fixed at kCols x kLy
// (tile::Dim2 kLanes), so the window load's loop and the lanes' walk down the tile have
// compile-time trip counts.
template <class T, int kR = 0, int kRows = 1, int kCols = 0, bool kLanesCoverRows = false, int kLy = 0,
          int kTileRows = 0>
struct Conv2dTiled {
  Conv2dArgs<T> a;
  int rows, cols;  // the output tile; kRows divides rows, and kCols (when set) is cols
  // GPUs, the compiled 64-wide shape: about 256 lanes a tile (tile_choice), and registers for 8
  // tiles an SM in float, 6 in double (the memory-bound kernel needs the bytes in flight that
  // occupancy brings; 32 registers hold float's 8 rows without spills, as in the hand-written
  // kernel, double's spill at R >= 7).
  static constexpr int kMaxLanes = kCols > 0 ? 256 : 1024;
  static constexpr int kMinTilesPerSM = kCols > 0 ? conv2d_tiled_gpu_min_tiles(kRows, int(sizeof(T))) : 1;
  static constexpr tile::Dim2 kLanes = kLy > 0 ? tile::Dim2{kCols, kLy} : tile::Dim2{0, 0};

  static std::size_t scratch_bytes(int r, int rows, int cols) {
    return tile::scratch_bytes<T>(rows + r - 1, cols + 2 * conv2d_window_pad<T>(r));
  }
  // The filter is the launch's constants: on GPUs in constant memory, broadcast to every lane.
  tile::Shape shape(tile::Dim2 lanes, const char* name) const {
    return {(a.w + cols - 1) / cols, (a.h + rows - 1) / rows, lanes, scratch_bytes(a.r, rows, cols), name,
            a.filter, std::size_t(a.r) * std::size_t(a.r) * sizeof(T)};
  }

  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    const int r = kR > 0 ? kR : a.r, tr = kTileRows > 0 ? kTileRows : rows, tc = kCols > 0 ? kCols : cols;
    const int pad = conv2d_window_pad<T>(r);
    auto win = window(t, r, tr, tc, pad);
    const index_t i0 = t.y() * tr, j0 = t.x() * tc;
    t.load(win, tile::GlobalView<T>{a.in, a.h, a.w, a.ld_in}, i0 - r / 2, j0 - pad);
    const T* f = tile::constants<T>(t);  // the filter
    t.barrier();
    const int off = pad - r / 2;
    const int rows_in = int(a.h - i0 < tr ? a.h - i0 : tr), cols_in = int(a.w - j0 < tc ? a.w - j0 : tc);
    // Lane (x, y) computes output column x, rows r0 .. r0 + kRows - 1 of the tile.
    auto outputs = [&](tile::Lane l, int r0) {
      T acc[kRows];
      TILEKIT_TILE_UNROLL
      for (int o = 0; o < kRows; ++o) acc[o] = T(0);
      if constexpr (kR > 0) {
        TILEKIT_TILE_UNROLL
        for (int y = 0; y < kRows + kR - 1; ++y) {
          TILEKIT_TILE_UNROLL
          for (int fj = 0; fj < kR; ++fj) {
            const T v = win(r0 + y, l.x + off + fj);
            TILEKIT_TILE_UNROLL
            for (int o = 0; o < kRows; ++o)  // compile-time after unrolling: the branch folds
              if (y - o >= 0 && y - o < kR) acc[o] += f[(y - o) * kR + fj] * v;
          }
        }
      } else {
        for (int fi = 0; fi < r; ++fi)
          for (int fj = 0; fj < r; ++fj) acc[0] += f[fi * r + fj] * win(r0 + fi, l.x + off + fj);
      }
      T* out = a.out + (i0 + r0) * a.ld_out + j0 + l.x;
      TILEKIT_TILE_UNROLL
      for (int o = 0; o < kRows; ++o)
        if (kLanesCoverRows || r0 + o < rows_in) out[o * a.ld_out] = acc[o];
    };
    // Only the lanes whose outputs are inside the image (PMPP's `if (row < M && col < N)`, as
    // a lane range: a CPU's lane loop then has no condition in it and vectorises).
    if constexpr (kLanesCoverRows) {
      t.for_lanes({cols_in, rows_in}, [&](tile::Lane l) { outputs(l, l.y); });  // kRows == 1
    } else if constexpr (kLy > 0) {  // each lane's row groups, a compiled number of them
      t.for_lanes({cols_in, tr}, [&](tile::Lane l) {
        TILEKIT_TILE_UNROLL
        for (int g = 0; g < kTileRows / (kLy * kRows); ++g)
          if ((l.y + g * kLy) * kRows < rows_in) outputs(l, (l.y + g * kLy) * kRows);
      });
    } else {
      t.for_lanes({cols_in, tr}, [&](tile::Lane l) {
        for (int r0 = l.y * kRows; r0 < rows_in; r0 += t.lanes().y * kRows) outputs(l, r0);
      });
    }
  }

 private:
  static_assert(kR > 0 || kRows == 1, "a lane computes several rows only with R compiled");
  static_assert(!kLanesCoverRows || kRows == 1, "lanes cover the rows one each");
  static_assert(kLy == 0 || (kCols > 0 && kTileRows > 0 && kTileRows % (kLy * kRows) == 0),
                "lanes are fixed only with the tile compiled, in whole row groups");
  template <class Tile>
  TILEKIT_TILE_FN auto window(Tile& t, int r, int tr, int tc, int pad) const {
    if constexpr (kR > 0 && kCols > 0)
      return tile::scratch<T, kCols + 2 * conv2d_window_pad<T>(kR)>(t, tr + kR - 1);
    else
      return tile::scratch<T>(t, tr + r - 1, tc + 2 * pad);
  }
};

// Runs the tiled conv2d with output tile t and `lanes` through `run(shape, kernel)`. kGpuShapes:
// the backend is a GPU, whose lanes compute rows_per_lane outputs down a column (8 or 16,
// when the tile's rows allow) and whose automatic 64-wide tile is compiled; CPU backends run
// one output per lane (the lane loop is their vector loop). R <= 9 is compiled.
// The GPUs' automatic tile, 64 x 64 outputs on 64 x 4 lanes (256 threads; tile_choice), is
// compiled with its rows and lanes fixed.
inline constexpr int kGpuRowLanes = 4;

template <bool kGpuShapes, class T, class Run>
void conv2d_tiled(const Conv2dArgs<T>& a, const TileConfig& t, tile::Dim2 lanes, int rows_per_lane, Run&& run) {
  const char* name = "conv2d_tiled";
  tile::with_size<1, 3, 5, 7, 9>(a.r, [&](auto kR) {
    constexpr int R = decltype(kR)::value;
    if constexpr (kGpuShapes && R > 0) {
      const int coarse = t.rows % rows_per_lane == 0 ? rows_per_lane : 1;
      if (t.cols == 64) {
        tile::with_size<8, 16>(coarse, [&](auto kRows) {
          constexpr int Rows = decltype(kRows)::value > 0 ? decltype(kRows)::value : 1;
          if (t.rows == 64 && lanes.x == 64 && lanes.y == kGpuRowLanes) {  // the automatic tile and block
            const Conv2dTiled<T, R, Rows, 64, false, kGpuRowLanes, 64> k{a, t.rows, t.cols};
            run(k.shape(lanes, name), k);
          } else {
            const Conv2dTiled<T, R, Rows, 64> k{a, t.rows, t.cols};
            run(k.shape(lanes, name), k);
          }
        });
        return;
      }
    }
    if (lanes.y >= t.rows) {
      const Conv2dTiled<T, R, 1, 0, true> k{a, t.rows, t.cols};
      run(k.shape(lanes, name), k);
    } else {
      const Conv2dTiled<T, R, 1> k{a, t.rows, t.cols};
      run(k.shape(lanes, name), k);
    }
  });
}

}  // namespace tilekit::portable
