#include <algorithm>
#include <vector>

#include "serial.hpp"

namespace tilekit::serial {

// Every output element reads its R x R neighbourhood straight from the image, checking the
// borders on every tap.
template <class T>
void conv2d_naive(const Conv2dArgs<T>& a) {
  const index_t half = a.r / 2;
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

// The PMPP input-tile scheme on a CPU: copy the tile plus its halo into a small buffer once
// (zero outside the image, so the inner loops need no border checks), then compute the whole
// output tile from that buffer, which stays in L1.
template <class T>
void conv2d_tiled(const Conv2dArgs<T>& a, const TileConfig& t) {
  const index_t half = a.r / 2, sw = t.cols + a.r - 1;
  std::vector<T> tile(std::size_t((t.rows + a.r - 1) * sw));
  for (index_t i0 = 0; i0 < a.h; i0 += t.rows)
    for (index_t j0 = 0; j0 < a.w; j0 += t.cols) {
      const index_t th = std::min<index_t>(t.rows, a.h - i0), tw = std::min<index_t>(t.cols, a.w - j0);
      for (index_t y = 0; y < th + a.r - 1; ++y)  // load phase: tile plus halo, zero fill
        for (index_t x = 0; x < tw + a.r - 1; ++x) {
          const index_t gy = i0 + y - half, gx = j0 + x - half;
          tile[std::size_t(y * sw + x)] = (gy >= 0 && gy < a.h && gx >= 0 && gx < a.w) ? a.in[gy * a.ld_in + gx] : T(0);
        }
      for (index_t i = 0; i < th; ++i)  // compute phase: no border checks
        for (index_t j = 0; j < tw; ++j) {
          T acc = 0;
          for (index_t fi = 0; fi < a.r; ++fi)
            for (index_t fj = 0; fj < a.r; ++fj) acc += a.filter[fi * a.r + fj] * tile[std::size_t((i + fi) * sw + j + fj)];
          a.out[(i0 + i) * a.ld_out + j0 + j] = acc;
        }
    }
}

template void conv2d_naive<float>(const Conv2dArgs<float>&);
template void conv2d_naive<double>(const Conv2dArgs<double>&);
template void conv2d_tiled<float>(const Conv2dArgs<float>&, const TileConfig&);
template void conv2d_tiled<double>(const Conv2dArgs<double>&, const TileConfig&);

}  // namespace tilekit::serial
