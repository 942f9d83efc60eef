// tilekit::gemm_host (gemm_host.hpp): the checks, then the backend's host-memory path.
#include "tilekit/gemm_host.hpp"

#include <algorithm>
#include <mutex>
#include <string>

namespace tilekit {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("gemm_host: " + what);
}

std::string num(index_t v) { return std::to_string(v); }

}  // namespace

template <class T>
bool try_gemm_host(Backend& be, const HostGemm<T>& g) {
  require(g.m >= 0 && g.n >= 0 && g.k >= 0,
          "negative size (m = " + num(g.m) + ", n = " + num(g.n) + ", k = " + num(g.k) + ")");
  require(g.ldc >= std::max<index_t>(g.n, 1), "ldc = " + num(g.ldc) + " is less than n = " + num(g.n));
  const index_t lda_min = g.trans_a ? g.m : g.k, ldb_min = g.trans_b ? g.k : g.n;
  require(g.lda >= std::max<index_t>(lda_min, 1), "lda = " + num(g.lda) + " is less than " + num(lda_min) +
                                                      (g.trans_a ? " (A stored k x m)" : " (A stored m x k)"));
  require(g.ldb >= std::max<index_t>(ldb_min, 1), "ldb = " + num(g.ldb) + " is less than " + num(ldb_min) +
                                                      (g.trans_b ? " (B stored n x k)" : " (B stored k x n)"));
  require(g.tile >= 0, "tile = " + num(g.tile) + " is negative");
  for (int d : g.devices) require(d >= 0, "device " + std::to_string(d) + " is negative");
  if (!be.has_gemm_host()) return false;
  // An empty call still reaches the backend, which checks the devices it names.
  if (g.m > 0 && g.n > 0) {
    require(g.c != nullptr, "C is null");
    if (g.alpha != T(0) && g.k > 0) require(g.a != nullptr && g.b != nullptr, "A or B is null");
  }
  std::lock_guard<std::recursive_mutex> lock(be.call_mutex());
  return be.gemm_host(g);
}

template <class T>
void gemm_host(Backend& be, const HostGemm<T>& g) {
  if (!be.has_gemm_host())
    throw Error("gemm_host: backend '" + be.name() +
                "' has no host-memory gemm (its memory is host memory: use Matrix::view and tilekit::gemm)");
  if (!try_gemm_host(be, g))
    throw Error("gemm_host: backend '" + be.name() +
                "' cannot take this call (a row of an operand is larger than its staging buffers)");
}

template void gemm_host<float>(Backend&, const HostGemm<float>&);
template void gemm_host<double>(Backend&, const HostGemm<double>&);
template bool try_gemm_host<float>(Backend&, const HostGemm<float>&);
template bool try_gemm_host<double>(Backend&, const HostGemm<double>&);

}  // namespace tilekit
