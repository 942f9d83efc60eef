#!/usr/bin/env bash
# Checks the data movement and layouts of the 3xTF32 gemm on wgmma (backends/common/gpu/
# gemm_tf32x3_sm90.cuh) on the HOST, for machines without a GPU. The header's own code, compiled
# by g++: the split pre-pass (split_tile, write_image: the swizzled tile images, zero past the
# borders, B transposed), the workspace offsets (tile_offset, workspace_floats), the block order
# (block_coords), the stage addresses and the operand addresses of every wgmma (stage_a, stage_b,
# operand), the descriptors (make_desc) and the epilogue's fragment coordinates (acc_row,
# acc_col). The instructions are emulated from the PTX ISA, independently of the header:
#   - cp.async.bulk: a copy of the bytes into an emulated shared memory whose base is not
#     1024-aligned (the kernel aligns it);
#   - wgmma.mma_async m64n128k8 .tf32, both operands K-major SWIZZLE_128B: the descriptor decoded
#     (start address, stride byte offset, layout type 1, base offset 0), element (row, k) of an
#     operand read at start + (row / 8) SBO + (row % 8) 128 + 4 k with the 16-byte chunk bits
#     (4-6) XORed with bits 7-9 of that address; the 13 low bits of each operand ignored; exact
#     products, the FP32 sum truncated toward zero (the pessimistic model of the tensor cores, as
#     tf32x3_emulate.sh); scale-d = 0 ignores the accumulator; the D fragment from the PTX ISA's
#     figure (warp w rows 16w.., lane 4g + t: d[i] at row 16w + g + 8 ((i / 2) % 2), column
#     8 (i / 4) + 2t + i % 2);
#   - the kernel's step: per 32-deep step 3 x 4 wgmma into fresh sums, then FADD.
# Checks, against a double reference, over odd shapes (1x1x1, primes, partial tiles, k = 0, ld
# pads, alpha and beta, several blocks and groups): every element within 1e-5 (1 + sqrt(k)) (1 + |C|),
# the norm-wise error no larger than 3x FP32 FFMA's (k order) + 1e-7, and at k = 8192 no larger
# than FFMA's; C outside m x n untouched. Then two broken models must FAIL: the wgmma reading
# without the swizzle (a layout mismatch), and plain TF32 (small parts zero).
# What it cannot check: the asm's syntax beyond what ptxas accepts, the mbarrier protocol, timing.
# Usage: bash backends/cuda/scripts/tf32x3_wgmma_emulate.sh   (about a minute on two cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$root/backends/common/gpu/gemm_tf32x3.cuh" "$root/backends/common/gpu/gemm_tf32x3_sm90.cuh" "$dir/"
cat >"$dir/device_common.cuh" <<'CUH'
// Host stand-ins for the CUDA names the headers use (none of the device-only paths runs here).
#pragma once
#include <algorithm>
#include <cstdint>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __align__(n)
#define __launch_bounds__(...)
struct Dim { unsigned x = 0, y = 0, z = 0; };
inline thread_local Dim threadIdx, blockIdx;
struct float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline unsigned __shfl_sync(unsigned, unsigned v, int) { return v; }
inline void __syncthreads() {}
inline std::uint64_t __cvta_generic_to_shared(const void*) { return 0; }
using std::min; using std::max;
CUH
# The real GemmParams and gemm_parts (backends/common/gpu/device_common.cuh), copies that do nothing.
python3 - "$root/backends/common/gpu/device_common.cuh" >>"$dir/device_common.cuh" <<'PY'
import sys
common = open(sys.argv[1]).read()
i = common.index("template <class T>\nstruct GemmParams")
params = common[i:common.index("};", i) + 2]
i = common.index("namespace gemm_parts {")
parts = common[i:common.index("}  // namespace gemm_parts", i)] + "}  // namespace gemm_parts"
stub = """namespace async_group {
inline void commit() {}
template <int pending> inline void wait() {}
template <int size, class T> inline void copy(T*, const T*, int) {}
template <int size, class T> inline void copy_full(T*, const T*) {}
}  // namespace async_group"""
print("namespace tilekit::gpu {\n" + params + "\n" + stub + "\n" + parts + "\n}  // namespace tilekit::gpu")
PY
cat >"$dir/emu.cpp" <<'CPP'
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "gemm_tf32x3_sm90.cuh"
namespace tilekit::gpu { unsigned char gemm_tf32x3_wgmma_smem[1]; }
using namespace tilekit::gpu;
using namespace tilekit::gpu::tf32x3_sm90;

static bool g_swizzle = true;  // the broken model reads without it
static bool g_plain = false;   // ... and plain TF32: the small parts zero

static double tf32_of(std::uint32_t u) { u &= 0xffffe000u; float f; std::memcpy(&f, &u, 4); return f; }
static float round_to_zero(double v) {
  float f = float(v);
  if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}
// The PTX ISA's K-major SWIZZLE_128B operand: element (row, k) of the 8-deep slice a descriptor names.
static double operand_elem(const std::vector<unsigned char>& smem, std::uint64_t desc, int row, int k) {
  const std::uint32_t start = std::uint32_t(desc & 0x3fff) << 4, sbo = std::uint32_t((desc >> 32) & 0x3fff) << 4;
  if ((desc >> 62) != 1 || ((desc >> 49) & 7) != 0) { std::fprintf(stderr, "descriptor: not SWIZZLE_128B with base offset 0\n"); std::exit(4); }
  std::uint32_t addr = start + std::uint32_t(row / 8) * sbo + std::uint32_t(row % 8) * 128 + 4u * std::uint32_t(k);
  if (g_swizzle) addr ^= ((addr >> 7) & 7u) << 4;
  if (addr + 4 > smem.size()) { std::fprintf(stderr, "wgmma operand outside shared memory\n"); std::exit(4); }
  std::uint32_t u; std::memcpy(&u, &smem[addr], 4);
  return tf32_of(u);
}
// wgmma.mma_async m64n128k8 f32.tf32.tf32 of one warpgroup: d[warp][lane][64].
static void wgmma(float (&d)[4][32][64], const std::vector<unsigned char>& smem, std::uint64_t da, std::uint64_t db, bool acc) {
  double a[64][8], b[128][8];
  for (int r = 0; r < 64; ++r) for (int k = 0; k < 8; ++k) a[r][k] = operand_elem(smem, da, r, k);
  for (int r = 0; r < 128; ++r) for (int k = 0; k < 8; ++k) b[r][k] = operand_elem(smem, db, r, k);
  for (int w = 0; w < 4; ++w)
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < 64; ++i) {
        const int row = 16 * w + l / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
        double s = acc ? d[w][l][i] : 0.0;
        for (int k = 0; k < 8; ++k) s += a[row][k] * b[col][k];
        d[w][l][i] = round_to_zero(s);
      }
}

struct Shape { int m, n, k, pa, pb, pc; float alpha, beta; };
struct Errors { double elem_ratio, norm, ffma_norm; bool outside_ok; };

static Errors run(const Shape& sh, unsigned seed) {
  const int m = sh.m, n = sh.n, k = sh.k, lda = k + sh.pa, ldb = n + sh.pb, ldc = n + sh.pc;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(std::size_t(m) * lda + 1), B(std::size_t(k) * ldb + 1), C(std::size_t(m) * ldc + 1);
  for (auto& x : A) x = u(rng);
  for (auto& x : B) x = u(rng);
  for (auto& x : C) x = u(rng);
  const std::vector<float> C0 = C;
  GemmParams<float> g{m, n, k, sh.alpha, sh.beta, A.data(), lda, B.data(), ldb, C.data(), ldc};
  const int tx = (n + BN - 1) / BN, ty = (m + BM - 1) / BM, ksteps = (k + BK - 1) / BK;

  // The pre-pass (the header's split, one emulated block a tile).
  std::vector<float> ws(workspace_floats(m, n, k) + 1, std::nanf(""));
  float* aw = ws.data();
  float* bw = ws.data() + tile_offset(ty, 0, ksteps);
  static float t[BM][BK + 1];
  for (int rb = 0; rb < ty; ++rb)
    for (int kb = 0; kb < ksteps; ++kb) {
      split_tile<false>(g.a, g.lda, m, k, ksteps, aw, rb, kb, 0, 1, t);
      write_image<false>(t, aw + tile_offset(rb, kb, ksteps), 0, 1);
      if (g_plain) std::fill(aw + tile_offset(rb, kb, ksteps) + kTileFloats, aw + tile_offset(rb, kb, ksteps) + 2 * kTileFloats, 0.0f);
    }
  for (int rb = 0; rb < tx; ++rb)
    for (int kb = 0; kb < ksteps; ++kb) {
      split_tile<true>(g.b, g.ldb, n, k, ksteps, bw, rb, kb, 0, 1, t);
      write_image<true>(t, bw + tile_offset(rb, kb, ksteps), 0, 1);
      if (g_plain) std::fill(bw + tile_offset(rb, kb, ksteps) + kTileFloats, bw + tile_offset(rb, kb, ksteps) + 2 * kTileFloats, 0.0f);
    }
  if (ws.size() > 1 && std::isnan(ws[ws.size() - 2])) { std::fprintf(stderr, "workspace not filled\n"); std::exit(4); }

  // The product, block by block, the kernel's step (the producer's copies done in order).
  const std::uint32_t raw = 48;  // an unaligned dynamic base: the kernel aligns it
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  std::vector<unsigned char> smem(base + kStages * kStageBytes);
  static float acc[2][4][32][64], part[2][4][32][64];
  for (int pid = 0; pid < tx * ty; ++pid) {
    int by, bx;
    block_coords(pid, tx, ty, by, bx);
    if (by < 0 || by >= ty || bx < 0 || bx >= tx) { std::fprintf(stderr, "block order out of range\n"); std::exit(4); }
    std::memset(acc, 0, sizeof acc);
    for (int s = 0; s < ksteps; ++s) {
      const int st = s % kStages;
      std::memcpy(&smem[stage_a(base, st)], aw + tile_offset(by, 0, ksteps) + std::size_t(s) * 2 * kTileFloats, kStepBytes);
      std::memcpy(&smem[stage_b(base, st)], bw + tile_offset(bx, 0, ksteps) + std::size_t(s) * 2 * kTileFloats, kStepBytes);
      const std::uint32_t a = stage_a(base, st), b = stage_b(base, st);
      for (int wg = 0; wg < 2; ++wg) {
        for (int kk = 0; kk < BK / 8; ++kk) {
          const std::uint64_t a_big = make_desc(operand(a, 0, 64 * wg, kk)), a_small = make_desc(operand(a, 1, 64 * wg, kk));
          const std::uint64_t b_big = make_desc(operand(b, 0, 0, kk)), b_small = make_desc(operand(b, 1, 0, kk));
          wgmma(part[wg], smem, a_small, b_big, kk != 0);
          wgmma(part[wg], smem, a_big, b_small, true);
          wgmma(part[wg], smem, a_big, b_big, true);
        }
        for (int w = 0; w < 4; ++w) for (int l = 0; l < 32; ++l) for (int i = 0; i < 64; ++i) acc[wg][w][l][i] += part[wg][w][l][i];
      }
    }
    for (int wg = 0; wg < 2; ++wg)
      for (int w = 0; w < 4; ++w)
        for (int l = 0; l < 32; ++l)
          for (int i = 0; i < 64; ++i) {
            const int row = by * BM + 64 * wg + acc_row(i, l, w), col = bx * BN + acc_col(i, l);
            if (row >= m || col >= n) continue;
            float& c = C[std::size_t(row) * ldc + col];
            const float v = g.alpha * acc[wg][w][l][i];
            c = g.beta == 0.0f ? v : v + g.beta * c;
          }
  }

  // Against the double reference; FP32 FFMA in k order on the same inputs for the norm-wise bound.
  Errors e{0, 0, 0, true};
  double num = 0, den = 0, fnum = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double r = 0;
      float f = 0;
      for (int p = 0; p < k; ++p) {
        r += double(A[std::size_t(i) * lda + p]) * B[std::size_t(p) * ldb + j];
        f = std::fma(A[std::size_t(i) * lda + p], B[std::size_t(p) * ldb + j], f);
      }
      const double c0 = C0[std::size_t(i) * ldc + j];
      const double ref = double(sh.alpha) * r + double(sh.beta) * c0;
      const double ff = double(float(sh.alpha * f + sh.beta * float(c0)));
      const double got = C[std::size_t(i) * ldc + j];
      const double tol = 1e-5 * (1 + std::sqrt(double(k))) * (1 + std::fabs(ref));
      e.elem_ratio = std::max(e.elem_ratio, std::isfinite(got) ? std::fabs(got - ref) / tol : 1e30);
      num += (got - ref) * (got - ref);
      fnum += (ff - ref) * (ff - ref);
      den += ref * ref;
    }
  e.norm = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  e.ffma_norm = den > 0 ? std::sqrt(fnum / den) : std::sqrt(fnum);
  for (int i = 0; i < m; ++i)
    for (int j = n; j < ldc; ++j) e.outside_ok &= C[std::size_t(i) * ldc + j] == C0[std::size_t(i) * ldc + j];
  e.outside_ok &= C.back() == C0.back();
  return e;
}

int main() {
  const std::vector<Shape> shapes = {
      {1, 1, 1, 0, 0, 0, 2, 0.5f},      {67, 45, 33, 0, 0, 0, 1, 0},     {131, 260, 37, 0, 0, 0, 0.5f, 2},
      {130, 130, 50, 2, 4, 6, -1, 0.25f}, {70, 66, 21, 1, 3, 5, 1, 1},   {33, 17, 40, 0, 0, 0, 1, 0},
      {129, 131, 0, 0, 0, 0, 1, 0},      {40, 30, 0, 0, 0, 0, 1, 3},     {3, 200, 65, 0, 0, 0, 1, 0},
      {128, 128, 32, 0, 0, 0, 1, 0},     {256, 384, 96, 0, 0, 0, 1, 0},  {1100, 140, 40, 3, 1, 2, 1, 0},
      {200, 300, 1000, 0, 0, 0, 1, 0}};
  int bad = 0;
  for (const Shape& s : shapes) {
    const Errors e = run(s, unsigned(s.m * 131 + s.n * 7 + s.k));
    const bool ok = e.elem_ratio <= 1 && e.norm <= 3 * e.ffma_norm + 1e-7 && e.outside_ok;
    std::printf("%-4s %5dx%5dx%5d pads %d,%d,%d alpha %g beta %g: elem err/tol %.3g, norm %.3g (FFMA %.3g)%s\n",
                ok ? "ok" : "FAIL", s.m, s.n, s.k, s.pa, s.pb, s.pc, s.alpha, s.beta, e.elem_ratio, e.norm, e.ffma_norm,
                e.outside_ok ? "" : ", C outside m x n CHANGED");
    bad += !ok;
  }
  {  // a long sum: no less accurate than FFMA (the device target: cuBLAS SGEMM's error at 8192)
    const Shape s{128, 128, 8192, 0, 0, 0, 1, 0};
    const Errors e = run(s, 7);
    const bool ok = e.elem_ratio <= 1 && e.norm <= e.ffma_norm;
    std::printf("%-4s %5dx%5dx%5d (long sum): norm %.3g vs FFMA %.3g (%.2fx)\n", ok ? "ok" : "FAIL", s.m, s.n, s.k, e.norm,
                e.ffma_norm, e.norm / e.ffma_norm);
    bad += !ok;
  }
  // The checks must catch a layout mismatch and plain TF32.
  g_swizzle = false;
  Errors e = run({131, 260, 37, 0, 0, 0, 1, 0}, 1);
  const bool swz_caught = !(e.elem_ratio <= 1 && e.norm <= 3 * e.ffma_norm + 1e-7);
  std::printf("%-4s broken model (wgmma reads without the swizzle) is caught: norm %.3g\n", swz_caught ? "ok" : "FAIL", e.norm);
  g_swizzle = true;
  g_plain = true;
  e = run({131, 260, 370, 0, 0, 0, 1, 0}, 2);
  const bool plain_caught = !(e.elem_ratio <= 1 && e.norm <= 3 * e.ffma_norm + 1e-7);
  std::printf("%-4s broken model (plain TF32) is caught: norm %.3g vs FFMA %.3g\n", plain_caught ? "ok" : "FAIL", e.norm, e.ffma_norm);
  bad += !swz_caught + !plain_caught;
  std::printf("%s\n", bad ? "tf32x3_wgmma_emulate: FAILED" : "tf32x3_wgmma_emulate: all passed");
  return bad ? 1 : 0;
}
CPP
g++ -std=c++20 -O2 -Wall -Wno-unknown-pragmas -I"$dir" "$dir/emu.cpp" -o "$dir/emu"
"$dir/emu"
