// out = in (*) filter (R x R, zero padding) in Kokkos.
//   naive:     one MDRange index per output, R*R taps read straight from memory with border
//              checks on every tap.
//   tiled:     the PMPP input-tile scheme, written once for every backend on the tile layer
//              (backends/portable/conv2d_tiled.hpp): one team per output tile copies the tile
//              plus its R-1 halo into team scratch (zeros outside the image), a barrier, then
//              every output is computed from scratch with no border checks.
//   optimized: filter sizes 1, 3, 5 and 7 compiled in (unrolled taps); the filter staged in
//              scratch, and thread coarsening: each thread computes
//              P = 8 (GPUs; 4 on hosts) vertically adjacent outputs, so every input value it loads from scratch
//              feeds up to P accumulators held in registers (P + R - 1 rows of loads for P rows
//              of outputs instead of P * R).
#include <algorithm>

#include "kokkos.hpp"
#include "../portable/conv2d_tiled.hpp"
#include "tilekit/ops.hpp"

namespace tilekit::kokkos {
namespace conv2d_kernels {

template <class T>
struct ConvView {
  const T* in;
  const T* filter;
  T* out;
  int h, w, ld_in, ld_out, r;
  explicit ConvView(const Conv2dArgs<T>& a)
      : in(a.in), filter(a.filter), out(a.out), h(int(a.h)), w(int(a.w)), ld_in(int(a.ld_in)),
        ld_out(int(a.ld_out)), r(a.r) {}
};

template <class T>
void conv2d_naive(const Conv2dArgs<T>& args) {
  const ConvView<T> a(args);
  Kokkos::parallel_for(
      "tilekit::kokkos::conv2d_naive", naive_policy(a.w, a.h), KOKKOS_LAMBDA(const int j, const int i) {
        const int half = a.r / 2;
        T acc = 0;
        for (int fi = 0; fi < a.r; ++fi) {
          const int y = i + fi - half;
          if (y < 0 || y >= a.h) continue;
          for (int fj = 0; fj < a.r; ++fj) {
            const int x = j + fj - half;
            if (x >= 0 && x < a.w) acc += a.filter[fi * a.r + fj] * a.in[y * a.ld_in + x];
          }
        }
        a.out[i * a.ld_out + j] = acc;
      });
}

// P output rows per thread: 1 for tiled, more for optimized (which also stages the filter).
// RC > 0: the filter size fixed at compile time, so the tap loops unroll completely (filter
// offsets and the "does input row y feed output row q" tests become constants); RC = 0 takes
// any size at run time.
template <class T, int P, int RC = 0>
struct ConvTeam {
  ConvView<T> a;
  int tr, tc, tiles_c;

  // Scratch rows: the tile rounded up to whole strips of P rows, plus the halo.
  KOKKOS_INLINE_FUNCTION static int scratch_rows(int tr, int r) { return (tr + P - 1) / P * P + r - 1; }
  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int tr, int tc, int r) {
    return kScratchAlign + align_up(sizeof(T) * std::size_t(scratch_rows(tr, r)) * std::size_t(tc + r - 1)) +
           (P > 1 ? align_up(sizeof(T) * std::size_t(r) * std::size_t(r)) : 0);
  }

  // acc[q] += the taps of output row row0 + q, column c, for one strip.
  KOKKOS_INLINE_FUNCTION static void tap(const T* srow, const T* filter, int r, int y, int fj, T (&acc)[P]) {
    const T v = srow[fj];
    TILEKIT_UNROLL
    for (int q = 0; q < P; ++q) {
      const int fi = y - q;  // input row y feeds output row q through filter row y - q
      if (fi >= 0 && fi < r) acc[q] += filter[fi * r + fj] * v;
    }
  }
  KOKKOS_INLINE_FUNCTION static void strip(const T* s, int sw, const T* filter, int r_rt, int row0, int c,
                                           T (&acc)[P]) {
    if constexpr (RC > 0) {
      TILEKIT_UNROLL
      for (int y = 0; y < P + RC - 1; ++y) {
        TILEKIT_UNROLL
        for (int fj = 0; fj < RC; ++fj) tap(s + (row0 + y) * sw + c, filter, RC, y, fj, acc);
      }
    } else {
      for (int y = 0; y < P + r_rt - 1; ++y)
        for (int fj = 0; fj < r_rt; ++fj) tap(s + (row0 + y) * sw + c, filter, r_rt, y, fj, acc);
    }
  }

  // The window rows [0, sh) x [0, sw) from image row y0, column x0 (zeros outside). On GPUs the
  // team's threads take columns 32 at a time (a warp reads along a row) and step down them four
  // rows at a time, all four loads issued before the stores: a flat index with a division per
  // element cost more instructions than the arithmetic of the compute phase, and one load in
  // flight per thread cannot cover the memory's latency (the cuda backend measured both:
  // backends/cuda/NOTES.md). Hosts: whole rows per thread (for_each_in_tile).
  KOKKOS_INLINE_FUNCTION void load_window(const Member& team, T* s, int sh, int sw, int y0, int x0) const {
    if (!exec_on_gpu()) {
      for_each_in_tile(team, sh, sw, [&](const int y, const int x) {
        const int gy = y0 + y, gx = x0 + x;
        s[y * sw + x] = (gy >= 0 && gy < a.h && gx >= 0 && gx < a.w) ? a.in[gy * a.ld_in + gx] : T(0);
      });
      return;
    }
    const int nt = team.team_size(), t = team.team_rank();
    const int bx = nt < 32 ? nt : 32, by = nt / bx, tx = t % bx, ty = t / bx;
    if (ty >= by) return;
    for (int x = tx; x < sw; x += bx) {
      const int gx = x0 + x;
      const bool col_in = gx >= 0 && gx < a.w;
      int y = ty;
      for (; y + 3 * by < sh; y += 4 * by) {
        T v[4];
        TILEKIT_UNROLL
        for (int k = 0; k < 4; ++k) {
          const int gy = y0 + y + k * by;
          v[k] = col_in && gy >= 0 && gy < a.h ? a.in[gy * a.ld_in + gx] : T(0);
        }
        TILEKIT_UNROLL
        for (int k = 0; k < 4; ++k) s[(y + k * by) * sw + x] = v[k];
      }
      for (; y < sh; y += by) {
        const int gy = y0 + y;
        s[y * sw + x] = col_in && gy >= 0 && gy < a.h ? a.in[gy * a.ld_in + gx] : T(0);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int r = RC > 0 ? RC : a.r, half = r / 2;
    const int i0 = team.league_rank() / tiles_c * tr, j0 = team.league_rank() % tiles_c * tc;
    const int sh = scratch_rows(tr, r), sw = tc + r - 1;
    ScratchCarver scratch(team, scratch_bytes(tr, tc, r));
    T* s = scratch.take<T>(std::size_t(sh) * std::size_t(sw));
    T* f = P > 1 ? scratch.take<T>(std::size_t(r) * std::size_t(r)) : nullptr;
    const T* filter = P > 1 ? f : a.filter;

    // Load phase: the tile and its halo, zeros outside the image.
    load_window(team, s, sh, sw, i0 - half, j0 - half);
    if (P > 1) Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r * r), [&](const int e) { f[e] = a.filter[e]; });
    team.team_barrier();

    // The taps stay in scratch: in registers (as the tiled kernel keeps them) the 8-row strips
    // measured slower on the H200 (R = 3: 59% -> 52% of memcpy).
    const T* taps = filter;

    // Compute phase: strip (of P rows) by column; adjacent threads take adjacent columns.
    const int strips = (tr + P - 1) / P;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, strips * tc), [&](const int e) {
      const int st = e / tc, c = e - st * tc, row0 = st * P;
      if (j0 + c >= a.w) return;
      T acc[P];
      for (int q = 0; q < P; ++q) acc[q] = 0;
      strip(s, sw, taps, r, row0, c, acc);
      TILEKIT_UNROLL
      for (int q = 0; q < P; ++q) {
        const int i = i0 + row0 + q;
        if (row0 + q < tr && i < a.h) a.out[i * a.ld_out + j0 + c] = acc[q];
      }
    });
  }
};

// 8 rows per thread on GPUs (measured there); hosts keep 4, which ran twice as fast as 8 on
// the Serial space (2048^2, R = 5: 48 vs 90 ms on the CI machine).
constexpr int kRowsPerThread = exec_on_gpu() ? 8 : 4;

template <class T, int P>
Launch plan_team(const Problem& p, const TileConfig& t) {
  Launch l;
  l.league = tiles(p.m, t.rows) * tiles(p.n, t.cols);
  l.scratch = ConvTeam<T, P>::scratch_bytes(t.rows, t.cols, int(p.k));
  const ConvTeam<T, P> probe{ConvView<T>(Conv2dArgs<T>{}), t.rows, t.cols, 1};
  TeamPolicy policy(1, 1);
  policy.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
  const int threads = (t.rows + P - 1) / P * t.cols;  // one per strip and column
  const int limit = P > 1 ? policy.team_size_max(probe, Kokkos::ParallelForTag())
                          : policy.team_size_recommended(probe, Kokkos::ParallelForTag());
  l.team = std::max(1, std::min(limit, threads));
  return l;
}

// The portable tiled kernel on GPUs: the cuda backend's shape (64-wide compiled tiles, 8 rows
// per thread, about 256 threads a team); on hosts one team thread loops over a lane per output.
constexpr int kTiledCols = 64, kTiledRows = 8;
tile::Dim2 tiled_lanes(const TileConfig& t) {
  if (!exec_on_gpu()) return {t.cols, t.rows};
  int by = std::max(1, std::min(t.rows, std::max(1, 256 / t.cols)));
  if (t.cols == kTiledCols && t.rows % kTiledRows == 0) by = std::max(1, std::min(by, t.rows / kTiledRows));
  return {t.cols, by};
}

template <class T>
Launch plan(Variant v, const Problem& p, const TileConfig& t) {
  if (v == Variant::naive) {
    Launch l;
    l.kernel = "MDRange over the output, R*R taps from memory with border checks";
    return l;
  }
  if (v == Variant::tiled) {
    Launch l;
    const tile::Dim2 lanes = tiled_lanes(t);
    l.league = tiles(p.m, t.rows) * tiles(p.n, t.cols);
    l.team = exec_on_gpu() ? lanes.count() : 1;
    l.scratch = portable::Conv2dTiled<T>::scratch_bytes(int(p.k), t.rows, t.cols);
    l.kernel = std::string("tile layer: tile + halo in scratch, ") +
               (exec_on_gpu() && t.cols == kTiledCols && p.k <= 9 && t.rows % kTiledRows == 0
                    ? std::to_string(kTiledRows) + " outputs per thread down a column"
                    : "one output per lane") +
               ", filter in registers when R <= 9";
    return l;
  }
  Launch l = plan_team<T, kRowsPerThread>(p, t);
  l.kernel = "tile + halo and filter in scratch, " + std::to_string(kRowsPerThread) +
             " outputs per thread in registers";
  return l;
}

template <class T>
std::size_t scratch_for(Variant v, const TileConfig& t, int r) {
  return v == Variant::optimized ? ConvTeam<T, kRowsPerThread>::scratch_bytes(t.rows, t.cols, r)
                                 : portable::Conv2dTiled<T>::scratch_bytes(r, t.rows, t.cols) + kScratchAlign;
}

template <class T>
TileConfig auto_tile(Variant v, const Problem& p) {
  // The largest square tile up to 64 x 64 (GPUs; 32 x 32 on hosts) whose scratch (with this
  // filter's halo) fits twice in a team's share, so that a GPU multiprocessor keeps several
  // teams resident. Bigger tiles re-read less halo.
  const std::size_t budget = scratch_max() / 2;
  int side = exec_on_gpu() ? 64 : 32;
  while (side > 4 && scratch_for<T>(v, {side, side, 0}, int(p.k)) > budget) side /= 2;
  return {side, side, 0};
}

// The common small filters get kernels with their size compiled in.
template <class T, int P>
void launch(const char* name, const TeamPolicy& policy, const ConvView<T>& a, const TileConfig& t, int tiles_c) {
  switch (a.r) {
    case 1: return Kokkos::parallel_for(name, policy, ConvTeam<T, P, 1>{a, t.rows, t.cols, tiles_c});
    case 3: return Kokkos::parallel_for(name, policy, ConvTeam<T, P, 3>{a, t.rows, t.cols, tiles_c});
    case 5: return Kokkos::parallel_for(name, policy, ConvTeam<T, P, 5>{a, t.rows, t.cols, tiles_c});
    case 7: return Kokkos::parallel_for(name, policy, ConvTeam<T, P, 7>{a, t.rows, t.cols, tiles_c});
    default: return Kokkos::parallel_for(name, policy, ConvTeam<T, P>{a, t.rows, t.cols, tiles_c});
  }
}

}  // namespace conv2d_kernels

using namespace conv2d_kernels;

TileConfig conv2d_tile(Variant v, const Problem& p, const TileConfig& requested) {
  auto resolve = [&](auto zero) -> TileConfig {
    using T = decltype(zero);
    if (requested.is_auto()) return v == Variant::naive ? TileConfig{} : auto_tile<T>(v, p);
    const Variant checked = v == Variant::naive ? Variant::tiled : v;
    const std::size_t reserved = scratch_for<T>(checked, requested, int(p.k)) - tile_scratch_bytes(p, requested);
    check_team_scratch(p, requested, reserved,
                       checked == Variant::optimized ? "alignment, whole strips of rows and the filter" : "alignment");
    if (checked == Variant::tiled) check_tile_lanes(p, requested, tiled_lanes(requested).count(), "one per column, rows in steps");
    return v == Variant::naive ? TileConfig{} : TileConfig{requested.rows, requested.cols, 0};
  };
  return p.dtype == DType::f32 ? resolve(0.0f) : resolve(0.0);
}

Launch conv2d_launch(Variant v, const Problem& p, const TileConfig& t) {
  return p.dtype == DType::f32 ? plan<float>(v, p, t) : plan<double>(v, p, t);
}

template <class T>
void conv2d(Variant v, const Conv2dArgs<T>& args, const TileConfig& t) {
  if (v == Variant::naive) return conv2d_naive(args);
  if (v == Variant::tiled)
    return portable::conv2d_tiled<exec_on_gpu()>(args, t, tiled_lanes(t), kTiledRows,
                                                 [](const tile::Shape& sh, const auto& k) { tile::run_kokkos(sh, k); });
  const Problem p{Op::conv2d, dtype_of<T>(), args.h, args.w, args.r};
  const Launch l = plan<T>(v, p, t);
  TeamPolicy policy(l.league, l.team);
  policy.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
  const ConvView<T> a(args);
  const int tiles_c = tiles(args.w, t.cols);
  launch<T, kRowsPerThread>("tilekit::kokkos::conv2d_optimized", policy, a, t, tiles_c);
}

template void conv2d<float>(Variant, const Conv2dArgs<float>&, const TileConfig&);
template void conv2d<double>(Variant, const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::kokkos
