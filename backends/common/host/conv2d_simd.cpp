// The optimized conv2d's per-tile work, compiled once per instruction set by Highway (see
// simd.hpp for why).
//
// The tiled variant computes one output row at a time, so every input vector it loads serves
// one output row. Here accumulators for several output rows stay in registers while the taps are
// applied, so each vector loaded from the halo-padded tile feeds several rows of FMAs: the
// register-level version of the halo reuse the tile buffer gives at the cache level. For the
// common filter sizes (R = 3, 5, 7, compiled in) a strip of vectors slides down the whole tile
// with one accumulator row per filter row, every accumulator taking an FMA from every loaded
// vector; other sizes use blocks of 4 output rows. Taps are broadcast from the filter. Every
// output sums its taps in (fi, fj) order, the same order as the naive loops.
// docs/design/openmp-conv2d-register-blocks.md has the measurements.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "common/host/conv2d_simd.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/host/simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tilekit::host::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The general kernel (any R): 4 rows x CV vectors of accumulators: 16 (+ CV inputs + 1 tap) of
// AVX-512's 32 registers, 8 of the 16 elsewhere. (CV + RB) loads feed RB x CV FMAs, but an input
// row reaches only the block's rows i <= y < i + R, so the first and last R - 1 input rows keep
// fewer accumulators busy than the FMA latency needs.
constexpr std::size_t kRB = 4;
constexpr std::size_t kCV = HWY_MAX_BYTES >= 64 ? 4 : 2;

// The sliding kernel (R = 3, 5, 7 compiled in): a strip of CV vectors runs down the tile, keeping
// R output rows of accumulators, one for every filter row: input row y feeds output rows
// y - R + 1 ... y, all of them, with tap rows R - 1 ... 0. After row y the oldest output row has
// all R^2 taps and is stored, and a fresh one enters. Every accumulator takes an FMA from every
// loaded input vector (R FMAs a load, R x CV accumulators always busy: no run-time tests inside
// the tap loops), and each broadcast tap feeds CV FMAs. R x CV accumulators + CV inputs + 1 tap:
// on AVX2 / SSE4's 16 registers R = 3: 9 + 3 + 1, R = 5: 10 + 2 + 1, R = 7: 7 + 1 + 1; on
// AVX-512's 32, 12 + 4 + 1, 20 + 4 + 1, 21 + 3 + 1 (R = 3 with 6 vectors, 1.5 lines a row, measured
// slower than 4 at 256^2 and 1024^2: more padding and half-line stores).
template <std::size_t R> constexpr std::size_t SlideVecs() {
  if constexpr (HWY_MAX_BYTES >= 64) return R == 3 ? 4 : R == 5 ? 4 : 3;
  return R == 3 ? 3 : R == 5 ? 2 : 1;
}

template <class T> constexpr std::size_t BlockCols(std::size_t r) {
  const std::size_t cv = r == 3 ? SlideVecs<3>() : r == 5 ? SlideVecs<5>() : r == 7 ? SlideVecs<7>() : kCV;
  return cv * HWY_LANES(T);
}

// Rows of a band: the strips cross the tile once per band, carrying their accumulators from one
// band to the next through `state`. The tile's rows are over 2 KiB apart at the automatic widths,
// the output's a whole image row: a strip walking down the whole tile reads and writes a line or
// two a row at those strides, which the hardware prefetchers do not follow. Across a band the
// strips read and write each row's lines in order, a few dozen sequential streams (AVX2, R = 5,
// 2048^2, one thread: 58 GFLOP/s against 50 without bands). A multiple of R, so every band starts
// at phase 0.
template <std::size_t R> constexpr std::size_t BandRows() { return 4 * R; }

template <std::size_t... S, class F>
HWY_INLINE void ForPhases(std::index_sequence<S...>, F&& f) {
  (f(std::integral_constant<std::size_t, S>()), ...);
}

// Fetches the next tile's image rows into the L2, a few lines at every step of this one's work
// (a step: one strip, one input row; AVX-512, R = 5, 2048^2: 4 lines a step), so that they arrive
// while the FMAs run instead of while the next tile's copy waits for them.
class NextTileFetch {
 public:
  NextTileFetch(const Conv2dTileOptions& o, std::size_t steps)
      : row_(o.next), ld_(o.next_ld_bytes), lines_((o.next_row_bytes + 63) / 64), rows_(o.next ? o.next_rows : 0) {
    const std::size_t total = lines_ * rows_;
    per_step_ = steps ? (total + steps - 1) / steps : 0;
  }
  HWY_INLINE void Step() {
    for (std::size_t i = 0; i < per_step_ && rows_; ++i) {
      __builtin_prefetch(row_ + 64 * line_, 0, 2);  // prefetcht1: into the L2
      if (++line_ == lines_) {
        line_ = 0;
        row_ += ld_;
        --rows_;
      }
    }
  }

 private:
  const char* row_;
  std::size_t ld_, lines_, rows_, line_ = 0, per_step_ = 0;
};

// Output rows [0, th) x columns [0, tw) of `out` from `tile` (row 0 = input row of output row 0
// minus R/2, zero-padded to whole strips plus the halo). `state`: R x CV vectors for every strip
// of the tile. `stream`: `out` and `ldo` keep every whole strip's rows on whole, aligned lines.
template <std::size_t R, class T>
HWY_NOINLINE void ConvSlide(const T* tile, std::size_t ld, const T* filter, T* out, std::size_t ldo, std::size_t th,
                            std::size_t tw, T* HWY_RESTRICT state, bool stream, const Conv2dTileOptions& opt) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t CV = SlideVecs<R>(), L = HWY_LANES(T), BC = CV * L;
  const std::size_t rows = th + R - 1;
  NextTileFetch fetch(opt, (tw + BC - 1) / BC * rows);
  for (std::size_t y0 = 0; y0 < rows; y0 += BandRows<R>()) {
    const std::size_t y1 = std::min(rows, y0 + BandRows<R>());
    for (std::size_t j = 0; j < tw; j += BC) {
      const bool whole = j + BC <= tw;
      T* st = state + (j / BC) * R * BC;
      V acc[R][CV];
      for (std::size_t k = 0; k < R; ++k)
        for (std::size_t cv = 0; cv < CV; ++cv) acc[k][cv] = y0 == 0 ? hn::Zero(d) : hn::LoadU(d, st + (k * CV + cv) * L);
      // Input row y, phase S = y mod R: the output row y - (R - 1) + k, which takes filter row
      // R - 1 - k from it, is in acc[(k + S) % R]. The rows rotate through the registers with
      // the phase (the loop below is unrolled R times), not by moves. The first R - 1 input rows
      // also feed output rows above the tile; those sums are dropped.
      auto row_step = [&](std::size_t y, auto phase) HWY_ATTR __attribute__((always_inline)) {
        constexpr std::size_t S = decltype(phase)::value;
        const T* row = tile + y * ld + j;
        HWY_UNROLL(1)
        for (std::size_t fj = 0; fj < R; ++fj) {
          V x[CV];
          for (std::size_t cv = 0; cv < CV; ++cv) x[cv] = hn::LoadU(d, row + fj + cv * L);
          for (std::size_t k = 0; k < R; ++k) {
            const V f = hn::Set(d, filter[(R - 1 - k) * R + fj]);
            for (std::size_t cv = 0; cv < CV; ++cv) acc[(k + S) % R][cv] = hn::MulAdd(f, x[cv], acc[(k + S) % R][cv]);
          }
        }
        fetch.Step();
        if (y + 1 >= R) {  // output row y - (R - 1), in acc[S], has all R^2 taps
          T* o = out + (y + 1 - R) * ldo + j;
          if (whole && stream) {
            for (std::size_t cv = 0; cv < CV; ++cv) hn::Stream(acc[S][cv], d, o + cv * L);
          } else if (whole) {
            for (std::size_t cv = 0; cv < CV; ++cv) hn::StoreU(acc[S][cv], d, o + cv * L);
          } else {  // the tile's last, partial strip: only tw - j columns are outputs
            HWY_ALIGN T spill[BC];
            for (std::size_t cv = 0; cv < CV; ++cv) hn::Store(acc[S][cv], d, spill + cv * L);
            std::copy(spill, spill + (tw - j), o);
          }
        }
        for (std::size_t cv = 0; cv < CV; ++cv) acc[S][cv] = hn::Zero(d);  // output row y + 1
      };
      std::size_t y = y0;
      for (; y + R <= y1; y += R)
        ForPhases(std::make_index_sequence<R>(), [&](auto s) HWY_ATTR __attribute__((always_inline)) { row_step(y + s, s); });
      ForPhases(std::make_index_sequence<R - 1>(), [&](auto s) HWY_ATTR __attribute__((always_inline)) {
        if (y + s < y1) row_step(y + s, s);
      });
      if (y1 < rows)  // a band ends at phase 0: the next one resumes with the same registers
        for (std::size_t k = 0; k < R; ++k)
          for (std::size_t cv = 0; cv < CV; ++cv) hn::StoreU(acc[k][cv], d, st + (k * CV + cv) * L);
    }
  }
}

// Output rows [0, RB) x columns [0, tw) of `out` from `tile` (row 0 = input row of output
// row 0 minus R/2, zero-padded to whole column blocks plus the halo).
template <std::size_t RB, class T>
HWY_INLINE void ConvRows(const T* tile, std::size_t ld, const T* filter, std::size_t r, T* out, std::size_t ldo,
                         std::size_t tw) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t L = HWY_LANES(T), BC = kCV * L;
  for (std::size_t j = 0; j < tw; j += BC) {
    V acc[RB][kCV];
    for (std::size_t rb = 0; rb < RB; ++rb)
      for (std::size_t cv = 0; cv < kCV; ++cv) acc[rb][cv] = hn::Zero(d);
    for (std::size_t y = 0; y < RB + r - 1; ++y) {
      // Output rows this input row reaches: y - rb is the filter row, 0 <= y - rb < r.
      const std::size_t rb_lo = y + 1 > r ? y + 1 - r : 0, rb_hi = std::min(RB - 1, y);
      const T* row = tile + y * ld + j;
      for (std::size_t fj = 0; fj < r; ++fj) {
        V x[kCV];
        for (std::size_t cv = 0; cv < kCV; ++cv) x[cv] = hn::LoadU(d, row + fj + cv * L);
        HWY_UNROLL(4)
        for (std::size_t rb = 0; rb < RB; ++rb) {
          if (rb < rb_lo || rb > rb_hi) continue;
          const V f = hn::Set(d, filter[(y - rb) * r + fj]);
          for (std::size_t cv = 0; cv < kCV; ++cv) acc[rb][cv] = hn::MulAdd(f, x[cv], acc[rb][cv]);
        }
      }
    }
    if (j + BC <= tw) {
      for (std::size_t rb = 0; rb < RB; ++rb)
        for (std::size_t cv = 0; cv < kCV; ++cv) hn::StoreU(acc[rb][cv], d, out + rb * ldo + j + cv * L);
    } else {  // the tile's last, partial column block: only tw - j columns are outputs
      HWY_ALIGN T spill[kCV * HWY_LANES(T)];
      for (std::size_t rb = 0; rb < RB; ++rb) {
        for (std::size_t cv = 0; cv < kCV; ++cv) hn::Store(acc[rb][cv], d, spill + cv * L);
        std::copy(spill, spill + (tw - j), out + rb * ldo + j);
      }
    }
  }
}

template <class T>
void ConvTileT(const Conv2dArgs<T>& a, const T* tile, index_t tile_ld, index_t i0, index_t j0, index_t th,
               index_t tw, T* state, const Conv2dTileOptions& opt) {
  const std::size_t ld = std::size_t(tile_ld), r = std::size_t(a.r), ldo = std::size_t(a.ld_out);
  T* out = a.out + i0 * a.ld_out + j0;
  // Streaming only whole lines: a strip whose rows end mid-line would leave the line's other part
  // to the next strip, a band's height of rows later, after the write-combining buffer has gone
  // (a partial-line write to memory).
  constexpr std::size_t kLine = 64;
  const bool stream = opt.stream && BlockCols<T>(r) * sizeof(T) % kLine == 0 &&
                      (reinterpret_cast<std::uintptr_t>(out) | ldo * sizeof(T)) % kLine == 0;
  const std::size_t h = std::size_t(th), w = std::size_t(tw);
  switch (r) {
    case 3: return ConvSlide<3>(tile, ld, a.filter, out, ldo, h, w, state, stream, opt);
    case 5: return ConvSlide<5>(tile, ld, a.filter, out, ldo, h, w, state, stream, opt);
    case 7: return ConvSlide<7>(tile, ld, a.filter, out, ldo, h, w, state, stream, opt);
    default: break;
  }
  std::size_t i = 0;
  for (; i + kRB <= std::size_t(th); i += kRB)
    ConvRows<kRB>(tile + i * ld, ld, a.filter, r, out + i * ldo, ldo, std::size_t(tw));
  for (; i < std::size_t(th); ++i)  // rows left over below the last full register block
    ConvRows<1>(tile + i * ld, ld, a.filter, r, out + i * ldo, ldo, std::size_t(tw));
}

void ConvTileF32(const Conv2dArgs<float>& a, const float* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw, float* state, const Conv2dTileOptions& opt) {
  ConvTileT<float>(a, tile, ld, i0, j0, th, tw, state, opt);
}
void ConvTileF64(const Conv2dArgs<double>& a, const double* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw, double* state, const Conv2dTileOptions& opt) {
  ConvTileT<double>(a, tile, ld, i0, j0, th, tw, state, opt);
}
std::size_t ConvBlockCols(DType t, std::size_t r) {
  return t == DType::f32 ? BlockCols<float>(r) : BlockCols<double>(r);
}

}  // namespace HWY_NAMESPACE
}  // namespace tilekit::host::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilekit::host::simd {

HWY_EXPORT(ConvTileF32);
HWY_EXPORT(ConvTileF64);
HWY_EXPORT(ConvBlockCols);

std::size_t conv2d_block_cols(DType t, index_t r) {
  return HWY_DYNAMIC_DISPATCH(ConvBlockCols)(t, std::size_t(std::max<index_t>(r, 0)));
}
void conv2d_tile(const Conv2dArgs<float>& a, const float* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw, float* state, const Conv2dTileOptions& opt) {
  HWY_DYNAMIC_DISPATCH(ConvTileF32)(a, tile, ld, i0, j0, th, tw, state, opt);
}
void conv2d_tile(const Conv2dArgs<double>& a, const double* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw, double* state, const Conv2dTileOptions& opt) {
  HWY_DYNAMIC_DISPATCH(ConvTileF64)(a, tile, ld, i0, j0, th, tw, state, opt);
}

}  // namespace tilekit::host::simd
#endif  // HWY_ONCE
