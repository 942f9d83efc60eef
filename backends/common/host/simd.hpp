// The runtime-dispatched SIMD kernels of the host's optimized variants (gemm_simd.cpp,
// transpose_simd.cpp, conv2d_simd.cpp), as the portable drivers see them: the openmp backend's
// (backends/openmp/gemm.cpp, transpose.cpp, conv2d.cpp) and packed.hpp's, which kokkos runs on
// host execution spaces. Compiled where the build found Highway (cmake/TilekitHostSimd.cmake).
//
// Why Highway: the library must run on any x86-64 (and other) CPU from one portable build, yet
// use AVX-512 where the CPU has it. Highway compiles each kernel once per instruction set
// (foreach_target) with function-level target attributes and picks the best one the CPU
// supports at the first call (HWY_DYNAMIC_DISPATCH). Unlike compiling a whole file with
// -mavx512f, no AVX-512 code can leak into shared inline functions (the ODR trap that crashes
// older CPUs with SIGILL), and unlike raw intrinsics the same source serves AVX2, SSE4, NEON.
// std::experimental::simd has no dispatch of its own, and GCC vector extensions would need
// hand-written dispatch and per-ISA shuffles for the transposes.
//
// The drivers own the threading (OpenMP regions, Kokkos parallel_for: in ordinary code, outside
// the per-target namespaces); each kernel here is one thread's share of the work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tilekit/types.hpp"

namespace tilekit::host::simd {

// The instruction set the dispatch picked on this CPU, as Highway names it ("AVX3", "AVX2"...).
const char* target_name();
// The instruction sets compiled in, best first.
std::string compiled_targets();
// Dispatches to `name` (case-insensitive) or worse from now on, to compare instruction sets or
// to test the other paths on a CPU that has the best one. False when `name` is not compiled in
// or this CPU cannot run it. Call before any kernel runs.
bool cap_target(const std::string& name);

// ---- gemm
// The register block of the dispatched micro-kernel: it computes mr x nr of C per call, holding
// them in vector registers for the whole K block.
struct MicroTile {
  std::size_t mr = 1, nr = 1;
};
MicroTile gemm_micro_tile(DType t);

// A slice [p0, p1) of the micro-panels of one K step's panel (rows [pc, pc + kb) x columns
// [jc, jc + nb) of B, nr columns each; of A, mr rows each), packed into a shared panel buffer
// (64-byte aligned) by one thread of the team.
struct GemmPanel {
  index_t pc, kb, jc, nb;
  index_t p0, p1;
  bool scalar = false;  // A panels: element copies instead of in-register transposes (to compare)
};
// The shared-panel driver (gemm.cpp): per K step the team packs both the A panel
// (rows [ic, ic + mb), micro-panels of mr rows: gemm_pack_a_panel, with GemmPanel's jc and nb
// naming the rows) and the B panel, each thread a slice, then every thread computes units of
// C from them without packing anything of its own.
struct GemmBlock {
  index_t m0, m1, n0, n1;  // C rows and columns, on micro-panel boundaries of the panels
  index_t ic, jc;          // the panels' first row (A) and column (B)
  index_t pc, kb;          // the depth of this K step
  bool prefetch_a = true;  // fetch the next A micro-panel into L2 during this one's sweep
};
void gemm_pack_a_panel(const GemmArgs<float>& g, const GemmPanel& s, void* panel);
void gemm_pack_a_panel(const GemmArgs<double>& g, const GemmPanel& s, void* panel);
void gemm_compute_block(const GemmArgs<float>& g, const GemmBlock& s, const void* a_panel, const void* b_panel);
void gemm_compute_block(const GemmArgs<double>& g, const GemmBlock& s, const void* a_panel, const void* b_panel);
void gemm_pack_panel(const GemmArgs<float>& g, const GemmPanel& s, void* panel);
void gemm_pack_panel(const GemmArgs<double>& g, const GemmPanel& s, void* panel);

// ---- transpose
// Lanes of the in-register square transposes (the square is lanes x lanes elements).
std::size_t transpose_lanes(DType t);
// The block rows [i0, i1) x columns [j0, j1) of the input. `stream` writes the output with
// non-temporal stores (when its rows are vector-aligned): for outputs far beyond the caches,
// it saves the read of every output line that a normal store's write-allocate costs.
void transpose_block(const TransposeArgs<float>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream);
void transpose_block(const TransposeArgs<double>& a, index_t i0, index_t i1, index_t j0, index_t j1, bool stream);
// Orders this thread's streaming stores before whatever follows (call once per thread).
void stream_fence();

// ---- conv2d
// Columns one register block of the conv2d kernel for filter size `r` covers; tiles are padded
// to a multiple.
std::size_t conv2d_block_cols(DType t, index_t r);
// Computes output rows [i0, i0 + th) x columns [j0, j0 + tw) from `tile`, the input region
// rows i0 - R/2 ... and columns j0 - R/2 ... with zeros outside the image, stored with row stride
// `tile_ld` and at least round_up(tw, conv2d_block_cols) + R - 1 valid columns per row. `state`:
// scratch of round_up(tw, conv2d_block_cols) * R elements.
struct Conv2dTileOptions {
  // Non-temporal stores of the output (where a strip's rows are whole, aligned lines): for outputs
  // far beyond the caches, saves the read of every output line a normal store's write-allocate
  // costs. The caller orders them (stream_fence) before the output is read.
  bool stream = false;
  // Lines to fetch into the L2 while the tile is computed, spread over its work: the image rows of
  // the tile the thread copies next (rows of row_bytes, ld_bytes apart), so that copy is not a
  // wait on memory between two tiles' arithmetic.
  const char* next = nullptr;
  std::size_t next_ld_bytes = 0, next_row_bytes = 0, next_rows = 0;
};
void conv2d_tile(const Conv2dArgs<float>& a, const float* tile, index_t tile_ld, index_t i0, index_t j0, index_t th,
                 index_t tw, float* state, const Conv2dTileOptions& opt);
void conv2d_tile(const Conv2dArgs<double>& a, const double* tile, index_t tile_ld, index_t i0, index_t j0, index_t th,
                 index_t tw, double* state, const Conv2dTileOptions& opt);

// ---- roofline (ceilings_simd.cpp): fma_chain_count() independent chains of `iters` vector
// FMAs on the calling thread; returns the FLOPs done.
double fma_chains(DType t, std::uint64_t iters);
int fma_chain_count();

}  // namespace tilekit::host::simd
