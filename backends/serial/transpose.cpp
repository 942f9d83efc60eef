#include "serial.hpp"

namespace tilekit::serial {

// Reads rows in order, writes columns: every write lands on a different cache line.
template <class T>
void transpose_naive(const TransposeArgs<T>& a) {
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < a.cols; ++j) a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j];
}

template void transpose_naive<float>(const TransposeArgs<float>&);
template void transpose_naive<double>(const TransposeArgs<double>&);

}  // namespace tilekit::serial
