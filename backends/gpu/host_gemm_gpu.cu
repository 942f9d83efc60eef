// The host-memory gemm of the GPU backends (GpuBackend::gemm_host): host_gemm.hpp's engine on
// the devices of the runtime, each with three streams of its own, a ring of pinned staging
// buffers kept for the process (allocated at its first host-memory call, freed at exit) and a
// pool of host threads that pack the caller's rows into them.
#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpu_backend.hpp"
#include "host_gemm.hpp"
#include "kernels.hpp"

// (Used here only, so not in portability.hpp.)
#if defined(__HIPCC__)
#define gpuEventQuery hipEventQuery
#define gpuErrorNotReady hipErrorNotReady
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
#else
#define gpuEventQuery cudaEventQuery
#define gpuErrorNotReady cudaErrorNotReady
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
#endif

namespace tilekit::gpu {
namespace {

// Four buffers of 64 MiB: a chunk is large enough that a DMA runs at the link's speed and the
// per-chunk overheads (event, wake-up of the packing threads) are small, and four keep the host's
// packing, the upload and the download of a C tile all busy at once.
constexpr int kStagingCount = 4;
constexpr std::size_t kStagingBytes = std::size_t(64) << 20;

class GpuDevice final : public staging::Device {
 public:
  GpuDevice(int device, int pack_threads) : device_(device), props_(query_props(device)), pool_(pack_threads) {
    int prev = 0;
    TILEKIT_GPU_CHECK(gpuGetDevice(&prev));
    TILEKIT_GPU_CHECK(gpuSetDevice(device_));
    try {
      for (auto& s : streams_) TILEKIT_GPU_CHECK(gpuStreamCreateNonBlocking(&s));
      for (int i = 0; i < kStagingCount; ++i) {
        void* p = nullptr;
        TILEKIT_GPU_CHECK(gpuHostAllocPortable(&p, kStagingBytes));
        staging_.push_back(p);
      }
    } catch (...) {
      (void)gpuSetDevice(prev);
      free_all();
      throw;
    }
    TILEKIT_GPU_CHECK(gpuSetDevice(prev));
  }
  ~GpuDevice() override { free_all(); }

  void enter() override {
    TILEKIT_GPU_CHECK(gpuGetDevice(&prev_));
    TILEKIT_GPU_CHECK(gpuSetDevice(device_));
  }
  void leave() noexcept override { (void)gpuSetDevice(prev_); }

  std::size_t memory_budget() override {
    std::size_t free_bytes = 0, total = 0;
    TILEKIT_GPU_CHECK(gpuMemGetInfo(&free_bytes, &total));
    // Room left for the runtime, the kernels' own needs and other users of the device.
    const std::size_t keep = std::max<std::size_t>(std::size_t(1) << 30, free_bytes / 16);
    return free_bytes > keep ? free_bytes - keep : 0;
  }
  index_t max_matrix_elements() const override { return (index_t(1) << 31) - 1; }
  // Blocks up to kCachedBlock are kept for the next call (a gpuMalloc/gpuFree pair costs more than
  // a small call's gemm, and gpuFree waits for the whole device), at most kCachedTotal of them;
  // larger ones (panels of large calls) go back to the device when the call ends.
  void* allocate(std::size_t bytes) override {
    bytes = std::max<std::size_t>(bytes, 256);
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
      if (it->bytes >= bytes && it->bytes <= 2 * bytes) {
        void* p = it->p;
        sizes_.push_back(*it);
        cache_.erase(it);
        return p;
      }
    void* p = nullptr;
    gpuError_t e = gpuMalloc(&p, bytes);
    if (e != gpuSuccess && !cache_.empty()) {  // cached blocks may be what is missing
      (void)gpuGetLastError();
      trim(0);
      e = gpuMalloc(&p, bytes);
    }
    if (e != gpuSuccess) {
      (void)gpuGetLastError();
      throw ResourceError(fmt::format("host-memory gemm: device {} could not allocate {} bytes: {}", device_, bytes,
                                      gpuGetErrorString(e)));
    }
    sizes_.push_back({p, bytes});
    return p;
  }
  void release(void* p) noexcept override {
    for (auto it = sizes_.begin(); it != sizes_.end(); ++it)
      if (it->p == p) {
        const Block b = *it;
        sizes_.erase(it);
        if (b.bytes <= kCachedBlock) {
          cache_.push_back(b);
          trim(kCachedTotal);
        } else {
          (void)gpuFree(p);
        }
        return;
      }
    (void)gpuFree(p);
  }
  int staging_count() const override { return int(staging_.size()); }
  std::size_t staging_bytes() const override { return kStagingBytes; }
  void* staging(int i) override { return staging_[std::size_t(i)]; }
  staging::Pool& pool() override { return pool_; }

  void copy_up(void* dst, const void* src, std::size_t bytes) override {
    TILEKIT_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, stream(staging::Stream::up)));
  }
  void copy_down(void* dst, const void* src, std::size_t bytes) override {
    TILEKIT_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToHost, stream(staging::Stream::down)));
  }
  void transpose(const TransposeArgs<float>& a) override { tr(a, DType::f32); }
  void transpose(const TransposeArgs<double>& a) override { tr(a, DType::f64); }
  void gemm(const GemmArgs<float>& a) override { mm(a, DType::f32); }
  void gemm(const GemmArgs<double>& a) override { mm(a, DType::f64); }

  void record(int e, staging::Stream s) override { TILEKIT_GPU_CHECK(gpuEventRecord(event(e), stream(s))); }
  void wait(staging::Stream s, int e) override { TILEKIT_GPU_CHECK(gpuStreamWaitEvent(stream(s), event(e), 0)); }
  void host_wait(int e) override { TILEKIT_GPU_CHECK(gpuEventSynchronize(event(e))); }
  bool query(int e) override {
    const gpuError_t r = gpuEventQuery(event(e));
    if (r == gpuErrorNotReady) return false;
    TILEKIT_GPU_CHECK(r);
    return true;
  }
  void finish() override {
    for (auto* s : streams_) TILEKIT_GPU_CHECK(gpuStreamSynchronize(s));
  }
  // Peer access is enabled once per pair and direction, the first time a call asks.
  bool peer(staging::Device& other) override {
    auto* o = dynamic_cast<GpuDevice*>(&other);
    if (!o || o == this) return false;
    if (std::find(peers_.begin(), peers_.end(), o->device_) != peers_.end()) return true;
    int can = 0;
    TILEKIT_GPU_CHECK(gpuDeviceCanAccessPeer(&can, device_, o->device_));
    if (!can) return false;
    enter();
    const gpuError_t e = gpuDeviceEnablePeerAccess(o->device_, 0);
    leave();
    if (e == gpuErrorPeerAccessAlreadyEnabled)
      (void)gpuGetLastError();
    else
      TILEKIT_GPU_CHECK(e);
    peers_.push_back(o->device_);
    return true;
  }
  void copy_from_peer(void* dst, staging::Device& other, const void* src, std::size_t bytes, int other_event) override {
    auto& o = static_cast<GpuDevice&>(other);
    TILEKIT_GPU_CHECK(gpuStreamWaitEvent(stream(staging::Stream::up), o.event(other_event), 0));
    TILEKIT_GPU_CHECK(gpuMemcpyPeerAsync(dst, device_, src, o.device_, bytes, stream(staging::Stream::up)));
  }

 private:
  gpuStream_t stream(staging::Stream s) const { return streams_[int(s)]; }
  // Created at first use, on this device (the driving thread has entered it); an event never
  // recorded is complete, as Device requires.
  // Locked: a peer's thread reads this device's events (copy_from_peer).
  gpuEvent_t event(int e) {
    std::lock_guard<std::mutex> l(events_mutex_);
    if (std::size_t(e) >= events_.size()) events_.resize(std::size_t(e) + 1, nullptr);
    gpuEvent_t& ev = events_[std::size_t(e)];
    if (!ev) TILEKIT_GPU_CHECK(gpuEventCreateNoTiming(&ev));
    return ev;
  }
  template <class T>
  void tr(const TransposeArgs<T>& a, DType t) {
    const LaunchPlan pl = plan_launch(props_, Variant::optimized, Problem{Op::transpose, t, a.rows, a.cols, 0}, {});
    launch_transpose(Variant::optimized, a, pl, stream(staging::Stream::up));
  }
  template <class T>
  void mm(const GemmArgs<T>& a, DType t) {
    const LaunchPlan pl = plan_launch(props_, Variant::optimized, Problem{Op::gemm, t, a.m, a.n, a.k}, {});
    launch_gemm(Variant::optimized, a, pl, stream(staging::Stream::compute));
  }
  // Frees cached blocks, oldest first, until at most `keep` bytes are cached.
  void trim(std::size_t keep) noexcept {
    std::size_t total = 0;
    for (const Block& b : cache_) total += b.bytes;
    while (total > keep && !cache_.empty()) {
      total -= cache_.front().bytes;
      (void)gpuFree(cache_.front().p);
      cache_.erase(cache_.begin());
    }
  }
  // Errors are ignored: at exit the runtime may already be shutting down.
  void free_all() noexcept {
    trim(0);
    for (gpuEvent_t ev : events_)
      if (ev) (void)gpuEventDestroy(ev);
    events_.clear();
    for (void* p : staging_) (void)gpuFreeHost(p);
    staging_.clear();
    for (auto*& s : streams_)
      if (s) (void)gpuStreamDestroy(s), s = nullptr;
  }

  static constexpr std::size_t kCachedBlock = std::size_t(256) << 20, kCachedTotal = std::size_t(1) << 30;
  struct Block {
    void* p;
    std::size_t bytes;
  };
  std::vector<Block> sizes_, cache_;  // blocks in use, blocks kept
  int device_, prev_ = 0;
  DeviceProps props_;
  staging::Pool pool_;
  gpuStream_t streams_[3] = {nullptr, nullptr, nullptr};
  std::vector<void*> staging_;
  std::vector<gpuEvent_t> events_;  // by the engine's event names (dense from 0)
  std::mutex events_mutex_;
  std::vector<int> peers_;  // devices this one has peer access to
};

// The devices' staging state, for the process; calls are serialized (they share it).
struct Engine {
  std::mutex call;
  std::vector<std::unique_ptr<GpuDevice>> devices;  // by ordinal, created at first use
};
Engine& engine() {
  static Engine e;
  return e;
}

template <class T>
bool run_host(const HostGemm<T>& g) {
  Engine& e = engine();
  std::lock_guard<std::mutex> lock(e.call);
  int count = 0;
  TILEKIT_GPU_CHECK(gpuGetDeviceCount(&count));
  std::vector<int> ids = g.devices;
  if (ids.empty())
    for (int d = 0; d < count; ++d) ids.push_back(d);
  for (int d : ids)
    if (d < 0 || d >= count)
      throw Error(fmt::format("host-memory gemm: device {} does not exist ({} runtime shows {})", d,
                              TILEKIT_GPU_RUNTIME, count));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (e.devices.size() < std::size_t(count)) e.devices.resize(std::size_t(count));
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<staging::Device*> devs;
  for (int d : ids) {
    auto& slot = e.devices[std::size_t(d)];
    if (!slot) slot = std::make_unique<GpuDevice>(d, std::max(2, cores / count));
    devs.push_back(slot.get());
  }
  if (!staging::fits_staging(g, devs)) return false;
  staging::run(devs, g, g.tile);
  return true;
}

}  // namespace

bool GpuBackend::gemm_host(const HostGemm<float>& g) {
  require_available();
  return run_host(g);
}
bool GpuBackend::gemm_host(const HostGemm<double>& g) {
  require_available();
  return run_host(g);
}

}  // namespace tilekit::gpu
