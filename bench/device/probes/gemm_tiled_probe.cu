// Why is the tile layer's 32x32 gemm (backends/portable/gemm_tiled.hpp) slower on the H200 than
// the hand-written PMPP Fig. 5.13 kernel it replaced (20.9 vs 16.6 ms at 4096^3, NOTES.md)?
// This probe times the old kernel, the old kernel with ONE difference of the new one at a time,
// and the layer's kernel itself, in one process with device events (median of 10 after 3
// warm-ups), each result checked against the old kernel's. bench/device/round3.sh builds it on
// the device with nvcc and runs it plain, under ncu, and through cuobjdump.
//   usage: gemm_tiled_probe [N] [only-this-variant]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/portable/gemm_tiled.hpp"
#include "tilekit/tile.hpp"

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

constexpr int S = 32;
struct P {
  int m, n, k;
  const float *a, *b;
  float* c;
  int lda, ldb, ldc;
};

// kDyn: shared arrays from dynamic shared memory; kVecA: A's row read as float4 in the K loop
// (what the layer's compile-time row length lets nvcc do); kWide: 64-bit index arithmetic in
// the loads; kWait: cp.async.wait_group 0 before each barrier (the layer's barrier).
template <bool kDyn, bool kVecA, bool kWide, bool kWait>
__global__ __launch_bounds__(S* S, 2) void old_kernel(P g, int tiles_x) {
  __shared__ __align__(16) float as_s[kDyn ? 1 : S][S];
  __shared__ __align__(16) float bs_s[kDyn ? 1 : S][S];
  extern __shared__ __align__(16) float dyn[];
  float(*as)[S] = kDyn ? reinterpret_cast<float(*)[S]>(dyn) : as_s;
  float(*bs)[S] = kDyn ? reinterpret_cast<float(*)[S]>(dyn + S * S) : bs_s;
  using I = std::conditional_t<kWide, long long, int>;
  const int bx = blockIdx.x % tiles_x, by = blockIdx.x / tiles_x;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const I row = I(by) * S + ty, col = I(bx) * S + tx;
  float acc = 0;
  for (I p0 = 0; p0 < g.k; p0 += S) {
    as[ty][tx] = (row < g.m && p0 + tx < g.k) ? g.a[row * I(g.lda) + p0 + tx] : 0.f;
    bs[ty][tx] = (p0 + ty < g.k && col < g.n) ? g.b[(p0 + ty) * I(g.ldb) + col] : 0.f;
    if (kWait) asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
    __syncthreads();
    if constexpr (kVecA) {
#pragma unroll
      for (int kk = 0; kk < S; kk += 4) {
        const float4 a4 = *reinterpret_cast<const float4*>(&as[ty][kk]);
        acc += a4.x * bs[kk][tx];
        acc += a4.y * bs[kk + 1][tx];
        acc += a4.z * bs[kk + 2][tx];
        acc += a4.w * bs[kk + 3][tx];
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < S; ++kk) acc += as[ty][kk] * bs[kk][tx];
    }
    if (kWait) asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
    __syncthreads();
  }
  if (row < g.m && col < g.n) g.c[row * I(g.ldc) + col] = acc;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  const std::string only = argc > 2 ? argv[2] : "";
  const std::size_t e = std::size_t(n) * n;
  std::vector<float> ha(e), hb(e);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& x : ha) x = u(rng);
  for (auto& x : hb) x = u(rng);
  float *a, *b, *c, *ref;
  CHECK(cudaMalloc(&a, e * 4));
  CHECK(cudaMalloc(&b, e * 4));
  CHECK(cudaMalloc(&c, e * 4));
  CHECK(cudaMalloc(&ref, e * 4));
  CHECK(cudaMemcpy(a, ha.data(), e * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb.data(), e * 4, cudaMemcpyHostToDevice));
  const int tiles = (n + S - 1) / S;
  const dim3 grid(tiles * tiles), block(S, S);
  const P pr{n, n, n, a, b, ref, n, n, n}, pc{n, n, n, a, b, c, n, n, n};
  old_kernel<false, false, false, false><<<grid, block>>>(pr, tiles);
  CHECK(cudaGetLastError());

  const tilekit::GemmArgs<float> ga{n, n, n, 1.f, a, n, b, n, 0.f, c, n};
  const tilekit::portable::GemmTiled<float, S> layer{ga, S, S, S};
  const tilekit::tile::Shape shape = layer.shape("gemm_tiled");
  const std::size_t dyn = 2 * S * S * 4;

  struct V {
    const char* name;
    std::function<void()> run;
  };
  const std::vector<V> vs = {
      {"old", [&] { old_kernel<false, false, false, false><<<grid, block>>>(pc, tiles); }},
      {"old+dyn", [&] { old_kernel<true, false, false, false><<<grid, block, dyn>>>(pc, tiles); }},
      {"old+vecA", [&] { old_kernel<false, true, false, false><<<grid, block>>>(pc, tiles); }},
      {"old+i64", [&] { old_kernel<false, false, true, false><<<grid, block>>>(pc, tiles); }},
      {"old+wait", [&] { old_kernel<false, false, false, true><<<grid, block>>>(pc, tiles); }},
      {"old+all4", [&] { old_kernel<true, true, true, true><<<grid, block, dyn>>>(pc, tiles); }},
      {"layer", [&] { tilekit::tile::run_gpu(nullptr, shape, layer); }},
  };
  std::vector<float> hr(e), hc(e);
  CHECK(cudaMemcpy(hr.data(), ref, e * 4, cudaMemcpyDeviceToHost));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  std::printf("gemm tiled probe, %dx%dx%d float, 32x32 tiles, median of 10 (device events)\n", n, n, n);
  for (const auto& v : vs) {
    if (!only.empty() && only != v.name) continue;
    CHECK(cudaMemset(c, 0xff, e * 4));  // NaN: every element must be written
    const int warm = only.empty() ? 3 : 1, reps = only.empty() ? 10 : 1;
    for (int i = 0; i < warm; ++i) v.run();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      CHECK(cudaEventRecord(t0));
      v.run();
      CHECK(cudaEventRecord(t1));
      CHECK(cudaEventSynchronize(t1));
      float t;
      CHECK(cudaEventElapsedTime(&t, t0, t1));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    CHECK(cudaMemcpy(hc.data(), c, e * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::size_t i = 0; i < e; ++i) worst = std::max(worst, double(std::fabs(hc[i] - hr[i])));
    const double med = ms[ms.size() / 2];
    std::printf("%-10s %9.3f ms  %6.2f TFLOP/s  max |diff| vs old %.2e%s\n", v.name, med,
                2.0 * n * n * double(n) / med / 1e9, worst, worst < 1e-3 ? "" : "  WRONG");
  }
  return 0;
}
