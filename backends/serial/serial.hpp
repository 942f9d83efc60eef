// The serial backend: single-threaded plain loops (naive) and loop tiling (tiled). It is the
// teaching example of the library: every other backend's variant has its counterpart here.
#pragma once

#include "../host/host_backend.hpp"

namespace tilekit::serial {

template <class T> void gemm_naive(const GemmArgs<T>& a);
template <class T> void gemm_tiled(const GemmArgs<T>& a, const TileConfig& t);
template <class T> void transpose_naive(const TransposeArgs<T>& a);
template <class T> void transpose_tiled(const TransposeArgs<T>& a, const TileConfig& t);
template <class T> void conv2d_naive(const Conv2dArgs<T>& a);
template <class T> void conv2d_tiled(const Conv2dArgs<T>& a, const TileConfig& t);

}  // namespace tilekit::serial
