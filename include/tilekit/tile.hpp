// Portable tile kernels: write a tiled kernel once, run it with shared memory on GPUs, team
// scratch on Kokkos and cache blocks on CPUs. docs/tile-kernels.md is the guide; in short:
//
//   struct Scale {                       // a kernel is a copyable function object over ONE tile
//     float* x; tilekit::index_t n;
//     template <class Tile> TILEKIT_TILE_FN void operator()(Tile& t) const {
//       auto buf = tilekit::tile::scratch<float>(t, 1, 256);   // fast memory of this tile
//       t.for_lanes([&](tilekit::tile::Lane l) {               // phase 1, every lane
//         const auto i = t.x() * 256 + l.x;
//         buf(0, l.x) = i < n ? x[i] : 0.f;
//       });
//       t.barrier();                                           // between phases only
//       t.for_lanes([&](tilekit::tile::Lane l) {               // phase 2
//         const auto i = t.x() * 256 + l.x;
//         if (i < n) x[i] = 2.f * buf(0, 255 - l.x);
//       });
//     }
//   };
//   tilekit::tile::launch(be, {tiles, 1, {256, 1}, tilekit::tile::scratch_bytes<float>(1, 256), "scale"},
//                         Scale{m.data(), n});
//
// The model (PMPP ch. 5): a launch is a grid of tiles; a tile has lanes (threads of a block on a
// GPU, iterations of a vectorised loop on a CPU) and scratch (shared memory / team scratch / an
// L1-sized buffer). The kernel body is tile-uniform code that runs phases: t.for_lanes(f)
// calls f for every lane, t.for_each(n, f) shares n items out among the lanes, t.load(...)
// copies a block of a matrix into scratch (zero outside it; tile::block_walk for a sequence of
// blocks, as PMPP's phases over K load). t.barrier() separates phases: what
// one lane writes to scratch, another may read only after a barrier.
//
// Rules (the checking executor, tile::check(), enforces them on the CPU):
//   - barrier() only between phases, in code every lane of the tile reaches (never inside
//     for_lanes/for_each, never under a condition that differs between tiles' lanes);
//   - scratch only inside phases; a lane reads another lane's scratch writes only after a
//     barrier, and overwrites what another lane read only after one;
//   - locals of the kernel body are tile-uniform (one copy per GPU thread, one per CPU tile):
//     write them only outside phases. A per-lane value that must survive a barrier lives in
//     lane state: auto acc = tile::lane_state<float>(t); ... acc[l] += ...;
//   - tiles are independent: no tile reads what another writes in the same launch.
//
// Atomics (tile::atomic_add/min/max) and collectives (tile::reduce, inclusive_scan,
// exclusive_scan, histogram): tile/collectives.hpp. Scratch written once: a kernel may declare
// its arrays (tile::array<T>(rows, cols) and scratch()), and launch() sizes scratch from them;
// lambdas as kernels: tile::kernel([=] TILEKIT_TILE_LAMBDA (auto& t) {...}).
//
// Which backends a kernel runs on depends on how its translation unit is compiled: serial and
// openmp from every translation unit (the openmp backend's threads are libtilekit's); kokkos
// with Kokkos (TILEKIT_TILE_WITH_KOKKOS, or Kokkos_Core.hpp included first); cuda when nvcc
// compiles it; hip when hipcc does.
#pragma once

#include <climits>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tilekit/backend.hpp"
#include "tilekit/config.hpp"
#include "tilekit/tile/check.hpp"
#include "tilekit/tile/collectives.hpp"
#include "tilekit/tile/compare.hpp"
#include "tilekit/tile/core.hpp"
#include "tilekit/tile/gpu.hpp"
#include "tilekit/tile/host.hpp"

#if defined(TILEKIT_TILE_WITH_KOKKOS) || defined(KOKKOS_VERSION)
#include "tilekit/tile/kokkos.hpp"
#define TILEKIT_TILE_HAS_KOKKOS 1
#else
#define TILEKIT_TILE_HAS_KOKKOS 0
#endif

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

// A scratch array of rows x cols elements of T, each row padded by `pad` elements. Carve the
// same arrays in the same order in every tile; their scratch_bytes<T>() add up to what the
// launch must declare.
template <class T, class Tile>
TILEKIT_TILE_FN auto scratch(Tile& t, int rows, int cols, int pad = 0) {
  return t.template scratch_view<T, 0>(rows, cols, cols + pad);
}
// The same with the row length fixed at compile time (kCols + kPad), for unrolled loops.
template <class T, int kCols, int kPad = 0, class Tile>
TILEKIT_TILE_FN auto scratch(Tile& t, int rows) {
  return t.template scratch_view<T, kCols + kPad>(rows, kCols, kCols + kPad);
}
// N values of T per lane that survive barriers: st[l] (or st(l, i), i < N, a compile-time
// constant on GPUs) in a phase. Registers on GPUs, an array in memory on CPUs.
template <class T, int N = 1, class Tile>
TILEKIT_TILE_FN auto lane_state(Tile& t) {
  return t.template make_lane_state<T, N>();
}

// The blocks of src that the tile copies into dst one after another (PMPP's phases over K):
// the block at (row0, col0) first; w.next() moves it by (step_rows, step_cols); t.load(w) copies
// the current one, zero outside src, as t.load(dst, src, row, col) would. Make it once per tile,
// before the loop: on GPUs each lane's address and bounds are worked out here and next() only
// adds the step, where t.load(dst, src, row, col) works them out at every call. Like a load,
// next() is tile-uniform: call it outside phases, in every lane's path alike.
template <class View, class T, class Tile>
TILEKIT_TILE_FN auto block_walk(Tile& t, const View& dst, const GlobalView<T>& src, index_t row0, index_t col0,
                                index_t step_rows, index_t step_cols) {
  return t.walk(dst, src, row0, col0, step_rows, step_cols);
}

// The launch's constants (Shape::constants) as an array of T: index them with compile-time
// constants where you can (on NVIDIA GPUs each read is then an operand from constant memory).
template <class T, class Tile>
TILEKIT_TILE_FN auto constants(Tile& t) {
  return t.template constants_as<T>();
}

// A scratch array described once: a(t) carves it in a kernel (as tile::scratch does), a.bytes()
// is what it takes of Shape::scratch_bytes. array<T>(rows, cols, pad) has a run-time row
// length; array<T, kCols, kPad>(rows) a compiled one.
template <class T, int kCols = 0, int kPad = 0>
struct Array {
  int rows, cols, pad;
  TILEKIT_TILE_FN constexpr std::size_t bytes() const { return scratch_bytes<T>(rows, cols, pad); }
  template <class Tile>
  TILEKIT_TILE_FN auto operator()(Tile& t) const {
    if constexpr (kCols > 0)
      return scratch<T, kCols, kPad>(t, rows);
    else
      return scratch<T>(t, rows, cols, pad);
  }
};
template <class T>
TILEKIT_TILE_FN constexpr Array<T> array(int rows, int cols, int pad = 0) {
  return {rows, cols, pad};
}
template <class T, int kCols, int kPad = 0>
TILEKIT_TILE_FN constexpr Array<T, kCols, kPad> array(int rows) {
  return {rows, kCols, kPad};
}
// Several arrays, as a kernel's scratch(): their bytes, summed (carve each with its own a(t), in
// any order: every array starts on a 16-byte boundary).
struct Arrays {
  std::size_t total;
  TILEKIT_TILE_FN constexpr std::size_t bytes() const { return total; }
};
template <class... A>
TILEKIT_TILE_FN constexpr Arrays arrays(const A&... a) {
  return {(std::size_t(0) + ... + a.bytes())};
}

// A lambda as a kernel: tile::kernel([=] TILEKIT_TILE_LAMBDA (auto& t) { ... }), or with its
// scratch described once, tile::kernel(tile::array<float>(1, 256), [=] TILEKIT_TILE_LAMBDA
// (auto& t, auto buf) { ... }) (the lambda gets the array carved; the launch sizes scratch from
// it). Under nvcc TILEKIT_TILE_LAMBDA is __device__ (nvcc has no generic __host__ __device__
// lambda made in host code), so there a lambda kernel launches on the GPU only.
template <class F>
struct LambdaKernel {
  F f;
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    f(t);
  }
};
template <class A, class F>
struct LambdaKernelWithScratch {
  A a;
  F f;
  TILEKIT_TILE_FN constexpr A scratch() const { return a; }
  template <class Tile>
  TILEKIT_TILE_FN void operator()(Tile& t) const {
    f(t, a(t));
  }
};
template <class F>
LambdaKernel<F> kernel(F f) {
  return {f};
}
template <class A, class F>
LambdaKernelWithScratch<A, F> kernel(A scratch_arrays, F f) {
  return {scratch_arrays, f};
}

namespace detail {
// Whether kernel K is a lambda nvcc compiled for the device only (TILEKIT_TILE_LAMBDA there).
template <class K>
struct DeviceOnly {
#if defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__clang__)
  static constexpr bool value = __nv_is_extended_device_lambda_closure_type(K);
#else
  static constexpr bool value = false;
#endif
};
template <class F>
struct DeviceOnly<LambdaKernel<F>> : DeviceOnly<F> {};
template <class A, class F>
struct DeviceOnly<LambdaKernelWithScratch<A, F>> : DeviceOnly<F> {};
template <class K>
[[noreturn]] void throw_device_only(const Shape& s, const std::string& backend) {
  throw Error(std::string("tile kernel '") + s.name + "' cannot run on backend '" + backend +
              "': it is a lambda that nvcc compiled for the GPU only (nvcc makes a generic lambda "
              "TILEKIT_TILE_LAMBDA a __device__ one); write it as a function object (docs/tile-kernels.md) "
              "to launch it on the host backends too");
}

// A kernel that declares its scratch (scratch().bytes()) sizes its launch's: a Shape without
// scratch_bytes gets the kernel's; one with fewer than the kernel carves is refused.
template <class K, class = void>
struct HasScratch : std::false_type {};
template <class K>
struct HasScratch<K, std::void_t<decltype(std::declval<const K&>().scratch().bytes())>> : std::true_type {};
template <class K>
Shape kernel_shape(const Shape& s, const K& kernel) {
  if constexpr (HasScratch<K>::value) {
    const std::size_t need = kernel.scratch().bytes();
    if (s.scratch_bytes == 0) {
      Shape r = s;
      r.scratch_bytes = need;
      return r;
    }
    if (s.scratch_bytes < need)
      throw Error(std::string("tile kernel '") + s.name + "' declares " + std::to_string(need) +
                  " bytes of scratch (its scratch()), but its launch gives it " + std::to_string(s.scratch_bytes) +
                  " (leave Shape::scratch_bytes 0 to take the kernel's)");
  } else {
    (void)kernel;
  }
  return s;
}
}  // namespace detail

namespace detail {
// The ways a translation unit runs tile kernels. Each backend names its own in CMake
// (cmake/TilekitBackends.cmake), which lists them all in tilekit/config.hpp.
enum class Executor { none, host, host_threads, kokkos, cuda, hip };

inline Executor executor_of(const std::string& backend) {
#define TILEKIT_TILE_EXECUTOR_OF(name, executor) \
  if (backend == #name) return Executor::executor;
  TILEKIT_TILE_EXECUTORS(TILEKIT_TILE_EXECUTOR_OF)
#undef TILEKIT_TILE_EXECUTOR_OF
  return Executor::none;
}
}  // namespace detail

// Whether this translation unit can launch tile kernels on `backend`: the host backends from
// every translation unit (their executors are libtilekit's), the others from one compiled for them.
inline bool can_launch(const std::string& backend) {
  switch (detail::executor_of(backend)) {
    case detail::Executor::host:
    case detail::Executor::host_threads:
      return true;
    case detail::Executor::kokkos:
      return TILEKIT_TILE_HAS_KOKKOS;
    case detail::Executor::cuda:
#if defined(__CUDACC__) && !defined(__HIPCC__)
      return true;
#else
      return false;
#endif
    case detail::Executor::hip:
#if defined(__HIPCC__)
      return true;
#else
      return false;
#endif
    case detail::Executor::none:
      break;
  }
  return false;
}

// The compiled backends this translation unit can launch on, for tile::compare (compare.hpp).
inline std::vector<std::string> launchable_backends() {
  std::vector<std::string> out;
  for (const std::string& b : compiled_backends())
    if (can_launch(b)) out.push_back(b);
  return out;
}

// tile::compare (compare.hpp) on the backends this translation unit can launch on.
inline std::vector<Row> compare(const Study& study, const Setup& setup) {
  return ::tilekit::tile::compare(study, setup, launchable_backends());
}

namespace detail {
inline void check_shape(Backend& be, const Shape& s) {
  const std::string k = std::string("tile kernel '") + s.name + "'";
  if (s.tiles_x < 0 || s.tiles_y < 0)
    throw Error(k + ": negative tile grid " + std::to_string(s.tiles_x) + " x " + std::to_string(s.tiles_y));
  if (s.tiles_x > 0 && s.tiles_y > LLONG_MAX / s.tiles_x)
    throw Error(k + ": tile grid " + std::to_string(s.tiles_x) + " x " + std::to_string(s.tiles_y) + " overflows");
  if (s.lanes.x < 1 || s.lanes.y < 1)
    throw Error(k + ": a tile needs at least one lane (got " + std::to_string(s.lanes.x) + " x " +
                std::to_string(s.lanes.y) + ")");
  if (s.constant_bytes > kMaxConstantBytes || (s.constant_bytes > 0 && !s.constants))
    throw Error(k + ": " + std::to_string(s.constant_bytes) + " bytes of constants (at most " +
                std::to_string(kMaxConstantBytes) + ", from a non-null pointer)");
  if (s.lanes.x > INT_MAX / s.lanes.y)
    throw Error(k + ": " + std::to_string(s.lanes.x) + " x " + std::to_string(s.lanes.y) + " lanes overflow");
  if (!be.available()) throw Error("backend '" + be.name() + "' is unavailable: " + be.unavailable_reason());
  const DeviceInfo& d = be.info();
  if (s.scratch_bytes > d.scratch_bytes)
    throw Error(k + " needs " + std::to_string(s.scratch_bytes) + " bytes of scratch per tile, but backend '" +
                be.name() + "' offers " + std::to_string(d.scratch_bytes) + " bytes (" +
                (d.kind == DeviceKind::gpu ? "shared memory per block" : "the cache level tiles target") + ")");
  if (d.max_tile_lanes > 0 && s.lanes.count() > d.max_tile_lanes)
    throw Error(k + " has " + std::to_string(s.lanes.count()) + " lanes per tile, but backend '" + be.name() +
                "' runs at most " + std::to_string(d.max_tile_lanes) + " (threads per block)");
}
}  // namespace detail

// Runs kernel on every tile of s on backend be: on be's stream or queue, after the work
// tilekit already enqueued there (asynchronous on GPU backends, like tilekit's operations:
// Backend::synchronize() or a Matrix download waits). Pointers in the kernel must be be's
// memory (tilekit::Matrix<T>::data() of a matrix on be). Throws tilekit::Error, before
// anything runs, for a shape the backend cannot run or a backend this translation unit was
// not compiled for.
template <class K>
void launch(Backend& be, const Shape& shape, const K& kernel) {
  const Shape s = detail::kernel_shape(shape, kernel);
  detail::check_shape(be, s);
  detail::check_fixed_lanes<K>(s);
  if (s.tiles() == 0) return;
  const std::lock_guard<std::recursive_mutex> lock(be.call_mutex());  // as tilekit's own calls
  const std::string& name = be.name();
  if (!can_launch(name))
    throw Error(std::string("tile kernel '") + s.name + "' cannot run on backend '" + name +
                "': this translation unit was not compiled for it (kokkos: Kokkos with TILEKIT_TILE_WITH_KOKKOS; "
                "cuda: nvcc; hip: hipcc). A launch in an inline function that translation units compiled "
                "differently share runs whichever copy of the function the linker kept: give a GPU or "
                "Kokkos launch a function of its own in the file compiled for it (docs/tile-kernels.md)");
  switch (detail::executor_of(name)) {
    case detail::Executor::host:
    case detail::Executor::host_threads:
      if constexpr (detail::DeviceOnly<K>::value) {
        detail::throw_device_only<K>(s, name);
      } else if (detail::executor_of(name) == detail::Executor::host_threads) {
        return run_host(s, kernel, be.info().compute_units);
      } else {
#if defined(TILEKIT_TILE_CHECK)
        return run_checked(s, kernel);
#else
        return run_host(s, kernel, 1);
#endif
      }
      return;
    case detail::Executor::kokkos:
#if TILEKIT_TILE_HAS_KOKKOS
      if constexpr (detail::DeviceOnly<K>::value && !detail::kokkos_gpu_teams<K>)
        detail::throw_device_only<K>(s, name);
      else
        return run_kokkos(s, kernel);
#endif
      return;
    case detail::Executor::cuda:
    case detail::Executor::hip:
#if defined(__CUDACC__) || defined(__HIPCC__)
      return run_gpu(be.native_queue(), s, kernel);
#endif
      return;
    case detail::Executor::none:
      return;  // can_launch refused it above
  }
}

// Runs kernel under the checking executor (check.hpp) on the calling thread: host memory only.
// Throws tilekit::Error at the first race, uninitialised read or misplaced barrier.
template <class K>
void check(const Shape& shape, const K& kernel) {
  const Shape s = detail::kernel_shape(shape, kernel);
  detail::check_fixed_lanes<K>(s);
  if (s.tiles() == 0) return;
  if constexpr (detail::DeviceOnly<K>::value)
    detail::throw_device_only<K>(s, "check");
  else
    run_checked(s, kernel);
}

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile
