#!/usr/bin/env bash
# Runs the 3xTF32 float gemm kernel (backends/common/gpu/gemm_tf32x3.cuh) on the HOST, for machines
# without a GPU (emulate_common.sh: a std::thread per CUDA thread, __syncthreads a std::barrier).
# mma.sync m16n8k8 .tf32 is a warp-collective exchange that computes what the PTX ISA's fragment
# layouts say (lane L = 4g + t holds A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4] and B[t][g],
# B[t+4][g], and receives C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]); the tensor cores read
# 19 bits of each operand (the 13 low bits ignored), multiply exactly and return the FP32 sum
# truncated toward zero (the hardware does not round to nearest; truncation is the pessimistic
# model). cvt.rna.tf32.f32 is the kernel's own bit-level fallback (to nearest, ties away).
# Everything else is the kernel's own code compiled by g++: the block order, both copy paths,
# the stages, the split, the three passes, the per-step sums added by FADD and the epilogue, for
# every compiled tile and the kokkos backend's, against a double reference:
#   - every element within 1e-5 (1 + sqrt(k)) (1 + |C|) of it (plain TF32 misses this by ~100x),
#   - the norm-wise error no larger than 3x that of FP32 FFMA on the same inputs, summed in k
#     order (as cuBLAS's SGEMM; computed here on the host) plus 1e-7 (short sums: see kNormSlack),
#   - and, in the model without the kernel, long sums (k = 1024, 8192) no less accurate than FFMA:
#     the device target (the norm-wise error at 8192 no larger than cuBLAS SGEMM's).
# Then the same checks must FAIL for two broken kernels: plain TF32 (small parts zero) and the
# products summed inside the tensor cores across the whole K loop (no per-step FADD; a long k).
# What it cannot check: the real instructions (their exact rounding), cp.async timing, bank
# conflicts, speed. A few minutes on two cores.
# Usage: bash backends/cuda/scripts/tf32x3_emulate.sh
set -euo pipefail
source "$(dirname "$0")/emulate_common.sh"
emu_begin
# The kernel file with the warp-shuffle fallback of mma1688 replaced by the emulated instruction
# (shuffles through OS-thread barriers would take hours), plus the two broken variants.
python3 - "$root/backends/common/gpu/gemm_tf32x3.cuh" "$dir" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index('  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;\n  float r[4]')
j = s.index('#endif', i)
s = s[:i] + '  emu_mma1688(d, a, b, c);\n' + s[j:]
open(sys.argv[2] + '/gemm_tf32x3.cuh', 'w').write(s)
def broken(src, old, new, name):
    assert src.count(old) >= 1, old
    tag = name[:-4]
    open(sys.argv[2] + '/' + name, 'w').write(src.replace(old, new).replace('gemm_tf32x3_block', tag + '_block')
                                              .replace('gemm_tf32x3_kernel', tag + '_kernel').replace('namespace tf32x3', 'namespace tf32x3_' + tag))
# plain TF32: the small parts are zero, so two of the three products add nothing
broken(s, '  small = to_tf32(x - bits_float(big));', '  small = 0;', 'plain.cuh')
# the running sums inside the tensor cores: each step's first product starts from them, and no FADD
t = s.replace('if (kk == 0) mma1688(part[i][j], asm_[i], bb[j], kZero);', 'if (kk == 0) mma1688(part[i][j], asm_[i], bb[j], acc[i][j]);')
broken(t, 'for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];', 'for (int e = 0; e < 4; ++e) acc[i][j][e] = part[i][j][e];', 'insum.cuh')
PY
emu_header <<'CUH'
#include <cmath>
#include <cstring>
struct BlockSync {
  std::unique_ptr<std::barrier<>> block;
  std::unique_ptr<std::barrier<>> warp[64];
};
inline BlockSync* g_sync = nullptr;
inline void __syncthreads() { g_sync->block->arrive_and_wait(); }
// mma.sync m16n8k8 .row.col .f32.tf32.tf32.f32 as one warp-collective exchange (see the top).
struct MmaX { unsigned a[64][32][4], b[64][32][2]; };
inline MmaX g_mx;
inline double emu_tf32(unsigned u) { u &= 0xffffe000u; float f; std::memcpy(&f, &u, 4); return f; }
inline float emu_rz(double v) {
  float f = float(v);
  if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}
inline void emu_mma1688(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const float (&c)[4]) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32, g = l >> 2, t = l & 3;
  for (int r = 0; r < 4; ++r) g_mx.a[w][l][r] = a[r];
  for (int r = 0; r < 2; ++r) g_mx.b[w][l][r] = b[r];
  const float c0[4] = {c[0], c[1], c[2], c[3]};
  g_sync->warp[w]->arrive_and_wait();
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e / 2), col = 2 * t + e % 2;
    double s = c0[e];
    for (int k = 0; k < 8; ++k) {
      // A[row][k]: lane (row % 8) * 4 + k % 4, register (row / 8) + 2 (k / 4); B[k][col]: lane col * 4 + k % 4, register k / 4
      const double av = emu_tf32(g_mx.a[w][(row % 8) * 4 + k % 4][row / 8 + 2 * (k / 4)]);
      const double bv = emu_tf32(g_mx.b[w][col * 4 + k % 4][k / 4]);
      s += av * bv;  // exact: 11-bit by 11-bit significands
    }
    d[e] = emu_rz(s);
  }
  g_sync->warp[w]->arrive_and_wait();
}
CUH
cat >"$dir/emu.cpp" <<'CPP'
#include <cstdint>
#include <cstdlib>
#include "device_common.cuh"
namespace tilekit::gpu { alignas(16) unsigned char gemm_tf32x3_smem[3 * (128 * 36 + 32 * 136) * 4]; }
#include "gemm_tf32x3.cuh"
#include "plain.cuh"
#include "insum.cuh"
#include "emu_gemm.hpp"
using namespace tilekit::gpu;

// Norm-wise relative error of C against the reference R over the m x n inside of C.
template <class P>
double rel_error(const P& p, const std::vector<float>& c) {
  double d2 = 0, r2 = 0;
  for (int i = 0; i < p.s.m; ++i)
    for (int j = 0; j < p.s.n; ++j) {
      const size_t o = size_t(p.s.off) + size_t(i) * p.ldc + j;
      d2 += (double(c[o]) - p.R[o]) * (double(c[o]) - p.R[o]);
      r2 += double(p.R[o]) * p.R[o];
    }
  return r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
}
// The same product by FP32 FFMA in k order (cuBLAS SGEMM's arithmetic), for the error to compare.
template <class P>
std::vector<float> ffma(const P& p, std::vector<float> c) {
  const float *a = p.A.data() + p.s.off, *b = p.B.data() + p.s.off;
  for (int i = 0; i < p.s.m; ++i)
    for (int j = 0; j < p.s.n; ++j) {
      float acc = 0;
      for (int q = 0; q < p.s.k; ++q) acc = std::fma(a[i * p.lda + q], b[q * p.ldb + j], acc);
      float& out = c[size_t(p.s.off) + size_t(i) * p.ldc + j];
      out = p.s.beta == 0 ? float(p.s.alpha) * acc : float(p.s.alpha) * acc + float(p.s.beta) * out;
    }
  return c;
}

// The per-step sums truncated by the tensor cores (the model above) cost short sums up to ~2.5x
// FFMA's error (12 truncations in a 32-deep step against k roundings to nearest); long sums come
// out more accurate than FFMA (model() below). Plain TF32 is ~1000x FFMA's error at any k.
constexpr double kNormSlack = 3.0;

// The kernel's arithmetic on long dot products, without the kernel: its split (tf32x3::split),
// each 8 products through the emulated tensor-core sum (exact, then truncated), three passes a
// k8 slice, per-step sums of BK added by FADD, against FFMA in k order. The device target is the
// norm-wise error at k = 8192 no larger than cuBLAS SGEMM's; this is that comparison in the model.
double model(int k, int bk, bool insum) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-1, 1);
  double e_mine = 0, e_ffma = 0, r2 = 0;
  auto mma = [](float c, const float* a, const float* b) {
    double s = c;
    for (int i = 0; i < 8; ++i) s += double(a[i]) * b[i];
    return emu_rz(s);
  };
  std::vector<float> a(k), b(k), ab(k), as(k), bb(k), bs(k);
  for (int col = 0; col < 256; ++col) {
    double ref = 0;
    float f = 0;
    for (int q = 0; q < k; ++q) {
      a[q] = u(gen), b[q] = u(gen);
      ref += double(a[q]) * b[q];
      f = std::fma(a[q], b[q], f);
      unsigned hi, lo;
      tf32x3::split(a[q], hi, lo), ab[q] = float(emu_tf32(hi)), as[q] = float(emu_tf32(lo));
      tf32x3::split(b[q], hi, lo), bb[q] = float(emu_tf32(hi)), bs[q] = float(emu_tf32(lo));
    }
    float acc = 0;
    for (int p0 = 0; p0 < k; p0 += bk) {
      float part = insum ? acc : 0.0f;
      for (int q = p0; q < p0 + bk; q += 8) {
        part = mma(part, &as[q], &bb[q]);
        part = mma(part, &ab[q], &bs[q]);
        part = mma(part, &ab[q], &bb[q]);
      }
      acc = insum ? part : acc + part;
    }
    e_mine += (acc - ref) * (acc - ref), e_ffma += (f - ref) * (f - ref), r2 += ref * ref;
  }
  const double ratio = std::sqrt(e_mine / e_ffma);
  std::printf("model k=%d: per-step sums of %d %s: rel %.2e, FFMA rel %.2e (%.2fx)\n", k, bk,
              insum ? "kept in the tensor cores (must be worse)" : "added by FADD", std::sqrt(e_mine / r2),
              std::sqrt(e_ffma / r2), ratio);
  return ratio;
}

enum class Kind { kernel, plain, insum };
template <int BM, int BN, int BK, int WM, int WN, int S, Kind K = Kind::kernel>
int run(const Shape& s, std::mt19937& gen, bool quiet = false) {
  Problem<float> p(s, gen);
  const int tx = (s.n + BN - 1) / BN, ty = (s.m + BM - 1) / BM;
  const int vec = p.aligned(p.g.a) && p.aligned(p.g.b) && p.lda % 4 == 0 && p.ldb % 4 == 0;
  const int cvec = reinterpret_cast<std::uintptr_t>(p.g.c) % 8 == 0 && p.ldc % 2 == 0;
  constexpr int NT = 32 * WM * WN;
  static_assert(tf32x3::smem_bytes(BM, BN, BK, S) <= int(sizeof(gemm_tf32x3_smem)), "emulated shared memory");
  BlockSync bs;
  bs.block = std::make_unique<std::barrier<>>(NT);
  for (int w = 0; w < NT / 32; ++w) bs.warp[w] = std::make_unique<std::barrier<>>(32);
  g_sync = &bs;
  const std::vector<float> c_in = p.C;
  p.launch(tx * ty, NT, [](int) { std::fill(std::begin(gemm_tf32x3_smem), std::end(gemm_tf32x3_smem), 0xff); },  // NaN garbage
           [&] {
             if constexpr (K == Kind::kernel) gemm_tf32x3_kernel<BM, BN, BK, WM, WN, S, 1>(p.g, tx, ty, vec, cvec);
             else if constexpr (K == Kind::plain) plain_kernel<BM, BN, BK, WM, WN, S, 1>(p.g, tx, ty, vec, cvec);
             else insum_kernel<BM, BN, BK, WM, WN, S, 1>(p.g, tx, ty, vec, cvec);
           });
  const double mine = rel_error(p, p.C), theirs = rel_error(p, ffma(p, c_in));
  const bool norm_ok = mine <= kNormSlack * theirs + 1e-7;
  char what[160];
  std::snprintf(what, sizeof what, "%s %3dx%-3dx%-2d S=%d vec=%d cvec=%d rel %.2e (ffma %.2e)%s",
                K == Kind::kernel ? "3xTF32" : K == Kind::plain ? "plain TF32 (must FAIL)" : "sums in the tensor cores (must FAIL)",
                BM, BN, BK, S, vec, cvec, mine, theirs, norm_ok ? "" : " NORM-WISE FAIL");
  const int elem_bad = quiet ? 0 : p.check(what, 1e-5 * (1 + std::sqrt(double(s.k))));
  if (quiet) std::printf("%s\n", what);
  return elem_bad || !norm_ok;
}

int main() {
  std::mt19937 gen(11);
  int fails = 0;
  // The common shapes (odd, primes, 1x1x1, k = 0, ld pads, an unaligned base, alpha and beta with
  // beta = 0 over NaN), then alpha = 0 with k > 0, several blocks and partial steps of each tile,
  // a longer k, and blocks inside C whose whole K steps run steady.
  const auto shapes = shapes_and({{128, 128, 64, 0, 0, 0, 0, 1, 0}, {259, 130, 75, 0, 0, 0, 0, 1, 0},
                                   {61, 67, 41, 0, 0, 2, 0, 0, 1.5}, {131, 193, 47, 4, 0, 4, 0, 1, 0.5},
                                   {2, 3, 517, 0, 0, 0, 0, 1, 0}, {140, 64, 300, 1, 2, 3, 1, -2, 0},
                                   // blocks inside C with padded ld: the steady steps' bound-free copies
                                   {256, 128, 160, 4, 4, 4, 0, 1, 0.5}, {200, 136, 90, 2, 0, 0, 0, 1, 0}});
  for (const Shape& s : shapes) {
    fails += run<128, 128, 32, 2, 4, 3>(s, gen);  // the cuda backend's default
    fails += run<128, 64, 16, 2, 2, 3>(s, gen);   // the 48 KiB shape (the kokkos backend's)
  }
  for (int bk : {32, 16})
    for (int k : {1024, 8192})
      if (model(k, bk, false) > 1.0) ++fails;
  if (model(8192, 32, true) <= 3.0) ++fails;
  std::printf("%d failures\n", fails);
  // The broken kernels: each must fail its checks (the test can fail).
  int caught = 0;
  caught += run<128, 64, 16, 2, 2, 3, Kind::plain>({67, 45, 33, 0, 0, 0, 0, 1, 0}, gen);
  caught += run<128, 64, 16, 2, 2, 3, Kind::insum>({16, 16, 4096, 0, 0, 0, 0, 1, 0}, gen, true);
  std::printf("broken kernels caught: %d of 2\n", caught);
  return fails != 0 || caught != 2;
}
CPP
emu_build_run
