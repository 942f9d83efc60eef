#!/usr/bin/env bash
# Runs the DMMA double gemm kernel (backends/gpu/gemm_dmma.cuh) on the HOST, for machines without
# a GPU: each CUDA thread is a std::thread, __syncthreads a std::barrier, and mma.sync m8n8k4 a
# warp-collective exchange that computes what the PTX ISA's fragment layouts say (lane L holds
# A[L/4][L%4] and B[L%4][L/4] and receives C[L/4][2(L%4) + {0,1}]). Everything else is the
# kernel's own code compiled by g++: the block order, both copy paths (16-byte with partial
# vectors, 8-byte), the 3-stage pipeline, the fragment loads, the m16n8k16 register order (here
# issued as its 8 m8n8k4) and the epilogue (beta == 0 over NaN, ld pads, unaligned bases), for
# every compiled tile and both shapes, against a host reference. What it cannot check: the real
# instructions, cp.async timing, bank conflicts, speed. About two minutes on two cores.
# Usage: bash backends/cuda/scripts/dmma_emulate.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The kernel file with the inline-PTX fallback of mma884 (12 warp shuffles) replaced by the
# emulated instruction: shuffles through OS-thread barriers would take hours.
python3 - "$root/backends/gpu/gemm_dmma.cuh" "$dir/gemm_dmma.cuh" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index('  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;')
j = s.index('#endif', i)
open(sys.argv[2], 'w').write(s[:i] + '  emu_mma884(c0, c1, a, b);\n' + s[j:])
PY
cat >"$dir/device_common.cuh" <<'CUH'
// Host emulation of the few CUDA names gemm_dmma.cuh uses: one std::thread per CUDA thread.
#pragma once
#include <algorithm>
#include <barrier>
#include <memory>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n)
#define TILEKIT_LAUNCH_BOUNDS_OCC(a, b)
struct Dim { unsigned x = 0, y = 0, z = 0; };
inline thread_local Dim threadIdx, blockIdx;
struct double2 { double x, y; };
inline double2 make_double2(double a, double b) { return {a, b}; }
using std::min; using std::max;
struct BlockSync {
  std::unique_ptr<std::barrier<>> block;
  std::unique_ptr<std::barrier<>> warp[64];
  double shfl[64][32];
};
inline BlockSync* g_sync = nullptr;
inline void __syncthreads() { g_sync->block->arrive_and_wait(); }
inline double __shfl_sync(unsigned, double v, int src) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  g_sync->shfl[w][l] = v;
  g_sync->warp[w]->arrive_and_wait();
  const double r = g_sync->shfl[w][src];
  g_sync->warp[w]->arrive_and_wait();
  return r;
}
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
// One warp-collective exchange instead of 12 shuffles (the emulation's stand-in for the hardware
// m8n8k4): lane L holds A[L/4][L%4] and B[L%4][L/4]; it gets C[g][2t], C[g][2t+1].
struct MmaX { double a[64][32], b[64][32]; };
inline MmaX g_mx;
inline void emu_mma884(double& c0, double& c1, double a, double b) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32, g = l >> 2, t = l & 3;
  g_mx.a[w][l] = a; g_mx.b[w][l] = b;
  g_sync->warp[w]->arrive_and_wait();
  for (int k = 0; k < 4; ++k) {
    const double ak = g_mx.a[w][g * 4 + k];
    c0 += ak * g_mx.b[w][(2 * t) * 4 + k];
    c1 += ak * g_mx.b[w][(2 * t + 1) * 4 + k];
  }
  g_sync->warp[w]->arrive_and_wait();
}
CUH
cat >"$dir/emu.cpp" <<'CPP'
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>
namespace tilekit::gpu { alignas(16) unsigned char gemm_dmma_smem[3 * (128 * 20 + 16 * 132) * 8]; }
#include "gemm_dmma.cuh"
using namespace tilekit::gpu;

template <int BM, int BN, int WM, int WN, bool W>
int run(int m, int n, int k, int pa, int pb, int pc, int off, double alpha, double beta, std::mt19937& gen) {
  const int lda = k + pa, ldb = n + pb, ldc = n + pc;
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> A(size_t(m) * lda + 4), B(size_t(k) * ldb + 4), C(size_t(m) * ldc + 4), R;
  for (auto& x : A) x = u(gen);
  for (auto& x : B) x = u(gen);
  for (auto& x : C) x = beta == 0 ? NAN : u(gen);
  R = C;
  const double *a = A.data() + off, *b = B.data() + off;
  double *c = C.data() + off, *r = R.data() + off;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
      r[i * ldc + j] = beta == 0 ? alpha * s : alpha * s + beta * r[i * ldc + j];
    }
  GemmParams<double> g{m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
  auto al = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  int tx = (n + BN - 1) / BN, ty = (m + BM - 1) / BM;
  int vec = al(a) && al(b) && lda % 2 == 0 && ldb % 2 == 0, cvec = al(c) && ldc % 2 == 0;
  constexpr int NT = 32 * WM * WN;
  for (int blk = 0; blk < tx * ty; ++blk) {
    BlockSync bs;
    bs.block = std::make_unique<std::barrier<>>(NT);
    for (int w = 0; w < NT / 32; ++w) bs.warp[w] = std::make_unique<std::barrier<>>(32);
    g_sync = &bs;
    std::fill(std::begin(tilekit::gpu::gemm_dmma_smem), std::end(tilekit::gpu::gemm_dmma_smem), 0xff);  // NaN garbage
    std::vector<std::thread> th;
    for (int t = 0; t < NT; ++t)
      th.emplace_back([&, t] {
        threadIdx.x = t;
        blockIdx.x = blk;
        gemm_dmma_kernel<BM, BN, WM, WN, W>(g, tx, ty, vec, cvec);
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
    const double e = std::fabs(C[i] - R[i]);
    worst = std::max(worst, e);
    if (!(e <= 1e-12 * (1 + std::fabs(R[i])))) ++bad;
  }
  std::printf("%3dx%-3d W=%d m=%d n=%d k=%d pads=%d,%d,%d off=%d vec=%d cvec=%d a=%g b=%g: %s (max err %.2e)\n", BM, BN, W, m,
              n, k, pa, pb, pc, off, vec, cvec, alpha, beta, bad ? "FAIL" : "ok", worst);
  return bad != 0;
}

int main() {
  std::mt19937 gen(7);
  int fails = 0;
  struct S { int m, n, k, pa, pb, pc, off; double alpha, beta; };
  const S shapes[] = {{67, 45, 33, 0, 0, 0, 0, 1, 0}, {68, 44, 36, 0, 0, 0, 0, 1, 0}, {131, 260, 37, 0, 0, 0, 0, 0.5, 2},
                      {130, 130, 50, 2, 4, 6, 0, -1, 0.25}, {70, 66, 21, 1, 3, 5, 0, 1, 1}, {33, 17, 40, 0, 0, 0, 1, 1, 0},
                      {1, 1, 1, 0, 0, 0, 0, 2, 0.5}, {129, 131, 0, 0, 0, 0, 0, 1, 0}, {40, 30, 0, 0, 0, 0, 0, 1, 3},
                      {128, 128, 64, 0, 0, 0, 0, 1, 0}, {3, 200, 65, 0, 0, 0, 0, 1, 0}};
  for (const S& s : shapes) {
    fails += run<128, 128, 2, 4, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 128, 2, 4, false>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<128, 64, 4, 2, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<64, 64, 2, 2, false>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
    fails += run<64, 64, 2, 2, true>(s.m, s.n, s.k, s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, gen);
  }
  std::printf("%d failures\n", fails);
  return fails != 0;
}
CPP
g++ -std=c++20 -O1 -pthread -I"$dir" -o "$dir/emu" "$dir/emu.cpp"
"$dir/emu"
