// The one interface every backend implements. A backend owns its memory (host heap, a
// Kokkos memory space, CUDA/HIP device memory), its streams and its timers; tilekit's front
// end (ops.hpp) validates every call before it reaches a backend, so kernels may assume
// consistent shapes, ld >= cols, and a tile that fits. The front end asks the backend for one
// Plan per call and hands that plan to the kernel, which launches what it says.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tilekit/ceilings.hpp"
#include "tilekit/types.hpp"

namespace tilekit {

// The shape of one call, as tile choice sees it. conv2d: m = H, n = W, k = R.
// transpose: m = rows, n = cols, k = 0.
struct Problem {
  Op op;
  DType dtype;
  index_t m = 0, n = 0, k = 0;
};

class Backend;

// A GEMM on operands in the caller's host memory: C = alpha op(A) op(B) + beta C, row-major, C
// m x n (ldc >= n). op(A) is m x k: A itself (lda >= k) or, trans_a, the transpose of A stored
// k x m (lda >= m); likewise op(B), k x n: B (ldb >= n) or the transpose of B stored n x k
// (ldb >= k). beta == 0 never reads C; alpha == 0 or k == 0 never reads A or B.
// tilekit::gemm_host (gemm_host.hpp) validates one and runs it; Backend::gemm_host runs it.
template <class T>
struct HostGemm {
  bool trans_a = false, trans_b = false;
  index_t m = 0, n = 0, k = 0;
  T alpha = T(1);
  const T* a = nullptr;
  index_t lda = 0;
  const T* b = nullptr;
  index_t ldb = 0;
  T beta = T(0);
  T* c = nullptr;
  index_t ldc = 0;
  // Runtime ordinals of the devices to spread the call over (empty: every device the runtime
  // shows; CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES apply).
  std::vector<int> devices;
  // The edge of the tiles of C the call is computed in (0: chosen from the sizes).
  index_t tile = 0;
};

// How one call runs, decided once (Backend::plan) and followed by the kernel: the resolved tile,
// and whatever else the backend decided (launch shape, which kernel, the tunings in effect) in
// `detail`, which only the backend that made the plan reads.
struct Plan {
  const Backend* backend = nullptr;  // the backend that made it
  Variant variant = Variant::naive;
  Problem problem{};
  TileConfig tile;                   // the resolved tile ({} where the variant has none)
  std::shared_ptr<const void> detail;
  // The backend's own part, as the type it stored (nullptr when it stored none).
  template <class D>
  const D* get() const { return static_cast<const D*>(detail.get()); }
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string name() const = 0;
  virtual const DeviceInfo& info() const = 0;
  // Compiled but unusable here (no GPU, no driver): available() is false and the reason says why.
  virtual bool available() const { return true; }
  virtual std::string unavailable_reason() const { return {}; }
  // Higher wins when the caller asks for "the best available backend".
  virtual int priority() const = 0;
  virtual std::vector<Variant> variants() const {
    return {Variant::naive, Variant::tiled, Variant::optimized};
  }
  bool supports(Variant v) const;

  // ---- memory (bytes; pointers are backend memory, host pointers are ordinary host memory)
  // Whether this backend's memory is ordinary host memory that the calling thread may read and
  // write (serial, openmp, Kokkos host spaces): Matrix<T>::view can then wrap memory the caller
  // owns, with no copy.
  virtual bool host_accessible() const { return false; }
  // The most elements (rows x ld) one matrix may have on this backend: kernels that index with
  // 32-bit integers (GPU kernels, and Kokkos' kernels, which are the same on every space) address
  // fewer than 2^31; host kernels index with 64 bits.
  virtual index_t max_matrix_elements() const { return (index_t(1) << 31) - 1; }
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  // Device-to-device copy: the "memcpy" peer for bandwidth-bound operations.
  virtual void device_copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() {}
  // The stream or queue this backend's work runs on (cudaStream_t / hipStream_t on GPU
  // backends; nullptr where work runs synchronously on the calling thread). Tile kernels
  // (tile.hpp) launch on it, so they are ordered with tilekit's own operations.
  virtual void* native_queue() const { return nullptr; }
  // Bytes this backend could allocate now (the memory guard compares a problem's needs with
  // it before allocating). Default: the host's MemAvailable (/proc/meminfo); GPU backends
  // ask their runtime. SIZE_MAX when unknown.
  virtual std::size_t memory_available() const;
  // Held by the front end (ops, Matrix) around every call into the backend, so that host
  // threads calling tilekit at once are serialized per backend (kernels may share scratch,
  // a thread pool or, on GPUs, one stream); different backends still run concurrently.
  std::recursive_mutex& call_mutex() const { return call_mutex_; }

  // Seconds taken by the backend work that fn enqueues, measured with the backend's own
  // clock (device events on GPUs). The default synchronizes around a host steady clock.
  virtual double time_seconds(const std::function<void()>& fn);

  // ---- plans
  // How a call of variant v on problem p runs: the tile (`requested` validated against the device,
  // throwing tilekit::Error naming the tile's scratch bytes and the device's limit, or an
  // automatic choice derived from info() when requested.is_auto()) and everything else the kernel
  // launch needs. Planning the plan's own tile again gives the same plan. The front end
  // (tilekit::plan in ops.hpp) checks the request first and stamps backend, variant and problem.
  virtual Plan plan(Variant v, const Problem& p, const TileConfig& requested) const = 0;
  // One line on how a plan launches (block shape, scratch bytes, occupancy...), from the plan alone.
  virtual std::string describe_launch(const Plan&) const { return {}; }

  // ---- kernels: run what the plan says (front end guarantees validity, and that the plan is
  // this backend's for this problem; empty problems never reach here)
  virtual void gemm(const Plan&, const GemmArgs<float>&) = 0;
  virtual void gemm(const Plan&, const GemmArgs<double>&) = 0;
  virtual void transpose(const Plan&, const TransposeArgs<float>&) = 0;
  virtual void transpose(const Plan&, const TransposeArgs<double>&) = 0;
  virtual void conv2d(const Plan&, const Conv2dArgs<float>&) = 0;
  virtual void conv2d(const Plan&, const Conv2dArgs<double>&) = 0;

  // ---- host memory: a GEMM on operands in the caller's memory, for backends whose memory is not
  // host memory (the GPU backends stage the operands through pinned buffers, overlapping the
  // transfers with the compute, over one or several devices). has_gemm_host: the backend has
  // such a path; gemm_host runs a validated call (front end: tilekit::gemm_host) and returns
  // false, having read and written nothing, when it cannot take this call (the caller then
  // stages the operands itself). It throws ResourceError only before it writes C (a device short
  // of memory: the caller may run the call elsewhere); any failure after is another Error.
  virtual bool has_gemm_host() const { return false; }
  virtual bool gemm_host(const HostGemm<float>&) { return false; }
  virtual bool gemm_host(const HostGemm<double>&) { return false; }

  // ---- peers timed beside the kernels in `tilekit compare` ("" = this backend has none)
  virtual std::string gemm_peer_name() const { return {}; }
  virtual void gemm_peer(const GemmArgs<float>&);
  virtual void gemm_peer(const GemmArgs<double>&);
  virtual std::string copy_peer_name() const { return "memcpy"; }

  // ---- roofline: the device's bandwidth and FMA peak as this backend reaches them. Slow (a
  // fraction of a second): call tilekit::ceilings(be) (roofline.hpp), which measures once per
  // process. The default times device_copy and leaves the arithmetic peak unmeasured.
  virtual Ceilings measure_ceilings();

 private:
  mutable std::recursive_mutex call_mutex_;
};

// MemAvailable of /proc/meminfo in bytes (SIZE_MAX when it cannot be read).
std::size_t host_memory_available();

// ---- the registry: backends compiled into this build, chosen by name at run time
// Every backend tilekit knows of, in the order of its registration table, compiled or not.
std::vector<std::string> known_backends();
// Those compiled into this build (serial always).
std::vector<std::string> compiled_backends();
// The backend called `name`. Throws tilekit::Error when the name is unknown, the backend was
// not compiled in (naming the CMake option), or it is compiled but unavailable here.
Backend& backend(const std::string& name);
// Compiled backend objects, available or not (for `info` and the test suite).
Backend* find_backend(const std::string& name);  // nullptr when not compiled
// The available backend with the highest priority.
Backend& best_backend();

}  // namespace tilekit
