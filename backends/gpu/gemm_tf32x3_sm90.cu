// The 3xTF32 float gemm on sm_90's wgmma (common/gpu/gemm_tf32x3_sm90.cuh): its own translation
// unit, compiled for sm_90a only (wgmma and the bulk copies are arch-specific instructions that
// plain sm_90 code cannot contain; backends/cuda/CMakeLists.txt builds it when the architectures
// include 90). gemm.cu reaches it through gemm_tf32x3_sm90.hpp.
#include "gemm_tf32x3_sm90.hpp"

#include "common/gpu/gemm_tf32x3_sm90.cuh"

#include <cstdint>
#include <mutex>
#include <vector>

namespace tilekit::gpu {
namespace {

// The split operands live in a stream-ordered pool per device whose memory is kept between calls
// (release threshold: never), so that a gemm after the first costs no allocation from the driver.
// The pool holds up to the largest workspace asked for so far (the sum of the concurrent ones).
cudaMemPool_t workspace_pool(int device) {
  static std::mutex mu;
  static std::vector<cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mu);
  if (int(pools.size()) <= device) pools.resize(std::size_t(device) + 1, nullptr);
  if (pools[std::size_t(device)] == nullptr) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t p = nullptr;
    TILEKIT_GPU_CHECK(cudaMemPoolCreate(&p, &props));
    std::uint64_t keep = ~std::uint64_t(0);
    TILEKIT_GPU_CHECK(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[std::size_t(device)] = p;
  }
  return pools[std::size_t(device)];
}

}  // namespace

static_assert(tf32x3_sm90::smem_bytes() == int(kTf32x3WgmmaSmemBytes) && tf32x3_sm90::kThreads == kTf32x3WgmmaThreads,
              "the plan's shared bytes and threads are the kernel's");

bool tf32x3_wgmma_compiled() { return true; }

const void* tf32x3_wgmma_kernel() { return reinterpret_cast<const void*>(&gemm_tf32x3_wgmma_kernel); }

std::size_t tf32x3_wgmma_smem_bytes() { return std::size_t(tf32x3_sm90::smem_bytes()); }

void launch_tf32x3_wgmma(const GemmParams<float>& g0, const LaunchPlan& pl, gpuStream_t s) {
  using namespace tf32x3_sm90;
  GemmParams<float> g = g0;
  int tx = ceil_div(g.n, BN), ty = ceil_div(g.m, BM), ksteps = ceil_div(g.k, BK);
  int cvec = reinterpret_cast<std::uintptr_t>(g.c) % 8 == 0 && g.ldc % 2 == 0;
  float* ws = nullptr;
  const std::size_t floats = workspace_floats(g.m, g.n, g.k);
  if (floats != 0) {
    int device = 0;
    TILEKIT_GPU_CHECK(cudaGetDevice(&device));
    TILEKIT_GPU_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&ws), floats * sizeof(float),
                                              workspace_pool(device), s));
    float* bw = ws + tile_offset(ty, 0, ksteps);
    tf32x3_split_kernel<false><<<unsigned(ksteps) * unsigned(ty), 256, 0, s>>>(g.a, g.lda, g.m, g.k, ksteps, ws);
    TILEKIT_GPU_CHECK_LAUNCH("tf32x3_split_kernel (A)");
    tf32x3_split_kernel<true><<<unsigned(ksteps) * unsigned(tx), 256, 0, s>>>(g.b, g.ldb, g.n, g.k, ksteps, bw);
    TILEKIT_GPU_CHECK_LAUNCH("tf32x3_split_kernel (B)");
  }
  const float* aw = ws;
  const float* bw = ws == nullptr ? nullptr : ws + tile_offset(ty, 0, ksteps);
  void* args[] = {&g, &aw, &bw, &tx, &ty, &ksteps, &cvec};
  try {
    launch_kernel(tf32x3_wgmma_kernel(), pl, tx * ty, args, s, "gemm_tf32x3_wgmma_kernel");
  } catch (...) {
    if (ws != nullptr) (void)cudaFreeAsync(ws, s);
    throw;
  }
  if (ws != nullptr) TILEKIT_GPU_CHECK(cudaFreeAsync(ws, s));
}

}  // namespace tilekit::gpu
