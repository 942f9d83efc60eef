// The serial backend: single-threaded plain loops (naive), and the tiled variants written once
// on the tile layer (backends/common/portable/) run by the CPU executor on one thread. It is the
// teaching example of the library: every other backend's variant has its counterpart here.
#pragma once

#include "common/host/host_backend.hpp"

namespace tilekit::serial {

template <class T> void gemm_naive(const GemmArgs<T>& a);
template <class T> void transpose_naive(const TransposeArgs<T>& a);
template <class T> void conv2d_naive(const Conv2dArgs<T>& a);

}  // namespace tilekit::serial
