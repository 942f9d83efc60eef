// The checking executor: runs a tile kernel on the CPU the way a GPU is allowed to run it, and
// fails loudly where a GPU would only sometimes be wrong.
//   - tiles run in a shuffled order (a tile that depends on another is caught);
//   - every phase runs its lanes (and for_each items) in a fresh shuffled order;
//   - scratch is poisoned (all bits set: NaN for floating point) when a tile starts, and lane
//     state too, so a read of anything not written in this tile shows;
//   - every scratch access is watched: a read of scratch no lane wrote since the tile started,
//     a read of what ANOTHER lane wrote in the same phase (a missing barrier between a write
//     and a read), a write over what another lane read or wrote in the same phase (a missing
//     barrier before a write), an index outside a scratch array, scratch touched outside a
//     phase, and a barrier called inside a phase (a divergent barrier on a GPU) each throw
//     tilekit::Error naming the kernel, the tile, the lanes, the array and the element.
// A lane's own reads and writes never conflict: on a GPU they are one thread's, in order.
// Atomic updates (tile::atomic_add/min/max on scratch) of one element by several lanes in one
// phase are legal; a plain read or write of an element another lane updates atomically in the
// same phase (or an atomic update of one another lane reads or writes plainly) is a race.
// Collectives (tile::reduce, the scans) are called where a barrier could be, and are one.
// It is slow (every access is checked): run it in tests, on small problems.
#pragma once

#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tilekit/tile/host.hpp"

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

namespace detail {

class Checker {
 public:
  Checker(const Shape& s, std::uint64_t seed) : s_(s), rng_(seed), seed_(seed) {}

  void start_tile(index_t tx, index_t ty, unsigned char* scratch) {
    tx_ = tx;
    ty_ = ty;
    base_ = scratch;
    epoch_ = 0;
    arrays_.clear();
    std::memset(scratch, 0xFF, s_.scratch_bytes);
    shadow_.assign(s_.scratch_bytes, Shadow{});
  }
  void barrier() {
    if (lane_ != kOutside) fail("barrier() called inside a phase (lane " + std::to_string(lane_) +
                                "): on a GPU a barrier not reached by every thread of the block hangs or corrupts");
    ++epoch_;
  }
  // Runs body(i) for i in [0, n) in a shuffled order, as lane lane_of(i).
  template <class F, class L>
  void phase(int n, const L& lane_of, const F& body) {
    if (lane_ != kOutside) fail("a phase (for_lanes/for_each/load) started inside another phase");
    std::vector<int> order(std::size_t(n < 0 ? 0 : n));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    for (int i : order) {
      lane_ = lane_of(i);
      body(i);
    }
    lane_ = kOutside;
  }
  void note_array(std::size_t offset, int rows, int cols, int ld, std::size_t elem) {
    arrays_.push_back({offset, rows, cols, ld, elem});
  }
  void index(int r, int c, int rows, int cols) const {
    if (r < 0 || r >= rows || c < 0 || c >= cols)
      fail("scratch index (" + std::to_string(r) + ", " + std::to_string(c) + ") outside a " + std::to_string(rows) +
           " x " + std::to_string(cols) + " array");
  }
  void on_read(const void* p, std::size_t n) {
    const std::size_t off = offset(p, "read");
    for (std::size_t b = off; b < off + n; ++b) {
      Shadow& s = shadow_[b];
      if (s.write_epoch < 0) fail("lane " + std::to_string(lane_) + " reads " + where(off) +
                                  ", which no lane wrote in this tile (uninitialised scratch)");
      if (s.write_epoch == epoch_ && s.writer != lane_)
        fail("missing barrier: lane " + std::to_string(lane_) + " reads " + where(off) + ", written by lane " +
             std::to_string(s.writer) + " in the same phase (lanes that accumulate into one element: "
                                        "tile::atomic_add)");
      if (s.atomic_epoch == epoch_ && s.atomic != lane_)
        fail("race: lane " + std::to_string(lane_) + " reads " + where(off) + ", which " + lanes(s.atomic) +
             " updates atomically in the same phase (a barrier between them, or an atomic read)");
      s.reader = (s.read_epoch == epoch_ && s.reader != lane_) ? kMany : lane_;
      s.read_epoch = epoch_;
    }
  }
  // An atomic read-modify-write (tile::atomic_add/min/max) of scratch.
  void on_atomic(const void* p, std::size_t n) {
    const std::size_t off = offset(p, "atomic update");
    for (std::size_t b = off; b < off + n; ++b) {
      Shadow& s = shadow_[b];
      if (s.write_epoch < 0 && s.atomic_epoch < 0)
        fail("lane " + std::to_string(lane_) + " updates " + where(off) +
             " atomically, but no lane wrote it in this tile (uninitialised scratch)");
      if (s.write_epoch == epoch_ && s.writer != lane_)
        fail("race: lane " + std::to_string(lane_) + " updates " + where(off) + " atomically, which lane " +
             std::to_string(s.writer) + " writes plainly in the same phase");
      if (s.read_epoch == epoch_ && s.reader != lane_)
        fail("race: lane " + std::to_string(lane_) + " updates " + where(off) + " atomically, which " +
             lanes(s.reader) + " reads plainly in the same phase");
      s.atomic = (s.atomic_epoch == epoch_ && s.atomic != lane_) ? kMany : lane_;
      s.atomic_epoch = epoch_;
    }
  }
  bool inside_phase() const { return lane_ != kOutside; }
  void on_write(const void* p, std::size_t n) {
    const std::size_t off = offset(p, "write");
    for (std::size_t b = off; b < off + n; ++b) {
      Shadow& s = shadow_[b];
      if (s.read_epoch == epoch_ && s.reader != lane_)
        fail("missing barrier: lane " + std::to_string(lane_) + " overwrites " + where(off) + ", read by " +
             (s.reader == kMany ? std::string("several lanes") : "lane " + std::to_string(s.reader)) +
             " in the same phase");
      if (s.write_epoch == epoch_ && s.writer != lane_)
        fail("lanes " + std::to_string(s.writer) + " and " + std::to_string(lane_) + " both write " + where(off) +
             " in the same phase (lanes that accumulate into one element: tile::atomic_add)");
      if (s.atomic_epoch == epoch_ && s.atomic != lane_)
        fail("race: lane " + std::to_string(lane_) + " writes " + where(off) + ", which " + lanes(s.atomic) +
             " updates atomically in the same phase");
      s.writer = lane_;
      s.write_epoch = epoch_;
    }
  }
  std::mt19937_64& rng() { return rng_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(std::string("tile check: kernel '") + s_.name + "', tile (" + std::to_string(tx_) + ", " +
                std::to_string(ty_) + "), phase " + std::to_string(epoch_) + ": " + what +
                " [TILEKIT_TILE_CHECK_SEED=" + std::to_string(seed_) + " replays this order]");
  }

 private:
  static constexpr int kOutside = -1, kMany = -2;
  struct Shadow {
    int writer = kOutside, write_epoch = -1, reader = kOutside, read_epoch = -1, atomic = kOutside, atomic_epoch = -1;
  };
  static std::string lanes(int who) { return who == kMany ? std::string("several lanes") : "lane " + std::to_string(who); }
  struct Array {
    std::size_t offset;
    int rows, cols, ld;
    std::size_t elem;
  };
  std::size_t offset(const void* p, const char* what) const {
    if (lane_ == kOutside)
      fail(std::string("scratch ") + what + " outside a phase: on a GPU every thread of the block would do it; "
                                            "put it inside for_lanes/for_each");
    return std::size_t(static_cast<const unsigned char*>(p) - base_);
  }
  std::string where(std::size_t off) const {
    for (std::size_t a = arrays_.size(); a-- > 0;) {
      const Array& r = arrays_[a];
      if (off >= r.offset) {
        const std::size_t e = (off - r.offset) / r.elem;
        return "scratch array " + std::to_string(a) + " element (" + std::to_string(e / std::size_t(r.ld)) + ", " +
               std::to_string(e % std::size_t(r.ld)) + ")";
      }
    }
    return "scratch byte " + std::to_string(off);
  }

  const Shape& s_;
  std::mt19937_64 rng_;
  std::uint64_t seed_;
  index_t tx_ = 0, ty_ = 0;
  unsigned char* base_ = nullptr;
  int epoch_ = 0, lane_ = kOutside;
  std::vector<Shadow> shadow_;
  std::vector<Array> arrays_;
};

}  // namespace detail

// A scratch element under watch: reads and writes go through the checker.
template <class T>
class CheckedRef {
 public:
  CheckedRef(detail::Checker* ck, T* p) : ck_(ck), p_(p) {}
  operator T() const {
    ck_->on_read(p_, sizeof(T));
    return *p_;
  }
  CheckedRef& operator=(T v) {
    ck_->on_write(p_, sizeof(T));
    *p_ = v;
    return *this;
  }
  CheckedRef& operator=(const CheckedRef& o) { return *this = T(o); }
  CheckedRef& operator+=(T v) { return *this = T(*this) + v; }
  CheckedRef& operator-=(T v) { return *this = T(*this) - v; }
  CheckedRef& operator*=(T v) { return *this = T(*this) * v; }

 private:
  detail::Checker* ck_;
  T* p_;
};

template <class T, int kLd = 0>
struct CheckedView {
  using value_type = T;
  T* data;
  int rows, cols, ld_;
  detail::Checker* ck;
  int ld() const { return kLd > 0 ? kLd : ld_; }
  CheckedRef<T> operator()(int r, int c) const {
    ck->index(r, c, rows, cols);
    return {ck, data + r * ld() + c};
  }
  CheckedView rows_from(int r0) const {
    ck->index(r0, 0, rows, cols);
    return {data + r0 * ld(), rows - r0, cols, ld_, ck};
  }
};

class CheckedTile {
 public:
  CheckedTile(const Shape& s, index_t tile, unsigned char* scratch, detail::Arena& arena, detail::Checker& ck)
      : s_(s), tx_(tile % s.tiles_x), ty_(tile / s.tiles_x), scratch_(scratch), arena_(arena), ck_(ck) {
    arena_.reset();
    ck_.start_tile(tx_, ty_, scratch);
  }
  index_t x() const { return tx_; }
  index_t y() const { return ty_; }
  Dim2 lanes() const { return s_.lanes; }

  template <class F>
  void for_lanes(const F& f) {
    for_lanes(s_.lanes, f);
  }
  template <class F>
  void for_lanes(Dim2 upto, const F& f) {
    const Dim2 u = detail::clamp_lanes(upto, s_.lanes);
    const int lx = s_.lanes.x;
    ck_.phase(
        u.count(), [&](int i) { return (i / u.x) * lx + i % u.x; },
        [&](int i) { f(Lane{i % u.x, i / u.x, (i / u.x) * lx + i % u.x}); });
  }
  // Item i is lane i % lanes' on a GPU (gpu.hpp): the checker attributes it the same way.
  template <class F>
  void for_each(int n, const F& f) {
    const int nl = s_.lanes.count();
    ck_.phase(n, [nl](int i) { return i % nl; }, f);
  }
  template <class F>
  void for_each(int rows, int cols, const F& f) {
    const int lx = s_.lanes.x, ly = s_.lanes.y;
    ck_.phase(
        rows * cols, [&](int i) { return (i / cols % ly) * lx + (i % cols) % lx; },
        [&](int i) { f(i / cols, i % cols); });
  }
  void barrier() { ck_.barrier(); }

  template <class T, int kLd>
  CheckedView<T, kLd> scratch_view(int rows, int cols, int ld) {
    const std::size_t bytes = align_scratch(std::size_t(rows) * std::size_t(ld) * sizeof(T));
    if (used_ + bytes > s_.scratch_bytes) detail::throw_scratch_overflow(s_.name, used_ + bytes, s_.scratch_bytes);
    if (kLd > 0 && kLd != ld) ck_.fail("scratch array with a compile-time row length that differs from its ld");
    ck_.note_array(used_, rows, cols, ld, sizeof(T));
    T* p = reinterpret_cast<T*>(scratch_ + used_);
    used_ += bytes;
    return {p, rows, cols, ld, &ck_};
  }
  template <class T, int N>
  HostLaneState<T, N> make_lane_state() {
    const int n = s_.lanes.count();
    T* p = static_cast<T*>(arena_.take(sizeof(T) * std::size_t(N) * std::size_t(n)));
    std::memset(static_cast<void*>(p), 0xFF, sizeof(T) * std::size_t(N) * std::size_t(n));
    return {p, n};
  }
  template <class T>
  const T* constants_as() const {
    return static_cast<const T*>(s_.constants);
  }
  template <class T, int kLd>
  void load(const CheckedView<T, kLd>& dst, const GlobalView<T>& src, index_t row0, index_t col0) {
    for_each(dst.rows * dst.cols, [&](int q) {
      const int r = q / dst.cols, c = q % dst.cols;
      const index_t gr = row0 + r, gc = col0 + c;
      const bool in = gr >= 0 && gr < src.rows && gc >= 0 && gc < src.cols;
      dst(r, c) = in ? src.data[gr * src.ld + gc] : T(0);
    });
  }
  template <class T, int kLd>
  BlockWalk<CheckedView<T, kLd>, T> walk(const CheckedView<T, kLd>& dst, const GlobalView<T>& src, index_t row0,
                                         index_t col0, index_t step_rows, index_t step_cols) {
    return {dst, src, row0, col0, step_rows, step_cols};
  }
  template <class T, int kLd>
  void load(const BlockWalk<CheckedView<T, kLd>, T>& w) {
    load(w.dst, w.src, w.row, w.col);
  }

  template <AtomicOp op, class T, int kLd>
  T scratch_atomic(const CheckedView<T, kLd>& s, int r, int c, T v) {
    static_assert(detail::kAtomicSupported<op, T>, "tile atomics: add on int, unsigned, long long, unsigned "
                                                   "long long, float, double; min and max on the integer types");
    s.ck->index(r, c, s.rows, s.cols);
    T* p = s.data + r * s.ld() + c;
    ck_.on_atomic(p, sizeof(T));
    const T old = *p;
    *p = detail::apply_atomic<op>(old, v);
    return old;
  }
  template <AtomicOp op, class T>
  T global_atomic(T* p, T v) {
    return detail::host_global_atomic<op>(p, v, false);
  }
  // A collective is called where a barrier could be (every lane of the tile takes part), and
  // is one: what lanes wrote to scratch before it, any lane reads after it.
  template <class Op, class State>
  typename State::value_type reduce(State& x, Op op) {
    collective("reduce");
    return detail::host_reduce(x, s_.lanes.count(), op);
  }
  template <class Op, class State, class F>
  void reduce_to_lane0(State& x, Op op, const F& f) {
    collective("reduce");
    const auto r = detail::host_reduce(x, s_.lanes.count(), op);
    ck_.phase(1, [](int) { return 0; }, [&](int) { f(r); });
  }
  template <bool kInclusive, class Op, class In, class Out>
  typename In::value_type scan(In& x, Out& y, Op op) {
    collective(kInclusive ? "inclusive_scan" : "exclusive_scan");
    return detail::host_scan<kInclusive>(x, y, s_.lanes.count(), op);
  }

 private:
  void collective(const char* what) {
    if (ck_.inside_phase())
      ck_.fail(std::string(what) + " called inside a phase: a collective is tile-uniform, like a barrier "
                                   "(every lane of the tile takes part)");
    ck_.barrier();
  }

  const Shape& s_;
  index_t tx_, ty_;
  unsigned char* scratch_;
  std::size_t used_ = 0;
  detail::Arena& arena_;
  detail::Checker& ck_;
};

// The seed of the shuffles: TILEKIT_TILE_CHECK_SEED when set (to replay a failure), else fixed.
inline std::uint64_t check_seed() {
  const char* e = std::getenv("TILEKIT_TILE_CHECK_SEED");
  return e && *e ? std::strtoull(e, nullptr, 10) : 20261123u;
}

// Runs every tile of s under the checker, on the calling thread, in a shuffled order.
template <class K>
void run_checked(const Shape& s, const K& kernel, std::uint64_t seed = check_seed()) {
#if defined(__CUDA_ARCH__)
  (void)s, (void)kernel, (void)seed;  // nvcc's device pass (see run_host)
#else
  detail::Checker ck(s, seed);
  detail::Arena arena;
  detail::AlignedBytes scratch = detail::aligned_bytes(s.scratch_bytes);
  std::vector<index_t> order(std::size_t(s.tiles()));
  std::iota(order.begin(), order.end(), index_t(0));
  std::shuffle(order.begin(), order.end(), ck.rng());
  for (index_t t : order) {
    CheckedTile tile(s, t, scratch.get(), arena, ck);
    kernel(tile);
  }
#endif
}

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile
