#!/usr/bin/env bash
# Runs the sm_90 float gemm kernel (backends/common/gpu/gemm_sm90.cuh) on the HOST, for machines without
# a GPU (emulate_common.sh: a std::thread per CUDA thread, the cp.async copies the kernel's own
# below-sm_80 fallback, plain copies with the same zero fill). Everything else is the kernel's
# code compiled by g++: the block order, A's transposed 4-byte copies, B's 16-byte copies with
# partial vectors and its 4-byte path, the fast copies of the interior blocks, the stage ring, the
# early barrier, the steady and spread K steps and the epilogue (beta == 0 over NaN, ld pads,
# unaligned bases), for every instantiation of kSgemmVariants, against a host reference. A few
# minutes on two cores.
# Usage: bash backends/cuda/scripts/sgemm_emulate.sh   (SGEMM_EMULATE=defaults: the defaults' three)
set -euo pipefail
source "$(dirname "$0")/emulate_common.sh"
emu_begin
cp "$root/backends/common/gpu/gemm_sm90.cuh" "$dir/"
emu_header <<'CUH'
inline std::barrier<>* g_block = nullptr;
inline void __syncthreads() { g_block->arrive_and_wait(); }
CUH
cat >"$dir/emu.cpp" <<'CPP'
#include <cstdlib>
#include <cstring>
#include <string>
#include "device_common.cuh"
namespace tilekit::gpu { alignas(16) unsigned char gemm_sm90_smem[4 * 32 * (256 + 4 + 128) * 4]; }
#include "gemm_sm90.cuh"
#include "emu_gemm.hpp"
using namespace tilekit::gpu;

template <int BM, int BN, int BK, int TM, int TN, int S, bool E = false, bool F = false, int KU = BK, int AH = 1, bool Z = false,
          bool ST = true, bool SP = false, int SK = 1, bool SR = false>
int run(const Shape& s, std::mt19937& gen) {
  Problem<float> p(s, gen);
  const int tx = (s.n + BN - 1) / BN, ty = (s.m + BM - 1) / BM;
  const int bvec = p.aligned(p.g.b) && p.ldb % 4 == 0, cvec = p.aligned(p.g.c) && p.ldc % 4 == 0;
  constexpr int NT = sgemm::threads(BM, BN, TM, TN);
  std::barrier<> bar(NT);
  g_block = &bar;
  p.launch(tx * ty, NT, [](int) { std::memset(gemm_sm90_smem, 0xff, sizeof(gemm_sm90_smem)); },  // NaN garbage
           [&] { gemm_sm90_kernel<BM, BN, BK, TM, TN, S, 1, E, F, KU, AH, Z, ST, SP, SK, SR>(p.g, tx, ty, bvec, cvec); });
  char what[128];
  const std::string spread = SP ? " spread/" + std::to_string(SK) : "";
  std::snprintf(what, sizeof what, "%3dx%-3dx%-2d %2dx%-2d S=%d%s%s%s%s%s%s KU=%d ahead=%d bvec=%d cvec=%d", BM, BN, BK,
                TM, TN, S, E ? " early" : "", F ? " fast" : "", Z ? " zig" : "", SR ? " serpentine" : "",
                ST ? "" : " branchy", spread.c_str(), KU, AH, bvec, cvec);
  return p.check(what, 1e-5 * (1 + std::sqrt(double(s.k))));
}

int main() {
  std::mt19937 gen(7);
  int fails = 0;
  const auto shapes = shapes_and({{256, 128, 64, 0, 0, 0, 0, 1, 0}, {300, 140, 83, 4, 0, 4, 0, 1, 0},
                                   {260, 260, 83, 1, 4, 0, 0, 1, 0.5}, {256, 256, 96, 4, 8, 4, 0, 1, 0},
                                   {512, 128, 40, 0, 4, 0, 0, 1, 0}});
  // Every instantiation tile_choice.hpp's kSgemmVariants has (a sweep build's list; the default
  // build compiles the first four). SGEMM_EMULATE=defaults: only the three the defaults run.
  const char* only = std::getenv("SGEMM_EMULATE");
  const bool all = !(only && std::string(only) == "defaults");
  for (const Shape& s : shapes) {
    // dual3efs4r (the default: the steady steps' copies in groups every 4 K indices, the FFMAs one
    // serpentine over the rows), kokkos' team (256x128x8, the same groups and serpentine), cub3efzs
    // (256x128x8 in zigzags, copies one or two every K index: an explicit 256x128x8 tile on cuda)
    fails += run<128, 128, 16, 16, 8, 3, true, true, 16, 1, false, true, true, 4, true>(s, gen);
    fails += run<256, 128, 8, 16, 8, 3, true, true, 8, 1, false, true, true, 4, true>(s, gen);
    fails += run<256, 128, 8, 16, 8, 3, true, true, 8, 1, true, true, true>(s, gen);
    if (!all) continue;
    // big3ef (256x128x16) and ddual3 (128x128x32): the explicit tiles only gemm_sm90 has
    fails += run<256, 128, 16, 16, 8, 3, true, true>(s, gen);
    fails += run<128, 128, 32, 16, 8, 3>(s, gen);
    // sweep builds: dual3efzs4 (4 x 4 products in zigzag order), dual3efzs (one or two copies every
    // K index), dual3efz, cub3efz (steady steps, copies at the step's top) and cub3efzb (the fast
    // blocks' steps with their conditions)
    fails += run<128, 128, 16, 16, 8, 3, true, true, 16, 1, true, true, true, 4>(s, gen);
    fails += run<128, 128, 16, 16, 8, 3, true, true, 16, 1, true, true, true>(s, gen);
    fails += run<128, 128, 16, 16, 8, 3, true, true, 16, 1, true>(s, gen);
    fails += run<256, 128, 8, 16, 8, 3, true, true, 8, 1, true>(s, gen);
    fails += run<256, 128, 8, 16, 8, 3, true, true, 8, 1, true, false>(s, gen);
  }
  std::printf("%d failures\n", fails);
  return fails != 0;
}
CPP
emu_build_run
