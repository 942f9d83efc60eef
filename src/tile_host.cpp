// The threads of the tile layer's CPU executor (include/tilekit/tile/host.hpp: run_host): here,
// compiled with OpenMP when the openmp backend is built, so that a program's translation units
// launch tile kernels on the openmp backend however they are compiled themselves.
#include <algorithm>

#include "tilekit/tile/host.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tilekit::detail {

void tile_host_parallel(index_t tiles, int threads, void (*body)(void*, index_t, index_t), void* ctx) {
  if (tiles <= 0) return;
#if defined(_OPENMP)
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      // OpenMP's static schedule: thread i of n takes tiles/n tiles, one more for the first tiles % n.
      const index_t n = omp_get_num_threads(), i = omp_get_thread_num();
      const index_t per = tiles / n, extra = tiles % n;
      const index_t first = i * per + std::min(i, extra), last = first + per + (i < extra ? 1 : 0);
      if (first < last) body(ctx, first, last);
    }
    return;
  }
#endif
  (void)threads;
  body(ctx, 0, tiles);
}

}  // namespace tilekit::detail
