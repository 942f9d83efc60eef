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
// Which backends a kernel runs on depends on how its translation unit is compiled: serial
// with a host compiler; openmp with OpenMP (-fopenmp); kokkos with Kokkos
// (TILEKIT_TILE_WITH_KOKKOS, or Kokkos_Core.hpp included first); cuda when nvcc compiles it;
// hip when hipcc does (a GPU compiler's translation unit launches on its GPU only: compile the
// same source with the host compiler too for the CPU backends, as cmake/TilekitTile.cmake does).
#pragma once

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "tilekit/backend.hpp"
#include "tilekit/config.hpp"
#include "tilekit/tile/check.hpp"
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

// Whether this translation unit was compiled with executor e (see above).
inline bool compiled_with(Executor e) {
  switch (e) {
#if !defined(__CUDACC__) && !defined(__HIPCC__)  // a GPU compiler's translation unit launches on its GPU
    case Executor::host:
      return true;
#if defined(_OPENMP)
    case Executor::host_threads:
      return true;
#endif
#endif
#if TILEKIT_TILE_HAS_KOKKOS
    case Executor::kokkos:
      return true;
#endif
#if defined(__CUDACC__) && !defined(__HIPCC__)
    case Executor::cuda:
      return true;
#endif
#if defined(__HIPCC__)
    case Executor::hip:
      return true;
#endif
    default:
      return false;
  }
}
}  // namespace detail

// Whether this translation unit can launch tile kernels on `backend` (see above).
inline bool can_launch(const std::string& backend) { return detail::compiled_with(detail::executor_of(backend)); }

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
void launch(Backend& be, const Shape& s, const K& kernel) {
  detail::check_shape(be, s);
  detail::check_fixed_lanes<K>(s);
  if (s.tiles() == 0) return;
  const std::lock_guard<std::recursive_mutex> lock(be.call_mutex());  // as tilekit's own calls
  const std::string& name = be.name();
  if (!can_launch(name))
    throw Error(std::string("tile kernel '") + s.name + "' cannot run on backend '" + name +
                "': this translation unit was not compiled for it (openmp: -fopenmp; kokkos: Kokkos with "
                "TILEKIT_TILE_WITH_KOKKOS; cuda: nvcc; hip: hipcc)");
  switch (detail::executor_of(name)) {
#if !defined(__CUDACC__) && !defined(__HIPCC__)
    case detail::Executor::host:
#if defined(TILEKIT_TILE_CHECK)
      return run_checked(s, kernel);
#else
      return run_host(s, kernel, 1);
#endif
    case detail::Executor::host_threads:
      return run_host(s, kernel, be.info().compute_units);
#endif
#if TILEKIT_TILE_HAS_KOKKOS
    case detail::Executor::kokkos:
      return run_kokkos(s, kernel);
#endif
#if defined(__CUDACC__) || defined(__HIPCC__)
    case detail::Executor::cuda:
    case detail::Executor::hip:
      return run_gpu(be.native_queue(), s, kernel);
#endif
    default:
      return;  // can_launch refused it above
  }
}

// Runs kernel under the checking executor (check.hpp) on the calling thread: host memory only.
// Throws tilekit::Error at the first race, uninitialised read or misplaced barrier.
template <class K>
void check(const Shape& s, const K& kernel) {
  detail::check_fixed_lanes<K>(s);
  if (s.tiles() == 0) return;
  run_checked(s, kernel);
}

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile
