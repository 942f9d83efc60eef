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

  Plan plan(Variant v, const Problem& p, const TileConfig& requested) const override {
    Plan pl;
    const TileConfig t = host::resolve_cpu_tile(*this, p, requested);
    pl.tile = v == Variant::naive ? TileConfig{} : t;
    return pl;
  }
  std::string describe_launch(const Plan& pl) const override {
    if (pl.variant == Variant::naive) return "1 thread, plain loops";
    return fmt::format("1 thread, cache blocks {} ({} KiB of the {} KiB L2)", pl.tile.str(),
                       tile_scratch_bytes(pl.problem, pl.tile) / 1024, info_.l2_bytes / 1024);
  }

  void gemm(const Plan& p, const GemmArgs<float>& a) override { run_gemm(p.variant, a, p.tile); }
  void gemm(const Plan& p, const GemmArgs<double>& a) override { run_gemm(p.variant, a, p.tile); }
  void transpose(const Plan& p, const TransposeArgs<float>& a) override { run_transpose(p.variant, a, p.tile); }
  void transpose(const Plan& p, const TransposeArgs<double>& a) override { run_transpose(p.variant, a, p.tile); }
  void conv2d(const Plan& p, const Conv2dArgs<float>& a) override { run_conv2d(p.variant, a, p.tile); }
  void conv2d(const Plan& p, const Conv2dArgs<double>& a) override { run_conv2d(p.variant, a, p.tile); }

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
