// The CPU executor of tile kernels (serial and openmp backends, and Kokkos' host spaces): one
// OS thread runs a whole tile; each phase is a loop over the tile's lanes, the vectorisable
// inner loop; a barrier is the end of that loop, so it costs nothing. Scratch is a per-thread
// buffer the size the launch declares (it stays in L1/L2 while the tile is computed), and
// lane state an array of one value per lane in a per-thread arena.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tilekit/tile/core.hpp"
#include "tilekit/types.hpp"

namespace tilekit::detail {
// Runs body(ctx, first, last) on `threads` OS threads, each once, on contiguous ranges that
// together cover [0, tiles) (as OpenMP's static schedule shares them out). libtilekit's own
// code, built with OpenMP when the openmp backend is: a translation unit launches tile kernels on
// the openmp backend whether or not it is compiled with OpenMP itself, so every copy of a
// user's inline function that launches one (a .cpp and a .cu file of one program each have
// theirs; the linker keeps one) runs on the host backends alike.
void tile_host_parallel(index_t tiles, int threads, void (*body)(void* ctx, index_t first, index_t last),
                        void* ctx);
}  // namespace tilekit::detail

// The lane loops ask clang to vectorise (TILEKIT_TILE_SIMD); a phase that cannot be (an atomic
// update, a call) is no error of the kernel's.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

// Per-lane state on a CPU: value i of lane l at p[i * lanes + l.id], so that a phase's lane
// loop walks it with unit stride.
template <class T, int N = 1>
struct HostLaneState {
  using value_type = T;
  T* p;
  int lanes;
  T& operator[](const Lane& l) const { return p[l.id]; }
  T& operator()(const Lane& l, int i) const { return p[i * lanes + l.id]; }
};

namespace detail {

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using AlignedBytes = std::unique_ptr<unsigned char, FreeDeleter>;
inline AlignedBytes aligned_bytes(std::size_t bytes) {
  void* p = std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64));
  if (!p) throw Error("tile kernel: cannot allocate " + std::to_string(bytes) + " bytes of host scratch");
  return AlignedBytes(static_cast<unsigned char*>(p));
}

// A bump allocator for lane state, reset at every tile. It grows in chunks and never moves
// what it handed out, so lane state taken early in a tile stays valid.
class Arena {
 public:
  void reset() {
    chunk_ = 0;
    used_ = 0;
  }
  void* take(std::size_t bytes) {
    bytes = align_scratch(bytes);
    while (chunk_ < chunks_.size() && used_ + bytes > chunks_[chunk_].size) {
      ++chunk_;
      used_ = 0;
    }
    if (chunk_ == chunks_.size()) chunks_.push_back({aligned_bytes(std::max<std::size_t>(bytes, 1 << 16)),
                                                     std::max<std::size_t>(bytes, 1 << 16)});
    void* p = chunks_[chunk_].p.get() + used_;
    used_ += bytes;
    return p;
  }

 private:
  struct Chunk {
    AlignedBytes p;
    std::size_t size;
  };
  std::vector<Chunk> chunks_;
  std::size_t chunk_ = 0, used_ = 0;
};

// What one CPU thread keeps between tiles and between launches.
struct HostThreadState {
  Arena arena;
  AlignedBytes scratch;
  std::size_t scratch_size = 0;
  unsigned char* scratch_for(std::size_t bytes) {
    if (bytes > scratch_size || !scratch) {
      scratch = aligned_bytes(bytes);
      scratch_size = bytes;
    }
    return scratch.get();
  }
};
inline HostThreadState& host_thread_state() {
  thread_local HostThreadState s;
  return s;
}

// An atomic update of scratch on a CPU: one thread runs the whole tile, so a plain
// read-modify-write is one. But the lane loop is marked free of dependences between lanes
// (TILEKIT_TILE_SIMD), and a vector gather/scatter would lose the updates of lanes that hit the
// same element: the empty asm hides the element's offset, which keeps the loop scalar (no
// compiler vectorises an asm) while the update stays one instruction (x86: add to memory, the
// offset in its address as in a plain loop's `++bins[b]`). Hiding the pointer instead costs an
// address computation per update (a byte histogram took 1.04-1.12x the plain loop's time); a
// volatile access splits the update into a load, an add and a store (10%).
template <AtomicOp op, class T>
inline T host_scratch_atomic(T* base, std::size_t offset, T v) {
  static_assert(kAtomicSupported<op, T>, "tile atomics: add on int, unsigned, long long, unsigned long long, "
                                         "float, double; min and max on the integer types");
#if defined(__GNUC__) || defined(__clang__)
  asm("" : "+r"(offset));
#else
  volatile T* q = base + offset;
  const T old = *q;
  *q = apply_atomic<op>(old, v);
  return old;
#endif
  T* p = base + offset;
  const T old = *p;
  *p = apply_atomic<op>(old, v);
  return old;
}
// An atomic update of the backend's memory on a CPU: other threads run other tiles.
template <AtomicOp op, class T>
inline T host_global_atomic(T* p, T v, bool threads) {
  static_assert(kAtomicSupported<op, T>, "tile atomics: add on int, unsigned, long long, unsigned long long, "
                                         "float, double; min and max on the integer types");
  if (!threads) {
    const T old = *p;
    *p = apply_atomic<op>(old, v);
    return old;
  }
  if constexpr (op == AtomicOp::add && kAtomicInt<T>) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  } else {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    for (;;) {
      T want = apply_atomic<op>(old, v);
      if (op != AtomicOp::add && want == old) return old;  // min/max that changes nothing
      if (__atomic_compare_exchange(p, &old, &want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return old;
    }
  }
}

// The collectives of a CPU tile: the lanes' values, in lane order.
template <class Op, class State>
inline typename State::value_type host_reduce(const State& x, int lanes, Op op) {
  using T = typename State::value_type;
  T r = x.p[0];
  for (int i = 1; i < lanes; ++i) r = op(r, x.p[i]);
  return r;
}
template <bool kInclusive, class Op, class In, class Out>
inline typename In::value_type host_scan(const In& x, const Out& y, int lanes, Op op) {
  using T = typename In::value_type;
  T run = Op::template identity<T>();
  for (int i = 0; i < lanes; ++i) {
    const T v = x.p[i];  // before y's write: x and y may be one lane state
    const T next = i == 0 ? v : op(run, v);
    y.p[i] = kInclusive ? next : run;
    run = next;
  }
  return run;
}

[[noreturn]] inline void throw_scratch_overflow(const char* kernel, std::size_t want, std::size_t have) {
  throw Error(std::string("tile kernel '") + kernel + "' carves " + std::to_string(want) +
              " bytes of scratch, but its launch declared " + std::to_string(have) +
              " (Shape::scratch_bytes: sum tile::scratch_bytes<T>() of every array)");
}

// Columns [lo, hi) of a scratch row that lie inside the source's columns, for a row of `cols`
// elements starting at global column col0.
inline void inside_columns(index_t col0, int cols, index_t src_cols, int* lo, int* hi) {
  *lo = int(std::clamp<index_t>(-col0, 0, cols));
  *hi = int(std::clamp<index_t>(src_cols - col0, *lo, cols));
}

}  // namespace detail

// One tile as a CPU thread runs it.
class HostTile {
 public:
  // threads: whether other threads run other tiles at the same time (atomics on the backend's
  // memory must then be real ones).
  HostTile(const Shape& s, index_t tile, unsigned char* scratch, detail::Arena& arena, bool threads = false)
      : s_(s), tx_(tile % s.tiles_x), ty_(tile / s.tiles_x), scratch_(scratch), arena_(arena), threads_(threads) {
    arena_.reset();
  }
  index_t x() const { return tx_; }
  index_t y() const { return ty_; }
  Dim2 lanes() const { return s_.lanes; }

  template <class F>
  void for_lanes(const F& f) const {
    detail::host_lane_loop(s_.lanes, s_.lanes, f);
  }
  template <class F>
  void for_lanes(Dim2 upto, const F& f) const {
    detail::host_lane_loop(s_.lanes, detail::clamp_lanes(upto, s_.lanes), f);
  }
  template <class F>
  void for_each(int n, const F& f) const {
    TILEKIT_TILE_SIMD
    for (int i = 0; i < n; ++i) f(i);
  }
  // Rows in groups of kRowGroup, column by column inside a group. A phase that writes row r of
  // a matrix (a transpose's output) then writes kRowGroup of its lines at once, and their misses
  // overlap; row by row, the store buffer fills with the stores to one row's few missing lines
  // and the thread waits for them one row at a time. 4: the rows of a power-of-two matrix all
  // fall into one L1 set, which holds 8 lines, some of them the scratch block's; on Zen 4 a
  // transpose ran 1.2x faster with 4 than with 8 and 2x faster than with 16 (which thrashes).
  template <class F>
  void for_each(int rows, int cols, const F& f) const {
    int r0 = 0;
    for (; r0 + kRowGroup <= rows; r0 += kRowGroup)
      for (int c = 0; c < cols; ++c) {
        TILEKIT_TILE_UNROLL
        for (int r = r0; r < r0 + kRowGroup; ++r) f(r, c);
      }
    for (int c = 0; c < cols; ++c)
      for (int r = r0; r < rows; ++r) f(r, c);
  }
  void barrier() const {}

  template <class T, int kLd>
  ScratchView<T, kLd> scratch_view(int rows, int cols, int ld) {
    const std::size_t bytes = align_scratch(std::size_t(rows) * std::size_t(ld) * sizeof(T));
    if (used_ + bytes > s_.scratch_bytes) detail::throw_scratch_overflow(s_.name, used_ + bytes, s_.scratch_bytes);
    T* p = reinterpret_cast<T*>(scratch_ + used_);
    used_ += bytes;
    return {p, rows, cols, ld};
  }
  template <class T, int N>
  HostLaneState<T, N> make_lane_state() {
    const int n = s_.lanes.count();
    return {static_cast<T*>(arena_.take(sizeof(T) * std::size_t(N) * std::size_t(n))), n};
  }
  template <class T>
  const T* constants_as() const {
    return static_cast<const T*>(s_.constants);
  }

  // dst = the dst.rows x dst.cols block of src at (row0, col0), zero outside src.
  template <class T, int kLd>
  void load(const ScratchView<T, kLd>& dst, const GlobalView<T>& src, index_t row0, index_t col0) const {
    int lo, hi;
    detail::inside_columns(col0, dst.cols, src.cols, &lo, &hi);
    for (int r = 0; r < dst.rows; ++r) {
      T* out = &dst(r, 0);
      const index_t gr = row0 + r;
      if (gr < 0 || gr >= src.rows) {
        std::fill(out, out + dst.cols, T(0));
        continue;
      }
      const T* in = src.data + gr * src.ld + col0;
      std::fill(out, out + lo, T(0));
      TILEKIT_TILE_SIMD
      for (int c = lo; c < hi; ++c) out[c] = in[c];
      std::fill(out + hi, out + dst.cols, T(0));
    }
  }
  template <class T, int kLd>
  BlockWalk<ScratchView<T, kLd>, T> walk(const ScratchView<T, kLd>& dst, const GlobalView<T>& src, index_t row0,
                                         index_t col0, index_t step_rows, index_t step_cols) const {
    return {dst, src, row0, col0, step_rows, step_cols};
  }
  template <class T, int kLd>
  void load(const BlockWalk<ScratchView<T, kLd>, T>& w) const {
    load(w.dst, w.src, w.row, w.col);
  }

  template <AtomicOp op, class T, int kLd>
  T scratch_atomic(const ScratchView<T, kLd>& s, int r, int c, T v) const {
    // The element's offset as s(r, c) computes it (never negative for an element of s).
    return detail::host_scratch_atomic<op>(s.data, std::size_t(unsigned(r * s.ld() + c)), v);
  }
  template <AtomicOp op, class T>
  T global_atomic(T* p, T v) const {
    return detail::host_global_atomic<op>(p, v, threads_);
  }
  template <class Op, class State>
  typename State::value_type reduce(State& x, Op op) const {
    return detail::host_reduce(x, s_.lanes.count(), op);
  }
  template <class Op, class State, class F>
  void reduce_to_lane0(State& x, Op op, const F& f) const {
    f(detail::host_reduce(x, s_.lanes.count(), op));
  }
  template <bool kInclusive, class Op, class In, class Out>
  typename In::value_type scan(In& x, Out& y, Op op) const {
    return detail::host_scan<kInclusive>(x, y, s_.lanes.count(), op);
  }

 private:
  const Shape& s_;
  index_t tx_, ty_;
  unsigned char* scratch_;
  std::size_t used_ = 0;
  detail::Arena& arena_;
  bool threads_;
  static constexpr int kRowGroup = 4;
};

// Runs every tile of s on `threads` OS threads (1: the calling thread, in order). Tiles are
// independent, so any schedule is correct; static, so each thread's tiles are contiguous. The
// threads are libtilekit's (detail::tile_host_parallel); each runs its tiles through this
// translation unit's code.
template <class K>
void run_host(const Shape& s, const K& kernel, int threads) {
#if defined(__CUDA_ARCH__)
  // nvcc's device pass: host code, never run there. Not instantiating the kernel for a CPU tile
  // here keeps nvcc from compiling a device copy of it (whose calls of the CPU tile's host
  // functions it would warn about).
  (void)s, (void)kernel, (void)threads;
#else
  if (threads <= 1 || s.tiles() <= 1) {
    detail::HostThreadState& st = detail::host_thread_state();
    unsigned char* scratch = st.scratch_for(s.scratch_bytes);
    for (index_t t = 0; t < s.tiles(); ++t) {
      HostTile tile(s, t, scratch, st.arena);
      kernel(tile);
    }
    return;
  }
  struct Run {
    const Shape& s;
    const K& kernel;
    std::mutex mu;
    std::exception_ptr error;
    std::atomic<bool> failed{false};
  } run{s, kernel, {}, {}, {}};
  const auto body = [](void* ctx, index_t first, index_t last) {
    Run& r = *static_cast<Run*>(ctx);
    try {
      detail::HostThreadState& st = detail::host_thread_state();
      unsigned char* scratch = st.scratch_for(r.s.scratch_bytes);
      for (index_t t = first; t < last && !r.failed.load(std::memory_order_relaxed); ++t) {
        HostTile tile(r.s, t, scratch, st.arena, true);
        r.kernel(tile);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(r.mu);
      if (!r.error) r.error = std::current_exception();
      r.failed = true;
    }
  };
  ::tilekit::detail::tile_host_parallel(s.tiles(), threads, body, &run);
  if (run.error) std::rethrow_exception(run.error);
#endif
}

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
