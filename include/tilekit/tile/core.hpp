// The vocabulary of tile kernels, shared by every executor (host.hpp, check.hpp, gpu.hpp,
// kokkos.hpp). docs/tile-kernels.md explains the model; tile.hpp is the header users include.
#pragma once

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tilekit/types.hpp"

// Marks a tile kernel's call operator (and helpers it calls) for every compiler that may
// build it: host and device under nvcc/hipcc, plain inline elsewhere.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TILEKIT_TILE_FN __host__ __device__ inline
#else
#define TILEKIT_TILE_FN inline
#endif

// Marks a lambda that is a tile kernel (tile::kernel()): `[=] TILEKIT_TILE_LAMBDA (auto& t) {...}`.
// nvcc accepts a generic lambda made in host code for the device only as `__device__` (an extended
// lambda: --extended-lambda, in tilekit_CUDA_FLAGS), so in a translation unit nvcc compiles a
// lambda kernel launches on the GPU only; hipcc and host compilers take it for every backend.
#if defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__clang__)
#define TILEKIT_TILE_LAMBDA __device__
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define TILEKIT_TILE_LAMBDA __host__ __device__
#else
#define TILEKIT_TILE_LAMBDA
#endif

// The lane loop of the CPU executors: lanes of one phase are independent by the rules of the
// model, so the compiler may vectorise across them. (GCC 12 takes `omp simd` over a loop whose
// body is a lambda as licence to vectorise the lambda's inner loops instead; ivdep keeps it on
// the lane loop.)
#if defined(__CUDACC__) && !defined(__clang__)  // nvcc's front end knows neither pragma
#define TILEKIT_TILE_SIMD
#elif defined(__clang__)
#define TILEKIT_TILE_SIMD _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define TILEKIT_TILE_SIMD _Pragma("GCC ivdep")
#elif defined(_OPENMP)
#define TILEKIT_TILE_SIMD _Pragma("omp simd")
#else
#define TILEKIT_TILE_SIMD
#endif

// What a translation unit can launch on depends on how it is compiled (OpenMP, Kokkos, nvcc,
// hipcc), and so do the bodies of the layer's templates. Each such configuration gets its own
// inline namespace, so that two translation units compiled differently (a .cu file and a .cpp
// file of one program, the serial and openmp backends) never share an instantiation.
#if defined(_OPENMP)
#define TILEKIT_TILE_CFG_OMP 1
#else
#define TILEKIT_TILE_CFG_OMP 0
#endif
#if defined(TILEKIT_TILE_WITH_KOKKOS) || defined(KOKKOS_VERSION)
#define TILEKIT_TILE_CFG_KOKKOS 1
#else
#define TILEKIT_TILE_CFG_KOKKOS 0
#endif
#if defined(__HIPCC__)
#define TILEKIT_TILE_CFG_GPU 2
#elif defined(__CUDACC__)
#define TILEKIT_TILE_CFG_GPU 1
#else
#define TILEKIT_TILE_CFG_GPU 0
#endif
#if defined(TILEKIT_TILE_CHECK)
#define TILEKIT_TILE_CFG_CHECK 1
#else
#define TILEKIT_TILE_CFG_CHECK 0
#endif
#define TILEKIT_TILE_CAT5(a, b, c, d, e) a##b##c##d##e
#define TILEKIT_TILE_NS_NAME(o, k, g, c) TILEKIT_TILE_CAT5(cfg_o, o, k, g, c)
#define TILEKIT_TILE_ABI TILEKIT_TILE_NS_NAME(TILEKIT_TILE_CFG_OMP, TILEKIT_TILE_CFG_KOKKOS, TILEKIT_TILE_CFG_GPU, TILEKIT_TILE_CFG_CHECK)

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

using index_t = std::int64_t;

// Lanes of one tile, laid out x-fastest: on a GPU lane (x, y) is thread (threadIdx.x,
// threadIdx.y), so consecutive x are consecutive threads of a warp (make x run along rows of
// memory for coalesced access); on a CPU x is the vectorised inner loop.
struct Dim2 {
  int x = 1, y = 1;
  TILEKIT_TILE_FN constexpr int count() const { return x * y; }
};

// One lane: its position in the tile's lane grid, and id = y * lanes.x + x.
struct Lane {
  int x, y, id;
};

// One launch: a grid of tiles, the lanes of each tile, the scratch bytes each tile may carve.
// Optionally, constants: read-only data every lane of every tile reads (a filter, coefficients),
// in the backend's memory; on NVIDIA/AMD GPUs copied into constant memory before the launch, so
// that reads of it by all lanes at once are one broadcast (PMPP 7.3), at most kMaxConstantBytes.
// Write it positionally, {tiles_x, tiles_y, {lanes.x, lanes.y}, scratch_bytes, "name"}, or by
// name: tile::Shape::grid(tx, ty).with_lanes(256).with_scratch(bytes).named("name").
struct Shape {
  index_t tiles_x = 1, tiles_y = 1;
  Dim2 lanes;
  std::size_t scratch_bytes = 0;  // 0 with a kernel that declares its scratch(): the kernel's
  const char* name = "tile kernel";  // for error messages and profilers
  const void* constants = nullptr;
  std::size_t constant_bytes = 0;
  TILEKIT_TILE_FN constexpr index_t tiles() const { return tiles_x * tiles_y; }

  static constexpr Shape grid(index_t tx, index_t ty = 1) {
    Shape s;
    s.tiles_x = tx;
    s.tiles_y = ty;
    return s;
  }
  constexpr Shape with_lanes(int x, int y = 1) const {
    Shape s = *this;
    s.lanes = Dim2{x, y};
    return s;
  }
  constexpr Shape with_scratch(std::size_t bytes) const {
    Shape s = *this;
    s.scratch_bytes = bytes;
    return s;
  }
  constexpr Shape named(const char* n) const {
    Shape s = *this;
    s.name = n;
    return s;
  }
  // `bytes` bytes at `data` (the backend's memory for launch, host memory for check).
  constexpr Shape with_constants(const void* data, std::size_t bytes) const {
    Shape s = *this;
    s.constants = data;
    s.constant_bytes = bytes;
    return s;
  }
};
inline constexpr std::size_t kMaxConstantBytes = 8 * 1024;  // (Kokkos keeps 32 KiB of the 64 KiB for itself)

// Every scratch array starts on a 16-byte boundary, so 16-byte vector accesses are legal.
inline constexpr std::size_t kScratchAlign = 16;
TILEKIT_TILE_FN constexpr std::size_t align_scratch(std::size_t bytes) {
  return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
}
// The bytes scratch<T>(t, rows, cols, pad) carves: sum these to size Shape::scratch_bytes.
template <class T>
TILEKIT_TILE_FN constexpr std::size_t scratch_bytes(int rows, int cols, int pad = 0) {
  return align_scratch(std::size_t(rows) * std::size_t(cols + pad) * sizeof(T));
}

// A rows x cols array in a tile's scratch memory, row-major with leading dimension ld
// (ld > cols pads each row: against shared-memory bank conflicts). kLd > 0 fixes ld at compile
// time, so that unrolled loops address it with immediates. `Ref` is what element access
// returns: T& everywhere but in the checking executor, which watches every access.
template <class T, int kLd = 0>
struct ScratchView {
  using value_type = T;
  T* data;
  int rows, cols, ld_;
  TILEKIT_TILE_FN constexpr int ld() const { return kLd > 0 ? kLd : ld_; }
  TILEKIT_TILE_FN T& operator()(int r, int c) const { return data[r * ld() + c]; }
  TILEKIT_TILE_FN T* row(int r) const { return data + r * ld(); }
  // Rows r0.. as an array of their own: a lane that works on a block of rows addresses them
  // from one base, which CPU compilers fold into immediate offsets.
  TILEKIT_TILE_FN ScratchView rows_from(int r0) const { return {data + r0 * ld(), rows - r0, cols, ld_}; }
};

// A matrix in the backend's memory (what tilekit::Matrix<T>::data() points to), with its
// bounds: loads from it zero-fill outside [0, rows) x [0, cols).
template <class T>
struct GlobalView {
  const T* data;
  index_t rows, cols, ld;
};

// The blocks a tile loads one after another into the same scratch array (PMPP's phases: A's
// blocks along a row of tiles, B's down a column): block i has its corner at (row + i *
// step_rows, col + i * step_cols). Made by tile::block_walk(); t.load(w) copies the current
// block as t.load(dst, src, row, col) would, and next() moves to the following one. This is the
// CPU executors' form; the GPU executors keep each lane's address and bounds in theirs instead.
template <class View, class T>
struct BlockWalk {
  View dst;
  GlobalView<T> src;
  index_t row, col, step_rows, step_cols;
  TILEKIT_TILE_FN void next() {
    row += step_rows;
    col += step_cols;
  }
};

namespace detail {
// The largest and the lowest value of an arithmetic type, without std::numeric_limits (whose
// functions device code may call only under nvcc's --expt-relaxed-constexpr, which Kokkos'
// nvcc_wrapper does not pass).
template <class T>
TILEKIT_TILE_FN constexpr T max_value() {
  if constexpr (std::is_same_v<T, float>) {
    return FLT_MAX;
  } else if constexpr (std::is_same_v<T, double>) {
    return DBL_MAX;
  } else if constexpr (std::is_floating_point_v<T>) {
    return LDBL_MAX;
  } else {
    using U = std::make_unsigned_t<T>;
    return std::is_signed_v<T> ? T(U(~U(0)) >> 1) : T(~U(0));
  }
}
template <class T>
TILEKIT_TILE_FN constexpr T lowest_value() {
  if constexpr (std::is_floating_point_v<T>)
    return -max_value<T>();
  else if constexpr (std::is_signed_v<T>)
    return T(-max_value<T>() - 1);
  else
    return T(0);
}
}  // namespace detail

// The operators of the collectives (collectives.hpp): a + b, max, min, each with its identity.
struct Sum {
  template <class T>
  TILEKIT_TILE_FN constexpr T operator()(const T& a, const T& b) const {
    return a + b;
  }
  template <class T>
  TILEKIT_TILE_FN static constexpr T identity() {
    return T(0);
  }
};
struct Max {
  template <class T>
  TILEKIT_TILE_FN constexpr T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
  template <class T>
  TILEKIT_TILE_FN static constexpr T identity() {
    return detail::lowest_value<T>();
  }
};
struct Min {
  template <class T>
  TILEKIT_TILE_FN constexpr T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
  template <class T>
  TILEKIT_TILE_FN static constexpr T identity() {
    return detail::max_value<T>();
  }
};

// The read-modify-write operations of tile::atomic_add/min/max (collectives.hpp).
enum class AtomicOp { add, min, max };

namespace detail {
template <class T>
struct TypeIdentity {
  using type = T;
};
template <class T>
inline constexpr bool kAtomicInt = std::is_same_v<T, int> || std::is_same_v<T, unsigned> ||
                                   std::is_same_v<T, long long> || std::is_same_v<T, unsigned long long>;
template <AtomicOp op, class T>
inline constexpr bool kAtomicSupported =
    kAtomicInt<T> || (op == AtomicOp::add && (std::is_same_v<T, float> || std::is_same_v<T, double>));
template <AtomicOp op, class T>
TILEKIT_TILE_FN constexpr T apply_atomic(T a, T v) {
  if constexpr (op == AtomicOp::add)
    return a + v;
  else if constexpr (op == AtomicOp::min)
    return v < a ? v : a;
  else
    return a < v ? v : a;
}
}  // namespace detail

namespace detail {
template <int S, int... Rest, class F>
decltype(auto) with_size_impl(int n, F& f) {
  if (n == S) return f(std::integral_constant<int, S>{});
  if constexpr (sizeof...(Rest) == 0)
    return f(std::integral_constant<int, 0>{});
  else
    return with_size_impl<Rest...>(n, f);
}
}  // namespace detail

// Calls f(std::integral_constant<int, S>{}) for the S in Sizes equal to n, or with 0 when none
// is: a kernel compiles its common tile sizes (so inner loops unroll and addresses fold) and
// keeps a general path, taken for 0, for the rest.
template <int... Sizes, class F>
decltype(auto) with_size(int n, F&& f) {
  if constexpr (sizeof...(Sizes) == 0)
    return f(std::integral_constant<int, 0>{});
  else
    return detail::with_size_impl<Sizes...>(n, f);
}

namespace detail {
// A kernel may fix its lanes at compile time (`static constexpr tile::Dim2 kLanes{32, 32};`,
// x = 0: not fixed): the GPU executors then know the block's shape while compiling, so index
// arithmetic on lanes folds and a load whose block is shaped like the lane grid is known to be
// one (block walks take their lane-grid form without a run-time test). Launches check it.
template <class K, class = void>
struct FixedLanes {
  static constexpr Dim2 value{0, 0};
};
template <class K>
struct FixedLanes<K, std::void_t<decltype(K::kLanes)>> {
  static constexpr Dim2 value = K::kLanes;
};
template <class K>
void check_fixed_lanes(const Shape& s) {
  constexpr Dim2 fixed = FixedLanes<K>::value;
  if (fixed.x > 0 && (s.lanes.x != fixed.x || s.lanes.y != fixed.y))
    throw Error(std::string("tile kernel '") + s.name + "' is compiled for " + std::to_string(fixed.x) + " x " +
                std::to_string(fixed.y) + " lanes (its kLanes) but launched with " + std::to_string(s.lanes.x) +
                " x " + std::to_string(s.lanes.y));
}
}  // namespace detail

namespace detail {
// Lanes of a tile on a CPU: the executors run each phase as a loop over them.
// Lanes (x, y) with x < upto.x, y < upto.y of a tile with `lanes` lanes.
template <class F>
inline void host_lane_loop(Dim2 lanes, Dim2 upto, const F& f) {
  for (int y = 0; y < upto.y; ++y) {
    const int base = y * lanes.x;
    TILEKIT_TILE_SIMD
    for (int x = 0; x < upto.x; ++x) f(Lane{x, y, base + x});
  }
}
TILEKIT_TILE_FN constexpr Dim2 clamp_lanes(Dim2 upto, Dim2 lanes) {
  return {upto.x < lanes.x ? (upto.x < 0 ? 0 : upto.x) : lanes.x, upto.y < lanes.y ? (upto.y < 0 ? 0 : upto.y) : lanes.y};
}
}  // namespace detail

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile

// Unrolls a loop with compile-time bounds. On CPUs this matters as much as on GPUs: the lane
// loop vectorises only when the lane body is straight-line code.
#if defined(__CUDA_ARCH__) || defined(__HIPCC__)
#define TILEKIT_TILE_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)  // nvcc's host pass: its front end knows no GCC pragma, g++ no plain unroll
#define TILEKIT_TILE_UNROLL
#elif defined(__clang__)
#define TILEKIT_TILE_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define TILEKIT_TILE_UNROLL _Pragma("GCC unroll 128")
#else
#define TILEKIT_TILE_UNROLL
#endif
