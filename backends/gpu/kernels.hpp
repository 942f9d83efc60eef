// The launchers of the GPU kernels (gemm.cu, transpose.cu, conv2d.cu), declared for the
// backend class. Each runs one operation on `stream` as `plan` (tile_choice.hpp) describes.
#pragma once

#include "portability.hpp"
#include "tile_choice.hpp"

namespace tilekit::gpu {

// The kernels index with int: the front end refuses matrices of 2^31 elements or more.
template <class T>
struct GemmParams {
  int m, n, k;
  T alpha, beta;
  const T* a; int lda;
  const T* b; int ldb;
  T* c; int ldc;
};
template <class T>
struct TransposeParams {
  int rows, cols;
  const T* in; int ld_in;
  T* out; int ld_out;
};
template <class T>
struct Conv2dParams {
  int h, w, r;
  const T* in; int ld_in;
  const T* filter;  // device memory, r x r
  T* out; int ld_out;
};

template <class T>
void launch_gemm(Variant v, const GemmArgs<T>& a, const LaunchPlan& plan, gpuStream_t stream);
template <class T>
void launch_transpose(Variant v, const TransposeArgs<T>& a, const LaunchPlan& plan, gpuStream_t stream);
template <class T>
void launch_conv2d(Variant v, const Conv2dArgs<T>& a, const LaunchPlan& plan, gpuStream_t stream);

// The kernel function a plan launches for well-aligned operands (the runtime's occupancy
// calculator needs the function itself).
const void* gemm_kernel(Variant v, DType t, const LaunchPlan& plan);
const void* transpose_kernel(Variant v, DType t, const LaunchPlan& plan);
const void* conv2d_kernel(Variant v, DType t, int r, const LaunchPlan& plan);

}  // namespace tilekit::gpu
