#include <algorithm>

#include "serial.hpp"

namespace tilekit::serial {

// Reads rows in order, writes columns: every write lands on a different cache line.
template <class T>
void transpose_naive(const TransposeArgs<T>& a) {
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < a.cols; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
}

// Square-ish blocks small enough that the block's input lines and output lines all stay in L1,
// so each cache line is fetched once however the block is walked.
template <class T>
void transpose_tiled(const TransposeArgs<T>& a, const TileConfig& t) {
  for (index_t i0 = 0; i0 < a.rows; i0 += t.rows)
    for (index_t j0 = 0; j0 < a.cols; j0 += t.cols) {
      const index_t i1 = std::min(a.rows, i0 + t.rows), j1 = std::min(a.cols, j0 + t.cols);
      for (index_t i = i0; i < i1; ++i)
        for (index_t j = j0; j < j1; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
    }
}

template void transpose_naive<float>(const TransposeArgs<float>&);
template void transpose_naive<double>(const TransposeArgs<double>&);
template void transpose_tiled<float>(const TransposeArgs<float>&, const TileConfig&);
template void transpose_tiled<double>(const TransposeArgs<double>&, const TileConfig&);

}  // namespace tilekit::serial
