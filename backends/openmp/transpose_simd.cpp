// The optimized transpose's per-thread work: L x L squares (L = vector lanes) transposed in
// registers, compiled once per instruction set by Highway (see simd.hpp for why).
//
// Each square is read as L row vectors and written as L row vectors of the output, so every
// load and store moves a whole vector (a whole 64-byte line with AVX-512 floats): the scalar
// transpose's gather/scatter of single elements becomes shuffles in registers, which are
// cheap next to the memory traffic this operation is bound by.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "transpose_simd.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>
#include <hwy/cache_control.h>

#include <algorithm>
#include <cstdint>

#include "simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tilekit::openmp::simd {
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

template <class T>
void TransposeBlockT(const TransposeArgs<T>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr index_t L = index_t(HWY_LANES(T));
  // Non-temporal stores need every output row of a square vector-aligned: true for all squares
  // of the block exactly when the block's first one is and rows are a whole number of vectors.
  const bool aligned = reinterpret_cast<std::uintptr_t>(a.out + j0 * a.ld_out + i0) % (L * sizeof(T)) == 0 &&
                       (a.ld_out * index_t(sizeof(T))) % (L * index_t(sizeof(T))) == 0;
  stream = stream && aligned;
  // Squares are visited in groups that fill whole output lines (G elements of an output row):
  // with vectors narrower than a line (AVX2 floats: 32 of 64 bytes), the squares holding the two
  // halves of a line are stored back to back, so a streaming store's write-combining buffer
  // sends a full line to memory instead of two partial ones (each a read-modify-write in DRAM).
  constexpr index_t G = std::max<index_t>(L, 64 / index_t(sizeof(T)));
  index_t i = i0;
  while (i + L <= i1) {
    const index_t ie = i + L * std::min<index_t>(G / L, (i1 - i) / L);  // whole squares only
    index_t j = j0;
    for (; j + L <= j1; j += L)
      for (index_t ii = i; ii < ie; ii += L) {
        V r[L];
        for (index_t k = 0; k < L; ++k) r[k] = hn::LoadU(d, a.in + (ii + k) * a.ld_in + j);
        TransposeSquare(d, r);
        T* out = a.out + j * a.ld_out + ii;
        if (stream)
          for (index_t k = 0; k < L; ++k) hn::Stream(r[k], d, out + k * a.ld_out);
        else
          for (index_t k = 0; k < L; ++k) hn::StoreU(r[k], d, out + k * a.ld_out);
      }
    for (; j < j1; ++j)  // columns left over at the block's right edge
      for (index_t ii = i; ii < ie; ++ii) a.out[j * a.ld_out + ii] = a.in[ii * a.ld_in + j];
    i = ie;
  }
  for (; i < i1; ++i)  // rows left over at the block's bottom edge
    for (index_t j = j0; j < j1; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
}

void TransposeBlockF32(const TransposeArgs<float>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream) {
  TransposeBlockT<float>(a, i0, i1, j0, j1, stream);
}
void TransposeBlockF64(const TransposeArgs<double>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream) {
  TransposeBlockT<double>(a, i0, i1, j0, j1, stream);
}
std::size_t TransposeLanes(DType t) { return t == DType::f32 ? HWY_LANES(float) : HWY_LANES(double); }

}  // namespace HWY_NAMESPACE
}  // namespace tilekit::openmp::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilekit::openmp::simd {

HWY_EXPORT(TransposeBlockF32);
HWY_EXPORT(TransposeBlockF64);
HWY_EXPORT(TransposeLanes);

std::size_t transpose_lanes(DType t) { return HWY_DYNAMIC_DISPATCH(TransposeLanes)(t); }
void transpose_block(const TransposeArgs<float>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream) {
  HWY_DYNAMIC_DISPATCH(TransposeBlockF32)(a, i0, i1, j0, j1, stream);
}
void transpose_block(const TransposeArgs<double>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream) {
  HWY_DYNAMIC_DISPATCH(TransposeBlockF64)(a, i0, i1, j0, j1, stream);
}
// An sfence on x86 (a no-op where stores are not weakly ordered); the OpenMP barrier that
// follows then publishes the output to the other threads.
void stream_fence() { hwy::FlushStream(); }

}  // namespace tilekit::openmp::simd
#endif  // HWY_ONCE
