// The host-memory GEMM engine: C = alpha op(A) op(B) + beta C with A, B and C in the caller's
// (pageable, strided) host memory, computed on one or more accelerators in tiles of C, with the
// transfers overlapped with the compute. Plain C++ over a small Device interface, so that the
// tiling, the pipeline and the packing are tested without a GPU (tests/host_gemm_test.cpp drives
// it with a fake device whose streams run out of order); backends/gpu/host_gemm_gpu.cu is the
// CUDA/HIP device. docs/design/blas-gpu-staging.md explains the choices.
//
// Per device: C (its share of the tile grid) in tiles of tm x tn; the row panel of op(A) a tile
// needs (tm x k) and the column panel of op(B) (k x tn) are uploaded once and kept in device
// memory while it has room (least recently used panels go first when it has not); tiles run in a
// growing-square order, so that each tile after the first needs at most one new panel. Three
// streams: uploads (panels and, when beta != 0, C tiles), gemms, and downloads of C tiles; two C
// tile buffers, so the next tile's uploads and the previous tile's download run during a gemm.
// The host packs the caller's rows into a ring of pinned staging buffers (several threads: one
// thread's memcpy is slower than the DMA) and the DMA reads from there; transposed operands are
// uploaded as stored and transposed on the device.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tilekit/backend.hpp"
#include "tilekit/types.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tilekit::gpu::staging {

// One row of a pack or an unpack: the destination (a pinned staging buffer the DMA reads next, or
// the caller's C) is written with streaming stores, which skip the read a normal store makes of
// every destination line before it writes it (a third of a plain copy's memory traffic). The
// host's copies are the narrow stage of the whole pipeline (docs/design/blas-gpu-staging.md).
inline void copy_row(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  if (bytes >= 256) {
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
    std::memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
      const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
      const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
      const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
      const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d), x0);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), x1);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), x2);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), x3);
    }
    std::memcpy(d, s, bytes);
    _mm_sfence();  // streaming stores are weakly ordered: visible before the DMA is enqueued
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

// A fixed set of host threads that split a loop; the calling thread takes part.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < std::max(1, threads); ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  int size() const { return int(workers_.size()) + 1; }

  // fn(begin, end) over [0, n) in size() contiguous pieces; `bytes` is the work's size: below
  // a few hundred KiB the calling thread does it alone (waking threads costs more).
  void run(index_t n, std::size_t bytes, const std::function<void(index_t, index_t)>& fn) {
    if (n <= 0) return;
    const int parts = bytes < (std::size_t(256) << 10) ? 1 : int(std::min<index_t>(size(), n));
    if (parts == 1) return fn(0, n);
    {
      std::lock_guard<std::mutex> l(m_);
      fn_ = &fn;
      n_ = n;
      parts_ = parts;
      pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    try {
      fn(0, n / parts);
    } catch (...) {  // the workers still use fn: wait for them first
      std::lock_guard<std::mutex> l(m_);
      if (!error_) error_ = std::current_exception();
    }
    std::unique_lock<std::mutex> l(m_);
    done_.wait(l, [this] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  void work(int id) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(index_t, index_t)>* fn;
      index_t n;
      int parts;
      {
        std::unique_lock<std::mutex> l(m_);
        wake_.wait(l, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        fn = fn_;
        n = n_;
        parts = parts_;
      }
      if (id >= parts) continue;
      try {
        (*fn)(n * id / parts, n * (id + 1) / parts);
      } catch (...) {
        std::lock_guard<std::mutex> l(m_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> l(m_);
      if (--pending_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(index_t, index_t)>* fn_ = nullptr;
  index_t n_ = 0;
  int parts_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

enum class Stream { up = 0, compute = 1, down = 2 };

// One accelerator as the engine drives it, from one host thread at a time. Work on a stream runs
// in order; streams run concurrently with each other and with the host; events order them.
class Device {
 public:
  virtual ~Device() = default;
  // Around the work of one call on the thread that drives this device (a GPU runtime's current
  // device is per thread): enter makes it this device, leave restores the thread's own.
  virtual void enter() {}
  virtual void leave() noexcept {}
  // Bytes of device memory the engine may allocate for one call.
  virtual std::size_t memory_budget() = 0;
  // The most elements one device matrix (rows x ld) may have for the kernels.
  virtual index_t max_matrix_elements() const = 0;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
  // The pinned staging ring: count() buffers of bytes() each, kept across calls.
  virtual int staging_count() const = 0;
  virtual std::size_t staging_bytes() const = 0;
  virtual void* staging(int i) = 0;
  virtual Pool& pool() = 0;
  // Enqueued work: copies from/to staging buffers (copy_up on Stream::up, copy_down on
  // Stream::down), transposes (Stream::up), gemms (Stream::compute). Arguments are read at the
  // call; the memory they point to, when the work runs.
  virtual void copy_up(void* dst, const void* staged, std::size_t bytes) = 0;
  virtual void copy_down(void* staged, const void* src, std::size_t bytes) = 0;
  virtual void transpose(const TransposeArgs<float>& a) = 0;
  virtual void transpose(const TransposeArgs<double>& a) = 0;
  virtual void gemm(const GemmArgs<float>& a) = 0;
  virtual void gemm(const GemmArgs<double>& a) = 0;
  // Events named by small integers: record marks the point reached on a stream; wait makes a
  // stream (or the host) wait until the last record of the event before the wait has run. An
  // event never recorded is complete.
  virtual void record(int event, Stream s) = 0;
  virtual void wait(Stream s, int event) = 0;
  virtual void host_wait(int event) = 0;
  // Whether the event's last record has run (never blocks).
  virtual bool query(int event) = 0;
  // Waits for everything enqueued.
  virtual void finish() = 0;
  // Peer copies: whether this device can copy directly from `other`'s memory (NVLink, or PCIe
  // peer to peer), and the copy itself, enqueued on Stream::up: `bytes` from `src` in `other`'s
  // memory to `dst`, once `other`'s event `other_event` (its last record before this call) has
  // run. Without them every device uploads what it needs from the host.
  virtual bool peer(Device& other) {
    (void)other;
    return false;
  }
  virtual void copy_from_peer(void* dst, Device& other, const void* src, std::size_t bytes, int other_event) {
    (void)dst, (void)other, (void)src, (void)bytes, (void)other_event;
    throw Error("host-memory gemm: this device has no peer copies");
  }
};

// The tile edge for one dimension: the whole dimension up to 1024; above, at least two tiles
// (so that transfers overlap a gemm) of at most 4096, rounded up to 128 (the kernels' block).
inline index_t auto_tile(index_t dim) {
  if (dim <= 1024) return std::max<index_t>(dim, 1);
  const index_t pieces = std::max<index_t>(2, (dim + 4095) / 4096);
  const index_t t = (dim + pieces - 1) / pieces;
  return (t + 127) / 128 * 128;
}

// The growing-square order of an r x c grid of tiles: square s adds row s, then column s, so
// every tile after the first needs at most one panel its predecessors did not.
inline std::vector<std::pair<index_t, index_t>> square_order(index_t r, index_t c) {
  std::vector<std::pair<index_t, index_t>> out;
  out.reserve(std::size_t(r * c));
  for (index_t s = 0; s < std::max(r, c); ++s) {
    if (s < r)
      for (index_t j = 0; j < std::min(s, c); ++j) out.push_back({s, j});
    if (s < c)
      for (index_t i = 0; i <= std::min(s, r - 1); ++i) out.push_back({i, s});
  }
  return out;
}

namespace detail {

// Event names (Device::record), dense from 0: per C buffer (its upload, its gemm), per staging
// buffer (at most kMaxStaging), per panel slot.
constexpr int kEvCUp = 0, kEvGemm = 2, kEvStaging = 4, kMaxStaging = 64, kEvSlot = kEvStaging + kMaxStaging;

// The panels every device needs (the operand each device's block of C spans whole: B's column
// panels when the devices split C by tile rows) when the devices copy from each other: panel p is
// uploaded from the host by device p % devices, its owner, which publishes it here once its
// upload is enqueued; the others copy it from the owner's memory. The host then packs each such
// panel once instead of once per device. Every device needs these panels in the same order (the
// growing-square order introduces panel s at square s on every device), so a device waiting for
// panel p waits for an owner that needs nothing from it first.
class Board {
 public:
  struct Entry {
    Device* dev = nullptr;
    const void* mem = nullptr;
    int event = -1;
  };
  explicit Board(index_t panels) : entries_(std::size_t(panels)) {}
  void publish(index_t p, Device* dev, const void* mem, int event) {
    {
      std::lock_guard<std::mutex> l(m_);
      entries_[std::size_t(p)] = {dev, mem, event};
    }
    cv_.notify_all();
  }
  // Panel p once its owner has published it; throws when a device failed (its owner may never).
  Entry wait(index_t p) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return failed_ || entries_[std::size_t(p)].dev; });
    if (!entries_[std::size_t(p)].dev) throw PeerFailed();
    return entries_[std::size_t(p)];
  }
  bool ready(index_t p) {
    std::lock_guard<std::mutex> l(m_);
    return entries_[std::size_t(p)].dev != nullptr;
  }
  void fail() {
    {
      std::lock_guard<std::mutex> l(m_);
      failed_ = true;
    }
    cv_.notify_all();
  }
  // What a device waiting for a panel throws when another device failed (that one's error is
  // the call's).
  struct PeerFailed : Error {
    PeerFailed() : Error("host-memory gemm: another device failed") {}
  };

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Entry> entries_;
  bool failed_ = false;
};

template <class T>
class Driver {
 public:
  // The device's share: tile rows [r0, r1) x tile columns [c0, c1) of C.
  Driver(Device& dev, const HostGemm<T>& g, index_t tm, index_t tn, index_t r0, index_t r1, index_t c0, index_t c1)
      : dev_(dev), g_(g), tm_(tm), tn_(tn), r0_(r0), r1_(r1), c0_(c0), c1_(c1) {}
  // Panels shared through `board` (B's when share_b, else A's), this device being `index` of `count`.
  void share(Board* board, bool share_b, int index, int count) {
    board_ = board;
    share_b_ = share_b;
    index_ = index;
    count_ = count;
  }
  // Waits for what this device still has in flight (before any device's memory is released: a
  // peer may still be copying from it).
  void quiesce() noexcept {
    try {
      dev_.enter();
      dev_.finish();
    } catch (...) {
    }
    dev_.leave();
  }
  ~Driver() {
    // After an error: let what is in flight end before its memory goes.
    try {
      dev_.enter();
      dev_.finish();
    } catch (...) {
    }
    for (void* p : owned_) dev_.release(p);
    dev_.leave();
  }

  // Every device allocation of the call, with `slots` panel slots, before any device starts (so
  // that a device short of memory fails the call before C is written).
  void setup(index_t slots) {
    dev_.enter();
    try {
      const std::size_t s = sizeof(T);
      nbuf_ = std::min(dev_.staging_count(), kMaxStaging);
      pending_.assign(std::size_t(nbuf_), false);
      twin_.assign(std::size_t(nbuf_), nullptr);
      if (g_.trans_a || g_.trans_b)  // transposed operands go through a device twin of each staging buffer
        for (auto& t : twin_) t = static_cast<T*>(own(dev_.staging_bytes()));
      for (int b = 0; b < 2; ++b) cbuf_[b] = static_cast<T*>(own(std::size_t(tm_ * tn_) * s));
      slots = std::min(slots, (r1_ - r0_) + (c1_ - c0_));  // every panel this device needs, at most
      const std::size_t slot_bytes = std::size_t(std::max(tm_, tn_) * g_.k) * s;
      slot_.assign(std::size_t(slots), Slot{});
      for (auto& sl : slot_) sl.mem = static_cast<T*>(own(slot_bytes));
    } catch (...) {
      dev_.leave();
      throw;
    }
    dev_.leave();
  }

  void run() {
    dev_.enter();
    try {
      tiles();
    } catch (...) {
      dev_.leave();
      throw;
    }
    dev_.leave();
  }

 private:
  void tiles() {
    const index_t r0 = r0_, r1 = r1_, c0 = c0_, c1 = c1_;
    const auto order = square_order(r1 - r0, c1 - c0);
    const index_t count = index_t(order.size());
    auto tile = [&](index_t t) { return std::make_pair(order[t].first + r0, order[t].second + c0); };
    // Each panel with the first tile that needs it, in tile order (what prefetch walks).
    std::vector<char> seen_a(std::size_t(r1 - r0), 0), seen_b(std::size_t(c1 - c0), 0);
    for (index_t t = 0; t < count; ++t) {
      const auto [i, j] = tile(t);
      if (!seen_a[std::size_t(i - r0)]) seen_a[std::size_t(i - r0)] = 1, need_.push_back({i, t});
      if (!seen_b[std::size_t(j - c0)]) seen_b[std::size_t(j - c0)] = 1, need_.push_back({-2 - j, t});
    }
    prepare(0, tile(0), {-1, -1});
    compute(0, tile(0));
    for (index_t t = 0; t < count; ++t) {
      if (t + 1 < count) {
        prepare(t + 1, tile(t + 1), tile(t));
        compute(t + 1, tile(t + 1));
      }
      prefetch(t);
      download(t, tile(t));
    }
    dev_.finish();
  }

  struct Slot {
    T* mem = nullptr;
    index_t panel = -1;  // A panel i: i; B panel j: -2 - j
    index_t used = -1;   // the last tile that needed it
    index_t done = 0;    // source rows of the panel uploaded so far
  };

  void* own(std::size_t bytes) {
    void* p = dev_.allocate(bytes);
    owned_.push_back(p);
    return p;
  }

  index_t rows_of(index_t i) const { return std::min(tm_, g_.m - i * tm_); }
  index_t cols_of(index_t j) const { return std::min(tn_, g_.n - j * tn_); }

  int next_buffer() {
    const int b = next_;
    next_ = (next_ + 1) % nbuf_;
    if (pending_[std::size_t(b)]) dev_.host_wait(kEvStaging + b);
    pending_[std::size_t(b)] = false;
    return b;
  }

  // rows x cols of the caller's row-major memory (ld_src) into device memory at dst, whose rows
  // are ld_dst apart; transposed: dst receives the cols x rows transpose. Enqueued on Stream::up.
  // Rows [from, to) only, when given (a panel filled a chunk at a time).
  void upload(const T* src, index_t rows, index_t cols, index_t ld_src, T* dst, index_t ld_dst, bool transposed,
              index_t from = 0, index_t to = -1) {
    if (to < 0) to = rows;
    const index_t ld_stage = transposed ? cols : ld_dst;  // dense for the transpose; as dst's for a direct copy
    for (index_t r0 = from; r0 < to; r0 += rows_per_chunk(ld_stage)) {
      const index_t n = std::min(rows_per_chunk(ld_stage), to - r0);
      const int b = next_buffer();
      T* st = static_cast<T*>(dev_.staging(b));
      dev_.pool().run(n, std::size_t(n * cols) * sizeof(T), [&](index_t a, index_t e) {
        for (index_t r = a; r < e; ++r)
          copy_row(st + r * ld_stage, src + (r0 + r) * ld_src, std::size_t(cols) * sizeof(T));
      });
      // A direct copy's last row is cols long: the copy never reads past what was packed.
      const std::size_t bytes = std::size_t((n - 1) * ld_stage + cols) * sizeof(T);
      if (!transposed) {
        dev_.copy_up(dst + r0 * ld_dst, st, bytes);
      } else {
        T* twin = twin_[std::size_t(b)];
        dev_.copy_up(twin, st, bytes);
        dev_.transpose(TransposeArgs<T>{n, cols, twin_[std::size_t(b)], cols, dst + r0, ld_dst});
      }
      dev_.record(kEvStaging + b, Stream::up);
      pending_[std::size_t(b)] = true;
    }
  }

  index_t rows_per_chunk(index_t ld_stage) const {
    return std::max<index_t>(1, index_t(dev_.staging_bytes() / (std::size_t(ld_stage) * sizeof(T))));
  }

  // Panel `id` as the caller's memory holds it: the source rows a fill walks.
  struct Source {
    const T* src;
    index_t rows, cols, ld_src, ld_dst;
    bool transposed;
  };
  Source source(index_t id) const {
    const index_t k = g_.k;
    if (id >= 0) {  // rows [i0, i0 + rows) of op(A): tm x k, ld k
      const index_t i0 = id * tm_, rows = rows_of(id);
      if (!g_.trans_a) return {g_.a + i0 * g_.lda, rows, k, g_.lda, k, false};
      return {g_.a + i0, k, rows, g_.lda, k, true};  // A stored k x m: its columns [i0, i0 + rows)
    }
    const index_t j = -2 - id, j0 = j * tn_, cols = cols_of(j);  // columns of op(B): k x cols, ld tn
    if (!g_.trans_b) return {g_.b + j0, k, cols, g_.ldb, tn_, false};
    return {g_.b + j0 * g_.ldb, cols, k, g_.ldb, tn_, true};  // B stored n x k: its rows [j0, j0 + cols)
  }

  // Uploads the next source rows of slot s's panel, up to `rows` of them (all: -1); the slot's
  // event is recorded when the panel is complete.
  void fill(int s, index_t rows = -1) {
    Slot& sl = slot_[std::size_t(s)];
    const Source src = source(sl.panel);
    if (sl.done >= src.rows) return;
    if (shared(sl.panel) && !owned(sl.panel)) {  // the whole panel from its owner's memory
      const Board::Entry e = board_->wait(shared_index(sl.panel));
      dev_.copy_from_peer(sl.mem, *e.dev, e.mem, panel_bytes(sl.panel), e.event);
      sl.done = src.rows;
      dev_.record(kEvSlot + s, Stream::up);
      return;
    }
    const index_t to = rows < 0 ? src.rows : std::min(src.rows, sl.done + rows);
    upload(src.src, src.rows, src.cols, src.ld_src, sl.mem, src.ld_dst, src.transposed, sl.done, to);
    sl.done = to;
    if (sl.done == src.rows) {
      dev_.record(kEvSlot + s, Stream::up);
      if (shared(sl.panel)) board_->publish(shared_index(sl.panel), &dev_, sl.mem, kEvSlot + s);
    }
  }
  bool shared(index_t id) const { return board_ && (share_b_ ? id <= -2 : id >= 0); }
  index_t shared_index(index_t id) const { return id >= 0 ? id : -2 - id; }
  bool owned(index_t id) const { return shared_index(id) % count_ == index_; }
  // The panel as device memory holds it: op(A)'s rows x k (ld k), op(B)'s k x cols (ld tn).
  std::size_t panel_bytes(index_t id) const {
    const index_t e = id >= 0 ? rows_of(id) * g_.k : (g_.k - 1) * tn_ + cols_of(-2 - id);
    return std::size_t(e) * sizeof(T);
  }

  // While the gemm of tile t runs, the panels later tiles will need go up a chunk at a time into
  // slots never used yet, so that the host's packing spreads over the tiles that need no new
  // panel instead of stalling the GPU at those that do.
  void prefetch(index_t t) {
    const int cb = int(t % 2);
    while (!dev_.query(kEvGemm + cb)) {
      while (ahead_ < index_t(need_.size()) && (need_[std::size_t(ahead_)].second <= t + 1 || resident(need_[std::size_t(ahead_)].first)))
        ++ahead_;
      if (ahead_ == index_t(need_.size())) return;
      const auto [id, tile] = need_[std::size_t(ahead_)];
      int s = -1;
      for (auto& sl : slot_)
        if (sl.panel == id || (s < 0 && sl.panel == -1)) s = int(&sl - slot_.data());
      if (s < 0) return;  // no free slot: prefetching would evict what a later tile needs
      if (shared(id) && !owned(id) && !board_->ready(shared_index(id))) return;  // not up on its owner yet
      Slot& sl = slot_[std::size_t(s)];
      if (sl.panel != id) {
        sl.panel = id;
        sl.used = tile;
        sl.done = 0;
      }
      const Source src = source(id);
      fill(s, rows_per_chunk(src.transposed ? src.cols : src.ld_dst));
    }
  }
  bool resident(index_t id) const {
    for (const auto& sl : slot_)
      if (sl.panel == id) return sl.done == source(id).rows;
    return false;
  }

  // The slot holding panel `id`, uploading it (into a free slot, or the least recently used one
  // whose panel is not in `keep`) when it is not resident.
  int panel(index_t id, index_t t, std::initializer_list<index_t> keep) {
    for (auto& sl : slot_)
      if (sl.panel == id) {
        sl.used = t;
        fill(int(&sl - slot_.data()));  // a prefetch may have left it partly filled
        return int(&sl - slot_.data());
      }
    Slot* victim = nullptr;
    for (auto& sl : slot_) {
      if (std::find(keep.begin(), keep.end(), sl.panel) != keep.end()) continue;
      if (!victim || sl.used < victim->used) victim = &sl;
    }
    // (At least four slots, at most three kept: there is always a victim.)
    Slot& sl = *victim;
    sl.panel = id;
    sl.used = t;
    sl.done = 0;
    fill(int(&sl - slot_.data()));
    return int(&sl - slot_.data());
  }

  // Panels (and C, when beta reads it) of tile t on their way; `busy` is the tile whose gemm may
  // still run (its panels stay).
  void prepare(index_t t, std::pair<index_t, index_t> ij, std::pair<index_t, index_t> busy) {
    const auto [i, j] = ij;
    constexpr index_t none = std::numeric_limits<index_t>::min();
    const index_t busy_a = busy.first >= 0 ? busy.first : none, busy_b = busy.first >= 0 ? -2 - busy.second : none;
    sa_[t % 2] = panel(i, t, {busy_a, busy_b});
    sb_[t % 2] = panel(-2 - j, t, {busy_a, busy_b, i});
    if (g_.beta != T(0)) {
      T* c = cbuf_[t % 2];
      upload(g_.c + i * tm_ * g_.ldc + j * tn_, rows_of(i), cols_of(j), g_.ldc, c, tn_, false);
      dev_.record(kEvCUp + int(t % 2), Stream::up);
    }
  }

  void compute(index_t t, std::pair<index_t, index_t> ij) {
    const auto [i, j] = ij;
    const int cb = int(t % 2);
    dev_.wait(Stream::compute, kEvSlot + sa_[cb]);
    dev_.wait(Stream::compute, kEvSlot + sb_[cb]);
    if (g_.beta != T(0)) dev_.wait(Stream::compute, kEvCUp + cb);
    dev_.gemm(GemmArgs<T>{rows_of(i), cols_of(j), g_.k, g_.alpha, slot_[std::size_t(sa_[cb])].mem, g_.k,
                          slot_[std::size_t(sb_[cb])].mem, tn_, g_.beta, cbuf_[cb], tn_});
    dev_.record(kEvGemm + cb, Stream::compute);
  }

  // C tile t back into the caller's rows: downloads run ahead of the host's unpacking by the
  // staging ring's depth.
  void download(index_t t, std::pair<index_t, index_t> ij) {
    const auto [i, j] = ij;
    const int cb = int(t % 2);
    const index_t rows = rows_of(i), cols = cols_of(j);
    T* dst = g_.c + i * tm_ * g_.ldc + j * tn_;
    dev_.wait(Stream::down, kEvGemm + cb);
    const index_t per = std::max<index_t>(1, index_t(dev_.staging_bytes() / (std::size_t(tn_) * sizeof(T))));
    struct Chunk {
      int b;
      index_t r0, n;
    };
    std::deque<Chunk> flight;
    auto unpack = [&] {
      const Chunk ch = flight.front();
      flight.pop_front();
      dev_.host_wait(kEvStaging + ch.b);
      pending_[std::size_t(ch.b)] = false;
      const T* st = static_cast<const T*>(dev_.staging(ch.b));
      dev_.pool().run(ch.n, std::size_t(ch.n * cols) * sizeof(T), [&](index_t a, index_t e) {
        for (index_t r = a; r < e; ++r)
          copy_row(dst + (ch.r0 + r) * g_.ldc, st + r * tn_, std::size_t(cols) * sizeof(T));
      });
    };
    for (index_t r0 = 0; r0 < rows; r0 += per) {
      if (index_t(flight.size()) == nbuf_) unpack();
      const index_t n = std::min(per, rows - r0);
      const int b = next_buffer();
      dev_.copy_down(dev_.staging(b), cbuf_[cb] + r0 * tn_, std::size_t((n - 1) * tn_ + cols) * sizeof(T));
      dev_.record(kEvStaging + b, Stream::down);
      pending_[std::size_t(b)] = true;
      flight.push_back({b, r0, n});
    }
    while (!flight.empty()) unpack();
  }

  Device& dev_;
  const HostGemm<T>& g_;
  index_t tm_, tn_, r0_, r1_, c0_, c1_;
  int nbuf_ = 0, next_ = 0;
  std::vector<bool> pending_;
  std::vector<T*> twin_;
  T* cbuf_[2] = {nullptr, nullptr};
  std::vector<Slot> slot_;
  int sa_[2] = {0, 0}, sb_[2] = {0, 0};
  std::vector<std::pair<index_t, index_t>> need_;  // (panel, first tile needing it)
  index_t ahead_ = 0;                               // prefetch's position in need_
  std::vector<void*> owned_;
  Board* board_ = nullptr;
  bool share_b_ = true;
  int index_ = 0, count_ = 1;
};

// C = beta C in the caller's memory (alpha == 0 or k == 0: A and B are not read; beta == 0
// writes zeros without reading C).
template <class T>
void scale(Pool& pool, const HostGemm<T>& g) {
  if (g.beta == T(1)) return;
  pool.run(g.m, std::size_t(g.m * g.n) * sizeof(T), [&](index_t a, index_t e) {
    for (index_t r = a; r < e; ++r) {
      T* row = g.c + r * g.ldc;
      if (g.beta == T(0))
        std::fill(row, row + g.n, T(0));
      else
        for (index_t c = 0; c < g.n; ++c) row[c] *= g.beta;
    }
  });
}

}  // namespace detail

// Whether the engine can run g on these devices: a row of an operand must fit one staging buffer.
template <class T>
bool fits_staging(const HostGemm<T>& g, const std::vector<Device*>& devs) {
  const index_t widest = std::max({g.k, g.m, g.n});
  for (Device* d : devs)
    if (std::size_t(widest) * sizeof(T) > d->staging_bytes() || d->staging_count() < 1) return false;
  return true;
}

// Runs g on the devices (each from its own host thread; the first on the calling thread), C's
// tile grid split between them in blocks of tile rows (or columns, when there are more of
// those). tile: the C tile edge (0: auto_tile). Throws what a device throws (the first error);
// ResourceError only before anything was written to C.
template <class T>
void run(const std::vector<Device*>& devs, const HostGemm<T>& g, index_t tile = 0) {
  if (g.m == 0 || g.n == 0) return;
  if (devs.empty()) throw Error("host-memory gemm: no device to run on");
  if (g.alpha == T(0) || g.k == 0) return detail::scale(devs[0]->pool(), g);

  index_t tm = tile > 0 ? std::min(tile, g.m) : auto_tile(g.m);
  index_t tn = tile > 0 ? std::min(tile, g.n) : auto_tile(g.n);
  // Panel slots that fit beside two C tiles and the transposes' twins of the staging buffers;
  // smaller tiles where fewer than four fit, or where a panel is too large for the kernels.
  std::size_t budget = std::numeric_limits<std::size_t>::max();
  index_t max_elems = std::numeric_limits<index_t>::max();
  for (Device* d : devs) {
    budget = std::min(budget, d->memory_budget());
    max_elems = std::min(max_elems, d->max_matrix_elements());
  }
  const std::size_t twins = devs[0]->staging_bytes() * std::size_t(devs[0]->staging_count());
  index_t slots = 0;
  for (;;) {
    const std::size_t slot = std::size_t(std::max(tm, tn) * g.k) * sizeof(T);
    const std::size_t fixed = twins + 2 * std::size_t(tm * tn) * sizeof(T);
    slots = budget > fixed ? index_t((budget - fixed) / slot) : 0;
    if (slots >= 4 && std::max(tm, tn) * g.k <= max_elems) break;
    if (tm == 1 && tn == 1)
      throw ResourceError("host-memory gemm: device memory (" + std::to_string(budget) +
                          " bytes for the call) cannot hold four panels of k = " + std::to_string(g.k));
    tm = std::max<index_t>(1, tm / 2);
    tn = std::max<index_t>(1, tn / 2);
  }
  const index_t gr = (g.m + tm - 1) / tm, gc = (g.n + tn - 1) / tn;

  // The split: contiguous blocks of tile rows (or columns) per device, at most one device per block.
  const bool by_rows = gr >= gc;
  const index_t blocks = by_rows ? gr : gc;
  const index_t used = std::min<index_t>(index_t(devs.size()), blocks);
  std::vector<std::unique_ptr<detail::Driver<T>>> drivers;
  for (index_t d = 0; d < used; ++d) {
    const index_t b0 = blocks * d / used, b1 = blocks * (d + 1) / used;
    drivers.push_back(by_rows ? std::make_unique<detail::Driver<T>>(*devs[std::size_t(d)], g, tm, tn, b0, b1, 0, gc)
                              : std::make_unique<detail::Driver<T>>(*devs[std::size_t(d)], g, tm, tn, 0, gr, b0, b1));
  }
  // Devices that can copy from each other share the panels they all need (the host packs each
  // once): only when no device ever evicts a panel, so an owner's copy stays while others read it.
  std::unique_ptr<detail::Board> board;
  bool peers = used > 1;
  for (index_t d = 0; d < used && peers; ++d) {
    const index_t needs = by_rows ? (blocks * (d + 1) / used - blocks * d / used) + gc
                                  : gr + (blocks * (d + 1) / used - blocks * d / used);
    peers = slots >= needs;
    for (index_t o = 0; o < used && peers; ++o)
      if (o != d) peers = devs[std::size_t(d)]->peer(*devs[std::size_t(o)]);
  }
  if (peers) {
    board = std::make_unique<detail::Board>(by_rows ? gc : gr);
    for (index_t d = 0; d < used; ++d) drivers[std::size_t(d)]->share(board.get(), by_rows, int(d), int(used));
  }
  for (auto& drv : drivers) drv->setup(slots);  // ResourceError here: nothing written
  // From here C is being written: a failure is reported as a DeviceError, never a ResourceError.
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(used));
  std::vector<char> secondary(static_cast<std::size_t>(used), 0);  // failed because another device did
  auto drive = [&](index_t d) {
    try {
      drivers[std::size_t(d)]->run();
      return;
    } catch (const detail::Board::PeerFailed&) {
      secondary[std::size_t(d)] = 1;
      errors[std::size_t(d)] = std::current_exception();
    } catch (const ResourceError& e) {
      errors[std::size_t(d)] = std::make_exception_ptr(DeviceError(e.what()));
    } catch (...) {
      errors[std::size_t(d)] = std::current_exception();
    }
    if (board) board->fail();  // devices waiting for this one's panels stop
  };
  std::vector<std::thread> threads;
  for (index_t d = 1; d < used; ++d) threads.emplace_back(drive, d);
  drive(0);
  for (auto& t : threads) t.join();
  for (auto& drv : drivers) drv->quiesce();  // no peer copy still reads memory about to be released
  for (index_t d = 0; d < used; ++d)
    if (errors[std::size_t(d)] && !secondary[std::size_t(d)]) std::rethrow_exception(errors[std::size_t(d)]);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tilekit::gpu::staging
