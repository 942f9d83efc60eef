// A GEMM on matrices in ordinary host memory (std::vector, a program's arrays), run on a backend
// whose memory is not host memory: the GPU backends stage the operands through pinned buffers in
// tiles, overlapping the transfers with the compute, over one or several devices (docs/blas.md).
//
//   tilekit::HostGemm<float> g;                 // (tilekit/backend.hpp)
//   g.m = m; g.n = n; g.k = k; g.a = a; g.lda = k; g.b = b; g.ldb = n; g.c = c; g.ldc = n;
//   tilekit::gemm_host(tilekit::backend("cuda"), g);
#pragma once

#include "tilekit/backend.hpp"

namespace tilekit {

// Validates g (shapes and leading dimensions, as HostGemm documents; tilekit::Error naming the
// problem, nothing written) and runs it on be. Throws tilekit::Error when be has no host-memory
// path (be.has_gemm_host() is false: host backends take views of host memory, Matrix::view) or
// declines this call; ResourceError when a device is short of memory (C not written), another
// DeviceError for a device failure (C may be partly written).
// Calls on one backend are serialized (Backend::call_mutex), from any number of host threads.
template <class T>
void gemm_host(Backend& be, const HostGemm<T>& g);

// As gemm_host, but returns false, having read and written nothing, where be has no host-memory
// path or declines the call (the caller then stages the operands itself, e.g. through Matrix).
template <class T>
bool try_gemm_host(Backend& be, const HostGemm<T>& g);

extern template void gemm_host<float>(Backend&, const HostGemm<float>&);
extern template void gemm_host<double>(Backend&, const HostGemm<double>&);
extern template bool try_gemm_host<float>(Backend&, const HostGemm<float>&);
extern template bool try_gemm_host<double>(Backend&, const HostGemm<double>&);

}  // namespace tilekit
