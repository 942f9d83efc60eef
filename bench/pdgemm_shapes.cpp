// The local products PDGEMM hands a rank's BLAS, timed on two BLAS libraries in one process:
// tilekit's and the system's (OpenBLAS), on the same operands, alternating call by call. It
// separates the BLAS's share of a PDGEMM difference (bench/scalapack_bench.sh) from MPI's and
// from ScaLAPACK's packing.
//
//   tilekit_pdgemm_shapes TILEKIT_BLASLIB [--peer LIB] [--reps R] [--dtype double|float] SHAPE...
//
// SHAPE is MxNxK or MxNxK*CALLS (CALLS products of that shape a timing, as PDGEMM makes one per
// panel: a rank of a 2x2 grid at N = 3072 with 32-wide panels makes 96 of 1536x1536x32). C is
// updated in place with beta = 1, alpha = -1 (PDGEMM's calls after the first panel), column-major,
// lda = M, ldb = K, ldc = M. --peer names the other library (default libblas.so.3, Debian's
// alternative: OpenBLAS where it is installed). Threads: OMP_NUM_THREADS / OPENBLAS_NUM_THREADS as
// the caller sets them; tilekit's backend from TILEKIT_BLAS_BACKEND. After one warm-up call of
// each, R timings of each (default 7), alternating which goes first; prints the medians, one
// JSON line per shape. Exit status: 0, 2 on bad usage, 3 when a library cannot be loaded.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

template <class T>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                      const T*, const int*, const T*, T*, const int*);

struct Shape {
  int m, n, k, calls;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tilekit_pdgemm_shapes: %s\nusage: tilekit_pdgemm_shapes TILEKIT_BLASLIB [--peer LIB] [--reps R] "
               "[--dtype double|float] MxNxK[*CALLS]...\n",
               why);
  std::exit(2);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class T>
void* symbol(void* lib, const char* path) {
  void* f = dlsym(lib, std::is_same_v<T, float> ? "sgemm_" : "dgemm_");
  if (!f) {
    std::fprintf(stderr, "tilekit_pdgemm_shapes: %s has no %s\n", path, std::is_same_v<T, float> ? "sgemm_" : "dgemm_");
    std::exit(3);
  }
  return f;
}

template <class T>
void run(void* tk_lib, const char* tk_path, void* peer_lib, const char* peer_path, int reps,
         const std::vector<Shape>& shapes) {
  const auto tk = reinterpret_cast<Gemm<T>>(symbol<T>(tk_lib, tk_path));
  const auto peer = reinterpret_cast<Gemm<T>>(symbol<T>(peer_lib, peer_path));
  const char* dt = std::is_same_v<T, float> ? "float" : "double";
  std::printf("%-22s %6s %10s %8s %10s %8s %9s\n", "shape", "calls", "tilekit s", "GFLOP/s", "peer s", "GFLOP/s",
              "tk/peer");
  for (const Shape& s : shapes) {
    std::vector<T> a(std::size_t(s.m) * s.k), b(std::size_t(s.k) * s.n), c(std::size_t(s.m) * s.n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> d(-1, 1);
    for (auto* v : {&a, &b, &c})
      for (auto& x : *v) x = T(d(rng));
    const T alpha = -1, beta = 1;
    auto time = [&](Gemm<T> g) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < s.calls; ++i)
        g("N", "N", &s.m, &s.n, &s.k, &alpha, a.data(), &s.m, b.data(), &s.k, &beta, c.data(), &s.m);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    tk("N", "N", &s.m, &s.n, &s.k, &alpha, a.data(), &s.m, b.data(), &s.k, &beta, c.data(), &s.m);
    peer("N", "N", &s.m, &s.n, &s.k, &alpha, a.data(), &s.m, b.data(), &s.k, &beta, c.data(), &s.m);
    std::vector<double> ttk, tpeer;
    for (int r = 0; r < reps; ++r) {
      if (r % 2) {
        tpeer.push_back(time(peer));
        ttk.push_back(time(tk));
      } else {
        ttk.push_back(time(tk));
        tpeer.push_back(time(peer));
      }
    }
    const double mt = median(ttk), mp = median(tpeer), flops = 2.0 * s.m * double(s.n) * s.k * s.calls;
    char shape[64];
    std::snprintf(shape, sizeof shape, "%dx%dx%d", s.m, s.n, s.k);
    std::printf("%-22s %6d %10.4f %8.1f %10.4f %8.1f %9.3f\n", shape, s.calls, mt, flops / mt * 1e-9, mp,
                flops / mp * 1e-9, mp / mt);
    std::printf("{\"op\": \"blas_gemm_shape\", \"dtype\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"calls\": %d, "
                "\"reps\": %d, \"tilekit_seconds\": %.6g, \"peer_seconds\": %.6g, \"seconds\": %.6g, \"gflops\": %.6g, "
                "\"peer_gflops\": %.6g, \"tilekit_over_peer\": %.4f, \"peer\": \"%s\"}\n",
                dt, s.m, s.n, s.k, s.calls, reps, mt, mp, mt, flops / mt * 1e-9, flops / mp * 1e-9, mp / mt, peer_path);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') usage("the first argument is tilekit's BLAS library");
  const char* tk_path = argv[1];
  std::string peer_path = "libblas.so.3", dtype = "double";
  int reps = 7;
  std::vector<Shape> shapes;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--peer" || arg == "--reps" || arg == "--dtype") {
      if (i + 1 >= argc) usage((arg + " needs a value").c_str());
      const std::string v = argv[++i];
      if (arg == "--peer") peer_path = v;
      else if (arg == "--dtype") dtype = v;
      else reps = std::atoi(v.c_str());
      continue;
    }
    Shape s{0, 0, 0, 1};
    char tail = 0;
    const int got = std::sscanf(arg.c_str(), "%dx%dx%d*%d%c", &s.m, &s.n, &s.k, &s.calls, &tail);
    if ((got != 3 && got != 4) || s.m < 1 || s.n < 1 || s.k < 1 || s.calls < 1)
      usage(("not a shape MxNxK[*CALLS]: " + arg).c_str());
    shapes.push_back(s);
  }
  if (shapes.empty() || reps < 1 || (dtype != "double" && dtype != "float")) usage("no shape, or a bad --reps or --dtype");
  // RTLD_LOCAL: each library's gemm is looked up in it alone.
  void* tk = dlopen(tk_path, RTLD_NOW | RTLD_LOCAL);
  if (!tk) {
    std::fprintf(stderr, "tilekit_pdgemm_shapes: %s\n", dlerror());
    return 3;
  }
  void* peer = dlopen(peer_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!peer) {
    std::fprintf(stderr, "tilekit_pdgemm_shapes: %s\n", dlerror());
    return 3;
  }
  if (dtype == "float") run<float>(tk, tk_path, peer, peer_path.c_str(), reps, shapes);
  else run<double>(tk, tk_path, peer, peer_path.c_str(), reps, shapes);
  return 0;
}
