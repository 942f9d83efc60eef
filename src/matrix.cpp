#include <fmt/format.h>

#include "tilekit/matrix.hpp"

namespace tilekit {

template <class T>
Matrix<T>::Matrix(Backend& be, index_t rows, index_t cols, index_t ld) : be_(&be) {
  if (rows < 0 || cols < 0)
    throw Error(fmt::format("matrix sizes must be non-negative, got {} x {}", rows, cols));
  if (ld == 0) ld = cols;
  if (ld < cols) throw Error(fmt::format("leading dimension {} is smaller than the {} columns", ld, cols));
  rows_ = rows;
  cols_ = cols;
  ld_ = ld;
  if (rows_ * ld_ > 0) data_ = static_cast<T*>(be.allocate(std::size_t(rows_ * ld_) * sizeof(T)));
}

template <class T>
void Matrix<T>::release() noexcept {
  if (data_ && be_) be_->deallocate(data_);
  data_ = nullptr;
}

template <class T>
void Matrix<T>::upload(const std::vector<T>& host) {
  if (index_t(host.size()) != storage_elements())
    throw Error(fmt::format("upload of {} values into a {} x {} matrix with ld {} (needs {})", host.size(), rows_,
                            cols_, ld_, storage_elements()));
  if (data_) be_->copy_to_device(data_, host.data(), host.size() * sizeof(T));
}

template <class T>
std::vector<T> Matrix<T>::download() const {
  std::vector<T> host(static_cast<std::size_t>(storage_elements()));
  if (data_) be_->copy_to_host(host.data(), data_, host.size() * sizeof(T));
  return host;
}

template class Matrix<float>;
template class Matrix<double>;

}  // namespace tilekit
