// The openmp backend: the CPU half of tilekit's comparison. Where a GPU kernel stages tiles in
// shared memory explicitly, a CPU keeps them in its caches implicitly, provided the blocks are
// sized to fit; this backend shows the same three steps as the GPU backends:
//   naive      the plain loops, rows of the output split across the OpenMP threads;
//   tiled      cache blocking (loop tiles sized from the caches read at run time), threads over
//              output tiles: the CPU analogue of the textbook shared-memory kernel;
//   optimized  gemm in the GotoBLAS/BLIS structure (packed panels, register-blocked SIMD
//              micro-kernel), transpose with in-register transposes and streaming stores, conv2d
//              with register-blocked rows that reuse every loaded vector for several outputs.
// Every kernel partitions work statically and sums in a fixed order, so results are bitwise
// identical from run to run (and, for gemm, independent of the thread count).
#pragma once

#include <cstddef>
#include <string>

#include "../host/host_backend.hpp"

namespace tilekit::openmp {

// Threads a kernel will use: OMP_NUM_THREADS when set, all cores otherwise (omp_get_max_threads).
int max_threads();

// ---- naive and tiled: portable C++ (naive.cpp / tiled.cpp)
template <class T> void gemm_naive(const GemmArgs<T>& g);
template <class T> void gemm_tiled(const GemmArgs<T>& g, const TileConfig& t);
template <class T> void transpose_naive(const TransposeArgs<T>& a);
template <class T> void transpose_tiled(const TransposeArgs<T>& a, const TileConfig& t);
// The tiled transpose's automatic tile: tall and 8 columns wide (see tiled.cpp for why).
TileConfig transpose_tiled_tile(const DeviceInfo& info, DType t);
template <class T> void conv2d_naive(const Conv2dArgs<T>& a);
template <class T> void conv2d_tiled(const Conv2dArgs<T>& a, const TileConfig& t);

// ---- optimized: drivers in optimized.cpp around the dispatched SIMD kernels (simd.hpp)
// The automatic gemm tile: rows = mc, cols = nc, depth = kc: the packed A block (mc x kc) and
// the chunk of the packed B panel (kc x nc) that share the L2, derived from the L1 and L2 sizes
// and the dispatched micro-kernel's register block.
TileConfig gemm_optimized_tile(const DeviceInfo& info, DType t);
std::string gemm_optimized_launch(DType t, const TileConfig& tile);
// The B panel each thread packs per K step is sized from its share of `l3_bytes`.
template <class T> void gemm_optimized(const GemmArgs<T>& g, const TileConfig& t, std::size_t l3_bytes);
// Transpose: rows x cols blocks of the input, split across threads; streaming (non-temporal)
// stores when the output is larger than `stream_above` bytes.
TileConfig transpose_optimized_tile(const DeviceInfo& info, DType t);
std::string transpose_optimized_launch(DType t, const TileConfig& tile);
template <class T> void transpose_optimized(const TransposeArgs<T>& a, const TileConfig& t, std::size_t stream_above);
// conv2d: rows x cols output tiles, copied with their halo into a per-thread buffer.
TileConfig conv2d_optimized_tile(const DeviceInfo& info, const Problem& p);
std::string conv2d_optimized_launch(const Problem& p, const TileConfig& tile);
template <class T> void conv2d_optimized(const Conv2dArgs<T>& a, const TileConfig& t);

// ---- the gemm peer (peer.cpp, built when OpenBLAS is found: TILEKIT_OPENMP_HAVE_OPENBLAS)
std::string openblas_description();
void openblas_gemm(const GemmArgs<float>& g);
void openblas_gemm(const GemmArgs<double>& g);

}  // namespace tilekit::openmp
