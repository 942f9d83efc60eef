#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "settings.hpp"
#include "system_blas.hpp"
#include "tilekit/gemm_host.hpp"
#include "tilekit/ops.hpp"

namespace tilekit::blas {
namespace {

// ---- counts, for the summary line at exit -------------------------------------------------

// Where a call ran: tilekit's backends (in the registry's order of names), or the system BLAS.
constexpr const char* kPlaces[] = {"serial", "openmp", "kokkos", "cuda", "hip", "system BLAS"};
constexpr int kPlaceCount = sizeof kPlaces / sizeof *kPlaces, kSystem = kPlaceCount - 1;
constexpr const char* kRoutines[] = {"sgemm", "dgemm"};
constexpr int kRoutineCount = sizeof kRoutines / sizeof *kRoutines;

struct Counts {
  std::atomic<unsigned long long> calls[kRoutineCount];
  std::atomic<unsigned long long> ran_on[kPlaceCount];
};
Counts counts;  // zero-initialised (static storage), never destroyed before the summary reads it
std::atomic<const char*> primary_name{nullptr};

int place_of(const Backend& be) {
  const std::string n = be.name();
  for (int i = 0; i < kSystem; ++i)
    if (n == kPlaces[i]) return i;
  return kSystem;  // a backend tilekit does not know of cannot be registered: unreachable
}

// A child of fork() reports its own calls, not its parent's.
void reset_counts() {
  for (auto& c : counts.calls) c.store(0);
  for (auto& c : counts.ran_on) c.store(0);
}

void summary() {
  const Settings s = settings_at_exit();
  if (s.verbose < 1) return;
  unsigned long long total = 0;
  std::string routines;
  for (int i = 0; i < kRoutineCount; ++i) {
    const unsigned long long n = counts.calls[i].load();
    total += n;
    routines += (i ? ", " : "") + std::string(kRoutines[i]) + " " + std::to_string(n);
  }
  std::vector<int> used;
  for (int i = 0; i < kPlaceCount; ++i)
    if (counts.ran_on[i].load() > 0) used.push_back(i);
  std::string where;
  if (used.empty()) {
    const char* p = primary_name.load();
    where = p ? p : s.backend;
  } else if (used.size() == 1) {
    where = kPlaces[used[0]];
  } else {
    for (int i : used) where += (where.empty() ? "" : ", ") + std::string(kPlaces[i]) + " " + std::to_string(counts.ran_on[i].load());
  }
  std::fprintf(stderr, "tilekit-blas: %llu calls (%s) on %s\n", total, routines.c_str(), where.c_str());
  std::fflush(stderr);
}

// At exit (and when the library is unloaded), after the program's own atexit handlers.
__attribute__((destructor)) void at_unload() { summary(); }

__attribute__((constructor)) void at_load() { pthread_atfork(nullptr, nullptr, reset_counts); }

// ---- backends -----------------------------------------------------------------------------

[[noreturn]] void die(int status, const std::string& message) {
  std::fprintf(stderr, "tilekit-blas: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(status);
}

// The backend TILEKIT_BLAS_BACKEND names (auto: the best available). GPU backends are plugins
// that take tilekit's core from the library that loads them: that is this one, which may have been
// loaded as a dependency of a library opened with RTLD_LOCAL (numpy's), so it first makes its own
// symbols global.
Backend& primary() {
  static Backend* be = [] {
    Dl_info di{};
    if (dladdr(reinterpret_cast<void*>(&primary), &di) && di.dli_fname)
      dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    const std::string& name = settings().backend;
    try {
      Backend& b = name == "auto" ? best_backend() : backend(name);
      primary_name.store(kPlaces[place_of(b)]);
      return &b;
    } catch (const std::exception& e) {
      die(3, "TILEKIT_BLAS_BACKEND=" + name + ": " + e.what());
    }
  }();
  return *be;
}

// The available backends whose memory is host memory, best first.
const std::vector<Backend*>& host_backends() {
  static const std::vector<Backend*> list = [] {
    std::vector<Backend*> v;
    for (const std::string& n : compiled_backends())
      if (Backend* b = find_backend(n); b && b->available() && b->host_accessible()) v.push_back(b);
    std::stable_sort(v.begin(), v.end(), [](Backend* x, Backend* y) { return x->priority() > y->priority(); });
    return v;
  }();
  return list;
}

// The best host backend whose kernels address `elements` per matrix (serial's always do).
Backend* host_backend_for(index_t elements) {
  for (Backend* b : host_backends())
    if (b->max_matrix_elements() >= elements) return b;
  return nullptr;
}

Variant best_variant(const Backend& be) { return be.supports(Variant::optimized) ? Variant::optimized : Variant::tiled; }

// ---- the computation ----------------------------------------------------------------------
//
// Column-major C (m x n, ldc) is, read row by row, the row-major n x m matrix C^T with the same
// ld; and C^T = alpha op(B)^T op(A)^T + beta C^T is tilekit's row-major gemm with X = op(B)^T
// (n x k) and Y = op(A)^T (k x m). An operand that is not transposed is, read row-major, already
// what the gemm needs (B stored k x n column-major is B^T, n x k row-major, ld = ldb); a
// transposed one is transposed into a workspace first.

template <class T>
struct Call {
  char ta, tb;
  index_t m, n, k;
  T alpha;
  const T* a;
  index_t lda;
  const T* b;
  index_t ldb;
  T beta;
  T* c;
  index_t ldc;
  bool no_product() const { return alpha == T(0) || k == 0; }  // C = beta C: A and B are not read
};

// The largest matrix a backend sees for the call: host backends view the caller's memory (rows x ld
// elements), device backends hold dense copies.
template <class T>
index_t largest_view(const Call<T>& g) {
  index_t e = g.n * g.ldc;
  if (!g.no_product()) {
    e = std::max(e, g.tb == 'N' ? g.n * g.ldb : std::max(g.k * g.ldb, g.n * g.k));
    e = std::max(e, g.ta == 'N' ? g.k * g.lda : std::max(g.m * g.lda, g.k * g.m));
  }
  return e;
}
template <class T>
index_t largest_dense(const Call<T>& g) {
  return std::max({g.n * g.m, g.no_product() ? 0 : g.n * g.k, g.no_product() ? 0 : g.k * g.m});
}

template <class T>
Matrix<T> view(Backend& be, const T* p, index_t rows, index_t cols, index_t ld) {
  return Matrix<T>::view(be, const_cast<T*>(p), rows, cols, ld);
}

template <class T>
void run_on_host(Backend& be, const Call<T>& g, bool& c_written) {
  const Variant v = best_variant(be);
  Matrix<T> c = view(be, g.c, g.n, g.m, g.ldc);
  Matrix<T> x, y;
  if (g.no_product()) {
    x = view<T>(be, nullptr, g.n, 0, 0);
    y = view<T>(be, nullptr, 0, g.m, 0);
  } else {
    if (g.tb == 'N') {
      x = view(be, g.b, g.n, g.k, g.ldb);
    } else {
      x = Matrix<T>(be, g.n, g.k);
      transpose(v, view(be, g.b, g.k, g.n, g.ldb), x);
    }
    if (g.ta == 'N') {
      y = view(be, g.a, g.k, g.m, g.lda);
    } else {
      y = Matrix<T>(be, g.k, g.m);
      transpose(v, view(be, g.a, g.m, g.k, g.lda), y);
    }
  }
  c_written = true;  // the gemm validates before it writes, but a failure after that cannot be undone
  tilekit::gemm(v, g.alpha, x, y, g.beta, c);
}

// rows x cols of a row-major matrix with leading dimension ld, densely.
template <class T>
std::vector<T> pack(const T* p, index_t rows, index_t cols, index_t ld) {
  std::vector<T> out(std::size_t(rows * cols));
  for (index_t r = 0; r < rows; ++r) std::memcpy(out.data() + r * cols, p + r * ld, std::size_t(cols) * sizeof(T));
  return out;
}

// Device memory (or blas.stage = always): A, B and C (when beta reads it) go over densely,
// transposes run on the backend, and C comes back into the caller's rows.
template <class T>
void run_on_device(Backend& be, const Call<T>& g, bool& c_written) {
  const Variant v = best_variant(be);
  Matrix<T> c(be, g.n, g.m);
  if (g.beta != T(0)) c.upload(pack(g.c, g.n, g.m, g.ldc));
  Matrix<T> x, y;
  if (g.no_product()) {
    x = Matrix<T>(be, g.n, 0);
    y = Matrix<T>(be, 0, g.m);
  } else {
    x = Matrix<T>(be, g.n, g.k);
    if (g.tb == 'N') {
      x.upload(pack(g.b, g.n, g.k, g.ldb));
    } else {
      Matrix<T> stored(be, g.k, g.n);
      stored.upload(pack(g.b, g.k, g.n, g.ldb));
      transpose(v, stored, x);
    }
    y = Matrix<T>(be, g.k, g.m);
    if (g.ta == 'N') {
      y.upload(pack(g.a, g.k, g.m, g.lda));
    } else {
      Matrix<T> stored(be, g.m, g.k);
      stored.upload(pack(g.a, g.m, g.k, g.lda));
      transpose(v, stored, y);
    }
  }
  tilekit::gemm(v, g.alpha, x, y, g.beta, c);
  const std::vector<T> out = c.download();
  c_written = true;
  for (index_t r = 0; r < g.n; ++r)
    std::memcpy(g.c + r * g.ldc, out.data() + r * g.m, std::size_t(g.m) * sizeof(T));
}

// A GPU backend's own host-memory path (Backend::gemm_host): C^T = op(B)^T op(A)^T + beta C^T
// as a row-major gemm on the caller's memory, tiles of C staged through pinned buffers over the
// devices blas.devices names, transposes on the device. false: the backend has none, or declines
// the call (nothing read or written); the caller then stages it whole (run_on_device).
template <class T>
bool run_host_memory(Backend& be, const Call<T>& g, bool& c_written) {
  if (!be.has_gemm_host()) return false;
  // blas.devices is checked against the machine once, by an empty call: a device that does not
  // exist is the user's setting, reported as one (and never after C was written).
  static const bool devices_checked = [&be] {
    HostGemm<T> probe;
    probe.lda = probe.ldb = probe.ldc = 1;
    probe.devices = settings().devices;
    try {
      try_gemm_host(be, probe);
    } catch (const DeviceError&) {
      // the device itself failed: the call reports that (or runs elsewhere)
    } catch (const Error& e) {
      die(2, std::string("TILEKIT_BLAS_DEVICES: ") + e.what());
    }
    return true;
  }();
  (void)devices_checked;
  HostGemm<T> h;
  h.trans_a = g.tb != 'N';  // X = op(B)^T: B itself read row-major, or the transpose of B's rows
  h.trans_b = g.ta != 'N';  // Y = op(A)^T
  h.m = g.n;
  h.n = g.m;
  h.k = g.k;
  h.alpha = g.alpha;
  h.a = g.b;
  h.lda = g.ldb;
  h.b = g.a;
  h.ldb = g.lda;
  h.beta = g.beta;
  h.c = g.c;
  h.ldc = g.ldc;
  h.devices = settings().devices;
  h.tile = settings().gpu_tile;
  // Once it runs, several devices may have written parts of C when one fails; the path reports a
  // shortage of device memory (ResourceError) only before it writes C: then the call runs elsewhere.
  c_written = true;
  try {
    if (try_gemm_host(be, h)) return true;
  } catch (const ResourceError&) {
    c_written = false;
    throw;
  }
  c_written = false;
  return false;
}

template <class T>
using Fortran = void(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                     const T*, const int*, const T*, T*, const int*, std::size_t, std::size_t);

template <class T>
void run_on_system(const Call<T>& g) {
  static auto* f = reinterpret_cast<Fortran<T>*>(system_symbol_or_die(std::is_same_v<T, float> ? "sgemm_" : "dgemm_"));
  const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb), ldc = int(g.ldc);
  f(&g.ta, &g.tb, &m, &n, &k, &g.alpha, g.a, &lda, g.b, &ldb, &g.beta, g.c, &ldc, 1, 1);
}

// Where the call runs first: the primary backend, unless it is a GPU and the call is below
// blas.gpu_min, or its kernels cannot address the call's matrices; then the best host backend.
template <class T>
Backend* first_choice(const Call<T>& g) {
  Backend& p = primary();
  if (p.host_accessible()) return largest_view(g) <= p.max_matrix_elements() ? &p : host_backend_for(largest_view(g));
  const std::int64_t min_dim = std::min({g.m, g.n, g.k});
  // The host-memory path computes in tiles that the kernels address; whole-matrix staging needs each matrix to fit.
  if (min_dim < settings().gpu_min || (!p.has_gemm_host() && largest_dense(g) > p.max_matrix_elements()))
    return host_backend_for(largest_view(g));
  return &p;
}

const char* entry_name(Entry e, bool single) {
  switch (e) {
    case Entry::fortran: return single ? "sgemm_" : "dgemm_";
    case Entry::cblas_col: return single ? "cblas_sgemm (column-major)" : "cblas_dgemm (column-major)";
    case Entry::cblas_row: return single ? "cblas_sgemm (row-major)" : "cblas_dgemm (row-major)";
  }
  return "";
}

template <class T>
void run(Entry entry, const Call<T>& g) {
  const char ta = g.ta, tb = g.tb;
  const int m = int(g.m), n = int(g.n), k = int(g.k);
  const int verbose = settings().verbose;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Backend*> tries;
  if (Backend* first = first_choice(g)) tries.push_back(first);
  if (!tries.empty() && !tries[0]->host_accessible())
    if (Backend* h = host_backend_for(largest_view(g))) tries.push_back(h);
  const char* ran = nullptr;
  for (Backend* be : tries) {
    bool c_written = false;
    try {
      if (be->host_accessible() && !settings().stage_always)
        run_on_host(*be, g, c_written);
      else if (!run_host_memory(*be, g, c_written))
        run_on_device(*be, g, c_written);
      counts.ran_on[place_of(*be)].fetch_add(1, std::memory_order_relaxed);
      ran = kPlaces[place_of(*be)];
      break;
    } catch (const std::exception& e) {
      // C may be partly written: running the call again would apply beta twice.
      if (c_written)
        die(4, std::string(entry_name(entry, std::is_same_v<T, float>)) + " failed on " + be->name() +
                   " after writing C: " + e.what());
      if (verbose >= 1)
        std::fprintf(stderr, "tilekit-blas: %s %c%c %dx%dx%d cannot run on %s (%s)\n",
                     entry_name(entry, std::is_same_v<T, float>), ta, tb, m, n, k, be->name().c_str(), e.what());
    }
  }
  if (!ran) {
    run_on_system(g);
    counts.ran_on[kSystem].fetch_add(1, std::memory_order_relaxed);
    ran = kPlaces[kSystem];
  }
  if (verbose >= 2) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "tilekit-blas: %s %c%c m=%d n=%d k=%d lda=%lld ldb=%lld ldc=%lld on %s: %.3f ms\n",
                 entry_name(entry, std::is_same_v<T, float>), ta, tb, m, n, k, (long long)g.lda, (long long)g.ldb,
                 (long long)g.ldc, ran, ms);
  }
}

}  // namespace

void count_call(Routine r) { counts.calls[int(r)].fetch_add(1, std::memory_order_relaxed); }

template <class T>
void gemm(Entry entry, char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb,
          T beta, T* c, int ldc) {
  try {
    run(entry, Call<T>{ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
  } catch (const std::exception& e) {  // nothing may leave a C entry point
    die(4, std::string(entry_name(entry, std::is_same_v<T, float>)) + ": " + e.what());
  }
}


template void gemm<float>(Entry, char, char, int, int, int, float, const float*, int, const float*, int, float,
                          float*, int);
template void gemm<double>(Entry, char, char, int, int, int, double, const double*, int, const double*, int, double,
                           double*, int);

}  // namespace tilekit::blas
