#include <omp.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "openmp.hpp"
#include "tilekit/ops.hpp"

namespace tilekit {
namespace openmp {

int max_threads() { return std::max(1, omp_get_max_threads()); }

namespace {

class OpenmpBackend final : public host::HostBackend {
 public:
  OpenmpBackend() : info_(host::cpu_device_info(max_threads())) {
    info_.extra.emplace_back("OpenMP", fmt::format("{} (spec date), {} threads", _OPENMP, max_threads()));
  }
  std::string name() const override { return "openmp"; }
  const DeviceInfo& info() const override { return info_; }
  int priority() const override { return 50; }
  std::vector<Variant> variants() const override { return {Variant::naive, Variant::tiled}; }

  TileConfig resolve_tile(Variant v, const Problem& p, const TileConfig& requested) const override {
    if (v == Variant::naive) return {};
    return host::resolve_cpu_tile(*this, p, requested);
  }

  std::string describe_launch(Variant v, const Problem& p, const TileConfig& t) const override {
    const int threads = max_threads();
    if (v == Variant::naive) return fmt::format("{} threads, plain loops, rows split statically", threads);
    return fmt::format("{} threads over output tiles, cache blocks {} ({} KiB of the {} KiB L2)", threads, t.str(),
                       tile_scratch_bytes(p, t) / 1024, info_.l2_bytes / 1024);
  }

  // The copy peer: the same bytes as one memcpy per thread, so that, like every kernel here,
  // it uses all the cores' load/store units (a single memcpy leaves bandwidth unused).
  void device_copy(void* dst, const void* src, std::size_t bytes) override {
    const int threads = max_threads();
    // Whole cache lines per thread, so no line is written by two threads.
    const std::size_t chunk = (bytes / std::size_t(threads) + 63) / 64 * 64;
#pragma omp parallel num_threads(threads)
    {
      const std::size_t begin = std::min(bytes, chunk * std::size_t(omp_get_thread_num()));
      const std::size_t end = std::min(bytes, begin + chunk);
      if (end > begin) std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
    }
  }

  void gemm(Variant v, const GemmArgs<float>& a, const TileConfig& t) override { run_gemm(v, a, t); }
  void gemm(Variant v, const GemmArgs<double>& a, const TileConfig& t) override { run_gemm(v, a, t); }
  void transpose(Variant v, const TransposeArgs<float>& a, const TileConfig& t) override { run_transpose(v, a, t); }
  void transpose(Variant v, const TransposeArgs<double>& a, const TileConfig& t) override { run_transpose(v, a, t); }
  void conv2d(Variant v, const Conv2dArgs<float>& a, const TileConfig& t) override { run_conv2d(v, a, t); }
  void conv2d(Variant v, const Conv2dArgs<double>& a, const TileConfig& t) override { run_conv2d(v, a, t); }

 private:
  template <class T> static void run_gemm(Variant v, const GemmArgs<T>& a, const TileConfig& t) {
    v == Variant::naive ? gemm_naive(a) : gemm_tiled(a, t);
  }
  template <class T> static void run_transpose(Variant v, const TransposeArgs<T>& a, const TileConfig& t) {
    v == Variant::naive ? transpose_naive(a) : transpose_tiled(a, t);
  }
  template <class T> static void run_conv2d(Variant v, const Conv2dArgs<T>& a, const TileConfig& t) {
    v == Variant::naive ? conv2d_naive(a) : conv2d_tiled(a, t);
  }
  DeviceInfo info_;
};

}  // namespace
}  // namespace openmp

namespace detail {
std::unique_ptr<Backend> make_openmp_backend() { return std::make_unique<openmp::OpenmpBackend>(); }
}  // namespace detail

}  // namespace tilekit
