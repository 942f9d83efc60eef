// The BLAS entry against tilekit's own gemm, in one process, on one backend:
//
//   tilekit_blas_bench [--backend openmp] [--size 2048] [--reps 5] [--dtype float|double]
//   tilekit_blas_bench --sizes 256,512,1024 [--backend cuda] [--reps 5] [--dtype ...]
//
// The first form times, alternately after one warm-up of each, (a) sgemm_/dgemm_ on column-major
// operands in ordinary heap memory (std::vector, as a program has them), (b) the same call on
// memory tilekit allocated (its matrices' 2 MiB-aligned huge pages; host backends only), (c)
// tilekit::gemm on tilekit matrices (device memory on a GPU): the same n x n x n product with the
// same kernel. Prints the median of each and the BLAS entry's speed as a fraction of tilekit's
// own (c / a, c / b). On a GPU backend, (a) includes the copies to and from the device: c / a is
// then the host-memory GEMM as a fraction of the device-memory one. The second form times (a)
// alone at each size, after a pass over every size (the crossover between a GPU and the CPU: run
// it once per backend; bench/blas_bench.sh crossover).
// tilekit's API comes from the same library as the BLAS (libtilekit_blas exports it), so both run
// on one registry and one backend object. TILEKIT_BLAS_BACKEND is set to --backend.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tilekit/ops.hpp"

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
}

namespace {

template <class T>
void blas(int n, const T* a, const T* b, T* c) {
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>)
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  else
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class T>
int bench(const std::string& backend_name, int n, int reps) {
  using clock = std::chrono::steady_clock;
  tilekit::Backend& be = tilekit::backend(backend_name);
  const tilekit::Variant v = be.supports(tilekit::Variant::optimized) ? tilekit::Variant::optimized : tilekit::Variant::tiled;
  const std::size_t count = std::size_t(n) * std::size_t(n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> ha(count), hb(count), hc(count);
  for (auto& x : ha) x = T(d(rng));
  for (auto& x : hb) x = T(d(rng));
  tilekit::Matrix<T> ma(be, n, n), mb(be, n, n), mc(be, n, n);
  ma.upload(ha);
  mb.upload(hb);
  auto time = [&](auto&& f) {
    const auto t0 = clock::now();
    f();
    be.synchronize();
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  // (a) heap memory; (b) tilekit's memory through the BLAS (column-major C = A B is row-major
  // C^T = B^T A^T: the same product shape); (c) tilekit's gemm.
  const bool host = be.host_accessible();
  auto a = [&] { blas<T>(n, ha.data(), hb.data(), hc.data()); };
  auto b = [&] { blas<T>(n, ma.data(), mb.data(), mc.data()); };
  auto c = [&] { tilekit::gemm(v, T(1), mb, ma, T(0), mc); };
  time(a), time(c);
  if (host) time(b);
  std::vector<double> ta, tb, tc;
  for (int r = 0; r < reps; ++r) {
    ta.push_back(time(a));
    if (host) tb.push_back(time(b));
    tc.push_back(time(c));
  }
  const double flops = 2.0 * n * double(n) * n;
  const double ma_ = median(ta), mb_ = host ? median(tb) : 0.0, mc_ = median(tc);
  const char* dt = std::is_same_v<T, float> ? "float" : "double";
  std::printf("%s gemm %d on %s (%s), median of %d after a warm-up, alternating:\n", dt, n, backend_name.c_str(),
              tilekit::to_string(v).data(), reps);
  std::printf("  BLAS entry, heap memory:     %9.3f ms  %8.1f GFLOP/s\n", ma_ * 1e3, flops / ma_ * 1e-9);
  if (host) std::printf("  BLAS entry, tilekit memory:  %9.3f ms  %8.1f GFLOP/s\n", mb_ * 1e3, flops / mb_ * 1e-9);
  std::printf("  tilekit::gemm:               %9.3f ms  %8.1f GFLOP/s\n", mc_ * 1e3, flops / mc_ * 1e-9);
  if (host)
    std::printf("  BLAS / tilekit speed: heap %.3f, tilekit memory %.3f\n", mc_ / ma_, mc_ / mb_);
  else
    std::printf("  host-memory BLAS / device-memory tilekit::gemm speed: %.3f\n", mc_ / ma_);
  std::printf("RESULT blas_vs_tilekit dtype=%s n=%d backend=%s blas_heap_s=%.6f blas_tk_s=%.6f tilekit_s=%.6f "
              "ratio_heap=%.4f ratio_tk=%.4f\n",
              dt, n, backend_name.c_str(), ma_, mb_, mc_, mc_ / ma_, host ? mc_ / mb_ : 0.0);
  return 0;
}

// sgemm_/dgemm_ alone, heap memory, at each size: one pass over every size first (the process's
// start-up costs, the OpenMP pool and the GPU's context and staging buffers, fall there), then per
// size a warm-up and the median of reps. Prints a RESULT line and a JSON row (op blas-gemm) per size.
template <class T>
int sizes(const std::string& backend_name, const std::vector<int>& ns, int reps) {
  using clock = std::chrono::steady_clock;
  const char* dt = std::is_same_v<T, float> ? "float" : "double";
  struct Problem {
    int n;
    std::vector<T> a, b, c;
  };
  std::vector<Problem> ps;
  for (int n : ns) {
    const std::size_t count = std::size_t(n) * std::size_t(n);
    ps.push_back({n, std::vector<T>(count, T(0.5)), std::vector<T>(count, T(0.25)), std::vector<T>(count)});
  }
  for (auto& p : ps) blas<T>(p.n, p.a.data(), p.b.data(), p.c.data());
  for (auto& p : ps) {
    const int n = p.n;
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      const auto t0 = clock::now();
      blas<T>(n, p.a.data(), p.b.data(), p.c.data());
      if (r > 0) t.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    }
    const double s = median(t), gflops = 2.0 * n * double(n) * n / s * 1e-9;
    // Every entry of C is n * 0.5 * 0.25 (exact in float up to n = 2^22).
    const bool ok = std::all_of(p.c.begin(), p.c.end(), [&](T x) { return x == T(n * 0.125); });
    std::printf("RESULT blas_size dtype=%s n=%d backend=%s s=%.6f gflops=%.1f\n", dt, n, backend_name.c_str(), s, gflops);
    std::printf("{\"op\": \"blas-gemm\", \"dtype\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"backend\": \"%s\", "
                "\"variant\": \"blas-entry\", \"memory\": \"heap\", \"seconds\": %.6f, \"min_seconds\": %.6f, "
                "\"max_seconds\": %.6f, \"gflops\": %.1f, \"metric\": \"gflops\", \"reps\": %d, \"verified\": %s}\n",
                dt, n, n, n, backend_name.c_str(), s, *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()), gflops, reps, ok ? "true" : "false");
    std::fflush(stdout);
    if (!ok) {
      std::fprintf(stderr, "tilekit_blas_bench: %s gemm %d on %s: C is wrong\n", dt, n, backend_name.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "openmp", dtype = "float";
  int n = 2048, reps = 5;
  std::vector<int> ns;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], val = argv[i + 1];
    if (k == "--backend") backend = val;
    else if (k == "--size") n = std::atoi(val.c_str());
    else if (k == "--reps") reps = std::atoi(val.c_str());
    else if (k == "--dtype") dtype = val;
    else if (k == "--sizes") {
      for (std::size_t p = 0; p < val.size();) {
        const std::size_t q = std::min(val.find(',', p), val.size());
        ns.push_back(std::atoi(val.substr(p, q - p).c_str()));
        if (ns.back() < 1) ns.back() = 0;
        p = q + 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--backend B] [--size N | --sizes N,N,...] [--reps R] [--dtype float|double]\n",
                   argv[0]);
      return 2;
    }
  }
  if (n < 1 || reps < 1 || (dtype != "float" && dtype != "double") || std::count(ns.begin(), ns.end(), 0)) {
    std::fprintf(stderr, "bad --size, --sizes, --reps or --dtype\n");
    return 2;
  }
  setenv("TILEKIT_BLAS_BACKEND", backend.c_str(), 1);  // before the first BLAS call reads it
  try {
    if (!ns.empty()) return dtype == "float" ? sizes<float>(backend, ns, reps) : sizes<double>(backend, ns, reps);
    return dtype == "float" ? bench<float>(backend, n, reps) : bench<double>(backend, n, reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilekit_blas_bench: %s\n", e.what());
    return 3;
  }
}
