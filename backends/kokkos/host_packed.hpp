// The optimized variants on a host execution space (Serial, OpenMP, Threads): the host's fast
// path (backends/common/host/packed.hpp: the packed gemm micro-kernel, the in-register
// transposes, the register-blocked conv2d, and their blocking from the caches read at run time),
// the same kernels the openmp backend runs, with Kokkos parallel_for over the space's threads.
// An explicit tile is held to the L2, as the openmp backend holds it.
#pragma once

#include <string>

#include "tilekit/backend.hpp"

namespace tilekit::kokkos::host_path {

// Whether the optimized variants run here: Kokkos' default space is a host space and the build
// compiled the host kernels (Highway found, TILEKIT_KOKKOS_HOST_SIMD).
bool available();

// The tile a call runs: the automatic one (as the openmp backend's) for an auto request, else
// the requested one, checked against the L2 (tilekit::Error naming it when it does not fit).
TileConfig tile(const Problem& p, const TileConfig& requested);
std::string gemm_kernel(DType t);
std::string transpose_kernel(DType t);
std::string conv2d_kernel(DType t);
// The SIMD target the host kernels dispatched to ("AVX2", ...; openmp.simd caps it).
std::string simd_target();

template <class T> void gemm(const GemmArgs<T>& g, const TileConfig& t);
template <class T> void transpose(const TransposeArgs<T>& a, const TileConfig& t);
template <class T> void conv2d(const Conv2dArgs<T>& a, const TileConfig& t);

}  // namespace tilekit::kokkos::host_path
