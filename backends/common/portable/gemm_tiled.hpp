// The tiled gemm, written once on the tile layer (include/tilekit/tile.hpp) for every backend:
// PMPP Fig. 5.13. A tile computes a rows x cols block of C = alpha A B + beta C with one lane
// per element, walking K in steps of `depth`: each step loads an A block (rows x depth) and a
// B block (depth x cols) into scratch, zero outside the matrices so the compute phase needs no
// checks, and every lane then reads `depth` pairs from there instead of from memory. Each
// element of A and B is read from memory once per tile instead of once per lane: the tile
// width divides the traffic.
// GPUs: scratch is shared memory and a lane a thread. CPUs: the blocks stay in L1 and the
// lane loop (columns of C) is the vector loop. Square tiles of the widths a GPU picks are
// compiled (kS) so the K loop unrolls and scratch addresses are immediates; on CPUs a lane of a
// compiled tile then sums kRows elements down its column in registers (below).
#pragma once

#include "tilekit/tile.hpp"
#include "tilekit/types.hpp"

namespace tilekit::portable {

template <class T, int kS = 0, int kRows = 1>
struct GemmTiled {
  GemmArgs<T> g;
  int rows, cols, depth;  // the tile; with kS > 0 all three are kS
  static constexpr int kMaxLanes = kS > 0 ? kS * kS / kRows : 1024;
  static constexpr int kMinTilesPerSM = kS > 0 ? 2048 / (kS * kS) : 2;  // GPU registers: two 1024-lane tiles
  // A compiled tile has compiled lanes: on GPUs the A and B blocks are then known to be shaped
  // like the lane grid, one element a lane, without a test in the K loop.
  static constexpr tile::Dim2 kLanes = kS > 0 ? tile::Dim2{kS, kS / kRows} : tile::Dim2{0, 0};

  static std::size_t scratch_bytes(int rows, int cols, int depth) {
    return tile::scratch_bytes<T>(rows, depth) + tile::scratch_bytes<T>(depth, cols);
  }
  tile::Shape shape(const char* name) const {
    return {(g.n + cols - 1) / cols, (g.m + rows - 1) / rows, {cols, rows / kRows}, scratch_bytes(rows, cols, depth), name};
  }

  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    const int tr = kS > 0 ? kS : rows, tc = kS > 0 ? kS : cols, td = kS > 0 ? kS : depth;
    auto as = make<kS>(t, tr, td);
    auto bs = make<kS>(t, td, tc);
    auto acc = tile::lane_state<T, kRows>(t);  // lane (x, y) sums C's column x, rows y kRows + i
    const index_t row0 = t.y() * tr, col0 = t.x() * tc;
    const tile::GlobalView<T> a{g.a, g.m, g.k, g.lda}, b{g.b, g.k, g.n, g.ldb};
    auto a_blocks = tile::block_walk(t, as, a, row0, 0, 0, td);  // along this tile's rows of A
    auto b_blocks = tile::block_walk(t, bs, b, 0, col0, td, 0);  // down its columns of B

    t.for_lanes([&](tile::Lane l) {
      TILEKIT_TILE_UNROLL
      for (int i = 0; i < kRows; ++i) acc(l, i) = T(0);
    });
    for (index_t p0 = 0; p0 < g.k; p0 += td, a_blocks.next(), b_blocks.next()) {
      t.load(a_blocks);
      t.load(b_blocks);
      t.barrier();  // the blocks are complete before anyone reads them
      if constexpr (kS > 0) {
        // Every lane walks the block's depth with its sums in registers. CPUs: the lane loop
        // runs along a row of C, so the sums are kRows vectors for the whole block, and each
        // vector of B read from L1 feeds kRows multiply-adds (thread coarsening, PMPP 6.3).
        t.for_lanes([&](tile::Lane l) {
          T s[kRows];
          TILEKIT_TILE_UNROLL
          for (int i = 0; i < kRows; ++i) s[i] = acc(l, i);
          const auto ar = as.rows_from(l.y * kRows);  // this lane's rows of A's block
          for (int kk = 0; kk < kS; ++kk) {
            const T bv = bs(kk, l.x);
            TILEKIT_TILE_UNROLL
            for (int i = 0; i < kRows; ++i) s[i] += ar(i, kk) * bv;
          }
          TILEKIT_TILE_UNROLL
          for (int i = 0; i < kRows; ++i) acc(l, i) = s[i];
        });
      } else {
        // Any shape: one multiply-add per lane per step of the depth, the step loop outside the
        // lane loop (a CPU compiler vectorises a lane loop around a depth loop only when the
        // depth's stride through B is a compile-time constant), the sums in lane state (L1).
        for (int kk = 0; kk < td; ++kk) t.for_lanes([&](tile::Lane l) { acc[l] += as(l.y, kk) * bs(kk, l.x); });
      }
      t.barrier();  // everyone is done reading before the next step overwrites them
    }
    // The lanes whose element of C exists (PMPP's `if (row < M && col < N)`, as a lane range).
    const int rows_in = int(g.m - row0 < tr ? g.m - row0 : tr), cols_in = int(g.n - col0 < tc ? g.n - col0 : tc);
    TILEKIT_TILE_UNROLL
    for (int i = 0; i < kRows; ++i)
      t.for_lanes({cols_in, (rows_in - i + kRows - 1) / kRows}, [&](tile::Lane l) {
        T& c = g.c[(row0 + l.y * kRows + i) * g.ldc + col0 + l.x];
        c = g.beta == T(0) ? g.alpha * acc(l, i) : g.alpha * acc(l, i) + g.beta * c;  // beta == 0: C may hold NaN
      });
  }

 private:
  static_assert(kRows == 1 || (kS > 0 && kS % kRows == 0), "a lane sums several rows only of a compiled tile");
  // A rows x cols scratch array, its row length compiled when the tile is.
  template <int kFixed, class Tile>
  TILEKIT_TILE_FN static auto make(Tile& t, int rows, int cols) {
    if constexpr (kFixed > 0)
      return tile::scratch<T, kFixed>(t, kFixed);
    else
      return tile::scratch<T>(t, rows, cols);
  }
};

// Rows a lane sums on CPUs: 8 vectors of sums, the B vector and a broadcast of A take 10 of
// the 16 vector registers of x86-64's baseline (SSE2), and 8 independent sums cover the adds'
// latency.
inline constexpr int kHostRows = 8;

// Runs the tiled gemm with tile t through `run(shape, kernel)` (the backend's executor): a
// compiled square width, or the general kernel. Widths compiled: up to 32 on GPUs (a block has
// at most 1024 threads), a lane per element; up to 64 on CPUs, a lane per kHostRows elements
// down a column, whose lane loop then vectorises with the sums in registers (host_backend.cpp's
// automatic CPU tile is one of them).

template <bool kGpuShapes, class T, class Run>
void gemm_tiled(const GemmArgs<T>& g, const TileConfig& t, Run&& run) {
  const int s = t.rows == t.cols && t.cols == t.depth ? t.rows : 0;
  auto go = [&](auto kS) {
    constexpr int S = decltype(kS)::value;
    constexpr int R = kGpuShapes || S == 0 ? 1 : (S < kHostRows ? S : kHostRows);
    const GemmTiled<T, S, R> k{g, t.rows, t.cols, t.depth};
    run(k.shape("gemm_tiled"), k);
  };
  if constexpr (kGpuShapes)
    tile::with_size<8, 16, 32>(s, go);
  else
    tile::with_size<64, 32, 16, 8>(s, go);
}

}  // namespace tilekit::portable
