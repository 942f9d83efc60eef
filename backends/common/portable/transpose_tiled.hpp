// The tiled transpose, written once on the tile layer for every backend. A transpose does no
// arithmetic: the game is making both the reads and the writes of memory contiguous. A tile
// loads a rows x cols block of the input in row order (contiguous reads), and after a barrier
// writes it out in row order of the OUTPUT: consecutive lanes take consecutive output columns,
// which are consecutive input rows, so they read down a column of the scratch block.
// GPUs: the block is NOT padded, so those column reads hit one shared-memory bank many times
// over (32-way for a 32-wide float block): the cost the optimized kernels remove. CPUs: the
// block is sized so that its input and output lines all stay in L1.
#pragma once

#include "tilekit/tile.hpp"
#include "tilekit/types.hpp"

namespace tilekit::portable {

template <class T>
struct TransposeTiled {
  TransposeArgs<T> a;
  int rows, cols;  // the input block of one tile

  tile::Shape shape(tile::Dim2 lanes, const char* name) const {
    return {(a.cols + cols - 1) / cols, (a.rows + rows - 1) / rows, lanes, tile::scratch_bytes<T>(rows, cols), name};
  }

  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    auto block = tile::scratch<T>(t, rows, cols);  // unpadded on purpose
    const index_t i0 = t.y() * rows, j0 = t.x() * cols;
    t.load(block, tile::GlobalView<T>{a.in, a.rows, a.cols, a.ld_in}, i0, j0);
    t.barrier();
    // Output row r of the tile is input column j0 + r; its column c is input row i0 + c. Only
    // those inside the matrix, as loop bounds (a CPU's inner loop then has no condition in it
    // and vectorises).
    const int rows_out = int(a.cols - j0 < cols ? a.cols - j0 : cols), cols_out = int(a.rows - i0 < rows ? a.rows - i0 : rows);
    t.for_each(rows_out, cols_out, [&](int r, int c) { a.out[(j0 + r) * a.ld_out + i0 + c] = block(c, r); });
  }
};

template <class T, class Run>
void transpose_tiled(const TransposeArgs<T>& a, const TileConfig& t, tile::Dim2 lanes, Run&& run) {
  const TransposeTiled<T> k{a, t.rows, t.cols};
  run(k.shape(lanes, "transpose_tiled"), k);
}

}  // namespace tilekit::portable
