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

template void conv2d_naive<float>(const Conv2dArgs<float>&);
template void conv2d_naive<double>(const Conv2dArgs<double>&);

}  // namespace tilekit::serial
