// The launchers of the GPU kernels (gemm.cu, transpose.cu, conv2d.cu), declared for the
// backend class. Each runs one operation on `stream` as `plan` (tile_choice.hpp) describes;
// launch_kernel is the launch they share.
#pragma once

#include "common/gpu/portability.hpp"
#include "tile_choice.hpp"

namespace tilekit::gpu {

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

// Launches `kernel` (taking `args`) on a 1D grid of `blocks` blocks shaped as the plan says,
// opting in to more than the default shared memory first when the plan needs it, and turns a
// refused launch into DeviceError naming the kernel.
inline void launch_kernel(const void* kernel, const LaunchPlan& pl, int blocks, void** args, gpuStream_t s,
                          const char* name) {
  if (kernel == nullptr)  // (which kernels a build leaves out: the instantiation tables)
    throw Error(std::string(name) + ": the plan '" + pl.kernel +
                "' names a kernel this build does not compile (a sweep build's, or one for GPUs older than the build's "
                "architectures)");
  if (pl.needs_optin) TILEKIT_GPU_CHECK(gpuFuncSetMaxDynamicSharedMemory(kernel, pl.dynamic_smem_bytes));
  const gpuError_t e =
      gpuLaunchKernel(kernel, dim3(unsigned(blocks)), dim3(pl.block_x, pl.block_y), args, pl.dynamic_smem_bytes, s);
  if (e != gpuSuccess) throw_gpu_error(e, name, __FILE__, __LINE__);
  const gpuError_t after = gpuGetLastError();
  if (after != gpuSuccess) throw_gpu_error(after, name, __FILE__, __LINE__);
}

}  // namespace tilekit::gpu
