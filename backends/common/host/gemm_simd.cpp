// The optimized gemm's per-thread work: GotoBLAS/BLIS loops around a register-blocked
// micro-kernel, compiled once per instruction set by Highway (see simd.hpp for why).
//
// C is row-major, so the micro-kernel vectorizes along N: each row of its MR x NR block of C is
// NV vectors, B is read as vectors and A one element at a time, broadcast. With the roles of
// BLIS's operands mirrored accordingly, the blocking is:
//   - A micro-panel (MR x kc, the broadcast operand) lives in L1 while the micro-kernel sweeps
//     it across every B micro-panel of the block: kc is sized from the L1;
//   - a kc x nc chunk of B (the vector operand) lives in L2 while every A micro-panel of the
//     A block (mc x kc, also in L2) passes over it;
//   - the B panel (kc x nc3, in L3) is packed once per K step by the whole team, each thread a
//     slice, and read by every thread's A blocks (the driver in gemm.cpp owns the
//     barrier); each thread packs the A blocks of its own rows once per K step;
//   - both are packed (copied into the exact order the micro-kernel reads them, zero-padded to
//     whole micro-panels) so the inner loop reads two unit-stride streams and needs no edge code.
// The summation order of every element depends only on kc, never on the thread count.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "common/host/gemm_simd.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>
#include <hwy/cache_control.h>

#include <strings.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/host/simd.hpp"
#include "common/host/transpose_square-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilekit::host::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Register budget: MR x NV accumulators + NV B vectors + 1 broadcast must fit the register
// file. AVX-512 has 32 vector registers: 14 x 2 accumulators (28) + 2 + 1 = 31, the largest
// block that leaves the loads room; 16-register ISAs (AVX2, SSE4) take the classic 6 x 2 (15).
// Two vectors per row keep two independent FMA chains per broadcast, and MR >= 6 rows hide
// the FMA latency (4 cycles x 2 pipes needs >= 8 independent accumulators).
constexpr std::size_t kNV = 2;
constexpr std::size_t kMR = HWY_MAX_BYTES >= 64 ? 14 : 6;
template <class T> constexpr std::size_t Lanes() { return HWY_LANES(T); }
template <class T> constexpr std::size_t NR() { return kNV * Lanes<T>(); }

enum class Update { overwrite, scale, accumulate };  // C = aAB, C = aAB + bC, C += aAB

// The micro-kernel: C[0:MR, 0:NR] (op)= alpha * Ap * Bp over kc steps, where Ap holds MR values
// per step and Bp NR values per step. Only the mv x nv corner of C is valid at the matrix edges.
//
// alpha and beta are read through references, after the K loop: a scalar argument lives in a
// vector register, and with 16 of them (AVX2: 12 accumulators + 2 B vectors + the broadcast)
// GCC 12 kept alpha there across the loop and spilled a B vector instead, a store and six
// reloads from the stack every step (the AVX2 kernel ran at ~0.65x OpenBLAS's Haswell kernel).
// Through memory that may alias C, alpha is loaded where it is used.
template <class T>
HWY_INLINE void MicroKernel(std::size_t kc, const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp, T* c,
                            std::size_t ldc, const T& alpha, const T& beta, Update mode, std::size_t mv,
                            std::size_t nv) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t L = Lanes<T>(), kNR = NR<T>();
  // C is touched only after the K loop: start its lines on their way now (a row of the block
  // spans NR * sizeof(T) bytes, two lines with AVX-512).
  for (std::size_t i = 0; i < mv; ++i)
    for (std::size_t l = 0; l < kNR * sizeof(T); l += 64) hwy::Prefetch(reinterpret_cast<const char*>(c + i * ldc) + l);

  V acc[kMR][kNV];
  HWY_UNROLL(14)
  for (std::size_t i = 0; i < kMR; ++i)
    for (std::size_t v = 0; v < kNV; ++v) acc[i][v] = hn::Zero(d);
  // One K step: NV vectors of B, each of MR broadcasts of A feeding NV FMAs.
  const auto step = [&](std::size_t q) HWY_ATTR {
    V b[kNV];
    for (std::size_t v = 0; v < kNV; ++v) b[v] = hn::Load(d, bp + q * kNR + v * L);
    HWY_UNROLL(14)
    for (std::size_t i = 0; i < kMR; ++i) {
      const V a = hn::Set(d, ap[q * kMR + i]);
      for (std::size_t v = 0; v < kNV; ++v) acc[i][v] = hn::MulAdd(a, b[v], acc[i][v]);
    }
  };
  std::size_t p = 0;
#if HWY_MAX_BYTES == 32
  // AVX2: four steps per iteration, with the B micro-panel (which streams from the L2, a line
  // per step) prefetched 16 steps ahead: measured 0.88-0.93x -> ~1.0x OpenBLAS's Haswell SGEMM
  // at 2048 on the AVX-512 Xeon forced to AVX2 (docs/design/cpu-avx2-microkernel.md). AVX-512
  // keeps its measured loop.
  for (; p + 4 <= kc; p += 4) {
    hwy::Prefetch(bp + 16 * kNR);
    hwy::Prefetch(bp + 18 * kNR);
    step(0);
    step(1);
    step(2);
    step(3);
    ap += 4 * kMR;
    bp += 4 * kNR;
  }
#endif
  for (; p < kc; ++p) {
    step(0);
    ap += kMR;
    bp += kNR;
  }

  const V va = hn::Set(d, alpha), vb = hn::Set(d, beta);
  if (mv == kMR && nv == kNR) {
    HWY_UNROLL(14)
    for (std::size_t i = 0; i < kMR; ++i)
      for (std::size_t v = 0; v < kNV; ++v) {
        T* cp = c + i * ldc + v * L;
        switch (mode) {  // beta == 0 (overwrite) must never read C: it may hold NaN
          case Update::overwrite: hn::StoreU(hn::Mul(va, acc[i][v]), d, cp); break;
          case Update::scale: hn::StoreU(hn::MulAdd(va, acc[i][v], hn::Mul(vb, hn::LoadU(d, cp))), d, cp); break;
          case Update::accumulate: hn::StoreU(hn::MulAdd(va, acc[i][v], hn::LoadU(d, cp)), d, cp); break;
        }
      }
    return;
  }
  // Edge block: spill the accumulators and update only the valid corner, with the same
  // arithmetic (one rounding of alpha*acc, then the add) as the full-block path.
  HWY_ALIGN T tile[kMR * kNR];
  for (std::size_t i = 0; i < kMR; ++i)
    for (std::size_t v = 0; v < kNV; ++v) hn::Store(hn::Mul(va, acc[i][v]), d, tile + i * kNR + v * L);
  for (std::size_t i = 0; i < mv; ++i)
    for (std::size_t j = 0; j < nv; ++j) {
      T& cij = c[i * ldc + j];
      const T prod = tile[i * kNR + j];
      cij = mode == Update::overwrite ? prod : mode == Update::scale ? prod + beta * cij : prod + cij;
    }
}

// A block rows [0, mb) x depth [0, kb) into micro-panels of MR rows: for each step p, the MR
// values A[i][p] are adjacent. Rows past mb are zeros, so edge panels need no special kernel.
// Where a micro-panel's rows fit one vector (MR <= lanes: AVX-512 and AVX2 floats), squares of
// lanes x lanes are transposed in registers (rows past MR zero), and each column is stored as a
// whole vector: its lanes past MR land in the next column's slots, which that column's store
// then overwrites, so only the micro-panel's last column (which would write past the panel,
// perhaps into another thread's) is left to the element loop. `scalar` forces that loop
// everywhere (openmp.gemm.pack_a=scalar, a sweep value, to compare).
template <class T>
void PackA(const T* a, std::size_t lda, std::size_t mb, std::size_t kb, T* HWY_RESTRICT dst, bool scalar) {
  constexpr std::size_t kLine = 64 / sizeof(T), kAhead = 2, L = Lanes<T>();
  for (std::size_t ir = 0; ir < mb; ir += kMR, dst += kMR * kb) {
    const std::size_t rows = std::min(kMR, mb - ir);
    const T* src = a + ir * lda;
    std::size_t p0 = 0;
    if constexpr (kMR <= L && L > 1) {
      if (!scalar) {
        const hn::ScalableTag<T> d;
        using V = hn::Vec<decltype(d)>;
        // The next micro-panel's rows are short runs the hardware prefetcher meets cold: fetch
        // the line of each at this square's columns, one micro-panel ahead.
        const std::size_t ahead = ir + kMR < mb ? std::min(kMR, mb - ir - kMR) : 0;
        for (; p0 + L < kb; p0 += L) {
          for (std::size_t i = 0; i < ahead; ++i) hwy::Prefetch(src + (kMR + i) * lda + p0);
          V r[L];
          for (std::size_t i = 0; i < L; ++i) r[i] = i < rows ? hn::LoadU(d, src + i * lda + p0) : hn::Zero(d);
          TransposeSquare(d, r);
          for (std::size_t q = 0; q < L; ++q) hn::StoreU(r[q], d, dst + (p0 + q) * kMR);
        }
      }
    }
    for (std::size_t i = 0; i < rows; ++i) {
      const T* row = src + i * lda;
      // Each row is a short run (kb elements) the hardware prefetcher meets cold; fetch the
      // row two ahead while this one is copied, so its misses overlap this row's work.
      if (p0 == 0 && ir + i + kAhead < mb)
        for (std::size_t p = 0; p < kb; p += kLine) hwy::Prefetch(row + kAhead * lda + p);
      for (std::size_t p = p0; p < kb; ++p) dst[p * kMR + i] = row[p];
    }
    for (std::size_t i = rows; i < kMR; ++i)
      for (std::size_t p = p0; p < kb; ++p) dst[p * kMR + i] = T(0);
  }
}

// B block depth [0, kb) x columns [0, nb) into micro-panels of NR columns: step p's NR values
// are a contiguous piece of B's row p, so this is a copy of short rows; columns past nb are zeros.
template <class T>
void PackB(const T* b, std::size_t ldb, std::size_t kb, std::size_t nb, T* HWY_RESTRICT dst) {
  const hn::ScalableTag<T> d;
  constexpr std::size_t L = Lanes<T>(), kNR = NR<T>();
  for (std::size_t jr = 0; jr < nb; jr += kNR, dst += kNR * kb) {
    const std::size_t cols = std::min(kNR, nb - jr);
    if (cols == kNR) {
      for (std::size_t p = 0; p < kb; ++p)
        for (std::size_t v = 0; v < kNV; ++v) hn::Store(hn::LoadU(d, b + p * ldb + jr + v * L), d, dst + p * kNR + v * L);
    } else {
      for (std::size_t p = 0; p < kb; ++p) {
        std::memcpy(dst + p * kNR, b + p * ldb + jr, cols * sizeof(T));
        std::fill(dst + p * kNR + cols, dst + (p + 1) * kNR, T(0));
      }
    }
  }
}

// Micro-panels [p0, p1) of the B panel rows [pc, pc + kb) x columns [jc, jc + nb) into `panel`
// (micro-panel p at panel + p * NR * kb): each thread of the team packs its own slice.
template <class T>
void PackPanelT(const GemmArgs<T>& g, const GemmPanel& s, T* panel) {
  constexpr std::size_t kNR = NR<T>();
  const std::size_t kb = std::size_t(s.kb), nb = std::size_t(s.nb);
  const std::size_t c0 = std::size_t(s.p0) * kNR, c1 = std::min(nb, std::size_t(s.p1) * kNR);
  if (c0 < c1) PackB(g.b + s.pc * g.ldb + s.jc + index_t(c0), std::size_t(g.ldb), kb, c1 - c0, panel + c0 * kb);
}

// Micro-panels [p0, p1) of the A panel rows [ic, ic + mb) x depth [pc, pc + kb) (GemmPanel's jc
// and nb name the rows here), micro-panel p at panel + p * MR * kb: each thread its own slice.
template <class T>
void PackAPanelT(const GemmArgs<T>& g, const GemmPanel& s, T* panel) {
  const std::size_t kb = std::size_t(s.kb), mb = std::size_t(s.nb);
  const std::size_t r0 = std::size_t(s.p0) * kMR, r1 = std::min(mb, std::size_t(s.p1) * kMR);
  if (r0 < r1)
    PackA(g.a + (s.jc + index_t(r0)) * g.lda + s.pc, std::size_t(g.lda), r1 - r0, kb, panel + r0 * kb, s.scalar);
}

// One unit of the shared-panel driver: C rows [m0, m1) x columns [n0, n1) from the packed A panel
// (rows from ic) and B panel (columns from jc), both packed by the team. The columns are one L2
// chunk of the B panel; each A micro-panel comes from the L3 once, sits in L1 while it sweeps
// the chunk, and the next one is prefetched (into L2) a slice per micro-kernel call meanwhile.
// AVX2 always fetches the next A micro-panel into the L2 during this one's sweep: measured 0.97 /
// 0.98 against 0.95 / 0.92 of OpenBLAS Haswell (medians, one / two threads, SGEMM 2048, on the Xeon
// forced to AVX2; docs/design/cpu-avx2-microkernel.md). Elsewhere openmp.gemm.prefetch_a decides
// (off: measured faster with AVX-512).
constexpr bool kPrefetchA = HWY_MAX_BYTES == 32;

template <class T>
void ComputeBlockT(const GemmArgs<T>& g, const GemmBlock& s, const T* a_panel, const T* b_panel) {
  constexpr std::size_t kNR = NR<T>();
  const std::size_t kb = std::size_t(s.kb);
  const Update mode = s.pc > 0 ? Update::accumulate : g.beta == T(0) ? Update::overwrite : Update::scale;
  const std::size_t calls = std::size_t(s.n1 - s.n0 + index_t(kNR) - 1) / kNR;
  const std::size_t lines = kMR * kb * sizeof(T) / 64;
  for (index_t i = s.m0; i < s.m1; i += index_t(kMR)) {
    const T* ap = a_panel + std::size_t(i - s.ic) * kb;
    const char* next = (s.prefetch_a || kPrefetchA) && i + index_t(kMR) < s.m1 ? reinterpret_cast<const char*>(ap + kMR * kb) : nullptr;
    const std::size_t mv = std::min(kMR, std::size_t(s.m1 - i));
    std::size_t call = 0;
    for (index_t j = s.n0; j < s.n1; j += index_t(kNR), ++call) {
      if (next)
        for (std::size_t l = call * lines / calls; l < (call + 1) * lines / calls; ++l)
          __builtin_prefetch(next + 64 * l, 0, 2);
      MicroKernel<T>(kb, ap, b_panel + std::size_t(j - s.jc) * kb, g.c + i * g.ldc + j, std::size_t(g.ldc), g.alpha,
                     g.beta, mode, mv, std::min(kNR, std::size_t(s.n1 - j)));
    }
  }
}

void PackAPanelF32(const GemmArgs<float>& g, const GemmPanel& s, void* panel) {
  PackAPanelT<float>(g, s, static_cast<float*>(panel));
}
void PackAPanelF64(const GemmArgs<double>& g, const GemmPanel& s, void* panel) {
  PackAPanelT<double>(g, s, static_cast<double*>(panel));
}
void ComputeBlockF32(const GemmArgs<float>& g, const GemmBlock& s, const void* a, const void* b) {
  ComputeBlockT<float>(g, s, static_cast<const float*>(a), static_cast<const float*>(b));
}
void ComputeBlockF64(const GemmArgs<double>& g, const GemmBlock& s, const void* a, const void* b) {
  ComputeBlockT<double>(g, s, static_cast<const double*>(a), static_cast<const double*>(b));
}
void PackPanelF32(const GemmArgs<float>& g, const GemmPanel& s, void* panel) {
  PackPanelT<float>(g, s, static_cast<float*>(panel));
}
void PackPanelF64(const GemmArgs<double>& g, const GemmPanel& s, void* panel) {
  PackPanelT<double>(g, s, static_cast<double*>(panel));
}
MicroTile GemmMicroTile(DType t) {
  return t == DType::f32 ? MicroTile{kMR, NR<float>()} : MicroTile{kMR, NR<double>()};
}
const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace tilekit::host::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilekit::host::simd {

HWY_EXPORT(PackPanelF32);
HWY_EXPORT(PackPanelF64);
HWY_EXPORT(GemmMicroTile);
HWY_EXPORT(PackAPanelF32);
HWY_EXPORT(PackAPanelF64);
HWY_EXPORT(ComputeBlockF32);
HWY_EXPORT(ComputeBlockF64);
HWY_EXPORT(TargetName);

const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

std::string compiled_targets() {
  std::string list;
  for (std::int64_t targets = HWY_TARGETS; targets != 0; targets &= targets - 1)
    list += (list.empty() ? "" : ", ") + std::string(hwy::TargetName(targets & -targets));
  return list;
}

bool cap_target(const std::string& name) {
  // "scalar" names the portable fallback without vectors, whichever of Highway's two the compiler
  // got: Highway 1.0 builds SCALAR with GCC 12 and EMU128 with GCC 13.
  const bool fallback = strcasecmp(name.c_str(), "scalar") == 0 && (HWY_TARGETS & HWY_SCALAR) == 0;
  const std::string wanted = fallback ? std::string("emu128") : name;
  for (std::int64_t targets = HWY_TARGETS; targets != 0; targets &= targets - 1) {
    const std::int64_t target = targets & -targets;
    if (strcasecmp(hwy::TargetName(target), wanted.c_str()) == 0) {
      hwy::DisableTargets(target - 1);  // Highway orders targets best first: lower bits are better
      // SupportedTargets() itself re-chooses among all the CPU's targets before applying the
      // mask (Highway 1.0), so choose again from its masked answer, last.
      const std::int64_t supported = hwy::SupportedTargets();
      hwy::GetChosenTarget().Update(supported);
      return (supported & target) != 0;
    }
  }
  return false;
}
MicroTile gemm_micro_tile(DType t) { return HWY_DYNAMIC_DISPATCH(GemmMicroTile)(t); }
void gemm_pack_panel(const GemmArgs<float>& g, const GemmPanel& s, void* panel) {
  HWY_DYNAMIC_DISPATCH(PackPanelF32)(g, s, panel);
}
void gemm_pack_panel(const GemmArgs<double>& g, const GemmPanel& s, void* panel) {
  HWY_DYNAMIC_DISPATCH(PackPanelF64)(g, s, panel);
}

void gemm_pack_a_panel(const GemmArgs<float>& g, const GemmPanel& s, void* panel) {
  HWY_DYNAMIC_DISPATCH(PackAPanelF32)(g, s, panel);
}
void gemm_pack_a_panel(const GemmArgs<double>& g, const GemmPanel& s, void* panel) {
  HWY_DYNAMIC_DISPATCH(PackAPanelF64)(g, s, panel);
}
void gemm_compute_block(const GemmArgs<float>& g, const GemmBlock& s, const void* a_panel, const void* b_panel) {
  HWY_DYNAMIC_DISPATCH(ComputeBlockF32)(g, s, a_panel, b_panel);
}
void gemm_compute_block(const GemmArgs<double>& g, const GemmBlock& s, const void* a_panel, const void* b_panel) {
  HWY_DYNAMIC_DISPATCH(ComputeBlockF64)(g, s, a_panel, b_panel);
}

}  // namespace tilekit::host::simd
#endif  // HWY_ONCE
