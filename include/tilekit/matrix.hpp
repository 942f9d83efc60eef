// A row-major matrix whose storage belongs to a backend. Element (i, j) lives at
// data()[i * ld() + j]; the ld - cols elements at the end of each row are padding that no
// operation reads or writes. Host transfers move the whole rows x ld storage, so padding
// round-trips unchanged.
#pragma once

#include <utility>
#include <vector>

#include "tilekit/backend.hpp"

namespace tilekit {

template <class T>
class Matrix {
 public:
  Matrix() = default;
  // ld = 0 means ld = cols. Throws on negative sizes or ld < cols.
  Matrix(Backend& be, index_t rows, index_t cols, index_t ld = 0);
  // A matrix over memory the caller owns (data[i * ld + j]), for a backend whose memory is host
  // memory (Backend::host_accessible()): nothing is allocated, copied or freed, and `data` must
  // outlive the view. Operations read only the rows x cols elements (and write them when it is
  // an output), never the padding. Throws as the constructor does, or when the backend's memory
  // is not host memory, or data is null for a non-empty matrix.
  static Matrix view(Backend& be, T* data, index_t rows, index_t cols, index_t ld = 0);
  ~Matrix() { release(); }
  Matrix(Matrix&& o) noexcept { *this = std::move(o); }
  Matrix& operator=(Matrix&& o) noexcept {
    if (this != &o) {
      release();
      be_ = std::exchange(o.be_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      rows_ = std::exchange(o.rows_, 0);
      cols_ = std::exchange(o.cols_, 0);
      ld_ = std::exchange(o.ld_, 0);
      owns_ = std::exchange(o.owns_, true);
    }
    return *this;
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;

  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  index_t ld() const { return ld_; }
  index_t storage_elements() const { return rows_ * ld_; }
  bool empty() const { return rows_ == 0 || cols_ == 0; }
  bool is_view() const { return !owns_; }
  T* data() { return data_; }  // backend memory: dereference only on host backends
  const T* data() const { return data_; }
  Backend* backend() const { return be_; }

  // host holds storage_elements() values (row-major, this matrix's ld).
  void upload(const std::vector<T>& host);
  std::vector<T> download() const;

 private:
  void release() noexcept;
  Backend* be_ = nullptr;
  T* data_ = nullptr;
  index_t rows_ = 0, cols_ = 0, ld_ = 0;
  bool owns_ = true;
};

// Element types: float and double (tilekit's operations), and integers for tile kernels of
// one's own (bytes to count, counts, keys).
extern template class Matrix<float>;
extern template class Matrix<double>;
extern template class Matrix<unsigned char>;
extern template class Matrix<int>;
extern template class Matrix<unsigned>;
extern template class Matrix<long>;
extern template class Matrix<unsigned long>;
extern template class Matrix<long long>;
extern template class Matrix<unsigned long long>;

}  // namespace tilekit
