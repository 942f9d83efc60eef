// GpuBackend (gpu_backend.hpp): everything but the kernels and the vendor's gemm library.
#include "gpu_backend.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "common/gpu/stream_hold.cuh"
#include "gemm_tf32x3_sm90.hpp"
#include "kernels.hpp"
#include "tilekit/ops.hpp"

namespace tilekit::gpu {
namespace {

std::string kib(std::size_t b) { return fmt::format("{} KiB", b / 1024); }

// CUDA encodes 1000 * major + 10 * minor (13000 = 13.0); HIP major * 10^7 + minor * 10^5 +
// patch (50221153 = 5.2.21153), for the runtime and the driver alike.
#if defined(__HIPCC__)
std::string version_str(int v) { return fmt::format("{}.{}.{}", v / 10000000, (v / 100000) % 100, v % 100000); }
#else
std::string version_str(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
#endif

}  // namespace

DeviceProps query_props(int device) {
  gpuDeviceProp_t p{};
  TILEKIT_GPU_CHECK(gpuGetDeviceProperties(&p, device));
  DeviceProps d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.warp_size = p.warpSize;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.regs_per_block = p.regsPerBlock;
  d.smem_per_block = p.sharedMemPerBlock;
  d.l2_bytes = std::size_t(p.l2CacheSize);
  int v = 0;
  TILEKIT_GPU_CHECK(gpuDeviceGetAttribute(&v, gpuDevAttrMaxSharedMemoryPerBlockOptin, device));
  d.smem_per_block_optin = std::size_t(v);
  TILEKIT_GPU_CHECK(gpuDeviceGetAttribute(&v, gpuDevAttrMaxSharedMemoryPerMultiprocessor, device));
  d.smem_per_sm = std::size_t(v);
  TILEKIT_GPU_CHECK(gpuDeviceGetAttribute(&v, gpuDevAttrMaxBlocksPerMultiprocessor, device));
  d.max_blocks_per_sm = v;
#if !defined(__HIPCC__)
  d.smem_reserved_per_block = p.reservedSharedMemPerBlock;
  d.async_copy = p.major >= 8;
  d.fp64_mma = p.major >= 8;  // mma.sync f64: the cuda build only (hipcc never compiles gemm_dmma.cuh)
  d.tf32_mma = p.major >= 8;  // mma.sync .tf32: likewise (gemm_tf32x3.cuh)
  d.tf32_wgmma = p.major == 9 && p.minor == 0 && tf32x3_wgmma_compiled();  // gemm_tf32x3_sm90.cu, sm_90a
#endif
  return d;
}

GpuBackend::GpuBackend(std::string name, int priority) : name_(std::move(name)), priority_(priority) {
  info_.kind = DeviceKind::gpu;
  info_.name = fmt::format("(no {} device)", TILEKIT_GPU_RUNTIME);
  int count = 0;
  const gpuError_t e = gpuGetDeviceCount(&count);
  if (e != gpuSuccess) {
    reason_ = fmt::format("{} found no usable device: {}GetDeviceCount failed with {} ({})", TILEKIT_GPU_RUNTIME,
                          name_ == "hip" ? "hip" : "cuda", gpuGetErrorName(e), gpuGetErrorString(e));
    (void)gpuGetLastError();  // clear the sticky-free error so later calls start clean
    return;
  }
  if (count == 0) {
    reason_ = fmt::format("{} runtime reports no device", TILEKIT_GPU_RUNTIME);
    return;
  }
  try {
    TILEKIT_GPU_CHECK(gpuSetDevice(device_));
    props_ = query_props(device_);
    TILEKIT_GPU_CHECK(gpuStreamCreateNonBlocking(&stream_));
    TILEKIT_GPU_CHECK(gpuEventCreate(&start_));
    TILEKIT_GPU_CHECK(gpuEventCreate(&stop_));
    int runtime = 0, driver = 0;
    TILEKIT_GPU_CHECK(gpuRuntimeGetVersion(&runtime));
    TILEKIT_GPU_CHECK(gpuDriverGetVersion(&driver));
    gpuDeviceProp_t p{};
    TILEKIT_GPU_CHECK(gpuGetDeviceProperties(&p, device_));

    info_.name = props_.name;
    info_.compute_units = props_.sm_count;
    info_.simd_width = props_.warp_size;
    info_.scratch_bytes = props_.smem_per_block_optin;
    info_.max_tile_lanes = props_.max_threads_per_block;
    info_.l2_bytes = props_.l2_bytes;
    info_.extra = {
        {"compute capability", fmt::format("{}.{}", props_.cc_major, props_.cc_minor)},
        {"runtime", fmt::format("{} {} (driver supports {})", TILEKIT_GPU_RUNTIME, version_str(runtime),
                                version_str(driver))},
        {"memory", fmt::format("{:.1f} GiB", double(p.totalGlobalMem) / (1 << 30))},
        {"smem/block", fmt::format("{} default, {} opt-in", kib(props_.smem_per_block), kib(props_.smem_per_block_optin))},
        {"smem/SM", kib(props_.smem_per_sm)},
        {"registers/SM", std::to_string(props_.regs_per_sm)},
        {"threads", fmt::format("{}/block, {}/SM, {} blocks/SM", props_.max_threads_per_block,
                                props_.max_threads_per_sm, props_.max_blocks_per_sm)},
    };
    std::string dgemm;
    try {  // a bad TILEKIT_* environment is reported by the call that reads it, not by making the backend unavailable
      const int dmma = dmma_shape_for(props_);
      dgemm = dmma == 0 ? "SIMT FMA (FP64 tensor cores not used)"
                        : fmt::format("FP64 tensor cores (mma.sync {})", dmma == 16816 ? "m16n8k16, m16n8k8" : "m8n8k4");
    } catch (const Error& err) {
      dgemm = err.what();
    }
    info_.extra.push_back({"double gemm optimized", dgemm});
    std::string sgemm;
    try {  // likewise here
      sgemm = kSgemmVariants[sgemm_variant_for(props_)].name;
      sgemm += sgemm == std::string("sm80") ? " (gemm.cuh, two stages)" : " (gemm_sm90.cuh, cp.async stages)";
    } catch (const Error& err) {
      sgemm = err.what();
    }
    try {  // gemm.precision=tf32x3 replaces it (or is refused by the plan)
      if (precision_tf32x3())
        sgemm = props_.tf32_wgmma ? "3xTF32 on the TF32 tensor cores, wgmma (gemm_tf32x3_sm90.cuh; gemm.precision=tf32x3)"
                : props_.tf32_mma ? "3xTF32 on the TF32 tensor cores, mma.sync (gemm_tf32x3.cuh; gemm.precision=tf32x3)"
                                  : "none under gemm.precision=tf32x3 (no TF32 tensor cores)";
    } catch (const Error& err) {
      sgemm = err.what();
    }
    info_.extra.push_back({"float gemm optimized", sgemm});
    available_ = true;
  } catch (const Error& err) {
    reason_ = err.what();
  }
}

GpuBackend::~GpuBackend() {
  // Errors are ignored: the runtime may already be shutting down at exit.
  if (start_) (void)gpuEventDestroy(start_);
  if (stop_) (void)gpuEventDestroy(stop_);
  if (stream_) (void)gpuStreamDestroy(stream_);
}

void GpuBackend::require_available() const {
  if (!available_) throw Error(fmt::format("backend '{}' is unavailable: {}", name_, reason_));
}

void* GpuBackend::allocate(std::size_t bytes) {
  require_available();
  void* p = nullptr;
  if (bytes == 0) return nullptr;
  const gpuError_t e = gpuMalloc(&p, bytes);
#if defined(__HIPCC__)
  const bool out_of_memory = e == hipErrorOutOfMemory;
#else
  const bool out_of_memory = e == cudaErrorMemoryAllocation;
#endif
  if (out_of_memory) {
    (void)gpuGetLastError();  // not sticky: later calls must not see it
    throw ResourceError(fmt::format("{} could not allocate {} bytes of device memory ({} bytes free): {}", name_,
                                    bytes, memory_available(), gpuGetErrorString(e)));
  }
  if (e != gpuSuccess)
    throw DeviceError(fmt::format("{} could not allocate {} bytes: {}", name_, bytes, gpuGetErrorString(e)));
  return p;
}

std::size_t GpuBackend::memory_available() const {
  if (!available_) return 0;
  std::size_t free_bytes = 0, total_bytes = 0;
#if defined(__HIPCC__)
  const gpuError_t e = hipMemGetInfo(&free_bytes, &total_bytes);
#else
  const gpuError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
#endif
  if (e != gpuSuccess) {
    (void)gpuGetLastError();
    return SIZE_MAX;  // unknown: let the allocation itself decide
  }
  return free_bytes;
}

void GpuBackend::deallocate(void* p) noexcept {
  if (p) (void)gpuFree(p);  // gpuFree synchronizes the device: nothing in flight still uses p
}

void GpuBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  require_available();
  TILEKIT_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, stream_));
  TILEKIT_GPU_CHECK(gpuStreamSynchronize(stream_));
}

void GpuBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  require_available();
  TILEKIT_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToHost, stream_));
  TILEKIT_GPU_CHECK(gpuStreamSynchronize(stream_));
}

void GpuBackend::device_copy(void* dst, const void* src, std::size_t bytes) {
  require_available();
  TILEKIT_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToDevice, stream_));
}

void GpuBackend::synchronize() {
  if (available_) TILEKIT_GPU_CHECK(gpuStreamSynchronize(stream_));
}

// Device time between two events on the stream: what the GPU spent on fn's work, without
// the host's launch latency in front of it (the hold: stream_hold.cuh).
double GpuBackend::time_seconds(const std::function<void()>& fn) {
  require_available();
  TILEKIT_GPU_CHECK(stream_hold(stream_));
  TILEKIT_GPU_CHECK(gpuEventRecord(start_, stream_));
  fn();
  TILEKIT_GPU_CHECK(gpuEventRecord(stop_, stream_));
  TILEKIT_GPU_CHECK(gpuEventSynchronize(stop_));
  float ms = 0;
  TILEKIT_GPU_CHECK(gpuEventElapsedTime(&ms, start_, stop_));
  return double(ms) * 1e-3;
}

LaunchPlan GpuBackend::launch_plan(Variant v, const Problem& p, const TileConfig& t) const {
  // Without a device, plan for a datasheet device of the vendor this copy is compiled for
  // (an MI250X GCD for hip, an H200 for cuda) so that tile validation still answers, with
  // that vendor's limits (AMD: 64 KiB of LDS, no opt-in, 64-wide wavefronts).
#if defined(__HIPCC__)
  static const DeviceProps fallback = DeviceProps::mi250x();
#else
  static const DeviceProps fallback = [] {
    DeviceProps d = DeviceProps::h200();
    d.tf32_wgmma = tf32x3_wgmma_compiled();
    return d;
  }();
#endif
  return plan_launch(available_ ? props_ : fallback, v, p, t);
}

Plan GpuBackend::plan(Variant v, const Problem& p, const TileConfig& requested) const {
  auto launch = std::make_shared<const LaunchPlan>(launch_plan(v, p, requested));
  Plan pl;
  pl.tile = launch->tile;
  pl.detail = std::move(launch);
  return pl;
}

std::string GpuBackend::describe_launch(const Plan& plan) const {
  const LaunchPlan& pl = *plan.get<LaunchPlan>();
  const Variant v = plan.variant;
  const Problem& p = plan.problem;
  std::string occ = fmt::format("estimated {} blocks/SM ({:.0f}%, {}-limited)", pl.occupancy.blocks_per_sm,
                                100 * pl.occupancy.fraction, pl.occupancy.limiter);
  if (available_) {
    const void* k = p.op == Op::gemm        ? gemm_kernel(v, p.dtype, pl)
                    : p.op == Op::transpose ? transpose_kernel(v, p.dtype, pl)
                                            : conv2d_kernel(v, p.dtype, int(p.k), pl);
    int blocks = 0;
    gpuFuncAttributes fa{};
    if (pl.needs_optin) (void)gpuFuncSetMaxDynamicSharedMemory(k, pl.dynamic_smem_bytes);
    if (k && gpuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, pl.threads(), pl.dynamic_smem_bytes) ==
                 gpuSuccess &&
        gpuFuncGetAttributes(&fa, k) == gpuSuccess) {
      occ = fmt::format("{} regs, occupancy {} blocks/SM = {:.0f}% (runtime's calculator)", fa.numRegs, blocks,
                        100.0 * blocks * pl.threads() / props_.max_threads_per_sm);
    }
    (void)gpuGetLastError();
  }
  return fmt::format("{}: block {}x{}, {} B shared{}, {}", pl.kernel, pl.block_x, pl.block_y, pl.smem_bytes,
                     pl.needs_optin ? " (opt-in)" : "", occ);
}

void GpuBackend::gemm(const Plan& pl, const GemmArgs<float>& a) {
  launch_gemm(pl.variant, a, *pl.get<LaunchPlan>(), stream_);
}
void GpuBackend::gemm(const Plan& pl, const GemmArgs<double>& a) {
  launch_gemm(pl.variant, a, *pl.get<LaunchPlan>(), stream_);
}
void GpuBackend::transpose(const Plan& pl, const TransposeArgs<float>& a) {
  launch_transpose(pl.variant, a, *pl.get<LaunchPlan>(), stream_);
}
void GpuBackend::transpose(const Plan& pl, const TransposeArgs<double>& a) {
  launch_transpose(pl.variant, a, *pl.get<LaunchPlan>(), stream_);
}
void GpuBackend::conv2d(const Plan& pl, const Conv2dArgs<float>& a) {
  launch_conv2d(pl.variant, a, *pl.get<LaunchPlan>(), stream_);
}
void GpuBackend::conv2d(const Plan& pl, const Conv2dArgs<double>& a) {
  launch_conv2d(pl.variant, a, *pl.get<LaunchPlan>(), stream_);
}

}  // namespace tilekit::gpu
