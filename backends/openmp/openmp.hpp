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
template <class T> void conv2d_naive(const Conv2dArgs<T>& a);
template <class T> void conv2d_tiled(const Conv2dArgs<T>& a, const TileConfig& t);

}  // namespace tilekit::openmp
