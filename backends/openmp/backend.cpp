// The openmp backend object: host memory (HostBackend), tile choice per variant, launch
// descriptions, and the peers. The kernels are in gemm.cpp, transpose.cpp and conv2d.cpp.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "openmp.hpp"
#include "common/portable/conv2d_tiled.hpp"
#include "common/portable/gemm_tiled.hpp"
#include "common/portable/transpose_tiled.hpp"
#include "tilekit/ops.hpp"
#include "tilekit/tunings.hpp"

namespace tilekit {
namespace openmp {

int max_threads() { return std::max(1, omp_get_max_threads()); }

namespace {

// Every CPU backend's roofline peak (serial's too) is measured with Highway's widest FMA, installed
// before main: this object is always linked, since the registry names make_openmp_backend.
const bool kSimdFmaInstalled = (host::set_simd_fma({&simd::fma_chains, &simd::target_name, simd::fma_chain_count()}), true);

class OpenmpBackend final : public host::HostBackend {
 public:
  OpenmpBackend() : info_(host::cpu_device_info(max_threads())) {
    // openmp.simd=avx2 (or sse4, ssse3, scalar...) caps the dispatch, process-wide, when the
    // backend is created: compares instruction sets on one machine and lets the test suite cover
    // every compiled path.
    try {
      if (const std::string cap = tuning("openmp.simd"); cap != "auto" && !simd::cap_target(cap))
        unavailable_ = fmt::format("openmp.simd={} is not a compiled target this CPU runs (compiled: {})", cap,
                                   simd::compiled_targets());
    } catch (const Error& e) {  // a bad TILEKIT_* environment: every tuning read reports it
      unavailable_ = e.what();
    }
    info_.extra.emplace_back("OpenMP", fmt::format("{} (spec date), {} threads", _OPENMP, max_threads()));
    info_.extra.emplace_back("SIMD dispatch", simd::target_name());
#ifdef TILEKIT_OPENMP_HAVE_OPENBLAS
    info_.extra.emplace_back("OpenBLAS", openblas_description());
#endif
  }
  std::string name() const override { return "openmp"; }
  const DeviceInfo& info() const override { return info_; }
  bool available() const override { return unavailable_.empty(); }
  std::string unavailable_reason() const override { return unavailable_; }
  int priority() const override { return 50; }

  Plan plan(Variant v, const Problem& p, const TileConfig& requested) const override {
    Plan pl;
    pl.tile = tile(v, p, requested);
    if (v == Variant::optimized && p.op == Op::gemm) {
      // The sweep tunings' options ride with the plan (only when they differ from the defaults).
      if (const GemmOptions o = gemm_options(); !o.is_default()) pl.detail = std::make_shared<const GemmOptions>(o);
    }
    return pl;
  }

  std::string describe_launch(const Plan& pl) const override {
    const Problem& p = pl.problem;
    const TileConfig& t = pl.tile;
    const int threads = max_threads();
    if (pl.variant == Variant::naive) return fmt::format("{} threads, plain loops, rows split statically", threads);
    if (pl.variant == Variant::optimized) {
      switch (p.op) {
        case Op::gemm: return gemm_optimized_launch(p.dtype, t);
        case Op::transpose: return transpose_optimized_launch(p.dtype, t);
        case Op::conv2d: return conv2d_optimized_launch(p, t);
      }
    }
    return fmt::format("{} threads over output tiles, cache blocks {} ({} KiB of the {} KiB L2)", threads, t.str(),
                       tile_scratch_bytes(p, t) / 1024, info_.l2_bytes / 1024);
  }

  TileConfig tile(Variant v, const Problem& p, const TileConfig& requested) const {
    if (v == Variant::naive) return {};
    if (v == Variant::tiled && p.op == Op::transpose && requested.is_auto()) return transpose_tiled_tile(info_, p.dtype);
    if (v == Variant::optimized && requested.is_auto()) {
      switch (p.op) {
        case Op::gemm: return gemm_optimized_tile(info_, p.dtype);
        case Op::transpose: return transpose_optimized_tile(info_, p.dtype);
        case Op::conv2d: return conv2d_optimized_tile(info_, p);
      }
    }
    // Explicit tiles, all variants: the L2 rule every CPU backend's tiles obey (for the optimized
    // gemm, its packed A block (rows x depth) and B block (depth x cols) share the L2).
    return host::resolve_cpu_tile(*this, p, requested);
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

#ifdef TILEKIT_OPENMP_HAVE_OPENBLAS
  std::string gemm_peer_name() const override { return "openblas"; }
  void gemm_peer(const GemmArgs<float>& g) override { openblas_gemm(g); }
  void gemm_peer(const GemmArgs<double>& g) override { openblas_gemm(g); }
#endif

  void gemm(const Plan& p, const GemmArgs<float>& a) override { run_gemm(p, a); }
  void gemm(const Plan& p, const GemmArgs<double>& a) override { run_gemm(p, a); }
  void transpose(const Plan& p, const TransposeArgs<float>& a) override { run_transpose(p.variant, a, p.tile); }
  void transpose(const Plan& p, const TransposeArgs<double>& a) override { run_transpose(p.variant, a, p.tile); }
  void conv2d(const Plan& p, const Conv2dArgs<float>& a) override { run_conv2d(p.variant, a, p.tile); }
  void conv2d(const Plan& p, const Conv2dArgs<double>& a) override { run_conv2d(p.variant, a, p.tile); }

 private:
  // The tiled variants: OpenMP threads over tiles, each tile on one thread.
  static constexpr auto on_all_threads = [](const tile::Shape& s, const auto& kernel) {
    tile::run_host(s, kernel, max_threads());
  };
  template <class T> void run_gemm(const Plan& p, const GemmArgs<T>& a) const {
    switch (p.variant) {
      case Variant::naive: return gemm_naive(a);
      case Variant::tiled: return portable::gemm_tiled<false>(a, p.tile, on_all_threads);
      case Variant::optimized: {
        static const GemmOptions defaults;
        const GemmOptions* o = p.get<GemmOptions>();
        return gemm_optimized(a, p.tile, info_.l3_bytes, o ? *o : defaults);
      }
    }
  }
  template <class T> void run_transpose(Variant v, const TransposeArgs<T>& a, const TileConfig& t) const {
    switch (v) {
      case Variant::naive: return transpose_naive(a);
      case Variant::tiled: return portable::transpose_tiled(a, t, {t.cols, 1}, on_all_threads);
      case Variant::optimized: return transpose_optimized(a, t, info_.l3_bytes);
    }
  }
  template <class T> static void run_conv2d(Variant v, const Conv2dArgs<T>& a, const TileConfig& t) {
    switch (v) {
      case Variant::naive: return conv2d_naive(a);
      case Variant::tiled: return portable::conv2d_tiled<false>(a, t, {t.cols, t.rows}, 1, on_all_threads);
      case Variant::optimized: return conv2d_optimized(a, t);
    }
  }
  DeviceInfo info_;
  std::string unavailable_;
};

}  // namespace
}  // namespace openmp

namespace detail {
std::unique_ptr<Backend> make_openmp_backend() { return std::make_unique<openmp::OpenmpBackend>(); }
}  // namespace detail

}  // namespace tilekit
