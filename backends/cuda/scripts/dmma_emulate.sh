#!/usr/bin/env bash
# Runs the DMMA double gemm kernel (backends/common/gpu/gemm_dmma.cuh) on the HOST, for machines without
# a GPU (emulate_common.sh: a std::thread per CUDA thread, __syncthreads a std::barrier); mma.sync m8n8k4 is a
# warp-collective exchange that computes what the PTX ISA's fragment layouts say (lane L holds
# A[L/4][L%4] and B[L%4][L/4] and receives C[L/4][2(L%4) + {0,1}]). Everything else is the
# kernel's own code compiled by g++: the block order, both copy paths (16-byte with partial
# vectors, 8-byte), the 3-stage pipeline, the fragment loads, the m16n8k16 register order (here
# issued as its 8 m8n8k4) and the epilogue (beta == 0 over NaN, ld pads, unaligned bases), for
# every compiled tile and both shapes, the steady steps of blocks inside C, and the kokkos backend's 2-stage block, against a host
# reference. What it cannot check: the real
# instructions, cp.async timing, bank conflicts, speed. About two minutes on two cores.
# Usage: bash backends/cuda/scripts/dmma_emulate.sh
set -euo pipefail
source "$(dirname "$0")/emulate_common.sh"
emu_begin
# The kernel file with the inline-PTX fallback of mma884 (12 warp shuffles) replaced by the
# emulated instruction: shuffles through OS-thread barriers would take hours.
python3 - "$root/backends/common/gpu/gemm_dmma.cuh" "$dir/gemm_dmma.cuh" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index('  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;')
j = s.index('#endif', i)
open(sys.argv[2], 'w').write(s[:i] + '  emu_mma884(c0, c1, a, b);\n' + s[j:])
PY
emu_header <<'CUH'
struct BlockSync {
  std::unique_ptr<std::barrier<>> block;
  std::unique_ptr<std::barrier<>> warp[64];
};
inline BlockSync* g_sync = nullptr;
inline void __syncthreads() { g_sync->block->arrive_and_wait(); }
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
#include "device_common.cuh"
namespace tilekit::gpu { alignas(16) unsigned char gemm_dmma_smem[4 * (128 * 20 + 16 * 132) * 8]; }
#include "gemm_dmma.cuh"
#include "emu_gemm.hpp"
using namespace tilekit::gpu;

// S: shared stages (tile_choice.hpp's dmma_stages: 4 at 128x128, 3 at 128x64 and 64x128x8, 2 at
// 64x64, which are also the kokkos backend's teams); BK: the step's depth (16, or 8 for 64x128x8).
template <int BM, int BN, int WM, int WN, bool W, int S, int BK = 16>
int run(const Shape& s, std::mt19937& gen) {
  Problem<double> p(s, gen);
  const int tx = (s.n + BN - 1) / BN, ty = (s.m + BM - 1) / BM;
  const int vec = p.aligned(p.g.a) && p.aligned(p.g.b) && p.lda % 2 == 0 && p.ldb % 2 == 0;
  const int cvec = p.aligned(p.g.c) && p.ldc % 2 == 0;
  constexpr int NT = 32 * WM * WN;
  BlockSync bs;
  bs.block = std::make_unique<std::barrier<>>(NT);
  for (int w = 0; w < NT / 32; ++w) bs.warp[w] = std::make_unique<std::barrier<>>(32);
  g_sync = &bs;
  p.launch(tx * ty, NT, [](int) { std::fill(std::begin(gemm_dmma_smem), std::end(gemm_dmma_smem), 0xff); },  // NaN garbage
           [&] { gemm_dmma_kernel<BM, BN, WM, WN, W, S, 1, BK>(p.g, tx, ty, vec, cvec); });
  char what[64];
  std::snprintf(what, sizeof what, "%3dx%-3dx%-2d W=%d S=%d vec=%d cvec=%d", BM, BN, BK, W, S, vec, cvec);
  return p.check(what, 1e-12);
}

int main() {
  std::mt19937 gen(7);
  int fails = 0;
  // Blocks wholly inside C with padded even ld and K steps to spare: the steady steps' bound-free
  // copies, then the general steps (the last stages, a partial last step, the edge blocks).
  const auto shapes = shapes_and({{128, 128, 64, 0, 0, 0, 0, 1, 0}, {256, 128, 160, 2, 2, 2, 0, -1, 0.25},
                                  {200, 136, 90, 2, 0, 0, 0, 1, 0}, {128, 288, 80, 2, 2, 2, 0, 1, 0}});
  for (const Shape& s : shapes) {
    fails += run<128, 128, 2, 4, true, 4>(s, gen);
    fails += run<128, 128, 2, 4, false, 4>(s, gen);
    fails += run<128, 64, 4, 2, true, 3>(s, gen);
    fails += run<64, 64, 2, 2, true, 2>(s, gen);
    fails += run<64, 64, 2, 2, false, 2>(s, gen);
    fails += run<64, 64, 2, 2, true, 3>(s, gen);  // three stages: the block body at any depth
    fails += run<64, 128, 2, 2, true, 3, 8>(s, gen);   // 8 deep: m16n8k8
    fails += run<64, 128, 2, 2, false, 3, 8>(s, gen);  // the same on m8n8k4
  }
  std::printf("%d failures\n", fails);
  return fails != 0;
}
CPP
emu_build_run
