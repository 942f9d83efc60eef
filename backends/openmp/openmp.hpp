// The openmp backend: the CPU half of tilekit's comparison. Where a GPU kernel stages tiles in
// shared memory explicitly, a CPU keeps them in its caches implicitly, provided the blocks are
// sized to fit; this backend shows the same three steps as the GPU backends:
//   naive      the plain loops, rows of the output split across the OpenMP threads;
//   tiled      the portable tiled kernels (backends/common/portable/, on the tile layer) with tiles sized
//              from the caches read at run time, OpenMP threads over tiles: the CPU analogue of
//              the textbook shared-memory kernel;
//   optimized  gemm in the GotoBLAS/BLIS structure (packed panels, register-blocked SIMD
//              micro-kernel), transpose with in-register transposes and streaming stores, conv2d
//              with register-blocked rows that reuse every loaded vector for several outputs.
// Every kernel partitions work statically and sums in a fixed order, so results are bitwise
// identical from run to run (and, for gemm, independent of the thread count).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string>

#include "common/host/host_backend.hpp"
#include "common/host/packed.hpp"

namespace tilekit::openmp {

// Threads a kernel will use: OMP_NUM_THREADS when set, all cores otherwise (omp_get_max_threads).
int max_threads();

// ---- shared by the optimized variants' drivers: the host's kernels and blocking
// (backends/common/host/packed.hpp, simd.hpp), which kokkos runs on host spaces too.
namespace simd = host::simd;
using host::ceil_div;
// The per-thread workspaces: the optimized gemm packs its panels into tls_b_panels; the
// optimized conv2d copies its tiles into tls_a_pack.
using host::tls_a_pack;
using host::tls_b_panels;

// ---- gemm (gemm.cpp): naive in plain C++ (tiled: backends/common/portable/), optimized a driver around the
// dispatched SIMD kernels (backends/common/host/simd.hpp, gemm_simd.cpp)
template <class T> void gemm_naive(const GemmArgs<T>& g);
// The automatic gemm tile: rows = mc, cols = nc, depth = kc: the packed A block (mc x kc) and
// the chunk of the packed B panel (kc x nc) that share the L2, derived from the L1 and L2 sizes
// and the dispatched micro-kernel's register block.
TileConfig gemm_optimized_tile(const DeviceInfo& info, DType t);
std::string gemm_optimized_launch(DType t, const TileConfig& tile);
// The optimized gemm's sweep tunings (openmp.gemm.*; in a default build always these defaults).
struct GemmOptions {
  bool scalar_a = false;          // pack_a=scalar: A panels element by element
  bool prefetch_a = false;        // prefetch_a=on
  bool profile = false;           // profile=on
  int grid_rows = 0, grid_cols = 0;  // grid=RxC (0: the cost model's grid)
  bool is_default() const { return !scalar_a && !prefetch_a && !profile && grid_rows == 0; }
};
// The options the tunings in effect give (read once per call, by the plan).
GemmOptions gemm_options();
// The B panel each thread packs per K step is sized from its share of `l3_bytes`.
template <class T>
void gemm_optimized(const GemmArgs<T>& g, const TileConfig& t, std::size_t l3_bytes, const GemmOptions& o);

// ---- transpose (transpose.cpp): naive in plain C++ (tiled: backends/common/portable/), optimized a driver around the
// dispatched SIMD kernels (backends/common/host/simd.hpp, transpose_simd.cpp)
template <class T> void transpose_naive(const TransposeArgs<T>& a);
// The tiled transpose's automatic tile: a square block in half the L1 (see transpose.cpp for why).
TileConfig transpose_tiled_tile(const DeviceInfo& info, DType t);
// Transpose: rows x cols blocks of the input, split across threads; streaming (non-temporal)
// stores when the output is larger than `stream_above` bytes.
TileConfig transpose_optimized_tile(const DeviceInfo& info, DType t);
std::string transpose_optimized_launch(DType t, const TileConfig& tile);
template <class T> void transpose_optimized(const TransposeArgs<T>& a, const TileConfig& t, std::size_t stream_above);

// ---- conv2d (conv2d.cpp): naive in plain C++ (tiled: backends/common/portable/), optimized a driver around the
// dispatched SIMD kernels (backends/common/host/simd.hpp, conv2d_simd.cpp)
template <class T> void conv2d_naive(const Conv2dArgs<T>& a);
// conv2d: rows x cols output tiles, copied with their halo into a per-thread buffer.
TileConfig conv2d_optimized_tile(const DeviceInfo& info, const Problem& p);
std::string conv2d_optimized_launch(const Problem& p, const TileConfig& tile);
template <class T> void conv2d_optimized(const Conv2dArgs<T>& a, const TileConfig& t);

// ---- the gemm peer (peer.cpp, built when OpenBLAS is found: TILEKIT_OPENMP_HAVE_OPENBLAS)
std::string openblas_description();
void openblas_gemm(const GemmArgs<float>& g);
void openblas_gemm(const GemmArgs<double>& g);

}  // namespace tilekit::openmp
