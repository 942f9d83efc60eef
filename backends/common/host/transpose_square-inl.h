// TransposeSquare: an L x L square of vector lanes transposed in registers, for every target
// Highway compiles (the optimized transpose's squares, the optimized gemm's A packing).
// Highway's per-target header pattern: included once per target by each *_simd.cpp after
// <hwy/highway.h>, so it has a toggled guard instead of #pragma once.
#if defined(TILEKIT_HOST_TRANSPOSE_SQUARE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TILEKIT_HOST_TRANSPOSE_SQUARE_INL_H_
#undef TILEKIT_HOST_TRANSPOSE_SQUARE_INL_H_
#else
#define TILEKIT_HOST_TRANSPOSE_SQUARE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tilekit::host::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Transposes the L x L square held in r[0..L) (r[k] = row k) in place (r[k] = column k), as a
// butterfly: first E x E transposes inside each 128-bit block (E = 16 bytes / sizeof(T)) with
// interleaves, then a transpose of the blocks themselves (B = L / E of them per vector).
template <class D, class V>
HWY_INLINE void TransposeSquare(D d, V* r) {
  using T = hn::TFromD<D>;
  constexpr std::size_t L = HWY_LANES(T);
#if HWY_TARGET == HWY_SCALAR
  static_assert(L == 1 && sizeof(T) >= 4, "the scalar target has one lane");
  (void)d;
  (void)r;  // a 1 x 1 square is its own transpose
#else
  {
    constexpr std::size_t E = 16 / sizeof(T), B = L / E;
    V o[L];  // o[g * E + k]: block b holds column (E * b + k) of rows [g * E, g * E + E)
    for (std::size_t g = 0; g < B; ++g) {
      V* x = r + g * E;
      if constexpr (sizeof(T) == 4) {
        const hn::Repartition<uint64_t, D> dw;
        const V t0 = hn::InterleaveLower(d, x[0], x[1]), t1 = hn::InterleaveUpper(d, x[0], x[1]);
        const V t2 = hn::InterleaveLower(d, x[2], x[3]), t3 = hn::InterleaveUpper(d, x[2], x[3]);
        o[g * E + 0] = hn::BitCast(d, hn::InterleaveLower(dw, hn::BitCast(dw, t0), hn::BitCast(dw, t2)));
        o[g * E + 1] = hn::BitCast(d, hn::InterleaveUpper(dw, hn::BitCast(dw, t0), hn::BitCast(dw, t2)));
        o[g * E + 2] = hn::BitCast(d, hn::InterleaveLower(dw, hn::BitCast(dw, t1), hn::BitCast(dw, t3)));
        o[g * E + 3] = hn::BitCast(d, hn::InterleaveUpper(dw, hn::BitCast(dw, t1), hn::BitCast(dw, t3)));
      } else {
        o[g * E + 0] = hn::InterleaveLower(d, x[0], x[1]);
        o[g * E + 1] = hn::InterleaveUpper(d, x[0], x[1]);
      }
    }
    for (std::size_t k = 0; k < E; ++k) {
      if constexpr (B == 1) {
        r[k] = o[k];
      } else if constexpr (B == 2) {
        r[k] = hn::ConcatLowerLower(d, o[E + k], o[k]);
        r[E + k] = hn::ConcatUpperUpper(d, o[E + k], o[k]);
      } else {
        static_assert(B == 4, "vectors of 2 or 4 blocks, or one");
#if HWY_MAX_BYTES >= 64  // the block shuffles below exist for 512-bit vectors only
        const V x0 = o[k], x1 = o[E + k], x2 = o[2 * E + k], x3 = o[3 * E + k];
        // 128-bit granularity: u0 = [x0.b0 x1.b0 x0.b2 x1.b2], u1 = [x0.b1 x1.b1 x0.b3 x1.b3] ...
        const V u0 = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(x1), x0);
        const V u1 = hn::OddEvenBlocks(x1, hn::SwapAdjacentBlocks(x0));
        const V u2 = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(x3), x2);
        const V u3 = hn::OddEvenBlocks(x3, hn::SwapAdjacentBlocks(x2));
        // ... then 256-bit granularity completes the 4 x 4 transpose of blocks.
        r[k] = hn::ConcatLowerLower(d, u2, u0);
        r[E + k] = hn::ConcatLowerLower(d, u3, u1);
        r[2 * E + k] = hn::ConcatUpperUpper(d, u2, u0);
        r[3 * E + k] = hn::ConcatUpperUpper(d, u3, u1);
#endif
      }
    }
  }
#endif  // HWY_TARGET == HWY_SCALAR
}

}  // namespace HWY_NAMESPACE
}  // namespace tilekit::host::simd
HWY_AFTER_NAMESPACE();

#endif  // TILEKIT_HOST_TRANSPOSE_SQUARE_INL_H_
