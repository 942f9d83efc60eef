// The GPU executor of tile kernels (cuda and hip backends): a tile is a thread block, a lane a
// thread, scratch the block's dynamic `extern __shared__` memory (with the opt-in above 48 KiB),
// a barrier __syncthreads(), lane state the thread's registers. The same source compiles with
// nvcc and with hipcc; include it (through tile.hpp) from a translation unit those compile.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)

#include <climits>
#include <string>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

#include "tilekit/tile/core.hpp"
#include "tilekit/types.hpp"

namespace tilekit::tile {

// Lane state on a GPU: the thread's own registers (index the N values with compile-time
// constants, e.g. in unrolled loops, or the compiler moves them to local memory).
template <class T, int N = 1>
struct GpuLaneState {
  T v[N];
  __host__ __device__ T& operator[](const Lane&) { return v[0]; }
  __host__ __device__ T& operator()(const Lane&, int i) { return v[i]; }
};

namespace detail {

// Asynchronous global-to-shared copies (cp.async, sm_80+): a thread issues all of its copies
// and waits once, so a block's whole tile is in flight together and no register holds it on
// the way; `valid` false zero-fills without reading src (which must still be a valid address).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TILEKIT_TILE_ASYNC_COPY 1
#else
#define TILEKIT_TILE_ASYNC_COPY 0
#endif

template <class T>
__device__ __forceinline__ void copy_async(T* dst_shared, const T* src, bool valid) {
#if TILEKIT_TILE_ASYNC_COPY
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async copies 4, 8 or 16 bytes");
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (sizeof(T) == 16)  // .cg: through L2 only, the reuse is in shared memory
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(int(sizeof(T))),
                 "r"(valid ? int(sizeof(T)) : 0)
                 : "memory");
#else
  if (valid)
    *dst_shared = *src;
  else
    *dst_shared = T{};
#endif
}
__device__ __forceinline__ void copy_async_wait_all() {
#if TILEKIT_TILE_ASYNC_COPY
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
#endif
}

struct alignas(16) Bytes16 {
  unsigned int w[4];
};

// The collective load of a tile (GpuTile::load and the Kokkos GPU tile): thread `tid` of `nt`
// copies every nt-th element (or 16-byte vector) of dst, zero outside src. 16-byte copies when
// every vector is aligned and wholly inside or outside src; element copies otherwise. (y, x)
// advance without a division per element.
template <class T, class View>
__device__ __forceinline__ void gpu_load(const View& dst, const GlobalView<T>& src, index_t row0, index_t col0,
                                         int tid, int nt) {
  constexpr int W = 16 / int(sizeof(T));
  const bool vec = reinterpret_cast<unsigned long long>(src.data) % 16 == 0 &&
                   reinterpret_cast<unsigned long long>(dst.data) % 16 == 0 && src.ld % W == 0 &&
                   src.cols % W == 0 && (col0 % W + W) % W == 0 && dst.cols % W == 0 && dst.ld() % W == 0;
  const int per_row = vec ? dst.cols / W : dst.cols, step = vec ? W : 1;
  if (per_row == 0) return;
  const int n = dst.rows * per_row, dy = nt / per_row, dx = nt - dy * per_row;
  int y = tid / per_row, x = tid - y * per_row;
  for (int q = tid; q < n; q += nt) {
    const index_t gy = row0 + y, gx = col0 + index_t(x) * step;
    const bool ok = gy >= 0 && gy < src.rows && gx >= 0 && gx < src.cols;
    const T* from = ok ? src.data + gy * src.ld + gx : src.data;
    T* to = dst.data + y * dst.ld() + x * step;
    if (vec)
      copy_async(reinterpret_cast<Bytes16*>(to), reinterpret_cast<const Bytes16*>(from), ok);
    else
      copy_async(to, from, ok);
    x += dx;
    y += dy;
    if (x >= per_row) {
      x -= per_row;
      ++y;
    }
  }
  copy_async_wait_all();
}

}  // namespace detail

// One tile as a thread block runs it.
class GpuTile {
 public:
  __device__ GpuTile(unsigned char* smem, const Shape& s)
      : smem_(smem), cap_(s.scratch_bytes), tx_(index_t(blockIdx.x) % s.tiles_x), ty_(index_t(blockIdx.x) / s.tiles_x) {}
  __device__ index_t x() const { return tx_; }
  __device__ index_t y() const { return ty_; }
  __device__ Dim2 lanes() const { return {int(blockDim.x), int(blockDim.y)}; }

  template <class F>
  __device__ void for_lanes(const F& f) const {
    f(Lane{int(threadIdx.x), int(threadIdx.y), int(threadIdx.y * blockDim.x + threadIdx.x)});
  }
  template <class F>
  __device__ void for_lanes(Dim2 upto, const F& f) const {
    if (int(threadIdx.x) < upto.x && int(threadIdx.y) < upto.y) for_lanes(f);
  }
  template <class F>
  __device__ void for_each(int n, const F& f) const {
    const int nt = int(blockDim.x * blockDim.y);
    for (int i = int(threadIdx.y * blockDim.x + threadIdx.x); i < n; i += nt) f(i);
  }
  template <class F>
  __device__ void for_each(int rows, int cols, const F& f) const {
    for (int r = int(threadIdx.y); r < rows; r += int(blockDim.y))
      for (int c = int(threadIdx.x); c < cols; c += int(blockDim.x)) f(r, c);
  }
  __device__ void barrier() const { __syncthreads(); }

  template <class T, int kLd>
  __device__ ScratchView<T, kLd> scratch_view(int rows, int cols, int ld) {
    const std::size_t bytes = align_scratch(std::size_t(rows) * std::size_t(ld) * sizeof(T));
    if (used_ + bytes > cap_) __trap();  // the CPU executors name this error; check kernels there first
    T* p = reinterpret_cast<T*>(smem_ + used_);
    used_ += bytes;
    return {p, rows, cols, ld};
  }
  template <class T, int N>
  __device__ GpuLaneState<T, N> make_lane_state() const {
    return {};
  }
  template <class T, int kLd>
  __device__ void load(const ScratchView<T, kLd>& dst, const GlobalView<T>& src, index_t row0, index_t col0) const {
    detail::gpu_load(dst, src, row0, col0, int(threadIdx.y * blockDim.x + threadIdx.x), int(blockDim.x * blockDim.y));
  }

 private:
  unsigned char* smem_;
  std::size_t used_ = 0, cap_;
  index_t tx_, ty_;
};

namespace detail {

// A kernel may declare the most lanes it is launched with (kMaxLanes) and how many tiles
// should fit on one SM at that size (kMinTilesPerSM): the compiler then budgets registers
// for it (__launch_bounds__). Defaults: 1024 lanes, 1 tile.
template <class K, class = void>
struct MaxLanes {
  static constexpr int value = 1024;
};
template <class K>
struct MaxLanes<K, std::void_t<decltype(K::kMaxLanes)>> {
  static constexpr int value = K::kMaxLanes;
};
template <class K, class = void>
struct MinTiles {
  static constexpr int value = 1;
};
template <class K>
struct MinTiles<K, std::void_t<decltype(K::kMinTilesPerSM)>> {
  static constexpr int value = K::kMinTilesPerSM;
};

#if defined(__HIPCC__)
template <class K>
__global__ __launch_bounds__(MaxLanes<K>::value) void tile_entry(const K kernel, const Shape s)
#else
template <class K>
__global__ __launch_bounds__(MaxLanes<K>::value, MinTiles<K>::value) void tile_entry(const K kernel, const Shape s)
#endif
{
  extern __shared__ __align__(16) unsigned char tilekit_tile_smem[];
  GpuTile t(tilekit_tile_smem, s);
  kernel(t);
}

#if defined(__HIPCC__)
using gpu_error_t = hipError_t;
inline const char* gpu_error_string(hipError_t e) { return hipGetErrorString(e); }
inline constexpr hipError_t kGpuSuccess = hipSuccess;
#else
using gpu_error_t = cudaError_t;
inline const char* gpu_error_string(cudaError_t e) { return cudaGetErrorString(e); }
inline constexpr cudaError_t kGpuSuccess = cudaSuccess;
#endif
inline void gpu_check(gpu_error_t e, const Shape& s, const char* what) {
  if (e != kGpuSuccess)
    throw DeviceError(std::string("tile kernel '") + s.name + "': " + what + ": " + gpu_error_string(e));
}

}  // namespace detail

// Launches every tile of s on `stream` (a cudaStream_t / hipStream_t), asynchronously.
template <class K>
void run_gpu(void* stream, const Shape& s, const K& kernel) {
  if (s.tiles() == 0) return;
  constexpr int kMax = detail::MaxLanes<K>::value;
  if (s.lanes.count() > kMax)
    throw Error(std::string("tile kernel '") + s.name + "' is launched with " + std::to_string(s.lanes.count()) +
                " lanes per tile but compiled for at most " + std::to_string(kMax) + " (its kMaxLanes)");
  if (s.tiles() > INT_MAX)
    throw Error(std::string("tile kernel '") + s.name + "': " + std::to_string(s.tiles()) +
                " tiles exceed the GPU's grid limit of 2^31 - 1 blocks");
  const auto fn = &detail::tile_entry<K>;
#if defined(__HIPCC__)
  auto st = static_cast<hipStream_t>(stream);
  if (s.scratch_bytes > 48 * 1024)
    detail::gpu_check(hipFuncSetAttribute(reinterpret_cast<const void*>(fn), hipFuncAttributeMaxDynamicSharedMemorySize,
                                          int(s.scratch_bytes)),
                      s, "hipFuncSetAttribute(MaxDynamicSharedMemorySize)");
#else
  auto st = static_cast<cudaStream_t>(stream);
  if (s.scratch_bytes > 48 * 1024)
    detail::gpu_check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s.scratch_bytes)), s,
                      "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
#endif
  fn<<<dim3(unsigned(s.tiles())), dim3(unsigned(s.lanes.x), unsigned(s.lanes.y)), s.scratch_bytes, st>>>(kernel, s);
#if defined(__HIPCC__)
  detail::gpu_check(hipGetLastError(), s, "launch");
#else
  detail::gpu_check(cudaGetLastError(), s, "launch");
#endif
}

}  // namespace tilekit::tile

#endif  // __CUDACC__ || __HIPCC__
