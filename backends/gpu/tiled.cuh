// The tiled variants on the GPU: the portable kernels of backends/common/portable/, written once on the
// tile layer (include/tilekit/tile.hpp), whose GPU executor compiles them here to explicit
// extern __shared__ memory and __syncthreads() (nvcc for cuda, hipcc for hip).
#pragma once

#include "common/portable/conv2d_tiled.hpp"
#include "common/portable/gemm_tiled.hpp"
#include "common/portable/transpose_tiled.hpp"
#include "kernels.hpp"

namespace tilekit::gpu {

// The `run` the portable launchers take: a launch on the backend's stream...
inline auto on_stream(gpuStream_t s) {
  return [s](const tile::Shape& shape, const auto& kernel) { tile::run_gpu(s, shape, kernel); };
}
// ...or, launching nothing, the kernel function that would run (for the occupancy calculator).
struct EntryOf {
  const void** out;
  template <class K>
  void operator()(const tile::Shape&, const K&) const {
    *out = reinterpret_cast<const void*>(&tile::detail::tile_entry<K>);
  }
};

}  // namespace tilekit::gpu
