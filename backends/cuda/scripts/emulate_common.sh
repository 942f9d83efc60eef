# The host-emulation harness of the gemm kernels (sourced by sgemm_emulate.sh and dmma_emulate.sh):
# it runs a kernel's own code on the HOST, for machines without a GPU, each CUDA thread a
# std::thread and __syncthreads a std::barrier, against a double-precision host reference.
#   emu_begin             $root (the repository) and $dir (a temporary directory, removed at exit)
#   emu_header EXTRA      writes $dir/device_common.cuh: the CUDA names the kernels use, the real
#                         GemmParams, cp.async helpers and gemm_parts (backends/common/gpu/device_common.cuh:
#                         below sm_80 the copies are plain ones with the same zero fill), then EXTRA (stdin)
#   emu_build_run         compiles $dir/emu.cpp (it includes emu_gemm.hpp: operands, reference,
#                         block-by-block launch, the check) and runs it
# What no emulation checks: the real instructions, cp.async timing (racecheck on the device does),
# bank conflicts, speed.

emu_begin() {
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
}

emu_header() {
  {
    cat <<'CUH'
// Host emulation of the CUDA names the gemm kernels use (backends/cuda/scripts/emulate_common.sh).
#pragma once
#include <algorithm>
#include <barrier>
#include <memory>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __align__(n)
#define __launch_bounds__(...)
#define TILEKIT_LAUNCH_BOUNDS_OCC(a, b)
struct Dim { unsigned x = 0, y = 0, z = 0; };
inline thread_local Dim threadIdx, blockIdx;
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
struct double2 { double x, y; };
inline double2 make_double2(double a, double b) { return {a, b}; }
using std::min; using std::max;
CUH
    # The real definitions, cut from the headers the device build uses.
    python3 - "$root/backends/common/gpu/device_common.cuh" <<'PY'
import sys
common = open(sys.argv[1]).read()
i = common.index("template <class T>\nstruct GemmParams")
params = common[i:common.index("};", i) + 2]
i = common.index("namespace async_group {")
group = common[i:common.index("}  // namespace async_group", i)] + "}  // namespace async_group"
i = common.index("namespace gemm_parts {")
parts = common[i:common.index("}  // namespace gemm_parts", i)] + "}  // namespace gemm_parts"
print("namespace tilekit::gpu {\n" + params + "\n" + group + "\n" + parts + "\n}  // namespace tilekit::gpu")
PY
    cat
  } >"$dir/device_common.cuh"
  cat >"$dir/emu_gemm.hpp" <<'HPP'
// The emulations' shared driver: operands with ld pads and an offset base (unaligned when off is
// odd), a double-precision reference, a block-by-block launch of one std::thread per CUDA
// thread, and the check (inside C within tolerance; outside C untouched).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <vector>

struct Shape { int m, n, k, pa, pb, pc, off; double alpha, beta; };
// Odd and prime sizes, partial tiles, 1x1x1, k = 0 (C = beta C), ld pads, an unaligned base,
// alpha and beta; then the kernel's own (its tile sizes, several blocks).
inline std::vector<Shape> shapes_and(std::initializer_list<Shape> more) {
  std::vector<Shape> v = {{67, 45, 33, 0, 0, 0, 0, 1, 0}, {68, 44, 36, 0, 0, 0, 0, 1, 0}, {131, 260, 37, 0, 0, 0, 0, 0.5, 2},
                          {130, 130, 50, 2, 4, 6, 0, -1, 0.25}, {70, 66, 21, 1, 3, 5, 0, 1, 1}, {33, 17, 40, 0, 0, 0, 1, 1, 0},
                          {1, 1, 1, 0, 0, 0, 0, 2, 0.5}, {129, 131, 0, 0, 0, 0, 0, 1, 0}, {40, 30, 0, 0, 0, 0, 0, 1, 3},
                          {3, 200, 65, 0, 0, 0, 0, 1, 0}};
  v.insert(v.end(), more);
  return v;
}

template <class T>
struct Problem {
  Shape s;
  int lda, ldb, ldc;
  std::vector<T> A, B, C, R;
  tilekit::gpu::GemmParams<T> g;
  Problem(const Shape& sh, std::mt19937& gen) : s(sh), lda(sh.k + sh.pa), ldb(sh.n + sh.pb), ldc(sh.n + sh.pc) {
    std::uniform_real_distribution<T> u(-1, 1);
    A.resize(size_t(s.m) * lda + 4), B.resize(size_t(s.k) * ldb + 4), C.resize(size_t(s.m) * ldc + 4);
    for (auto& x : A) x = u(gen);
    for (auto& x : B) x = u(gen);
    for (auto& x : C) x = s.beta == 0 ? T(NAN) : u(gen);  // beta == 0 must never read C
    R = C;
    const T *a = A.data() + s.off, *b = B.data() + s.off;
    T* r = R.data() + s.off;
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int p = 0; p < s.k; ++p) acc += double(a[i * lda + p]) * b[p * ldb + j];
        r[i * ldc + j] = s.beta == 0 ? T(s.alpha * acc) : T(s.alpha * acc + s.beta * r[i * ldc + j]);
      }
    g = {s.m, s.n, s.k, T(s.alpha), T(s.beta), a, lda, b, ldb, C.data() + s.off, ldc};
  }
  static bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
  // Block by block: block(b) prepares the block's shared state, then `threads` threads run
  // thread(t) with threadIdx.x = t and blockIdx.x = b.
  template <class Block, class Thread>
  static void launch(int blocks, int threads, Block block, Thread thread) {
    for (int b = 0; b < blocks; ++b) {
      block(b);
      std::vector<std::thread> th;
      for (int t = 0; t < threads; ++t)
        th.emplace_back([&, t] {
          threadIdx.x = t;
          blockIdx.x = b;
          thread();
        });
      for (auto& x : th) x.join();
    }
  }
  // Prints `what` with the shape and the verdict; returns 1 on a failure. An element inside C is
  // right within tol * (1 + |reference|).
  int check(const std::string& what, double tol) const {
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < C.size(); ++i) {
      const size_t o = s.off;
      const bool in = i >= o && (i - o) / ldc < size_t(s.m) && (i - o) % ldc < size_t(s.n);
      if (!in) {
        if (!(std::isnan(C[i]) && std::isnan(R[i])) && C[i] != R[i]) ++bad;
        continue;
      }
      const double e = std::fabs(double(C[i]) - R[i]);
      worst = std::max(worst, e);
      if (!(e <= tol * (1 + std::fabs(double(R[i]))))) ++bad;
    }
    std::printf("%s m=%d n=%d k=%d pads=%d,%d,%d off=%d a=%g b=%g: %s (max err %.2e)\n", what.c_str(), s.m, s.n, s.k,
                s.pa, s.pb, s.pc, s.off, s.alpha, s.beta, bad ? "FAIL" : "ok", worst);
    return bad != 0;
  }
};
HPP
}

emu_build_run() {
  g++ -std=c++20 -O1 -pthread -I"$dir" -o "$dir/emu" "$dir/emu.cpp"
  "$dir/emu"
}
