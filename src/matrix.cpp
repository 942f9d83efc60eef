#include <mutex>
#include <new>

#include <fmt/format.h>

#include "tilekit/matrix.hpp"

namespace tilekit {

template <class T>
Matrix<T>::Matrix(Backend& be, index_t rows, index_t cols, index_t ld) : be_(&be) {
  if (rows < 0 || cols < 0)
    throw Error(fmt::format("matrix sizes must be non-negative, got {} x {}", rows, cols));
  if (ld == 0) ld = cols;
  if (ld < cols) throw Error(fmt::format("leading dimension {} is smaller than the {} columns", ld, cols));
  const std::size_t bytes = checked_bytes(rows, ld, sizeof(T), fmt::format("a {} x {} matrix (ld {})", rows, cols, ld));
  // Asking the device costs a system call; small matrices cannot be what exhausts it.
  if (bytes >= (std::size_t(16) << 20)) {
    const std::size_t avail = be.memory_available();
    if (bytes > avail)
      throw ResourceError(fmt::format("a {} x {} matrix (ld {}) needs {} bytes, but backend '{}' has {} bytes available",
                                      rows, cols, ld, bytes, be.name(), avail));
  }
  if (bytes > 0) {
    std::lock_guard<std::recursive_mutex> lock(be.call_mutex());
    try {
      data_ = static_cast<T*>(be.allocate(bytes));
    } catch (const std::bad_alloc&) {
      throw ResourceError(fmt::format("backend '{}' could not allocate {} bytes for a {} x {} matrix", be.name(), bytes,
                                      rows, cols));
    }
  }
  rows_ = rows;
  cols_ = cols;
  ld_ = ld;
}

template <class T>
Matrix<T> Matrix<T>::view(Backend& be, T* data, index_t rows, index_t cols, index_t ld) {
  if (rows < 0 || cols < 0)
    throw Error(fmt::format("matrix sizes must be non-negative, got {} x {}", rows, cols));
  if (ld == 0) ld = cols;
  if (ld < cols) throw Error(fmt::format("leading dimension {} is smaller than the {} columns", ld, cols));
  checked_bytes(rows, ld, sizeof(T), fmt::format("a {} x {} matrix (ld {})", rows, cols, ld));
  if (!be.host_accessible())
    throw Error(fmt::format("backend '{}' keeps its matrices in device memory: a view of host memory needs a backend "
                            "whose memory is host memory (serial, openmp, kokkos on a host space)",
                            be.name()));
  if (!data && rows > 0 && cols > 0) throw Error(fmt::format("a view of a {} x {} matrix needs memory, got null", rows, cols));
  Matrix m;
  m.be_ = &be;
  m.data_ = data;
  m.rows_ = rows;
  m.cols_ = cols;
  m.ld_ = ld;
  m.owns_ = false;
  return m;
}

template <class T>
void Matrix<T>::release() noexcept {
  if (data_ && be_ && owns_) {
    std::lock_guard<std::recursive_mutex> lock(be_->call_mutex());
    be_->deallocate(data_);
  }
  data_ = nullptr;
}

template <class T>
void Matrix<T>::upload(const std::vector<T>& host) {
  if (index_t(host.size()) != storage_elements())
    throw Error(fmt::format("upload of {} values into a {} x {} matrix with ld {} (needs {})", host.size(), rows_,
                            cols_, ld_, storage_elements()));
  if (!data_) return;
  std::lock_guard<std::recursive_mutex> lock(be_->call_mutex());
  be_->copy_to_device(data_, host.data(), host.size() * sizeof(T));
}

template <class T>
std::vector<T> Matrix<T>::download() const {
  std::vector<T> host;
  try {
    host.resize(static_cast<std::size_t>(storage_elements()));
  } catch (const std::bad_alloc&) {
    throw ResourceError(fmt::format("cannot allocate {} bytes of host memory to download a {} x {} matrix",
                                    storage_elements() * index_t(sizeof(T)), rows_, cols_));
  }
  if (!data_) return host;
  std::lock_guard<std::recursive_mutex> lock(be_->call_mutex());
  be_->copy_to_host(host.data(), data_, host.size() * sizeof(T));
  return host;
}

template class Matrix<float>;
template class Matrix<double>;
template class Matrix<unsigned char>;
template class Matrix<int>;
template class Matrix<unsigned>;
template class Matrix<long>;
template class Matrix<unsigned long>;
template class Matrix<long long>;
template class Matrix<unsigned long long>;

}  // namespace tilekit
