// The GPU executor of tile kernels (cuda and hip backends): a tile is a thread block, a lane a
// thread, scratch the block's dynamic `extern __shared__` memory (with the opt-in above 48 KiB),
// a barrier __syncthreads(), lane state the thread's registers. The same source compiles with
// nvcc and with hipcc; include it (through tile.hpp) from a translation unit those compile.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

#include "tilekit/tile/core.hpp"
#include "tilekit/types.hpp"

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

// Lane state on a GPU: the thread's own registers (index the N values with compile-time
// constants, e.g. in unrolled loops, or the compiler moves them to local memory).
template <class T, int N = 1>
struct GpuLaneState {
  using value_type = T;
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

// The collective load of a tile (GpuTile::load and the Kokkos GPU tile), zero outside src.
//   - A block shaped like the lane grid (PMPP's figure: each thread loads the one element it
//     stands on): one copy per lane, no loop.
//   - Otherwise thread `tid` of `nt` copies every nt-th 16-byte vector of dst (when every vector
//     is aligned and wholly inside or outside src) or element. With dst's row length compiled
//     (scratch<T, kCols>) the vector's row is a division by a constant and the loop unrolls:
//     about 5 instructions per element, as the hand-written conv2d window load; otherwise
//     (y, x) advance without a division.
// Offsets are 32-bit when src is under 2^31 elements (the common case: half the integer work).
template <class I, int kStep, class T>
__device__ __forceinline__ void gpu_copy_one(T* to, const GlobalView<T>& src, I gy, I gx, I rows, I cols, I ld) {
  using U = std::make_unsigned_t<I>;
  const bool ok = U(gy) < U(rows) && U(gx) < U(cols);  // also false below 0
  const T* from = src.data + (ok ? gy * ld + gx : I(0));
  if constexpr (kStep > 1)
    copy_async(reinterpret_cast<Bytes16*>(to), reinterpret_cast<const Bytes16*>(from), ok);
  else
    copy_async(to, from, ok);
}
template <class I, int kStep, int kPerRow, class T, class View>
__device__ __forceinline__ void gpu_load_walk(const View& dst, const GlobalView<T>& src, I r0, I c0, int tid, int nt,
                                              int per_row) {
  const I rows = I(src.rows), cols = I(src.cols), ld = I(src.ld);
  if constexpr (kPerRow > 0) {
    const int n = dst.rows * kPerRow;
#pragma unroll 4
    for (int q = tid; q < n; q += nt) {
      const int y = q / kPerRow, x = q - y * kPerRow;
      gpu_copy_one<I, kStep>(dst.data + q * kStep, src, r0 + y, c0 + I(x * kStep), rows, cols, ld);
    }
  } else {
    if (per_row == 0) return;
    const int n = dst.rows * per_row, dy = nt / per_row, dx = nt - dy * per_row;
    int y = tid / per_row, x = tid - y * per_row;
    for (int q = tid; q < n; q += nt) {
      gpu_copy_one<I, kStep>(dst.data + y * dst.ld() + x * kStep, src, r0 + y, c0 + I(x * kStep), rows, cols, ld);
      x += dx;
      y += dy;
      if (x >= per_row) {
        x -= per_row;
        ++y;
      }
    }
  }
}
template <class I, class T, int kLd>
__device__ __forceinline__ void gpu_load_strided(const ScratchView<T, kLd>& dst, const GlobalView<T>& src,
                                                 index_t row0, index_t col0, int tid, int nt) {
  constexpr int W = 16 / int(sizeof(T));
  const bool vec = reinterpret_cast<unsigned long long>(src.data) % 16 == 0 &&
                   reinterpret_cast<unsigned long long>(dst.data) % 16 == 0 && src.ld % W == 0 &&
                   src.cols % W == 0 && (col0 % W + W) % W == 0 && dst.cols % W == 0 && dst.ld() % W == 0;
  const I r0 = I(row0), c0 = I(col0);
  if (!vec) {
    gpu_load_walk<I, 1, 0>(dst, src, r0, c0, tid, nt, dst.cols);
    return;
  }
  if constexpr (kLd > 0 && kLd % W == 0) {
    if (dst.cols == kLd) {  // rows without padding: the block is one run of vectors
      gpu_load_walk<I, W, kLd / W>(dst, src, r0, c0, tid, nt, kLd / W);
      return;
    }
  }
  gpu_load_walk<I, W, 0>(dst, src, r0, c0, tid, nt, dst.cols / W);
}

// PMPP's own load (Fig. 5.13), for a block shaped like the lane grid: each lane copies the one
// element it stands on, through a register (a 4-byte cp.async costs more issue slots than the
// load and store it replaces).
template <class I, class T, class View>
__device__ __forceinline__ void gpu_load_lane(const View& dst, const GlobalView<T>& src, I r0, I c0, Lane lane) {
  using U = std::make_unsigned_t<I>;
  const I gy = r0 + lane.y, gx = c0 + lane.x;
  const bool ok = U(gy) < U(I(src.rows)) && U(gx) < U(I(src.cols));  // also false below 0
  dst.data[lane.y * dst.ld() + lane.x] = ok ? src.data[gy * I(src.ld) + gx] : T(0);
}

template <class T, class View>
__device__ __forceinline__ void gpu_load(const View& dst, const GlobalView<T>& src, index_t row0, index_t col0,
                                         Lane lane, Dim2 lanes) {
  const bool small = src.rows * src.ld < index_t(1) << 31 && row0 > -(index_t(1) << 30) && col0 > -(index_t(1) << 30);
  if (dst.rows == lanes.y && dst.cols == lanes.x) {
    if (small)
      gpu_load_lane<int>(dst, src, int(row0), int(col0), lane);
    else
      gpu_load_lane<index_t>(dst, src, row0, col0, lane);
  } else if (small) {
    gpu_load_strided<int>(dst, src, row0, col0, lane.id, lanes.count());
  } else {
    gpu_load_strided<index_t>(dst, src, row0, col0, lane.id, lanes.count());
  }
}

// A block walk (tile::block_walk) on a GPU. In the lane-grid form (a block shaped like the lane
// grid: PMPP's figure) each lane keeps its own element's position and offset in src, so a step
// is three adds and a load two bounds tests, a load and a store, as in a hand-written kernel
// whose compiler strength-reduces the same loop (the tiled gemm spent ~55 instructions a K step
// re-deriving them through t.load(dst, src, row, col), the hand-written kernel 22:
// docs/design/tile-layer-block-walks.md). A kernel with fixed lanes (kLanes) and a compiled
// block shape gets this form without a run-time test. Other blocks keep the corner and are
// shared out element by element (gpu_load_walk): gpu_load's vector path, inlined into the same
// loop, made ptxas spill the 32-register tiled gemm.
template <class T, int kLd>
struct GpuBlockWalk {
  ScratchView<T, kLd> dst;
  GlobalView<T> src;
  index_t row, col;  // lane-grid form: this lane's element; otherwise the block's corner
  index_t step_rows, step_cols;
  index_t off;  // lane-grid form: row * src.ld + col (read only while inside src)
  bool lane_grid;
  __host__ __device__ void next() {
    row += step_rows;
    col += step_cols;
    off += step_rows * src.ld + step_cols;
  }
};
template <class T, int kLd>
__device__ __forceinline__ GpuBlockWalk<T, kLd> gpu_walk(const ScratchView<T, kLd>& dst, const GlobalView<T>& src,
                                                         index_t row0, index_t col0, index_t step_rows,
                                                         index_t step_cols, Lane lane, Dim2 lanes) {
  const bool grid = dst.rows == lanes.y && dst.cols == lanes.x;
  const index_t r = row0 + (grid ? lane.y : 0), c = col0 + (grid ? lane.x : 0);
  return {dst, src, r, c, step_rows, step_cols, grid ? r * src.ld + c : 0, grid};
}
template <class T, int kLd>
__device__ __forceinline__ void gpu_walk_load(const GpuBlockWalk<T, kLd>& w, Lane lane, Dim2 lanes) {
  if (w.lane_grid) {
    const bool ok = static_cast<std::uint64_t>(w.row) < static_cast<std::uint64_t>(w.src.rows) &&
                    static_cast<std::uint64_t>(w.col) < static_cast<std::uint64_t>(w.src.cols);  // also false below 0
    w.dst(lane.y, lane.x) = ok ? w.src.data[w.off] : T(0);
  } else {
    gpu_load_walk<index_t, 1, 0>(w.dst, w.src, w.row, w.col, lane.id, lanes.count(), w.dst.cols);
  }
}

// The launch's constants: copies in constant memory, one per translation unit (static), filled
// by run_gpu on the launch's stream before the kernel. One array per element size, each aligned
// to its element only: the compiler then reads them one element at a time, and ptxas makes each
// read with a constant index an operand of the instruction that uses it (a wider, vector read
// would go through registers instead).
static __constant__ float tile_constants_4[kMaxConstantBytes / 4];
static __constant__ double tile_constants_8[kMaxConstantBytes / 8];
template <class T>
__device__ __forceinline__ const T* constants_of() {
  if constexpr (sizeof(T) == 4)
    return reinterpret_cast<const T*>(tile_constants_4);
  else
    return reinterpret_cast<const T*>(tile_constants_8);
}

// Atomics: the GPU's own, on shared and global memory alike.
template <AtomicOp op, class T>
__device__ __forceinline__ T gpu_atomic(T* p, T v) {
  static_assert(kAtomicSupported<op, T>, "tile atomics: add on int, unsigned, long long, unsigned long long, "
                                         "float, double; min and max on the integer types");
  if constexpr (op == AtomicOp::add && std::is_same_v<T, long long>) {  // two's complement: the unsigned add
    return static_cast<long long>(
        atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v)));
#if defined(__HIPCC__)
  } else if constexpr (op != AtomicOp::add && std::is_same_v<T, long long>) {  // HIP has no signed 64-bit min/max
    auto* q = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *q, seen;
    do {
      seen = old;
      const long long want = apply_atomic<op>(static_cast<long long>(seen), v);
      if (want == static_cast<long long>(seen)) break;
      old = atomicCAS(q, seen, static_cast<unsigned long long>(want));
    } while (old != seen);
    return static_cast<long long>(seen);
#endif
  } else if constexpr (op == AtomicOp::add)
    return atomicAdd(p, v);
  else if constexpr (op == AtomicOp::min)
    return atomicMin(p, v);
  else
    return atomicMax(p, v);
}

// Collectives over the lanes of a block (lane id = linear thread id): within a warp by shuffles,
// across warps through one slot per warp in shared memory, as CUB's warp-scan algorithms do.
// The slots are static shared memory of the kernels that use them (two sets of 32 values per
// value type, at most 512 bytes): consecutive collectives alternate between the sets, so one
// barrier per collective suffices (a thread writes a set again only after every thread has
// passed the barrier of the collective in between, and so finished reading it).
#if defined(__HIPCC__)
__device__ __forceinline__ int gpu_warp_size() { return warpSize; }
inline constexpr int kGpuWarpConst = 0;  // wavefronts of 64 or 32 lanes: known at run time
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int m, unsigned long long) { return __shfl_xor(v, m); }
template <class T>
__device__ __forceinline__ T shfl_down(T v, int d, unsigned long long) { return __shfl_down(v, d); }
template <class T>
__device__ __forceinline__ T shfl_up(T v, int d, unsigned long long) { return __shfl_up(v, d); }
template <class T>
__device__ __forceinline__ T shfl_idx(T v, int src, unsigned long long) { return __shfl(v, src); }
__device__ __forceinline__ unsigned long long warp_mask(int active) {
  return active >= 64 ? ~0ull : (1ull << active) - 1;
}
#else
__device__ __forceinline__ constexpr int gpu_warp_size() { return 32; }
inline constexpr int kGpuWarpConst = 32;
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int m, unsigned mask) { return __shfl_xor_sync(mask, v, m); }
template <class T>
__device__ __forceinline__ T shfl_down(T v, int d, unsigned mask) { return __shfl_down_sync(mask, v, d); }
template <class T>
__device__ __forceinline__ T shfl_up(T v, int d, unsigned mask) { return __shfl_up_sync(mask, v, d); }
template <class T>
__device__ __forceinline__ T shfl_idx(T v, int src, unsigned mask) { return __shfl_sync(mask, v, src); }
__device__ __forceinline__ unsigned warp_mask(int active) { return active >= 32 ? ~0u : (1u << active) - 1; }
#endif

template <class T>
__device__ __forceinline__ T* collective_slots(int set) {
  static_assert(std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "tile collectives take 4- or 8-byte arithmetic values (int, unsigned, float, double, ...)");
  __shared__ __align__(16) T slots[2][32];  // aligned: the walks over them load 16 bytes at a time
  return slots[set];
}

// Where a lane is: its warp, its place in it, the warps, the lanes of its warp that exist
// (all but in a partial last warp). Unsigned: lane ids are never negative, so the divisions by
// the warp size are shifts.
struct WarpPlace {
  int lane, warp, nwarps, active;
  __device__ __forceinline__ WarpPlace(int id, int n) {
    const unsigned W = unsigned(gpu_warp_size());
    lane = int(unsigned(id) % W);
    warp = int(unsigned(id) / W);
    nwarps = int((unsigned(n) + W - 1) / W);
    const int left = n - warp * int(W);
    active = unsigned(n) % W == 0 || left >= int(W) ? int(W) : left;  // whole warps: folds for compiled lanes
  }
};

// The warp's reduction, in every lane of it.
template <class T, class Op>
__device__ __forceinline__ T gpu_warp_reduce(T v, Op op, const WarpPlace& p) {
  constexpr int kW = kGpuWarpConst;
  const auto mask = warp_mask(p.active);
  if (kW > 0 && p.active == kW) {  // a butterfly: every lane combines the same values in the same order
#pragma unroll
    for (int m = kW / 2; m > 0; m /= 2) v = op(v, shfl_xor(v, m, mask));
    return v;
  }
  for (int d = 1; d < p.active; d *= 2) {
    const T o = shfl_down(v, d, mask);
    if (p.lane + d < p.active) v = op(v, o);
  }
  return shfl_idx(v, 0, mask);
}

// One Kogge-Stone step of the warp's inclusive scan: the value d lanes below, combined in front
// of this lane's. The shuffle hands the lanes below d their own value back, so they keep it.
template <class T, class Op>
__device__ __forceinline__ T gpu_warp_scan_step(T v, Op op, int d, int lane, decltype(warp_mask(0)) mask) {
  const T o = shfl_up(v, d, mask);
  return lane >= d ? op(o, v) : o;
}
#if !defined(__HIPCC__)
// Sums of 4-byte values: the shuffle's own predicate (its source lane exists) guards the add, so
// a step is two instructions on the scan's critical path, as in CUB's warp scans.
#define TILEKIT_TILE_SCAN_STEP(T, ADD)                                                                   \
  __device__ __forceinline__ T gpu_warp_scan_step(T v, Sum, int d, int, unsigned mask) {                 \
    T r;                                                                                                 \
    asm volatile("{ .reg .b32 t; .reg .pred p; shfl.sync.up.b32 t|p, %1, %2, 0, %3; @p " ADD " t, t, %1;" \
                 " mov.b32 %0, t; }"                                                                     \
                 : "=r"(reinterpret_cast<unsigned&>(r))                                                  \
                 : "r"(reinterpret_cast<const unsigned&>(v)), "r"(d), "r"(mask));                        \
    return r;                                                                                            \
  }
TILEKIT_TILE_SCAN_STEP(int, "add.s32")
TILEKIT_TILE_SCAN_STEP(unsigned, "add.u32")
TILEKIT_TILE_SCAN_STEP(float, "add.f32")
#undef TILEKIT_TILE_SCAN_STEP
#endif

// The warp's inclusive scan.
template <class T, class Op>
__device__ __forceinline__ T gpu_warp_scan(T v, Op op, const WarpPlace& p) {
  constexpr int kW = kGpuWarpConst;
  const auto mask = warp_mask(p.active);
  if (kW > 0 && p.active == kW) {  // unrolled
#pragma unroll
    for (int d = 1; d < kW; d *= 2) v = gpu_warp_scan_step(v, op, d, p.lane, mask);
    return v;
  }
  for (int d = 1; d < p.active; d *= 2) v = gpu_warp_scan_step(v, op, d, p.lane, mask);
  return v;
}

template <class T, class Op>
__device__ __forceinline__ T gpu_block_reduce(T v, Op op, int id, int n, int& set) {
  const WarpPlace p(id, n);
  T* slots = collective_slots<T>(set);
  set ^= 1;
  v = gpu_warp_reduce(v, op, p);
  if (p.nwarps == 1) return v;
  if (p.lane == 0) slots[p.warp] = v;
  __syncthreads();
  T r = slots[0];  // every thread the same values in the same order: the same result
  for (int w = 1; w < p.nwarps; ++w) r = op(r, slots[w]);
  return r;
}

template <class T, class Op, class F>
__device__ __forceinline__ void gpu_block_reduce_to_lane0(T v, Op op, int id, int n, int& set, const F& f) {
  const WarpPlace p(id, n);
  T* slots = collective_slots<T>(set);
  set ^= 1;
  const auto mask = warp_mask(p.active);
  constexpr int kW = kGpuWarpConst;
  if (kW > 0 && p.active == kW) {  // lane 0 ends with the warp's reduction
#pragma unroll
    for (int d = 1; d < kW; d *= 2) v = op(v, shfl_down(v, d, mask));
  } else {
    for (int d = 1; d < p.active; d *= 2) {
      const T o = shfl_down(v, d, mask);
      if (p.lane + d < p.active) v = op(v, o);
    }
  }
  if (p.nwarps > 1) {
    if (p.lane == 0) slots[p.warp] = v;
    __syncthreads();
    if (id == 0)
      for (int w = 1; w < p.nwarps; ++w) v = op(v, slots[w]);
  }
  if (id == 0) f(v);
}

// y = the scan of the lanes' x in lane order (exclusive: lane 0 gets Op's identity); returns the
// total, in every lane.
template <bool kInclusive, class T, class Op>
__device__ __forceinline__ T gpu_block_scan(T v, T& y, Op op, int id, int n, int& set) {
  const WarpPlace p(id, n);
  const auto mask = warp_mask(p.active);
  T* slots = collective_slots<T>(set);
  set ^= 1;
  v = gpu_warp_scan(v, op, p);
  T before{};  // the warp's exclusive scan, but in lane 0
  if constexpr (!kInclusive) before = shfl_up(v, 1, mask);
  if (p.nwarps == 1) {
    if constexpr (kInclusive)
      y = v;
    else
      y = p.lane == 0 ? Op::template identity<T>() : before;
    return shfl_idx(v, p.active - 1, mask);
  }
  if (p.lane == p.active - 1) slots[p.warp] = v;
  __syncthreads();
  // Every thread walks all the warps' totals in one order (the same total everywhere) and keeps
  // the running value it passes on its way to its own warp: one trip count for the whole block,
  // so with the lanes compiled in the loop unrolls into independent loads and selects, as CUB's
  // BlockScanWarpScans (a loop up to this warp and one past it chains each load on the last).
  T total = slots[0], prefix = total;
#pragma unroll
  for (int w = 1; w < p.nwarps; ++w) {
    if (w == p.warp) prefix = total;
    total = op(total, slots[w]);
  }
  if constexpr (kInclusive) {
    y = p.warp == 0 ? v : op(prefix, v);
  } else {
    if (p.warp == 0)
      y = p.lane == 0 ? Op::template identity<T>() : before;
    else
      y = p.lane == 0 ? prefix : op(prefix, before);
  }
  return total;
}

}  // namespace detail

// One tile as a thread block runs it; kLx x kLy lanes when the kernel fixes them (kLanes),
// else blockDim's.
template <int kLx = 0, int kLy = 0>
class GpuTileT {
 public:
  // A one-row grid (the common case of 1-D work) needs no division by tiles_x.
  __device__ GpuTileT(unsigned char* smem, const Shape& s)
      : smem_(smem),
        cap_(s.scratch_bytes),
        tx_(s.tiles_y == 1 ? index_t(blockIdx.x) : index_t(blockIdx.x) % s.tiles_x),
        ty_(s.tiles_y == 1 ? 0 : index_t(blockIdx.x) / s.tiles_x) {}
  __device__ index_t x() const { return tx_; }
  __device__ index_t y() const { return ty_; }
  __device__ Dim2 lanes() const {
    if constexpr (kLx > 0)
      return {kLx, kLy};
    else
      return {int(blockDim.x), int(blockDim.y)};
  }

  template <class F>
  __device__ void for_lanes(const F& f) const {
    f(lane());
  }
  template <class F>
  __device__ void for_lanes(Dim2 upto, const F& f) const {
    if (int(threadIdx.x) < upto.x && int(threadIdx.y) < upto.y) for_lanes(f);
  }
  template <class F>
  __device__ void for_each(int n, const F& f) const {
    const int nt = lanes().count();
    for (int i = lane().id; i < n; i += nt) f(i);
  }
  template <class F>
  __device__ void for_each(int rows, int cols, const F& f) const {
    for (int r = int(threadIdx.y); r < rows; r += lanes().y)
      for (int c = int(threadIdx.x); c < cols; c += lanes().x) f(r, c);
  }
  // Loads are asynchronous copies: a barrier first waits for this thread's, then for everyone.
  __device__ void barrier() const {
    detail::copy_async_wait_all();
    __syncthreads();
  }

  template <class T, int kLd>
  __device__ ScratchView<T, kLd> scratch_view(int rows, int cols, int ld) {
    const std::size_t bytes = align_scratch(std::size_t(rows) * std::size_t(ld) * sizeof(T));
    if (used_ + bytes > cap_) {  // the CPU executors name this error; check kernels there first
#if defined(__HIPCC__)
      __builtin_trap();
#else
      __trap();
#endif
    }
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
    detail::gpu_load(dst, src, row0, col0, lane(), lanes());
  }
  template <class T, int kLd>
  __device__ detail::GpuBlockWalk<T, kLd> walk(const ScratchView<T, kLd>& dst, const GlobalView<T>& src,
                                               index_t row0, index_t col0, index_t step_rows,
                                               index_t step_cols) const {
    return detail::gpu_walk(dst, src, row0, col0, step_rows, step_cols, lane(), lanes());
  }
  template <class T, int kLd>
  __device__ void load(const detail::GpuBlockWalk<T, kLd>& w) const {
    detail::gpu_walk_load(w, lane(), lanes());
  }
  template <class T>
  __device__ const T* constants_as() const {
    static_assert(sizeof(T) == 4 || sizeof(T) % 8 == 0, "constants of 4-byte or 8-byte-aligned elements");
    return detail::constants_of<T>();
  }

  template <AtomicOp op, class T, int kLd>
  __device__ T scratch_atomic(const ScratchView<T, kLd>& s, int r, int c, T v) const {
    return detail::gpu_atomic<op>(&s(r, c), v);
  }
  template <AtomicOp op, class T>
  __device__ T global_atomic(T* p, T v) const {
    return detail::gpu_atomic<op>(p, v);
  }
  template <class Op, class State>
  __device__ typename State::value_type reduce(State& x, Op op) {
    return detail::gpu_block_reduce(x.v[0], op, lane().id, lanes().count(), set_);
  }
  template <class Op, class State, class F>
  __device__ void reduce_to_lane0(State& x, Op op, const F& f) {
    detail::gpu_block_reduce_to_lane0(x.v[0], op, lane().id, lanes().count(), set_, f);
  }
  template <bool kInclusive, class Op, class In, class Out>
  __device__ typename In::value_type scan(In& x, Out& y, Op op) {
    return detail::gpu_block_scan<kInclusive>(x.v[0], y.v[0], op, lane().id, lanes().count(), set_);
  }

 private:
  __device__ Lane lane() const { return {int(threadIdx.x), int(threadIdx.y), int(threadIdx.y) * lanes().x + int(threadIdx.x)}; }
  unsigned char* smem_;
  std::size_t used_ = 0, cap_;
  index_t tx_, ty_;
  int set_ = 0;  // the collectives' slot set the next one uses
};
using GpuTile = GpuTileT<>;

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
  GpuTileT<FixedLanes<K>::value.x, FixedLanes<K>::value.y> t(tilekit_tile_smem, s);
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

// Fills this translation unit's constant-memory copies (tile_constants_4/8; the kernel reads
// one of them through constants_of) with the launch's constants, on the launch's stream: the
// copy is ordered before the kernel and after every earlier kernel that read the old ones.
// Static: the symbols are this translation unit's own.
#if defined(__HIPCC__)
static inline void gpu_copy_constants(const Shape& s, hipStream_t st) {
  if (!s.constant_bytes) return;
  if (s.constant_bytes > kMaxConstantBytes)
    throw Error(std::string("tile kernel '") + s.name + "': " + std::to_string(s.constant_bytes) +
                " bytes of constants exceed the " + std::to_string(kMaxConstantBytes) + " bytes the layer keeps");
  gpu_check(hipMemcpyToSymbolAsync(HIP_SYMBOL(tile_constants_4), s.constants, s.constant_bytes, 0, hipMemcpyDefault, st),
            s, "hipMemcpyToSymbolAsync(constants)");
  gpu_check(hipMemcpyToSymbolAsync(HIP_SYMBOL(tile_constants_8), s.constants, s.constant_bytes, 0, hipMemcpyDefault, st),
            s, "hipMemcpyToSymbolAsync(constants)");
}
#else
static inline void gpu_copy_constants(const Shape& s, cudaStream_t st) {
  if (!s.constant_bytes) return;
  if (s.constant_bytes > kMaxConstantBytes)
    throw Error(std::string("tile kernel '") + s.name + "': " + std::to_string(s.constant_bytes) +
                " bytes of constants exceed the " + std::to_string(kMaxConstantBytes) + " bytes the layer keeps");
  gpu_check(cudaMemcpyToSymbolAsync(tile_constants_4, s.constants, s.constant_bytes, 0, cudaMemcpyDefault, st), s,
            "cudaMemcpyToSymbolAsync(constants)");
  gpu_check(cudaMemcpyToSymbolAsync(tile_constants_8, s.constants, s.constant_bytes, 0, cudaMemcpyDefault, st), s,
            "cudaMemcpyToSymbolAsync(constants)");
}
#endif

}  // namespace detail

// Launches every tile of s on `stream` (a cudaStream_t / hipStream_t), asynchronously.
template <class K>
void run_gpu(void* stream, const Shape& s, const K& kernel) {
  detail::check_fixed_lanes<K>(s);
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
  detail::gpu_copy_constants(s, st);
  if (s.scratch_bytes > 48 * 1024)
    detail::gpu_check(hipFuncSetAttribute(reinterpret_cast<const void*>(fn), hipFuncAttributeMaxDynamicSharedMemorySize,
                                          int(s.scratch_bytes)),
                      s, "hipFuncSetAttribute(MaxDynamicSharedMemorySize)");
#else
  auto st = static_cast<cudaStream_t>(stream);
  detail::gpu_copy_constants(s, st);
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

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile

#endif  // __CUDACC__ || __HIPCC__
