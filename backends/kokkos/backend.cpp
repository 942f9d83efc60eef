// The kokkos Backend: Kokkos' lifetime, memory in the default execution space's memory space,
// what the space offers (DeviceInfo), tile resolution and launch descriptions.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <mutex>
#include <new>
#include <unordered_map>
#include <type_traits>
#include <string>

#include "common/host/host_backend.hpp"
#include "common/gpu/estimate.hpp"
#include "gemm_mma.hpp"
#include "host_packed.hpp"
#include "kokkos.hpp"
#if defined(KOKKOS_ENABLE_CUDA)
#include "common/gpu/stream_hold.cuh"
#endif
#include "tilekit/roofline.hpp"

#include <fmt/format.h>
#include "tilekit/ops.hpp"

namespace tilekit {
namespace kokkos {

void check_tile_lanes(const Problem& p, const TileConfig& t, int lanes, const char* what) {
  constexpr int kMostTeam = 1024;  // Kokkos' GPU spaces: team size x vector length
  if (!exec_on_gpu() || lanes <= kMostTeam) return;
  throw Error(fmt::format("{} tiled tile {} needs {} lanes ({}), but Kokkos' {} runs teams of at most {} threads",
                          to_string(p.op), t.str(), lanes, what, Exec::name(), kMostTeam));
}

std::string describe(const Launch& l) {
  if (l.team == 0) return l.kernel;
  std::string s = "league " + std::to_string(l.league) + " x team " + std::to_string(l.team);
  if (l.vector > 1) s += " x vector " + std::to_string(l.vector);
  s += ", " + std::to_string(l.scratch) + " B team scratch (level 0), " + l.kernel;
  return s;
}

std::string scratch_where(std::size_t reserved, const char* what) {
  std::string s = std::string(Exec::name()) + " team scratch (level 0: " + std::to_string(scratch_max()) + " bytes";
  if (reserved > 0) s += ", less " + std::to_string(reserved) + " this kernel keeps for " + what;
  return s + ")";
}

void check_team_scratch(const Problem& p, const TileConfig& t, std::size_t reserved, const char* what) {
  const std::size_t total = scratch_max();
  check_tile_fits(p, t, total > reserved ? total - reserved : 0, scratch_where(reserved, what));
}

// ---- roofline ceilings through Kokkos in its own space (functors: safe in device code everywhere)
template <class T>
struct CopyFunctor {
  Kokkos::View<const T*, Mem> src;
  Kokkos::View<T*, Mem> dst;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { dst(i) = src(i); }
};
// 8 independent FMA chains per work item: a GPU hides the 4-cycle FMA latency across the warps
// of an SM as well, so 8 are plenty.
template <class T>
struct FmaFunctor {
  Kokkos::View<T*, Mem> out;
  int iters;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    T a[8];
    for (int j = 0; j < 8; ++j) a[j] = T(i % 7) + T(j);
    const T m = T(0.999), c = T(0.001);  // acc * m + c converges: the values stay normal
    for (int k = 0; k < iters; ++k)
      for (int j = 0; j < 8; ++j) a[j] = a[j] * m + c;
    T s = 0;
    for (int j = 0; j < 8; ++j) s += a[j];
    out(i) = s;
  }
};

template <class F>
double best_seconds(int runs, F&& f) {
  f();  // warm-up
  Kokkos::fence();
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    Kokkos::Timer t;
    f();
    Kokkos::fence();
    best = std::min(best, t.seconds());
  }
  return best;
}

// Bytes read + written per second by a parallel_for copy of `bytes` (2 arrays) in the space.
double kokkos_copy_gbps(std::size_t bytes) {
  const std::int64_t n = std::int64_t(bytes / sizeof(double));
  Kokkos::View<double*, Mem> a("tilekit::bw_src", n), b("tilekit::bw_dst", n);
  Kokkos::deep_copy(a, 1.0);
  const CopyFunctor<double> f{a, b};
  const double s = best_seconds(5, [&] { Kokkos::parallel_for("tilekit::bw_copy", Kokkos::RangePolicy<Exec>(0, n), f); });
  return 2.0 * double(n) * sizeof(double) / s * 1e-9;
}

template <class T>
double kokkos_fma_gflops(std::int64_t items, int iters) {
  Kokkos::View<T*, Mem> out("tilekit::fma", items);
  const FmaFunctor<T> f{out, iters};
  const double s = best_seconds(5, [&] { Kokkos::parallel_for("tilekit::fma_peak", Kokkos::RangePolicy<Exec>(0, items), f); });
  return 2.0 * 8.0 * double(iters) * double(items) / s * 1e-9;
}

std::size_t smem_per_sm() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (exec_is_cuda()) return Exec().cuda_device_prop().sharedMemPerMultiprocessor;
#endif
  return SIZE_MAX;
}

NaiveMode naive_mode(NaiveMode fallback) {
  if (!exec_on_gpu()) return NaiveMode::mdrange;
  return tuning_choice<NaiveMode>("kokkos.naive.launch",
                                  {{"auto", fallback}, {"mdrange", NaiveMode::mdrange}, {"team", NaiveMode::team}});
}

namespace {

// Views over raw bytes: deep_copy then works between any two memory spaces, so transfers are
// the same code whether Mem is HostSpace or CudaSpace.
using DeviceBytes = Kokkos::View<char*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using ConstDeviceBytes = Kokkos::View<const char*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostBytes = Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using ConstHostBytes = Kokkos::View<const char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Runs a Kokkos call, reporting what Kokkos throws (allocation failures, CUDA errors) as the
// device errors they are; tilekit's own errors pass through.
template <class F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw DeviceError(std::string("kokkos backend: ") + what + " failed: " + e.what());
  }
}

// Kokkos must be finalized before the CUDA runtime tears itself down at exit: finalizing from
// the registry's static destructor (which runs after the runtime's own exit handlers, registered
// when Kokkos::initialize first touched CUDA) failed on the H200 with cudaErrorCudartUnloading
// and terminate(). An exit handler registered right after Kokkos::initialize runs before those
// handlers (exit handlers run in reverse order of registration) and before the registry's
// destructor.
void finalize_kokkos_at_exit() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

DeviceInfo make_info() {
  DeviceInfo d;
  d.name = std::string("Kokkos ") + std::to_string(KOKKOS_VERSION / 10000) + "." +
           std::to_string(KOKKOS_VERSION / 100 % 100) + "." + std::to_string(KOKKOS_VERSION % 100) + " " +
           Exec::name();
  d.kind = exec_on_gpu() ? DeviceKind::gpu : DeviceKind::cpu;
  d.compute_units = Exec().concurrency();
  d.scratch_bytes = scratch_max();
  d.max_tile_lanes = exec_on_gpu() ? 1024 : 0;  // teams of one lane per thread on GPUs (run_kokkos checks the exact limit)
  d.simd_width = TeamPolicy::vector_length_max();
  if (exec_on_gpu()) {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION >= 40000
    const cudaDeviceProp prop = Kokkos::Cuda().cuda_device_prop();
    d.name += std::string(" on ") + prop.name;
    d.compute_units = prop.multiProcessorCount;
    d.simd_width = prop.warpSize;
    d.l2_bytes = std::size_t(prop.l2CacheSize);
    d.extra.emplace_back("concurrency", std::to_string(Exec().concurrency()) + " threads");
#endif
  } else {
    const host::CpuCaches c = host::detect_caches();
    d.name += " on " + host::cpu_model_name();
    d.simd_width = host::simd_lanes_f32();  // Serial's vector_length_max is a loop length, not lanes
    d.l1_bytes = c.l1d;
    d.l2_bytes = c.l2;
    d.l3_bytes = c.l3;
    if (const std::string id = host::cpu_id(); !id.empty()) d.extra.emplace_back("CPU", id);
    if (host_path::available()) d.extra.emplace_back("SIMD dispatch", host_path::simd_target());
  }
  d.extra.emplace_back("execution space", Exec::name());
  d.extra.emplace_back("memory space", Mem::name());
  d.extra.emplace_back("team scratch level 0", std::to_string(scratch_max()) + " B");
  d.extra.emplace_back("vector length max", std::to_string(TeamPolicy::vector_length_max()));
  return d;
}

class KokkosBackend final : public Backend {
 public:
  KokkosBackend() {
    // Adopt a Kokkos the application already initialized; otherwise initialize it here and
    // finalize it in the destructor. A finalized Kokkos cannot be initialized again.
#if KOKKOS_VERSION >= 30700
    if (Kokkos::is_finalized()) {
      unavailable_ = "Kokkos was already finalized by the application";
      return;
    }
#endif
    if (!Kokkos::is_initialized()) {
      int argc = 1;
      char name[] = "tilekit";
      char* argv[] = {name, nullptr};
      guarded("Kokkos::initialize", [&] { Kokkos::initialize(argc, argv); });
      owns_kokkos_ = true;
      std::atexit(finalize_kokkos_at_exit);
    }
    info_ = make_info();
  }

  // At exit finalize_kokkos_at_exit has already run; this covers a backend destroyed earlier.
  // tilekit holds no Kokkos memory of its own (matrices free theirs when destroyed; those that
  // outlive Kokkos are left to the process's end, see deallocate).
  ~KokkosBackend() override {
    if (owns_kokkos_ && Kokkos::is_initialized()) Kokkos::finalize();
  }

  std::string name() const override { return "kokkos"; }
  const DeviceInfo& info() const override { return info_; }
  bool available() const override { return unavailable_.empty(); }
  std::string unavailable_reason() const override { return unavailable_; }
  int priority() const override { return exec_on_gpu() ? 80 : 20; }
  // Host spaces: the kernels read and write ordinary host memory, and the host reads theirs.
  bool host_accessible() const override {
    return Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible &&
           Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  }

  static std::size_t matrix_alignment() {
    return tuning_choice<std::size_t>("kokkos.align", {{"256", 256}, {"4096", 4096}, {"kokkos", 0}});
  }
  // Matrices start on a 256-byte boundary, as cudaMalloc's do. kokkos_malloc's own pointers sit
  // 128 bytes into the allocation (after Kokkos' allocation header): a 64-wide float tile row
  // then straddles two 256-byte DRAM blocks, and the H200 transpose ran at 0.92 of the cuda
  // backend's same kernel (docs/design/kokkos-matrix-alignment.md). The tuning kokkos.align =
  // 256 (default) | 4096 | kokkos (kokkos_malloc's pointer as it is; sweep values).
  void* allocate(std::size_t bytes) override {
    // Host spaces: large matrices on transparent huge pages, as every CPU backend's
    // (host.huge_pages): the packed gemm's A rows and C rows lie a page apart, and on 4 KiB pages
    // the host's fast path ran at half openmp's speed at 1024^3.
    const std::size_t huge = exec_on_gpu() || !std::is_same_v<Mem, Kokkos::HostSpace> ? 0 : host::huge_page_alignment(bytes);
    const std::size_t align = std::max(matrix_alignment(), huge);
    try {
      return guarded("kokkos_malloc", [&] {
        // kokkos_malloc of zero bytes need not return a usable pointer; an empty matrix still
        // wants a distinct one.
        void* raw = Kokkos::kokkos_malloc<Mem>("tilekit::Matrix", std::max<std::size_t>(bytes, 1) + align);
        if (align == 0) return raw;
        auto* p = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw) + align - 1) / align * align);
        if (huge) host::advise_huge_pages(p, bytes);
        const std::lock_guard<std::mutex> lock(raw_mutex_);
        raw_of_.emplace(p, raw);
        return p;
      });
    } catch (const std::bad_alloc& e) {  // Kokkos' RawMemoryAllocationFailure is one
      throw ResourceError(std::string("kokkos backend: cannot allocate ") + std::to_string(bytes) + " bytes in " +
                          Mem::name() + ": " + e.what());
    }
  }
  // Host memory spaces have what the host has; device spaces ask their runtime.
  std::size_t memory_available() const override {
    if constexpr (std::is_same_v<Mem, Kokkos::HostSpace>) {
      return host_memory_available();
    } else {
      std::size_t free_bytes = SIZE_MAX;
      [[maybe_unused]] std::size_t total_bytes = 0;
#if defined(KOKKOS_ENABLE_CUDA)
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) free_bytes = SIZE_MAX;
#elif defined(KOKKOS_ENABLE_HIP)
      if (hipMemGetInfo(&free_bytes, &total_bytes) != hipSuccess) free_bytes = SIZE_MAX;
#endif
      return free_bytes;
    }
  }
  void deallocate(void* p) noexcept override {
    if (!p || !Kokkos::is_initialized()) return;
    {
      const std::lock_guard<std::mutex> lock(raw_mutex_);
      const auto it = raw_of_.find(p);
      if (it != raw_of_.end()) {
        p = it->second;
        raw_of_.erase(it);
      }
    }
    Kokkos::kokkos_free<Mem>(p);
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    guarded("deep_copy to device", [&] {
      Kokkos::deep_copy(DeviceBytes(static_cast<char*>(dst), bytes), ConstHostBytes(static_cast<const char*>(src), bytes));
    });
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    guarded("deep_copy to host", [&] {
      Kokkos::deep_copy(HostBytes(static_cast<char*>(dst), bytes), ConstDeviceBytes(static_cast<const char*>(src), bytes));
    });
  }
  void device_copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    guarded("deep_copy on device", [&] {
      // On the execution space instance, as the kernels run: no fence before the copy (a fence
      // would wait out the timing hold and put the host's latency back into the copy's time).
      Kokkos::deep_copy(Exec(), DeviceBytes(static_cast<char*>(dst), bytes),
                        ConstDeviceBytes(static_cast<const char*>(src), bytes));
    });
  }
  void synchronize() override {
    guarded("Kokkos::fence", [] { Kokkos::fence(); });
  }

  // On Kokkos::Cuda: the device time between two CUDA events on the stream of Kokkos' default
  // instance, behind the same hold (../gpu/stream_hold.cuh), as the cuda backend times its
  // kernels, so that the two backends' figures compare kernels with kernels. The host clock
  // around launch and fence (the tuning kokkos.timer=host, and every host space) adds Kokkos' launch
  // and the fence's wake-up, 6-17 us on the H200: ~10% of an 8192^2 transpose
  // (docs/design/gpu-timing-stream-hold.md). Kokkos has no portable device timer.
  double time_seconds(const std::function<void()>& fn) override {
#if defined(KOKKOS_ENABLE_CUDA)
    const bool events = tuning_choice<bool>("kokkos.timer", {{"events", true}, {"host", false}});
    if (exec_is_cuda() && events) {
      auto check = [](cudaError_t r, const char* what) {
        if (r != cudaSuccess) throw DeviceError(std::string("kokkos backend: ") + what + ": " + cudaGetErrorString(r));
      };
      synchronize();
      const cudaStream_t stream = Exec().cuda_stream();
      cudaEvent_t start = nullptr, stop = nullptr;
      check(cudaEventCreate(&start), "cudaEventCreate");
      check(cudaEventCreate(&stop), "cudaEventCreate");
      float ms = 0;
      try {
        check(gpu::stream_hold(stream), "the timing hold's launch");
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        fn();
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        synchronize();  // anything fn left elsewhere (a deep_copy's own fence has run already)
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      } catch (...) {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        throw;
      }
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      return double(ms) * 1e-3;
    }
#endif
    return Backend::time_seconds(fn);
  }

  // On a GPU: a parallel_for copy and FMA chains in the space, beside the datasheet estimate.
  // On the host: the CPU measurement every CPU backend shares (Highway's widest FMA on the
  // space's threads, streaming copies at memory, L3 and L2), since Kokkos host code compiled for
  // baseline x86-64 issues no FMA at all: the roof is the device's, not that of one compilation.
  // The space's own copy is reported beside it.
  Ceilings measure_ceilings() override {
    return guarded("roofline ceilings", [&] {
      Kokkos::Timer timer;
      Ceilings c;
      const std::size_t bytes = std::max<std::size_t>(std::size_t(256) << 20, 8 * info_.l2_bytes);
      const double space_copy = kokkos_copy_gbps(bytes);
      if (!exec_on_gpu()) {
        host::CpuCaches caches;
        caches.l1d = info_.l1_bytes;
        caches.l2 = info_.l2_bytes;
        caches.l3 = info_.l3_bytes;
        c = host::measure_cpu_ceilings(info_.compute_units, caches);
        c.bandwidth_method += fmt::format("; Kokkos parallel_for copy of {} MiB: {:.1f} GB/s", bytes >> 20, space_copy);
        c.gbps = std::max(c.gbps, space_copy);
      } else {
        // The faster of a parallel_for copy and the space's deep_copy (the copy peer `compare`
        // times): a row of the peer itself must not stand above the roof (it did, at 120%, with
        // the parallel_for copy alone on the H200).
        void* src = allocate(bytes);
        void* dst = allocate(bytes);
        device_copy(dst, src, bytes);
        double best = 1e30;
        for (int r = 0; r < 5; ++r) best = std::min(best, time_seconds([&] { device_copy(dst, src, bytes); }));
        deallocate(dst);
        deallocate(src);
        const double deep_copy = 2.0 * double(bytes) / best * 1e-9;
        c.gbps = std::max(space_copy, deep_copy);
        c.bandwidth_method = fmt::format("copy of {} MiB in {}, best of 5: parallel_for {:.0f} GB/s, deep_copy {:.0f} GB/s",
                                         bytes >> 20, Mem::name(), space_copy, deep_copy);
        // Enough work items to fill every SM many times over, each 8 chains of `iters` FMAs.
        const std::int64_t items = std::int64_t(info_.compute_units) * 2048 * 4;
        c.gflops_f32 = kokkos_fma_gflops<float>(items, 4096);
        c.gflops_f64 = kokkos_fma_gflops<double>(items, 1024);
        c.compute_method = fmt::format("Kokkos parallel_for, {} work items x 8 FMA chains, best of 5", items);
        // Where the double gemm runs on the FP64 tensor cores, the double roof is theirs (as the
        // cuda backend's): without it the DMMA team stood at 150% of a DFMA roof.
        if (const double dmma = mma::dmma_peak_gflops(info_.compute_units); dmma > 0) {
          c.gflops_f64 = std::max(c.gflops_f64, dmma);
          c.compute_method += fmt::format("; fp64: DMMA (mma.sync f64) chains in Kokkos teams, 4 per warp, {:.0f} GFLOP/s", dmma);
        }
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION >= 40000
        const cudaDeviceProp prop = Kokkos::Cuda().cuda_device_prop();
        int dev = 0, clock = 0, mem_clock = 0, bus = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess) {
          const gpu::GpuEstimate e =
              gpu::estimate_gpu(false, prop.major, prop.minor, "", prop.multiProcessorCount, clock, mem_clock, bus);
          c.est_gflops_f32 = e.gflops_f32;
          c.est_gflops_f64 = e.gflops_f64;
          c.est_gbps = e.gbps;
          c.estimate_basis = e.basis;
        }
#endif
      }
      c.measure_seconds = timer.seconds();
      return c;
    });
  }

  Plan plan(Variant v, const Problem& p, const TileConfig& requested) const override {
    switch (p.op) {
      case Op::gemm: return gemm_plan(v, p, requested);
      case Op::transpose: return transpose_plan(v, p, requested);
      case Op::conv2d: return conv2d_plan(v, p, requested);
    }
    return {};
  }
  std::string describe_launch(const Plan& pl) const override {
    const OpPlan* op = pl.get<OpPlan>();
    return op ? describe(op->launch) : std::string();
  }

  void gemm(const Plan& pl, const GemmArgs<float>& a) override { run("gemm", [&] { kokkos::gemm(pl, a); }); }
  void gemm(const Plan& pl, const GemmArgs<double>& a) override { run("gemm", [&] { kokkos::gemm(pl, a); }); }
  void transpose(const Plan& pl, const TransposeArgs<float>& a) override {
    run("transpose", [&] { kokkos::transpose(pl, a); });
  }
  void transpose(const Plan& pl, const TransposeArgs<double>& a) override {
    run("transpose", [&] { kokkos::transpose(pl, a); });
  }
  void conv2d(const Plan& pl, const Conv2dArgs<float>& a) override { run("conv2d", [&] { kokkos::conv2d(pl, a); }); }
  void conv2d(const Plan& pl, const Conv2dArgs<double>& a) override { run("conv2d", [&] { kokkos::conv2d(pl, a); }); }

 private:
  template <class F>
  static void run(const char* op, F&& f) {
    guarded(op, f);
  }

  DeviceInfo info_;
  bool owns_kokkos_ = false;
  std::string unavailable_;
  std::mutex raw_mutex_;
  std::unordered_map<void*, void*> raw_of_;  // aligned matrix pointer -> kokkos_malloc's
};

}  // namespace
}  // namespace kokkos

namespace detail {
std::unique_ptr<Backend> make_kokkos_backend() { return std::make_unique<kokkos::KokkosBackend>(); }
}  // namespace detail

}  // namespace tilekit
