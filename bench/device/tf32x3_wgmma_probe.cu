// A diagnostic for the 3xTF32 wgmma kernel (backends/common/gpu/gemm_tf32x3_sm90.cuh), built and
// run by bench/device/tf32x3_wgmma.sh when the kernel fails: one block (128 x 128, one or two
// 32-deep steps) on inputs whose products name where each value came from, so that a wrong
// element says which operand element the hardware read instead (a descriptor, swizzle or fragment
// mistake shows as a pattern). Also a bounded wait: a hang is reported, not waited for.
//   nvcc -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -I backends -I src -I include \
//        -I build-device/include bench/device/tf32x3_wgmma_probe.cu -o /tmp/probe && /tmp/probe
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/gpu/gemm_tf32x3_sm90.cuh"

using namespace tilekit::gpu;
using namespace tilekit::gpu::tf32x3_sm90;

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::printf("probe: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);         \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

// C = A B for one block; returns false on a hang (the process then exits: the context is lost).
static bool product(int m, int n, int k, const std::vector<float>& A, const std::vector<float>& B, std::vector<float>& C) {
  float *a, *b, *c, *ws;
  CHECK(cudaMalloc(&a, A.size() * 4));
  CHECK(cudaMalloc(&b, B.size() * 4));
  CHECK(cudaMalloc(&c, std::size_t(m) * n * 4));
  CHECK(cudaMemcpy(a, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(c, 0xff, std::size_t(m) * n * 4));  // NaN: an element never written shows
  int tx = (n + BN - 1) / BN, ty = (m + BM - 1) / BM, ks = (k + BK - 1) / BK;
  CHECK(cudaMalloc(&ws, workspace_floats(m, n, k) * 4));
  float* bw = ws + tile_offset(ty, 0, ks);
  tf32x3_split_kernel<false><<<unsigned(ks * ty), 256>>>(a, k, m, k, ks, ws);
  tf32x3_split_kernel<true><<<unsigned(ks * tx), 256>>>(b, n, n, k, ks, bw);
  CHECK(cudaGetLastError());
  CHECK(cudaFuncSetAttribute(gemm_tf32x3_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes()));
  GemmParams<float> g{m, n, k, 1.0f, 0.0f, a, k, b, n, c, n};
  int cvec = 1;
  gemm_tf32x3_wgmma_kernel<<<unsigned(tx * ty), kThreads, smem_bytes()>>>(g, ws, bw, tx, ty, ks, cvec);
  CHECK(cudaGetLastError());
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));
  CHECK(cudaEventRecord(done));
  for (int i = 0; i < 500 && cudaEventQuery(done) == cudaErrorNotReady; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (cudaEventQuery(done) == cudaErrorNotReady) return false;
  CHECK(cudaDeviceSynchronize());
  C.resize(std::size_t(m) * n);
  CHECK(cudaMemcpy(C.data(), c, C.size() * 4, cudaMemcpyDeviceToHost));
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ws);
  return true;
}

int main() {
  int bad = 0;
  for (int k : {32, 64}) {
    const int m = 128, n = 128;
    // 1. A selects: A[i][p] = (p == i % k), B[p][j] = 1000 p + j (exact in 3xTF32): C[i][j] = 1000 (i % k) + j.
    //    A wrong value v names the B element read: p = v / 1000, j = v % 1000.
    std::vector<float> A(std::size_t(m) * k), B(std::size_t(k) * n), C;
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) A[std::size_t(i) * k + p] = p == i % k ? 1.0f : 0.0f;
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) B[std::size_t(p) * n + j] = float(1000 * p + j);
    if (!product(m, n, k, A, B, C)) {
      std::printf("probe: k=%d: the kernel did not finish within 5 s (a hang)\n", k);
      return 3;
    }
    int wrong = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const float want = float(1000 * (i % k) + j), got = C[std::size_t(i) * n + j];
        if (got != want && wrong++ < 12)
          std::printf("probe k=%d select-rows: C[%d][%d] = %.1f, want %.1f (as if B[%d][%d])\n", k, i, j, got, want,
                      int(got) / 1000, int(got) % 1000);
      }
    std::printf("probe k=%d select-rows: %d of %d wrong\n", k, wrong, m * n);
    bad += wrong != 0;
    // 2. B selects: B[p][j] = (p == j % k), A[i][p] = 1000 i + p: C[i][j] = 1000 i + j % k.
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) A[std::size_t(i) * k + p] = float(1000 * i + p);
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) B[std::size_t(p) * n + j] = p == j % k ? 1.0f : 0.0f;
    if (!product(m, n, k, A, B, C)) {
      std::printf("probe: k=%d: the kernel did not finish within 5 s (a hang)\n", k);
      return 3;
    }
    wrong = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const float want = float(1000 * i + j % k), got = C[std::size_t(i) * n + j];
        if (got != want && wrong++ < 12)
          std::printf("probe k=%d select-cols: C[%d][%d] = %.1f, want %.1f (as if A[%d][%d])\n", k, i, j, got, want,
                      int(got) / 1000, int(got) % 1000);
      }
    std::printf("probe k=%d select-cols: %d of %d wrong\n", k, wrong, m * n);
    bad += wrong != 0;
  }
  std::printf("probe: %s\n", bad ? "FAILED" : "all exact");
  return bad ? 1 : 0;
}
