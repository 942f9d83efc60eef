// The optimized transpose's per-thread work: L x L squares (L = vector lanes) transposed in
// registers, compiled once per instruction set by Highway (see simd.hpp for why).
//
// Each square is read as L row vectors and written as L row vectors of the output, so every
// load and store moves a whole vector (a whole 64-byte line with AVX-512 floats): the scalar
// transpose's gather/scatter of single elements becomes shuffles in registers, which are
// cheap next to the memory traffic this operation is bound by.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "common/host/transpose_simd.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>
#include <hwy/cache_control.h>

#include <algorithm>
#include <cstdint>

#include "common/host/simd.hpp"
#include "common/host/transpose_square-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilekit::host::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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
    if constexpr (G > L) {
      // Streaming a line in halves from two squares, one square after the other, leaves L lines
      // open in the write-combining buffers at once; they were flushed partially (each half a
      // read-modify-write in DRAM): AVX2 floats streamed 8192^2 at 2.7 GB/s against AVX-512's
      // 27-32. So the group's squares go through a line-wide buffer in L1 first, and each output
      // line is streamed whole, its vectors back to back.
      if (stream && ie - i == G) {
        HWY_ALIGN T buf[L * G];
        for (; j + L <= j1; j += L) {
          for (index_t s = 0; s < G / L; ++s) {
            V r[L];
            for (index_t k = 0; k < L; ++k) r[k] = hn::LoadU(d, a.in + (i + s * L + k) * a.ld_in + j);
            TransposeSquare(d, r);
            for (index_t k = 0; k < L; ++k) hn::Store(r[k], d, buf + k * G + s * L);
          }
          T* out = a.out + j * a.ld_out + i;
          for (index_t k = 0; k < L; ++k)
            for (index_t s = 0; s < G / L; ++s) hn::Stream(hn::Load(d, buf + k * G + s * L), d, out + k * a.ld_out + s * L);
        }
      }
    }
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
}  // namespace tilekit::host::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilekit::host::simd {

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

}  // namespace tilekit::host::simd
#endif  // HWY_ONCE
