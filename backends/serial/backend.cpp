#include <fmt/format.h>

#include "serial.hpp"
#include "common/portable/conv2d_tiled.hpp"
#include "common/portable/gemm_tiled.hpp"
#include "common/portable/transpose_tiled.hpp"
#include "tilekit/ops.hpp"

namespace tilekit {
namespace serial {
namespace {

class SerialBackend final : public host::HostBackend {
 public:
  SerialBackend() : info_(host::cpu_device_info(1)) {}
  std::string name() const override { return "serial"; }
  const DeviceInfo& info() const override { return info_; }
  int priority() const override { return 10; }
  // The reference offers no `optimized` variant: asking for one is an error, not a fallback.
  std::vector<Variant> variants() const override { return {Variant::naive, Variant::tiled}; }

  TileConfig resolve_tile(Variant v, const Problem& p, const TileConfig& requested) const override {
    TileConfig t = host::resolve_cpu_tile(*this, p, requested);
    return v == Variant::naive ? TileConfig{} : t;
  }
  std::string describe_launch(Variant v, const Problem& p, const TileConfig& t) const override {
    if (v == Variant::naive) return "1 thread, plain loops";
    return fmt::format("1 thread, cache blocks {} ({} KiB of the {} KiB L2)", t.str(),
                       tile_scratch_bytes(p, t) / 1024, info_.l2_bytes / 1024);
  }

  void gemm(Variant v, const GemmArgs<float>& a, const TileConfig& t) override { run_gemm(v, a, t); }
  void gemm(Variant v, const GemmArgs<double>& a, const TileConfig& t) override { run_gemm(v, a, t); }
  void transpose(Variant v, const TransposeArgs<float>& a, const TileConfig& t) override { run_transpose(v, a, t); }
  void transpose(Variant v, const TransposeArgs<double>& a, const TileConfig& t) override { run_transpose(v, a, t); }
  void conv2d(Variant v, const Conv2dArgs<float>& a, const TileConfig& t) override { run_conv2d(v, a, t); }
  void conv2d(Variant v, const Conv2dArgs<double>& a, const TileConfig& t) override { run_conv2d(v, a, t); }

 private:
  // The tiled variants: one thread runs every tile, in order.
  static constexpr auto on_this_thread = [](const tile::Shape& s, const auto& kernel) { tile::run_host(s, kernel, 1); };
  template <class T> static void run_gemm(Variant v, const GemmArgs<T>& a, const TileConfig& t) {
    if (v == Variant::naive) return gemm_naive(a);
    portable::gemm_tiled<false>(a, t, on_this_thread);
  }
  template <class T> static void run_transpose(Variant v, const TransposeArgs<T>& a, const TileConfig& t) {
    if (v == Variant::naive) return transpose_naive(a);
    portable::transpose_tiled(a, t, {t.cols, 1}, on_this_thread);
  }
  template <class T> static void run_conv2d(Variant v, const Conv2dArgs<T>& a, const TileConfig& t) {
    if (v == Variant::naive) return conv2d_naive(a);
    portable::conv2d_tiled<false>(a, t, {t.cols, t.rows}, 1, on_this_thread);
  }
  DeviceInfo info_;
};

}  // namespace
}  // namespace serial

namespace detail {
std::unique_ptr<Backend> make_serial_backend() { return std::make_unique<serial::SerialBackend>(); }
}  // namespace detail

}  // namespace tilekit
