// conv2d, all three variants; the optimized one's register-blocked kernels are in conv2d_simd.cpp.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "openmp.hpp"

namespace tilekit::openmp {

// ---------------------------------------------------------------- naive
// The naive variants: the serial backend's plain loops with the outermost loop split across the
// OpenMP threads, nothing else. They show what threads alone buy when every access pattern is
// left as the textbook writes it.

// Every output reads its R x R neighbourhood straight from the image, checking the borders on
// every tap.
template <class T>
void conv2d_naive(const Conv2dArgs<T>& a) {
  const index_t half = a.r / 2;
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < a.h; ++i)
    for (index_t j = 0; j < a.w; ++j) {
      T acc = 0;
      for (index_t fi = 0; fi < a.r; ++fi) {
        const index_t y = i + fi - half;
        if (y < 0 || y >= a.h) continue;
        for (index_t fj = 0; fj < a.r; ++fj) {
          const index_t x = j + fj - half;
          if (x >= 0 && x < a.w) acc += a.filter[fi * a.r + fj] * a.in[y * a.ld_in + x];
        }
      }
      a.out[i * a.ld_out + j] = acc;
    }
}

// ---------------------------------------------------------------- tiled
// The tiled variant is the portable one (backends/common/portable/conv2d_tiled.hpp), run by backend.cpp.

// ---------------------------------------------------------------- optimized
// The optimized variants' drivers: tile choice, the static split of the work across the OpenMP
// threads, and per-thread workspaces. The arithmetic is in the dispatched kernels (simd.hpp).

// The host's blocking and per-tile work (backends/common/host/packed.cpp), which kokkos on a
// host space shares.
TileConfig conv2d_optimized_tile(const DeviceInfo& info, const Problem& p) { return host::conv2d_packed_tile(info, p); }

template <class T>
void conv2d_optimized(const Conv2dArgs<T>& a, const TileConfig& t) {
  const host::Conv2dBuffer buf = host::conv2d_packed_buffer(dtype_of<T>(), a.r, t);
  const host::Conv2dCall call = host::conv2d_packed_call(a);
  const index_t tiles_r = ceil_div(a.h, t.rows), tiles_c = ceil_div(a.w, t.cols);
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel
  {
    T* tile = static_cast<T*>(tls_a_pack.get(buf.bytes));
    if (!tile) out_of_memory = true;
    const auto run = [&](index_t b) {
      if (tile) host::conv2d_packed_tile_run(a, t, b / tiles_c, b % tiles_c, tile, buf.ld, call);
    };
    // The schedule is a clause, not a value: one loop per kind.
    if (call.dynamic) {
#pragma omp for schedule(dynamic, 1)
      for (index_t b = 0; b < tiles_r * tiles_c; ++b) run(b);
    } else {
#pragma omp for schedule(static)
      for (index_t b = 0; b < tiles_r * tiles_c; ++b) run(b);
    }
  }
  if (out_of_memory)
    throw Error(fmt::format("backend 'openmp': cannot allocate {} bytes of conv2d tile buffer per thread", buf.bytes));
}

std::string conv2d_optimized_launch(const Problem& p, const TileConfig& t) {
  return fmt::format("{} threads over {} tiles (+{} halo), {}", max_threads(), t.str(),
                     std::max<index_t>(p.k - 1, 0), host::conv2d_packed_kernel(p.dtype, p.k));
}

template void conv2d_naive<float>(const Conv2dArgs<float>&);
template void conv2d_naive<double>(const Conv2dArgs<double>&);
template void conv2d_optimized<float>(const Conv2dArgs<float>&, const TileConfig&);
template void conv2d_optimized<double>(const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::openmp
