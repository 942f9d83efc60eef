#!/usr/bin/env bash
# Runs the sm_90 float gemm kernel (backends/gpu/gemm_sm90.cuh) on the HOST, for machines without
# a GPU: each CUDA thread is a std::thread, __syncthreads a std::barrier, and the cp.async copies
# the kernel's own below-sm_80 fallback (plain copies with the same zero fill). Everything else is
# the kernel's code compiled by g++: the block order, A's transposed 4-byte copies, B's 16-byte
# copies with partial vectors and its 4-byte path, the stage ring, the fragment reads and the
# epilogue (beta == 0 over NaN, ld pads, unaligned bases), for every instantiation, against a
# host reference. It cannot check the real instructions, cp.async timing (racecheck on the device
# does), bank conflicts or speed. A few minutes on two cores.
# Usage: bash backends/cuda/scripts/sgemm_emulate.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$root/backends/gpu/gemm_sm90.cuh" "$dir/"
cat >"$dir/device_common.cuh" <<'CUH'
// Host emulation of the few CUDA names gemm_sm90.cuh uses: one std::thread per CUDA thread.
#pragma once
#include <algorithm>
#include <barrier>
#include <memory>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n)
#define __launch_bounds__(...)
struct Dim { unsigned x = 0, y = 0, z = 0; };
inline thread_local Dim threadIdx, blockIdx;
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
using std::min; using std::max;
inline std::barrier<>* g_block = nullptr;
inline void __syncthreads() { g_block->arrive_and_wait(); }
namespace tilekit::gpu {
template <class T>
struct GemmParams {
  int m, n, k;
  T alpha, beta;
  const T* a; int lda;
  const T* b; int ldb;
  T* c; int ldc;
};
}  // namespace tilekit::gpu
CUH
cat >"$dir/emu.cpp" <<'CPP'
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
namespace tilekit::gpu { alignas(16) unsigned char gemm_sm90_smem[4 * 32 * (256 + 4 + 128) * 4]; }
#include "gemm_sm90.cuh"
using namespace tilekit::gpu;

template <int BM, int BN, int BK, int TM, int TN, int S, bool E = false, bool F = false, int KU = BK>
int run(int m, int n, int k, int pa, int pb, int pc, int off, float alpha, float beta, std::mt19937& gen) {
  const int lda = k + pa, ldb = n + pb, ldc = n + pc;
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(size_t(m) * lda + 4), B(size_t(k) * ldb + 4), C(size_t(m) * ldc + 4), R;
  for (auto& x : A) x = u(gen);
  for (auto& x : B) x = u(gen);
  for (auto& x : C) x = beta == 0 ? NAN : u(gen);
  R = C;
  const float *a = A.data() + off, *b = B.data() + off;
  float *c = C.data() + off, *r = R.data() + off;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(a[i * lda + p]) * b[p * ldb + j];
      r[i * ldc + j] = beta == 0 ? float(alpha * s) : float(alpha * s + double(beta) * r[i * ldc + j]);
    }
  GemmParams<float> g{m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
  auto al = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  int tx = (n + BN - 1) / BN, ty = (m + BM - 1) / BM;
  int bvec = al(b) && ldb % 4 == 0, cvec = al(c) && ldc % 4 == 0;
  constexpr int NT = sgemm::threads(BM, BN, TM, TN);
  for (int blk = 0; blk < tx * ty; ++blk) {
    std::barrier<> bar(NT);
    g_block = &bar;
    std::memset(tilekit::gpu::gemm_sm90_smem, 0xff, sizeof(tilekit::gpu::gemm_sm90_smem));  // NaN garbage
    std::vector<std::thread> th;
    for (int t = 0; t < NT; ++t)
      th.emplace_back([&, t] {
        threadIdx.x = t;
        blockIdx.x = blk;
        gemm_sm90_kernel<BM, BN, BK, TM, TN, S, 1, E, F, KU>(g, tx, ty, bvec, cvec);
      });
    for (auto& x : th) x.join();
  }
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < C.size(); ++i) {
    const bool in = i >= size_t(off) && (i - off) / ldc < size_t(m) && (i - off) % ldc < size_t(n);
    if (!in) {
      if (!(std::isnan(C[i]) && std::isnan(R[i])) && C[i] != R[i]) ++bad;  // untouched outside C
      continue;
    }
    const double e = std::fabs(double(C[i]) - R[i]);
    worst = std::max(worst, e);
    if (!(e <= 1e-5 * (1 + std::sqrt(double(k))) * (1 + std::fabs(R[i])))) ++bad;
  }
  std::printf("%3dx%-3dx%d %2dx%-2d S=%d%s KU=%d m=%d n=%d k=%d pads=%d,%d,%d off=%d bvec=%d cvec=%d a=%g b=%g: %s (max err %.2e)\n", BM,
              BN, BK, TM, TN, S, E ? (F ? " early fast" : " early") : (F ? " fast" : ""), KU, m, n, k, pa, pb, pc, off, bvec, cvec, alpha, beta, bad ? "FAIL" : "ok", worst);
  return bad != 0;
}

int main() {
  std::mt19937 gen(7);
  int fails = 0;
  struct S { int m, n, k, pa, pb, pc, off; float alpha, beta; };
  const S shapes[] = {{67, 45, 33, 0, 0, 0, 0, 1, 0}, {68, 44, 36, 0, 0, 0, 0, 1, 0}, {131, 260, 37, 0, 0, 0, 0, 0.5, 2},
                      {130, 130, 50, 2, 4, 6, 0, -1, 0.25}, {70, 66, 21, 1, 3, 5, 0, 1, 1}, {33, 17, 40, 0, 0, 0, 1, 1, 0},
                      {1, 1, 1, 0, 0, 0, 0, 2, 0.5}, {129, 131, 0, 0, 0, 0, 0, 1, 0}, {40, 30, 0, 0, 0, 0, 0, 1, 3},
                      {256, 128, 64, 0, 0, 0, 0, 1, 0}, {3, 200, 65, 0, 0, 0, 0, 1, 0}, {300, 140, 83, 4, 0, 4, 0, 1, 0},
                      {260, 260, 83, 1, 4, 0, 0, 1, 0.5}, {256, 256, 96, 4, 8, 4, 0, 1, 0}};
  for (const S& s : shapes) {
    fails += run<128, 128, 16, 8, 8, 2>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 8, 8, 3>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 8, 8, 4>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<256, 128, 16, 16, 8, 3>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<256, 128, 16, 16, 8, 4>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 4>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 32, 8, 8, 3>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 32, 16, 8, 3>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 8, 8, 2, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 8, 8, 3, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 8, 8, 3, false, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, false, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, true, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<256, 128, 16, 16, 8, 3, false, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, false, true, 4>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, true, true, 4>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, false, true, 8>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 16, 16, 8, 3, false, true, 2>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
  }
  std::printf("%d failures\n", fails);
  return fails != 0;
}
CPP
g++ -std=c++20 -O1 -pthread -I"$dir" -o "$dir/emu" "$dir/emu.cpp"
"$dir/emu"
