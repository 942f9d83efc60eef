// The optimized variants on a host execution space (host_packed.hpp).
#include "host_packed.hpp"

#include <atomic>

#include "kokkos.hpp"
#include "tilekit/ops.hpp"

#if defined(TILEKIT_KOKKOS_HOST_SIMD)
#include "common/host/packed.hpp"
#endif

namespace tilekit::kokkos::host_path {

#if defined(TILEKIT_KOKKOS_HOST_SIMD)

namespace {

const DeviceInfo& cpu_info() {
  static const DeviceInfo info = host::cpu_device_info(Exec().concurrency());
  return info;
}

// f(i) for every i < n on the space's threads; returns when all are done. Static: each thread
// takes one run of consecutive i; dynamic: the threads take the next i as they finish one.
template <class F>
void par_for(const char* name, index_t n, const F& f, bool dynamic = false) {
  if (n <= 0) return;
  if (dynamic)
    Kokkos::parallel_for(
        name, Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<index_t>>(0, n).set_chunk_size(1),
        [&](const index_t i) { f(i); });
  else
    Kokkos::parallel_for(name, Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(0, n), [&](const index_t i) { f(i); });
  Exec().fence();
}

}  // namespace

bool available() { return !exec_on_gpu(); }

TileConfig tile(const Problem& p, const TileConfig& requested) {
  const DeviceInfo& info = cpu_info();
  if (requested.is_auto()) {
    switch (p.op) {
      case Op::gemm: return host::gemm_packed_tile(info, p.dtype);
      case Op::transpose: return host::transpose_packed_tile(info, p.dtype);
      case Op::conv2d: return host::conv2d_packed_tile(info, p);
    }
  }
  check_tile_fits(p, requested, info.l2_bytes,
                  "backend 'kokkos' on its host space (the L2 cache, " + std::to_string(info.l2_bytes / 1024) + " KiB)");
  return p.op == Op::gemm ? requested : TileConfig{requested.rows, requested.cols, 0};
}

std::string gemm_kernel(DType t) {
  return "the host's packed gemm (" + host::gemm_packed_kernel(t) +
         "): one team of the space's threads; per K step they take the blocks of C, then the next step's A and B "
         "panel pieces, one at a time";
}
std::string transpose_kernel(DType t) {
  return "the host's transpose: a parallel_for over blocks, " + host::transpose_packed_kernel(t) +
         ", streaming stores for outputs the caches cannot keep";
}
std::string conv2d_kernel(DType t) {
  return "the host's conv2d: a parallel_for over tiles, " + host::conv2d_packed_kernel(t);
}

std::string simd_target() {
  // openmp.simd caps the host kernels' dispatch, process-wide: applied here too, so that it holds
  // where the openmp backend is not created (a bad value is the openmp backend's to report).
  static const bool capped = [] {
    try {
      if (const std::string cap = tuning("openmp.simd"); cap != "auto") host::simd::cap_target(cap);
    } catch (const Error&) {
    }
    return true;
  }();
  (void)capped;
  return host::simd::target_name();
}

// f(rank, size, barrier) on one team of the space's threads (one parallel_for, team barriers
// between the gemm's steps: host::gemm_packed).
template <class F>
void team_run(const char* name, const F& f) {
  using Policy = Kokkos::TeamPolicy<Exec>;
  const auto body = [&](const typename Policy::member_type& m) {
    f(m.team_rank(), m.team_size(), [&] { m.team_barrier(); });
  };
  const int most = Policy(1, 1).team_size_max(body, Kokkos::ParallelForTag());
  const int size = std::max(1, std::min(Exec().concurrency(), most));
  Kokkos::parallel_for(name, Policy(1, size), body);
  Exec().fence();
}

template <class T>
void gemm(const GemmArgs<T>& g, const TileConfig& t) {
  host::gemm_packed(g, t, cpu_info().l3_bytes, Exec().concurrency(),
                    [](const auto& f) { team_run("tilekit::kokkos::gemm_host_packed", f); });
}

template <class T>
void transpose(const TransposeArgs<T>& a, const TileConfig& t) {
  const bool stream = host::transpose_packed_streams(std::size_t(a.rows * a.cols) * sizeof(T), cpu_info().l3_bytes);
  const index_t tiles_r = host::ceil_div(a.rows, t.rows), tiles_c = host::ceil_div(a.cols, t.cols);
  par_for("tilekit::kokkos::transpose_host", tiles_r * tiles_c, [&](index_t b) {
    const index_t bi = b / tiles_c, bj = b % tiles_c;
    host::simd::transpose_block(a, bi * t.rows, std::min(a.rows, (bi + 1) * t.rows), bj * t.cols,
                                std::min(a.cols, (bj + 1) * t.cols), stream);
    // Each thread orders its own streaming stores (an sfence per block is noise next to it).
    if (stream) host::simd::stream_fence();
  });
}

template <class T>
void conv2d(const Conv2dArgs<T>& a, const TileConfig& t) {
  const host::Conv2dBuffer buf = host::conv2d_packed_buffer(dtype_of<T>(), a.r, t);
  const host::Conv2dCall call = host::conv2d_packed_call(a);
  const index_t tiles_r = host::ceil_div(a.h, t.rows), tiles_c = host::ceil_div(a.w, t.cols);
  std::atomic<bool> out_of_memory{false};
  par_for("tilekit::kokkos::conv2d_host", tiles_r * tiles_c, [&](index_t b) {
    T* tile = static_cast<T*>(host::tls_a_pack.get(buf.bytes));
    if (!tile) {
      out_of_memory = true;
      return;
    }
    host::conv2d_packed_tile_run(a, t, b / tiles_c, b % tiles_c, tile, buf.ld, call);
  }, call.dynamic);
  if (out_of_memory)
    throw Error("backend 'kokkos': cannot allocate " + std::to_string(buf.bytes) + " bytes of conv2d tile buffer per thread");
}

#else  // the host kernels are not compiled in: the team kernels run everywhere

bool available() { return false; }
TileConfig tile(const Problem&, const TileConfig& requested) { return requested; }
std::string gemm_kernel(DType) { return {}; }
std::string transpose_kernel(DType) { return {}; }
std::string conv2d_kernel(DType) { return {}; }
std::string simd_target() { return {}; }
template <class T> void gemm(const GemmArgs<T>&, const TileConfig&) {}
template <class T> void transpose(const TransposeArgs<T>&, const TileConfig&) {}
template <class T> void conv2d(const Conv2dArgs<T>&, const TileConfig&) {}

#endif

template void gemm<float>(const GemmArgs<float>&, const TileConfig&);
template void gemm<double>(const GemmArgs<double>&, const TileConfig&);
template void transpose<float>(const TransposeArgs<float>&, const TileConfig&);
template void transpose<double>(const TransposeArgs<double>&, const TileConfig&);
template void conv2d<float>(const Conv2dArgs<float>&, const TileConfig&);
template void conv2d<double>(const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::kokkos::host_path
