// The optimized gemm on the tensor cores in Kokkos: the cuda backend's block bodies run by Kokkos
// teams on Kokkos::Cuda, sm_80 and later (league rank = block index, team rank = thread index,
// level-0 team scratch = the shared stages, as gemm.cpp's Sm90Team):
//   double  gemm_dmma_block (backends/gpu/gemm_dmma.cuh), the FP64 tensor cores: 64x64x16, 4 warps
//           of 32x32, 2 stages (37888 bytes: Kokkos gives a team at most 48 KiB, in which neither
//           three stages of any 16-deep DMMA tile nor two of 128x64 fit); on large problems
//           64x128x8 (m16n8k8), 4 warps of 32x64, 3 stages (43776 bytes), the cuda backend's block
//           there. kokkos.dgemm.kernel: mma, or block (gemm.cpp's generic block).
//   float   gemm_tf32x3_block (backends/gpu/gemm_tf32x3.cuh) under gemm.precision=tf32x3: 128x64x16,
//           4 warps of 64x32, 3 stages (44544 bytes), the cuda backend's second compiled shape.
// docs/design/kokkos-gemm-mma.md. Elsewhere (host spaces, other GPUs, before sm_80) nothing here
// runs; a tf32x3 request on a GPU that cannot run it is an error, on a host space FP32 FMA (no less
// accurate).
#pragma once

#include <optional>

#include "kokkos.hpp"

namespace tilekit::kokkos::mma {

// The tiles the team kernels are compiled for. Double: 64x64 (three teams an SM), and 64x128x8
// (two) from the size where the cuda backend's DMMA block grows to it (8 blocks an SM).
inline TileConfig dgemm_tile() { return {64, 64, 16}; }
inline TileConfig dgemm_wide_tile() { return {64, 128, 8}; }
inline TileConfig tf32x3_tile() { return {128, 64, 16}; }

// The automatic tile of the optimized gemm of `p` when a tensor-core team runs it here, else
// nullopt. Throws for gemm.precision=tf32x3 on a GPU without TF32 tensor cores.
std::optional<TileConfig> auto_tile(const Problem& p);
// The launch of the optimized gemm of tile `t` when a tensor-core team runs it, else nullopt.
// Under gemm.precision=tf32x3 on a GPU, any tile but tf32x3_tile() is an error.
std::optional<Launch> plan(DType dt, const Problem& p, const TileConfig& t);
// Runs the team plan() chose for this tile.
void gemm(const GemmArgs<float>& a, const TileConfig& t);
void gemm(const GemmArgs<double>& a, const TileConfig& t);
// The FP64 tensor cores' peak in GFLOP/s, measured by Kokkos teams of the cuda backend's DMMA chains
// (gemm_dmma.cuh's peak_chains) on `sms` SMs, where the double gemm runs on them; else 0.
double dmma_peak_gflops(int sms);

}  // namespace tilekit::kokkos::mma
