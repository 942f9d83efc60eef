// The cuda backend: the shared GPU backend (backends/gpu) on the CUDA runtime, with cuBLAS as
// the gemm peer.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <memory>
#include <mutex>

#include "gpu/gpu_backend.hpp"
#include "plugin.hpp"

namespace tilekit {
namespace cuda {
namespace {

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(fmt::format("{}: {} ({})", what, cublasGetStatusName(s), cublasGetStatusString(s)));
}

class CudaBackend final : public gpu::GpuBackend {
 public:
  CudaBackend() : GpuBackend("cuda", 100) {}
  ~CudaBackend() override {
    if (handle_) cublasDestroy(handle_);
  }

  std::string gemm_peer_name() const override { return "cublas"; }

  // Row-major C = A B is column-major C^T = B^T A^T: hand cuBLAS B as the left operand.
  void gemm_peer(const GemmArgs<float>& g) override {
    check(cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, int(g.n), int(g.m), int(g.k), &g.alpha, g.b, int(g.ldb), g.a,
                      int(g.lda), &g.beta, g.c, int(g.ldc)),
          "cublasSgemm");
  }
  void gemm_peer(const GemmArgs<double>& g) override {
    check(cublasDgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, int(g.n), int(g.m), int(g.k), &g.alpha, g.b, int(g.ldb), g.a,
                      int(g.lda), &g.beta, g.c, int(g.ldc)),
          "cublasDgemm");
  }

 private:
  // Created on first use: a program that never asks for the peer never pays cuBLAS's start-up.
  cublasHandle_t handle() {
    std::call_once(once_, [this] {
      require_available();
      check(cublasCreate(&handle_), "cublasCreate");
      check(cublasSetStream(handle_, stream()), "cublasSetStream");
      // Plain fp32 (no TF32 tensor cores), the same arithmetic as the kernels it is compared with.
      check(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
    });
    return handle_;
  }
  std::once_flag once_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace
}  // namespace cuda

namespace detail {
std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<cuda::CudaBackend>(); }
}  // namespace detail

}  // namespace tilekit

// The plugin entry points: tilekit-cuda.so is loaded by the registry (src/backend.cpp).
TILEKIT_PLUGIN_ENTRY(tilekit::detail::make_cuda_backend)
