// out = in (*) filter (R x R, zero padding) in Kokkos.
//   naive:     one thread per output, R*R taps read straight from memory with border checks on
//              every tap (on GPUs a 256-thread team per 32 x 8 piece of the output, as the cuda
//              backend launches it; MDRange on hosts).
//   tiled:     the PMPP input-tile scheme, written once for every backend on the tile layer
//              (backends/portable/conv2d_tiled.hpp): one team per output tile copies the tile
//              plus its R-1 halo into team scratch (zeros outside the image), a barrier, then
//              every output is computed from scratch with no border checks.
//   optimized: the cuda backend's kernel (backends/gpu/conv2d.cuh) on a Kokkos team (ConvBlock):
//              a 128-wide compiled tile, its window rows padded to 32-byte sectors (R = 3, 5 on
//              CUDA) or whole 16-byte vectors and loaded as vectors, a team thread (= a CUDA
//              thread) computing 8 rows x one 16-byte vector of columns from whole aligned vectors
//              of the window, vector stores. Filter sizes 1, 3, 5, 7 compiled in. What Kokkos
//              cannot say portably (cp.async, the __constant__ filter) is used on CUDA
//              (the kokkos.conv2d.* tunings, docs/design/kokkos-conv2d-optimized.md). Other
//              filters and tiles (and in sweep builds kokkos.conv2d.kernel=strips) run the strip
//              kernel (ConvTeam: filter in scratch, P vertically adjacent outputs per thread).
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kokkos.hpp"
#include "common/portable/conv2d_tiled.hpp"
#include "common/portable/conv2d_tiled_rows.hpp"  // the cuda backend's rows per lane
#include "host_packed.hpp"
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

// `league`: the plan's team launch (0: MDRange; the team launch is compiled for Kokkos::Cuda and
// in sweep builds). The body is the cuda kernel's source; under the team launch on Kokkos::Cuda
// (naive_for) it compiles to the cuda kernel's SASS (the same blocks: 32 instructions per 4 taps
// in float, 34 in double), where inside the MDRange launch's loops NVVM walked 64-bit pointers and
// copied uniform registers (39 per 4 taps).
template <class T>
void conv2d_naive(const Conv2dArgs<T>& args, index_t league) {
  const ConvView<T> a(args);
  naive_for<kSweeps || exec_is_cuda(), NaiveIndex::unsigned_div>(
      "tilekit::kokkos::conv2d_naive", a.w, a.h, KOKKOS_LAMBDA(const int j, const int i) {
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
      },
      league);
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
  // docs/design/gpu-conv2d-tiled.md). Hosts: whole rows per thread (for_each_in_tile).
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

// ---- the optimized kernel in the cuda backend's form
#if defined(KOKKOS_ENABLE_CUDA)
// The filter in CUDA constant memory, as the cuda backend keeps it (kokkos.conv2d.filter=
// constant): Kokkos has no constant memory space, so this is CUDA beside Kokkos, copied on the
// stream of Kokkos' default instance before the launch that reads it.
constexpr int kConstTaps = 7 * 7;
__constant__ float conv_const_f32[kConstTaps];
__constant__ double conv_const_f64[kConstTaps];
#endif

// Where the window comes from and where the taps live (measurement knobs,
// docs/design/kokkos-conv2d-optimized.md):
//   load   regs: 16-byte vector loads into registers, kBatch in flight, then 16-byte scratch
//          stores (portable Kokkos); async: cp.async.cg 16-byte copies, every vector of a thread
//          in flight before one wait, no register holding it (CUDA sm_80+ only: inline PTX
//          through the tile layer's copy_async; other spaces run regs).
//   filter regs: each thread loads the R*R taps from the filter's memory into registers once
//          (portable); constant: CUDA __constant__ memory, an FFMA operand (CUDA only).
enum class ConvLoad { regs, async };
enum class ConvFilter { regs, constant };

template <class T, int R, bool kConst>
struct Taps {
  T f[R * R];
  KOKKOS_INLINE_FUNCTION explicit Taps(const T* filter) {
    if (!kConst) {
      TILEKIT_UNROLL
      for (int i = 0; i < R * R; ++i) f[i] = filter[i];
    }
  }
  KOKKOS_INLINE_FUNCTION T operator[](int i) const {
#if defined(__CUDA_ARCH__) && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (kConst) {
      if constexpr (sizeof(T) == 4) return conv_const_f32[i];
      else return conv_const_f64[i];
    }
#endif
    return f[i];
  }
};

// The team: (128 / CW) x BY threads, BY = min(tile rows / 8, 256 / (128 / CW)) (float: 32 x 4,
// double: 64 x 4); each computes ROWS = 8 rows x CW = one 16-byte vector of columns, strip after
// strip down the tile. The window in scratch: tile rows + R - 1 rows of SW = 128 + 2P elements,
// P = R/2 rounded up to whole vectors, so that every vector is aligned and (the image width
// being whole vectors when kVec) wholly inside or outside the image; the window of output
// column x starts at scratch column x + P - R/2. A window row is read as NVR whole vectors from
// the one holding the thread's first value, and feeds every output row whose window contains
// it (~1.1 scratch loads per output at R = 5 in float, where one value per load makes 7.5).
// MinB: registers few enough for MinB teams of 256 threads per SM (0: no such request, cuda's
// __launch_bounds__(256)). Unbounded, ptxas gives this kernel 64 registers in float at R = 5
// where the cuda kernel has 48 (10 resident teams of 128 threads there, 8 here); with MinB = 5
// it fits 48 with no spills (conv_min_blocks).
// PU: the unit the window's rows are padded to each side, in elements: a 16-byte vector, or a
// 32-byte sector (the cuda kernel's `aligned`: the window's first column is then a sector
// boundary, so the rows' L2 requests are whole sectors). kLines (the cuda kernel's `-lines`,
// with the asynchronous copies only): a row's tile columns are copied first, TC / CW vectors (one
// warp instruction of whole 128-byte lines in float), then its padding columns, instead of
// row-major through the padded row, whose warp boundaries fall inside lines.
template <class T, int R, bool kVec, ConvLoad kLoad, ConvFilter kFilter, int MinB = 0, int PU = Pack<T>::W,
          bool kLines = false>
struct ConvBlock {
  static constexpr int CW = Pack<T>::W, TC = 128, HALF = R / 2, ROWS = 8, BX = TC / CW;
  static constexpr int P = (HALF + PU - 1) / PU * PU, SW = TC + 2 * P, NV = SW / CW;
  static_assert(PU % CW == 0, "rows padded to whole vectors");
  static constexpr int OFF = (P - HALF) % CW, NVR = (OFF + CW + R - 1 + CW - 1) / CW;
  static constexpr int kBatch = 8;  // window vectors per thread in flight (load = regs)
  static constexpr bool kConst = kFilter == ConvFilter::constant;
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<256, MinB>>;
  using Team = typename Policy::member_type;

  ConvView<T> a;
  int tr, tiles_c;

  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int tr) {
    return kScratchAlign + align_up(sizeof(T) * std::size_t(tr + R - 1) * std::size_t(SW));
  }
  static int team_size(int tr) { return exec_on_gpu() ? BX * std::max(1, std::min(tr / ROWS, 256 / BX)) : 1; }

  // Window rows [0, tr + R - 1) from image row i0 - HALF, column j0 - P; zeros outside the image.
  KOKKOS_INLINE_FUNCTION void load_window(const Team& team, T* tile, int i0, int j0) const {
    const int rank = team.team_rank(), nt = team.team_size();
    if (kVec) {
      const int n = (tr + R - 1) * NV;
#if defined(__CUDA_ARCH__) && defined(KOKKOS_ENABLE_CUDA)
      if constexpr (kLoad == ConvLoad::async) {
        auto* vt = reinterpret_cast<tile::detail::Bytes16*>(tile);
        auto copy = [&](int y, int v) {  // vector v of window row y
          const int gy = i0 + y - HALF, gx = j0 - P + v * CW;
          const bool ok = unsigned(gy) < unsigned(a.h) && unsigned(gx) < unsigned(a.w);
          tile::detail::copy_async(vt + y * NV + v,
                                   reinterpret_cast<const tile::detail::Bytes16*>(ok ? a.in + gy * a.ld_in + gx : a.in), ok);
        };
        if constexpr (kLines) {
          constexpr int NI = TC / CW, NE = 2 * P / CW;
          const int rows = tr + R - 1;
          TILEKIT_UNROLL_4
          for (int q = rank; q < rows * NI; q += nt) copy(q / NI, P / CW + q % NI);
          for (int q = rank; q < rows * NE; q += nt) {
            const int e = q % NE;
            copy(q / NE, e < NE / 2 ? e : NI + e);
          }
        } else {
          TILEKIT_UNROLL_4
          for (int q = rank; q < n; q += nt) {
            const int y = q / NV;
            copy(y, q - y * NV);
          }
        }
        tile::detail::copy_async_wait_all();
      } else
#endif
      for (int q0 = rank; q0 < n; q0 += kBatch * nt) {
        Pack<T> v[kBatch];
        TILEKIT_UNROLL
        for (int b = 0; b < kBatch; ++b) {
          const int q = q0 + b * nt, y = q / NV, gy = i0 + y - HALF, gx = j0 - P + (q - y * NV) * CW;
          if (q < n && unsigned(gy) < unsigned(a.h) && unsigned(gx) < unsigned(a.w))
            v[b] = *reinterpret_cast<const Pack<T>*>(a.in + gy * a.ld_in + gx);
          else
            for (int e = 0; e < CW; ++e) v[b].v[e] = T(0);
        }
        TILEKIT_UNROLL
        for (int b = 0; b < kBatch; ++b) {
          const int q = q0 + b * nt;
          if (q < n) store_pack_scratch(tile + q * CW, v[b]);
        }
      }
    } else {
      const int n = (tr + R - 1) * SW;
      for (int q0 = rank; q0 < n; q0 += kBatch * nt) {
        T v[kBatch];
        TILEKIT_UNROLL
        for (int b = 0; b < kBatch; ++b) {
          const int q = q0 + b * nt, y = q / SW, gy = i0 + y - HALF, gx = j0 - P + (q - y * SW);
          v[b] = q < n && unsigned(gy) < unsigned(a.h) && unsigned(gx) < unsigned(a.w) ? a.in[gy * a.ld_in + gx] : T(0);
        }
        TILEKIT_UNROLL
        for (int b = 0; b < kBatch; ++b)
          if (q0 + b * nt < n) tile[q0 + b * nt] = v[b];
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int i0 = team.league_rank() / tiles_c * tr, j0 = team.league_rank() % tiles_c * TC;
    ScratchCarver scratch(team, scratch_bytes(tr));
    T* tile = scratch.take<T>(std::size_t(tr + R - 1) * SW);
    const Taps<T, R, kConst> taps(a.filter);  // (regs) loads in flight beside the window's
    load_window(team, tile, i0, j0);
    team.team_barrier();

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, BX * (tr / ROWS)), [&](const int e) {
      const int x0 = (e % BX) * CW, r0 = e / BX * ROWS, j = j0 + x0;
      const Pack<T>* win = reinterpret_cast<const Pack<T>*>(tile) + (x0 + P - HALF - OFF) / CW;
      T acc[ROWS][CW];
      TILEKIT_UNROLL
      for (int o = 0; o < ROWS; ++o)
        TILEKIT_UNROLL
        for (int q = 0; q < CW; ++q) acc[o][q] = T(0);
      // Fully unrolled: every index is a compile-time constant, so the window values and the
      // accumulators stay in registers.
      TILEKIT_UNROLL
      for (int y = 0; y < ROWS + R - 1; ++y) {
        T v[NVR * CW];
        TILEKIT_UNROLL
        for (int k = 0; k < NVR; ++k) {
          const Pack<T> pv = win[(r0 + y) * NV + k];
          TILEKIT_UNROLL
          for (int q = 0; q < CW; ++q) v[k * CW + q] = pv.v[q];
        }
        TILEKIT_UNROLL
        for (int o = 0; o < ROWS; ++o) {
          const int fi = y - o;  // compile-time: the branch disappears
          if (fi >= 0 && fi < R) {
            TILEKIT_UNROLL
            for (int fj = 0; fj < R; ++fj) {
              const T f = taps[fi * R + fj];
              TILEKIT_UNROLL
              for (int q = 0; q < CW; ++q) acc[o][q] += f * v[OFF + q + fj];
            }
          }
        }
      }
      TILEKIT_UNROLL
      for (int o = 0; o < ROWS; ++o) {
        const int i = i0 + r0 + o;
        if (i >= a.h) break;
        T* out = a.out + i * a.ld_out + j;
        if (kVec) {
          if (j < a.w) {  // w is whole vectors
            Pack<T> pk;
            TILEKIT_UNROLL
            for (int q = 0; q < CW; ++q) pk.v[q] = acc[o][q];
            store_pack_global(out, pk);
          }
        } else {
          TILEKIT_UNROLL
          for (int q = 0; q < CW; ++q)
            if (j + q < a.w) out[q] = acc[o][q];
        }
      }
    });
  }
};

constexpr int kBlockCols = 128, kBlockRows = 32, kBlockRowsPerThread = 8;

// Which optimized kernel runs (the tunings kokkos.conv2d.kernel = block (default) | strips;
// kokkos.conv2d.load = auto | regs | async; kokkos.conv2d.filter = auto | regs | constant; every
// value but the default a sweep value), read by the plan. The defaults are the measured best
// (docs/design/kokkos-conv2d-optimized.md).
enum class ConvMode { block, strips };
inline ConvMode conv_mode() {
  return tuning_choice<ConvMode>("kokkos.conv2d.kernel", {{"block", ConvMode::block}, {"strips", ConvMode::strips}});
}
// auto (H200, 8192^2 float, kokkos / cuda same run): R = 3 regs + regs 101% (async + constant
// 98%); R = 5 async + constant 95-96% (regs + regs 92%). Only Kokkos::Cuda reads them.
inline ConvLoad conv_load(int r) {
  const ConvLoad fallback = r >= 5 ? ConvLoad::async : ConvLoad::regs;
  return tuning_choice<ConvLoad>("kokkos.conv2d.load", {{"auto", fallback}, {"regs", ConvLoad::regs}, {"async", ConvLoad::async}});
}
inline ConvFilter conv_filter(int r) {
  const ConvFilter fallback = r >= 5 ? ConvFilter::constant : ConvFilter::regs;
  return tuning_choice<ConvFilter>("kokkos.conv2d.filter",
                                   {{"auto", fallback}, {"regs", ConvFilter::regs}, {"constant", ConvFilter::constant}});
}
// The window's layout (kokkos.conv2d.window; Kokkos::Cuda, R = 3 and 5, vector images):
// vector (rows padded to 16-byte vectors, copied row-major), aligned (padded to 32-byte sectors),
// lines (sectors, each row's tile columns copied first: the cuda backend's default, aligned-lines).
// aligned and lines run with the asynchronous copies and the filter in constant memory.
// H200, 8192^2 float, against the cuda kernel in the same process (bench/results/h200-kokkos-r6.txt):
// R = 5 vector 3370 GB/s (0.88 of cuda's), aligned 3781 (0.99), lines 3810 (1.00); R = 3 vector
// 3502 (0.89), aligned 3878 (0.99), lines 3891 (1.00). So lines is the default.
enum class ConvWindow { vector, aligned, lines };
inline constexpr ConvWindow kConvWindowDefault = ConvWindow::lines;
inline ConvWindow conv_window(int r) {
  if (!exec_is_cuda()) return ConvWindow::vector;
  const ConvWindow w = tuning_choice<ConvWindow>(
      "kokkos.conv2d.window", {{"vector", ConvWindow::vector}, {"aligned", ConvWindow::aligned}, {"lines", ConvWindow::lines}});
  return r == 3 || r == 5 ? w : ConvWindow::vector;
}
// What the block kernel runs for filter size r on Kokkos::Cuda: the tunings above, with the pairs
// only instantiated together (R = 1, 7; the sector-padded windows) forced to them. The plan
// decides it; the launch follows the plan.
struct ConvChoice {
  bool async, constant;
  ConvWindow win;
};
inline ConvChoice conv_choice(int r) {
  ConvChoice c{exec_is_cuda() && conv_load(r) == ConvLoad::async,
               exec_is_cuda() && conv_filter(r) == ConvFilter::constant, conv_window(r)};
  if (r == 1 || r == 7) c.async = c.constant = c.async || c.constant;
  if (c.win != ConvWindow::vector) c.async = c.constant = true;
  return c;
}
// Whether the optimized call runs ConvBlock: compiled filter sizes, the compiled width, whole
// strips of rows.
inline bool runs_block(const TileConfig& t, int r) {
  return conv_mode() == ConvMode::block && (r == 1 || r == 3 || r == 5 || r == 7) && t.cols == kBlockCols &&
         t.rows > 0 && t.rows % kBlockRowsPerThread == 0;
}
template <class T>
bool block_vectorizable(const Conv2dArgs<T>& a) {
  constexpr index_t w = Pack<T>::W;
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(a.in) && aligned(a.out) && a.ld_in % w == 0 && a.ld_out % w == 0 && a.w % w == 0;
}
template <class T>
std::size_t block_scratch(int r, int tr) {
  // The sector-padded windows' rows where one runs (images that allow vectors: the most it takes).
  const int cw = conv_window(r) == ConvWindow::vector ? Pack<T>::W : 32 / int(sizeof(T));
  const int pad = (r / 2 + cw - 1) / cw * cw;
  return kScratchAlign + align_up(sizeof(T) * std::size_t(tr + r - 1) * std::size_t(kBlockCols + 2 * pad));
}

// The register budget of kokkos.conv2d.bounds=occ (a sweep value; in teams of 256 threads per SM): the
// cuda kernel's residency (resource-usage.md: float 48 registers at R <= 5). `none`:
// LaunchBounds<256, 0>, the cuda kernel's declaration. ptxas, sm_90, unbounded: float 61-64
// registers at R = 3, 5 (cuda: 48), 64 at R = 7 (cuda: 64); double 50-62 at R <= 5 (cuda: 50-62),
// 84-128 at R = 7 (cuda: 80; bounded to 80 it spills). Bounded to 5 x 256 threads, float takes 48
// with no spills (24 bytes at R = 3 with async + constant). So only float R <= 5 is bounded.
template <class T, int R>
constexpr int conv_min_blocks() {
  return sizeof(T) == 4 && R <= 5 ? 5 : 0;
}
enum class ConvBounds { none, occ };
inline ConvBounds conv_bounds() {
  return tuning_choice<ConvBounds>("kokkos.conv2d.bounds", {{"none", ConvBounds::none}, {"occ", ConvBounds::occ}});
}

// The tiled kernel's compiled width on GPUs, and its usual rows per lane.
constexpr int kTiledCols = 64, kTiledRows = 8;

// The plan's detail: the launch, and which kernel with which options.
struct ConvPlan : OpPlan {
  bool block = false;           // optimized: ConvBlock (else ConvTeam)
  ConvChoice choice{false, false, ConvWindow::vector};  // ... its load, filter and window
  bool bounds_occ = false;      // ... registers bounded (kokkos.conv2d.bounds=occ)
  bool tiled_block = false;     // tiled: the team's tile from its block's shared memory start
  int tiled_rows = kTiledRows;  // ... output rows per lane, down a column
  index_t naive_league = 0;     // naive: the team launch's league (0: MDRange)
};

template <class T, int R, bool kVec, ConvLoad L, ConvFilter F, int MinB, int PU, bool kLines>
void launch_block_kernel(const Conv2dArgs<T>& args, const TileConfig& t, int league) {
  using K = ConvBlock<T, R, kVec, L, F, MinB, PU, kLines>;
  typename K::Policy p(league, K::team_size(t.rows));
  p.set_scratch_size(0, Kokkos::PerTeam(K::scratch_bytes(t.rows)));
  Kokkos::parallel_for("tilekit::kokkos::conv2d_optimized_block", p, K{ConvView<T>(args), t.rows, tiles(args.w, t.cols)});
}
template <class T, int R, bool kVec, ConvLoad L, ConvFilter F, int PU = Pack<T>::W, bool kLines = false>
void launch_block(const Conv2dArgs<T>& args, const TileConfig& t, const ConvPlan& cp) {
  if constexpr (kSweeps) {  // the bounded kernels: sweep builds only
    if (exec_is_cuda() && cp.bounds_occ)
      return launch_block_kernel<T, R, kVec, L, F, conv_min_blocks<T, R>(), PU, kLines>(args, t, cp.launch.league);
  }
  launch_block_kernel<T, R, kVec, L, F, 0, PU, kLines>(args, t, cp.launch.league);
}

// Filters 3 and 5 (the measured ones) get every load x filter x bounds combination, and the
// sector-padded windows (with the asynchronous copies and the filter in constant memory, the cuda
// kernel's pair); 1 and 7 the portable pair and cuda's pair. A default build compiles what the
// defaults run: on Kokkos::Cuda the lines window at R = 3 and 5, the portable pair at R = 1 and
// cuda's pair at R = 7 (elsewhere the portable pair); and the element-wise kernel for every R.
template <class T, int R>
void launch_block(const Conv2dArgs<T>& args, const TileConfig& t, const ConvPlan& cp) {
  if (!block_vectorizable(args)) return launch_block<T, R, false, ConvLoad::regs, ConvFilter::regs>(args, t, cp);
#if defined(KOKKOS_ENABLE_CUDA)
  if (exec_is_cuda()) {
    const auto [async, constant, win] = cp.choice;
    if (constant) {
      const std::size_t bytes = std::size_t(R) * R * sizeof(T);
      const cudaError_t e = sizeof(T) == 4 ? cudaMemcpyToSymbolAsync(conv_const_f32, args.filter, bytes, 0,
                                                                     cudaMemcpyDeviceToDevice, Exec().cuda_stream())
                                           : cudaMemcpyToSymbolAsync(conv_const_f64, args.filter, bytes, 0,
                                                                     cudaMemcpyDeviceToDevice, Exec().cuda_stream());
      if (e != cudaSuccess) throw Error(std::string("kokkos conv2d: filter to constant memory: ") + cudaGetErrorString(e));
    }
    if constexpr (R == 3 || R == 5) {
      constexpr int kSector = 32 / int(sizeof(T));
      if (win == ConvWindow::lines)
        return launch_block<T, R, true, ConvLoad::async, ConvFilter::constant, kSector, true>(args, t, cp);
      if constexpr (kSweeps) {
        if (win == ConvWindow::aligned)
          return launch_block<T, R, true, ConvLoad::async, ConvFilter::constant, kSector, false>(args, t, cp);
      }
    }
    if constexpr (R == 7 || kSweeps) {
      if (async && constant) return launch_block<T, R, true, ConvLoad::async, ConvFilter::constant>(args, t, cp);
    }
    if constexpr ((R == 3 || R == 5) && kSweeps) {
      if (async) return launch_block<T, R, true, ConvLoad::async, ConvFilter::regs>(args, t, cp);
      if (constant) return launch_block<T, R, true, ConvLoad::regs, ConvFilter::constant>(args, t, cp);
    }
    if constexpr (R != 1 && !kSweeps) throw Error("kokkos conv2d: the plan names a kernel this build does not have");
  }
#endif
  if constexpr (!exec_is_cuda() || R == 1 || kSweeps) launch_block<T, R, true, ConvLoad::regs, ConvFilter::regs>(args, t, cp);
}

template <class T>
void launch_block(const Conv2dArgs<T>& args, const TileConfig& t, const ConvPlan& cp) {
  switch (args.r) {
    case 1: return launch_block<T, 1>(args, t, cp);
    case 3: return launch_block<T, 3>(args, t, cp);
    case 5: return launch_block<T, 5>(args, t, cp);
    default: return launch_block<T, 7>(args, t, cp);  // runs_block() admits 1, 3, 5, 7
  }
}

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
// per thread, about 256 threads a team); on hosts one team thread loops over a lane per output
// (kTiledCols, kTiledRows above).

// The tiled kernel's GPU team (the tuning kokkos.conv2d.tiled; Kokkos::Cuda reads it, other
// spaces run `fit`; docs/design/kokkos-conv2d-tiled-tile.md):
//   block    the cuda backend's tile and rows per lane, the team's tile in the block's shared
//            memory from its start (tile::KokkosShared::block): a team takes the bytes of the
//            same tile's CUDA block, so as many teams fit an SM under the same carveout.
//   fit      Kokkos' own scratch (after its team-reduction space), the tile losing whole row
//            groups until a team needs no more shared memory than the cuda block of cuda's tile.
//   reserve  Kokkos' own scratch on cuda's tile (teams larger than cuda's blocks).
enum class TiledTeam { block, fit, reserve };
inline TiledTeam tiled_team() {
  if (!exec_is_cuda()) return TiledTeam::fit;
  return tuning_choice<TiledTeam>("kokkos.conv2d.tiled",
                                  {{"block", TiledTeam::block}, {"fit", TiledTeam::fit}, {"reserve", TiledTeam::reserve}});
}
// Whether the device copies global to shared memory asynchronously (cp.async: sm_80+), as the
// tile layer's loads then do.
inline bool tiled_async_copy() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (exec_is_cuda()) return Exec().cuda_device_prop().major >= 8;
#endif
  return false;
}
// Output rows a lane computes down its column: on Kokkos::Cuda the cuda backend's rule for its
// compiled 64-wide tile (portable::conv2d_tiled_gpu_rows: 16 for double R = 5, else 8), elsewhere 8.
template <class T>
int tiled_rows(int r, const TileConfig& t) {
  if (exec_is_cuda() && t.cols == kTiledCols) return portable::conv2d_tiled_gpu_rows(r, int(sizeof(T)), tiled_async_copy());
  return kTiledRows;
}
tile::Dim2 tiled_lanes(const TileConfig& t, int rows_per_lane) {
  if (!exec_on_gpu()) return {t.cols, t.rows};
  int by = std::max(1, std::min(t.rows, std::max(1, 256 / t.cols)));
  if (t.cols == kTiledCols && t.rows % rows_per_lane == 0) by = std::max(1, std::min(by, t.rows / rows_per_lane));
  return {t.cols, by};
}

template <class T>
ConvPlan plan(Variant v, const Problem& p, const TileConfig& t) {
  ConvPlan pl;
  Launch& l = pl.launch;
  if (v == Variant::naive) {
    // The team launch pays on Kokkos::Cuda, where its threads exit after their output (naive_for);
    // other GPU spaces keep MDRange unless kokkos.naive.launch=team.
    pl.naive_league = naive_league(p.n, p.m, exec_is_cuda() ? NaiveMode::team : NaiveMode::mdrange);
    if (pl.naive_league > 0) {
      l.league = int(pl.naive_league);
      l.team = 256;
      l.kernel = "a 256-thread team per 32x8 piece of the output, R*R taps from memory with border checks";
    } else {
      l.kernel = "MDRange over the output, R*R taps from memory with border checks";
    }
    return pl;
  }
  if (v == Variant::tiled) {
    pl.tiled_rows = tiled_rows<T>(int(p.k), t);
    pl.tiled_block = exec_is_cuda() && tiled_team() == TiledTeam::block;
    const tile::Dim2 lanes = tiled_lanes(t, pl.tiled_rows);
    l.league = tiles(p.m, t.rows) * tiles(p.n, t.cols);
    l.team = exec_on_gpu() ? lanes.count() : 1;
    l.scratch = portable::Conv2dTiled<T>::scratch_bytes(int(p.k), t.rows, t.cols);
    const bool coarse = exec_on_gpu() && t.cols == kTiledCols && p.k <= 9 && t.rows % pl.tiled_rows == 0;
    l.kernel = std::string("tile layer: tile + halo in ") +
               (pl.tiled_block ? "the block's shared memory from its start (Kokkos' team-reduction space reused)"
                               : "scratch") +
               ", " + (coarse ? std::to_string(pl.tiled_rows) + " outputs per thread down a column" : "one output per lane") +
               (coarse && t.rows == 64 && lanes.y == portable::kGpuRowLanes ? ", 64x64 compiled" : "") +
               ", filter in registers when R <= 9" + (tiled_async_copy() ? ", asynchronous loads" : "");
    return pl;
  }
  if (runs_block(t, int(p.k))) {
    pl.block = true;
    pl.choice = conv_choice(int(p.k));
    pl.bounds_occ = exec_is_cuda() && conv_bounds() == ConvBounds::occ;
    l.league = tiles(p.m, t.rows) * tiles(p.n, t.cols);
    l.team = ConvBlock<T, 1, true, ConvLoad::regs, ConvFilter::regs>::team_size(t.rows);
    l.scratch = block_scratch<T>(int(p.k), t.rows);
    const auto [async, constant, win] = pl.choice;
    l.kernel = std::string("the cuda backend's kernel: window rows padded to ") +
               (win == ConvWindow::vector ? "16-byte vectors" : "32-byte sectors") +
               (win == ConvWindow::lines ? " (tile columns copied first)" : "") +
               ", 8 rows x one 16-byte vector of columns per thread, filter in " +
               std::string(constant ? "CUDA constant memory" : "registers") + ", window loaded by " +
               (async ? "16-byte cp.async" : "16-byte loads through registers") +
               (pl.bounds_occ ? ", registers bounded to the cuda kernel's residency" : "") +
               " (element-wise, filter in registers, where the images do not allow vectors)";
    return pl;
  }
  l = plan_team<T, kRowsPerThread>(p, t);
  l.kernel = "tile + halo and filter in scratch, " + std::to_string(kRowsPerThread) +
             " outputs per thread in registers";
  return pl;
}

template <class T>
std::size_t scratch_for(Variant v, const TileConfig& t, int r) {
  if (v == Variant::optimized && runs_block(t, r)) return block_scratch<T>(r, t.rows);
  return v == Variant::optimized ? ConvTeam<T, kRowsPerThread>::scratch_bytes(t.rows, t.cols, r)
                                 : portable::Conv2dTiled<T>::scratch_bytes(r, t.rows, t.cols) + kScratchAlign;
}

template <class T>
TileConfig auto_tile(Variant v, const Problem& p) {
  // The largest square tile up to 64 x 64 (GPUs; 32 x 32 on hosts) whose scratch (with this
  // filter's halo) fits twice in a team's share, so that a GPU multiprocessor keeps several
  // teams resident. Bigger tiles re-read less halo.
  const std::size_t budget = scratch_max() / 2;
  // The block kernel's tile, as the cuda backend's (32 x 128), where its window fits.
  if (v == Variant::optimized) {
    for (TileConfig t = {kBlockRows, kBlockCols, 0}; t.rows >= kBlockRowsPerThread; t.rows /= 2)
      if (runs_block(t, int(p.k)) && scratch_for<T>(v, t, int(p.k)) <= scratch_max()) return t;
  }
  if (v == Variant::tiled && exec_is_cuda() && tiled_team() != TiledTeam::fit) {
    // The cuda backend's tile, 64 x 64 (tile_choice), wherever a team can hold its window: its
    // teams are sized as cuda's blocks (block) or larger by Kokkos' reserve (reserve).
    // Kokkos sizes a team only where as many of them as the kernel's launch bounds ask for fit an SM's
    // shared memory together (double R = 7: six 40 KB windows do not; it would refuse the 256-lane
    // team): elsewhere the fit rule below.
    const TileConfig t{kTiledCols, kTiledCols, 0};
    const std::size_t bytes = scratch_for<T>(v, t, int(p.k));
    const int tiles_per_sm = portable::conv2d_tiled_gpu_min_tiles(tiled_rows<T>(int(p.k), t), int(sizeof(T)));
    if (bytes <= scratch_max() && std::size_t(tiles_per_sm) * (bytes + kSmemReservedPerBlock) <= smem_per_sm())
      return t;
  }
  int side = exec_on_gpu() ? 64 : 32;
  while (side > 4 && scratch_for<T>(v, {side, side, 0}, int(p.k)) > budget) side /= 2;
  if (v == Variant::tiled && exec_on_gpu() && side == kTiledCols) {
    // Kokkos adds 8 (team size + 2) bytes of its own to every team's shared memory (its GPU
    // ParallelFor of a TeamPolicy), 2 KB for a 256-thread team. At 64 x 64 a team then needs more
    // than the cuda backend's block of the same tile, 8 of them take the 196 KiB shared carveout
    // where cuda's 8 fit 164, and the L1 that holds the window's loads in flight shrinks from 92 to
    // 60 KiB (H100, float R = 5: 0.934 of cuda at 64 x 64, 0.96 at 56 x 64;
    // docs/design/kokkos-conv2d-tiled-tile.md).
    // So the tile loses whole row groups until a team needs no more than cuda's 64 x 64 block.
    const std::size_t cuda_block = portable::Conv2dTiled<T>::scratch_bytes(int(p.k), side, side);
    TileConfig t{side, side, 0};
    const int step = tiled_rows<T>(int(p.k), t);
    auto team_bytes = [&](const TileConfig& c) {
      return scratch_for<T>(v, c, int(p.k)) + sizeof(double) * std::size_t(tiled_lanes(c, step).count() + 2);
    };
    while (t.rows > step && team_bytes(t) > cuda_block) t.rows -= step;
    return t;
  }
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

namespace conv2d_kernels {
template <class T>
tilekit::Plan plan_call(Variant v, const Problem& p, const TileConfig& requested) {
  tilekit::Plan out;
  if (v == Variant::optimized && host_path::available()) {
    out.tile = host_path::tile(p, requested);
    ConvPlan pl;
    pl.host = true;
    pl.launch.kernel = host_path::conv2d_kernel(p.dtype);
    out.detail = std::shared_ptr<const OpPlan>(std::make_shared<const ConvPlan>(std::move(pl)));
    return out;
  }
  if (requested.is_auto()) {
    out.tile = v == Variant::naive ? TileConfig{} : auto_tile<T>(v, p);
  } else {
    const Variant checked = v == Variant::naive ? Variant::tiled : v;
    const std::size_t reserved = scratch_for<T>(checked, requested, int(p.k)) - tile_scratch_bytes(p, requested);
    check_team_scratch(p, requested, reserved,
                       checked == Variant::optimized ? "alignment, whole strips of rows and the filter" : "alignment");
    if (checked == Variant::tiled)
      check_tile_lanes(p, requested, tiled_lanes(requested, tiled_rows<T>(int(p.k), requested)).count(),
                       "one per column, rows in steps");
    out.tile = v == Variant::naive ? TileConfig{} : TileConfig{requested.rows, requested.cols, 0};
  }
  out.detail = std::shared_ptr<const OpPlan>(std::make_shared<const ConvPlan>(plan<T>(v, p, out.tile)));
  return out;
}
}  // namespace conv2d_kernels

Plan conv2d_plan(Variant v, const Problem& p, const TileConfig& requested) {
  return p.dtype == DType::f32 ? plan_call<float>(v, p, requested) : plan_call<double>(v, p, requested);
}

template <class T>
void conv2d(const Plan& plan, const Conv2dArgs<T>& args) {
  const ConvPlan& pl = static_cast<const ConvPlan&>(*plan.get<OpPlan>());
  const TileConfig& t = plan.tile;
  if (plan.variant == Variant::naive) return conv2d_naive(args, pl.naive_league);
  if (pl.host) return host_path::conv2d(args, t);
  if (plan.variant == Variant::tiled) {
    const tile::Dim2 lanes = tiled_lanes(t, pl.tiled_rows);
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (exec_is_cuda()) {
      if (pl.tiled_block)
        return portable::conv2d_tiled<true>(args, t, lanes, pl.tiled_rows, [](const tile::Shape& sh, const auto& k) {
          tile::run_kokkos<tile::KokkosShared::block>(sh, k);
        });
      // Kokkos' own scratch layout (kokkos.conv2d.tiled=fit|reserve): sweep builds only.
      if constexpr (!kSweeps) throw Error("kokkos conv2d: the plan names a tiled kernel this build does not have");
    }
#endif
    if constexpr (!exec_is_cuda() || kSweeps)
      return portable::conv2d_tiled<exec_on_gpu()>(args, t, lanes, pl.tiled_rows,
                                                   [](const tile::Shape& sh, const auto& k) { tile::run_kokkos(sh, k); });
  }
  if (pl.block) return launch_block<T>(args, t, pl);
  const Launch& l = pl.launch;
  TeamPolicy policy(l.league, l.team);
  policy.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
  const ConvView<T> a(args);
  const int tiles_c = tiles(args.w, t.cols);
  launch<T, kRowsPerThread>("tilekit::kokkos::conv2d_optimized", policy, a, t, tiles_c);
}

template void conv2d<float>(const Plan&, const Conv2dArgs<float>&);
template void conv2d<double>(const Plan&, const Conv2dArgs<double>&);

}  // namespace tilekit::kokkos
