// The optimized conv2d's per-tile work, compiled once per instruction set by Highway (see
// simd.hpp for why).
//
// The tiled variant computes one output row at a time, so every input vector it loads serves
// one output row. Here a register block of RB output rows x CV vectors stays in registers while
// the taps are applied: input row y contributes to every output row i <= y < i + R of the block,
// so each vector loaded from the (L1-resident, halo-padded) tile feeds up to RB rows of FMAs,
// the register-level version of the halo reuse the tile buffer gives at the L1 level. Taps are
// broadcast from the filter (embedded-broadcast FMAs on AVX-512). Every output sums its taps in
// (fi, fj) order, the same order as the naive loops.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "common/host/conv2d_simd.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>

#include "common/host/simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tilekit::host::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 4 rows x CV vectors of accumulators: 16 (+ CV inputs + 1 tap) of AVX-512's 32 registers,
// 8 of the 16 elsewhere. Wider blocks cut the loads per FMA: (CV + RB) loads feed RB x CV FMAs.
constexpr std::size_t kRB = 4;
constexpr std::size_t kCV = HWY_MAX_BYTES >= 64 ? 4 : 2;
template <class T> constexpr std::size_t BlockCols() { return kCV * HWY_LANES(T); }

// Output rows [0, RB) x columns [0, tw) of `out` from `tile` (row 0 = input row of output
// row 0 minus R/2, zero-padded to whole column blocks plus the halo).
template <std::size_t RB, class T>
HWY_INLINE void ConvRows(const T* tile, std::size_t ld, const T* filter, std::size_t r, T* out, std::size_t ldo,
                         std::size_t tw) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t L = HWY_LANES(T), BC = BlockCols<T>();
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
               index_t tw) {
  const std::size_t ld = std::size_t(tile_ld), r = std::size_t(a.r), ldo = std::size_t(a.ld_out);
  T* out = a.out + i0 * a.ld_out + j0;
  std::size_t i = 0;
  for (; i + kRB <= std::size_t(th); i += kRB)
    ConvRows<kRB>(tile + i * ld, ld, a.filter, r, out + i * ldo, ldo, std::size_t(tw));
  for (; i < std::size_t(th); ++i)  // rows left over below the last full register block
    ConvRows<1>(tile + i * ld, ld, a.filter, r, out + i * ldo, ldo, std::size_t(tw));
}

void ConvTileF32(const Conv2dArgs<float>& a, const float* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw) {
  ConvTileT<float>(a, tile, ld, i0, j0, th, tw);
}
void ConvTileF64(const Conv2dArgs<double>& a, const double* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw) {
  ConvTileT<double>(a, tile, ld, i0, j0, th, tw);
}
std::size_t ConvBlockCols(DType t) { return t == DType::f32 ? BlockCols<float>() : BlockCols<double>(); }

}  // namespace HWY_NAMESPACE
}  // namespace tilekit::host::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilekit::host::simd {

HWY_EXPORT(ConvTileF32);
HWY_EXPORT(ConvTileF64);
HWY_EXPORT(ConvBlockCols);

std::size_t conv2d_block_cols(DType t) { return HWY_DYNAMIC_DISPATCH(ConvBlockCols)(t); }
void conv2d_tile(const Conv2dArgs<float>& a, const float* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw) {
  HWY_DYNAMIC_DISPATCH(ConvTileF32)(a, tile, ld, i0, j0, th, tw);
}
void conv2d_tile(const Conv2dArgs<double>& a, const double* tile, index_t ld, index_t i0, index_t j0, index_t th,
                 index_t tw) {
  HWY_DYNAMIC_DISPATCH(ConvTileF64)(a, tile, ld, i0, j0, th, tw);
}

}  // namespace tilekit::host::simd
#endif  // HWY_ONCE
