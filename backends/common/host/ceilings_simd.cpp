// The arithmetic peak for the roofline (backends/common/host/ceilings.cpp): independent chains of the
// widest vector FMA this CPU has, compiled once per instruction set by Highway (see simd.hpp).
//
// An FMA's result is ready ~4 cycles after issue and a core issues up to 2 per cycle, so at
// least 8 chains must be in flight to keep both pipes busy; 12 leave margin and still fit the
// 16 registers of AVX2 (AVX-512 has 32).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "common/host/ceilings_simd.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>

#include <cstdint>

#include "common/host/simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tilekit::host::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kFmaChains = 12;

template <class T>
double FmaChainsT(std::uint64_t iters) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  // acc = acc * a + b converges to b / (1 - a): the values stay normal however long it runs.
  const V a = hn::Set(d, T(0.999)), b = hn::Set(d, T(0.001));
  V acc[kFmaChains];
  for (int j = 0; j < kFmaChains; ++j) acc[j] = hn::Set(d, T(j));
  for (std::uint64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kFmaChains; ++j) acc[j] = hn::MulAdd(acc[j], a, b);
  V sum = acc[0];
  for (int j = 1; j < kFmaChains; ++j) sum = hn::Add(sum, acc[j]);
  volatile T sink = hn::GetLane(sum);  // keeps the chains from being optimized away
  (void)sink;
  return 2.0 * double(hn::Lanes(d)) * kFmaChains * double(iters);
}

double FmaChains(DType t, std::uint64_t iters) {
  return t == DType::f32 ? FmaChainsT<float>(iters) : FmaChainsT<double>(iters);
}

}  // namespace HWY_NAMESPACE
}  // namespace tilekit::host::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilekit::host::simd {

HWY_EXPORT(FmaChains);

double fma_chains(DType t, std::uint64_t iters) { return HWY_DYNAMIC_DISPATCH(FmaChains)(t, iters); }
int fma_chain_count() { return HWY_NAMESPACE::kFmaChains; }

}  // namespace tilekit::host::simd
#endif  // HWY_ONCE
