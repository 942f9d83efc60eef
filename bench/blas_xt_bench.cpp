// A GEMM from host memory on NVIDIA GPUs: tilekit's host-memory path (tilekit::gemm_host, what
// libtilekit_blas runs) against cuBLASXt, NVIDIA's host-memory GEMM over several GPUs, in one
// process, from the same pageable host matrices, with tilekit::gemm on device memory as the
// ceiling:
//
//   tilekit_blas_xt_bench [--sizes 16384,32768] [--dtypes float,double] [--reps 3]
//                         [--blocks 2048,4096] [--xt-block-from-first] [--xt-reps-after-first R] [--probe]
//                         [--no-xt]
//
// --no-xt leaves cuBLASXt out (its rows and ratios; tilekit's rows then have no baseline).
// --probe first measures the staging's parts alone: packing pageable memory into pinned buffers
// with one thread and with every core, and pinned H2D / D2H bandwidth.
// Per dtype and size: (1) tilekit::gemm on device memory (device 0), (2) tilekit's host path on
// device 0, (3) on every device, (4) cublasXt on device 0 and (5) on every device, each block dim
// of --blocks (the best reported; with --xt-block-from-first, sizes after the first use the block
// dim that was best at the first size). Each: one warm-up, the median of --reps, and 64 sampled
// entries of C checked against a double-precision reference (exit 1 when one is off). With
// --xt-reps-after-first R, cuBLASXt at the sizes after the first runs R times without a warm-up of
// its own (the first size warmed the process and the GPUs; cuBLASXt takes 10-25 s a call at 32768
// on one GPU): its rows say so (xt_reps, xt_warmup). Prints a line per configuration, a RESULT
// line per size, and JSON rows (lines starting with '{') for bench/run.py: op blas-host-gemm, one
// per configuration (variant host: tilekit's host path; device-memory; cublasXt), each with
// baseline/baseline_seconds/ratio (seconds / baseline_seconds: below 1 is faster) against
// cuBLASXt on as many GPUs, host_fraction (one GPU's device-memory gemm seconds / seconds) and
// tk_vs_xt (cuBLASXt seconds / tilekit seconds), gpus_used (the run's context has "gpus", the
// machine's list); --probe adds an op blas-staging row.
#include <cublasXt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tilekit/gemm_host.hpp"
#include "tilekit/ops.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

std::vector<int> ints(const std::string& s) {
  std::vector<int> out;
  for (std::size_t p = 0; p < s.size();) {
    const std::size_t q = std::min(s.find(',', p), s.size());
    out.push_back(std::atoi(s.substr(p, q - p).c_str()));
    p = q + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A JSON number, or null for NaN and infinities.
std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string gpu_name() {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "?";
  std::string out;
  for (const char* c = p.name; *c; ++c)
    if (*c != '"' && *c != '\\') out += *c;
  return out;
}

// fn over [0, n) on every core (filling 8 GiB matrices with one thread takes too long).
void parallel(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
  const unsigned t = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (unsigned i = 0; i < t; ++i) th.emplace_back(fn, n * i / t, n * (i + 1) / t);
  for (auto& x : th) x.join();
}

int failures = 0;

// C cleared between configurations, so that a configuration that writes nothing fails its check.
template <class T>
void zero(std::vector<T>& c) {
  parallel(c.size(), [&](std::size_t lo, std::size_t hi) { std::fill(c.begin() + lo, c.begin() + hi, T(0)); });
}

// 64 entries of row-major C = A B against a double reference.
template <class T>
double check(const char* what, int n, const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& c) {
  double worst = 0;
  unsigned s = 12345;
  for (int t = 0; t < 64; ++t) {
    s = s * 1103515245u + 12345u;
    const std::size_t i = (s >> 8) % unsigned(n);
    s = s * 1103515245u + 12345u;
    const std::size_t j = (s >> 8) % unsigned(n);
    double ref = 0, mag = 0;
    for (std::size_t p = 0; p < std::size_t(n); ++p) {
      const double x = double(a[i * n + p]) * double(b[p * n + j]);
      ref += x;
      mag += std::fabs(x);
    }
    const double e = std::fabs(double(c[i * n + j]) - ref) / (mag + 1e-300);
    if (!(e <= worst)) worst = e;  // a NaN stays
  }
  const double tol = (std::is_same_v<T, float> ? 1e-5 : 1e-13) * 8;  // relative to sum |a b|
  if (!(worst <= tol)) {
    std::printf("  FAILED %s: worst relative error %.3g over 64 sampled entries (tolerance %.3g)\n", what, worst, tol);
    ++failures;
  }
  return worst;
}

template <class T>
double timed(int reps, const std::function<void()>& f, bool warm_up = true) {
  if (warm_up) f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock_type::now();
    f();
    t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  return median(t);
}

#define XT_CHECK(x)                                                                   \
  do {                                                                                \
    const cublasStatus_t st_ = (x);                                                   \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                               \
      std::fprintf(stderr, "%s failed: cuBLAS status %d\n", #x, int(st_));            \
      std::exit(3);                                                                   \
    }                                                                                 \
  } while (0)

// Row-major C = A B through cublasXt (column-major): C^T = B^T A^T, so B and A swap places.
template <class T>
void xt_gemm(cublasXtHandle_t h, int n, const T* a, const T* b, T* c) {
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>)
    XT_CHECK(cublasXtSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));
  else
    XT_CHECK(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));
}

struct Best {
  int block_1 = 0, block_all = 0;
};

template <class T>
void run(int n, int reps, int ndev, const std::vector<int>& blocks, Best& best, bool fixed_blocks, int xt_reps,
         bool with_xt) {
  const bool xt_warm = xt_reps == 0;
  if (xt_warm) xt_reps = reps;
  const char* dt = std::is_same_v<T, float> ? "float" : "double";
  const std::size_t count = std::size_t(n) * std::size_t(n);
  std::vector<T> a(count), b(count), c(count);
  parallel(count, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      a[i] = T(double((i * 2654435761u) % 2001) / 1000.0 - 1.0);
      b[i] = T(double((i * 40503u + 17) % 1999) / 999.5 - 1.0);
    }
  });
  const double flops = 2.0 * double(n) * double(n) * double(n);
  double worst_err = 0;
  auto line = [&](const char* what, double s, double err) {
    if (!(err <= worst_err)) worst_err = err;
    std::printf("  %-34s %9.1f ms %9.1f GFLOP/s  (sampled max rel. error %.2g)\n", what, s * 1e3, flops / s * 1e-9, err);
    std::fflush(stdout);
  };
  std::printf("%s gemm %d x %d x %d from pageable host memory, %d GPU(s), median of %d after a warm-up", dt, n, n, n,
              ndev, reps);
  if (!xt_warm) std::printf(" (cublasXt: %d run%s, no warm-up of its own)", xt_reps, xt_reps == 1 ? "" : "s");
  std::printf(":\n");

  tilekit::Backend& be = tilekit::backend("cuda");
  double t_dev = 0;
  {  // (1) the ceiling: device memory
    tilekit::Matrix<T> ma(be, n, n), mb(be, n, n), mc(be, n, n);
    ma.upload(a);
    mb.upload(b);
    t_dev = timed<T>(reps, [&] {
      tilekit::gemm(tilekit::Variant::optimized, T(1), ma, mb, T(0), mc);
      be.synchronize();
    });
    c = mc.download();
    line("tilekit::gemm, device memory", t_dev, check("tilekit::gemm device memory", n, a, b, c));
  }
  tilekit::HostGemm<T> g;
  g.m = g.n = g.k = n;
  g.a = a.data();
  g.b = b.data();
  g.c = c.data();
  g.lda = g.ldb = g.ldc = n;
  auto tk = [&](std::vector<int> devices, const char* what) {
    g.devices = std::move(devices);
    zero(c);
    const double s = timed<T>(reps, [&] { tilekit::gemm_host(be, g); });
    line(what, s, check(what, n, a, b, c));
    return s;
  };
  const double e_dev = worst_err;
  worst_err = 0;
  const double t_tk1 = tk({0}, "tilekit host memory, 1 GPU");
  const double e_tk1 = worst_err;
  worst_err = 0;
  const double t_tkn = ndev > 1 ? tk({}, "tilekit host memory, all GPUs") : t_tk1;
  const double e_tkn = worst_err;
  worst_err = 0;

  auto xt = [&](int devices, int& chosen, const char* what) {
    cublasXtHandle_t h;
    XT_CHECK(cublasXtCreate(&h));
    std::vector<int> ids(static_cast<std::size_t>(devices));
    for (int i = 0; i < devices; ++i) ids[std::size_t(i)] = i;
    XT_CHECK(cublasXtDeviceSelect(h, devices, ids.data()));
    double best_s = std::numeric_limits<double>::infinity();
    std::vector<int> try_blocks = fixed_blocks && chosen > 0 ? std::vector<int>{chosen} : blocks;
    for (int bd : try_blocks) {
      XT_CHECK(cublasXtSetBlockDim(h, bd));
      zero(c);
      const double s = timed<T>(xt_reps, [&] { xt_gemm<T>(h, n, a.data(), b.data(), c.data()); }, xt_warm);
      const std::string label = std::string(what) + ", block " + std::to_string(bd);
      line(label.c_str(), s, check(label.c_str(), n, a, b, c));
      if (s < best_s) best_s = s, chosen = bd;
    }
    XT_CHECK(cublasXtDestroy(h));
    return best_s;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double t_xt1 = with_xt ? xt(1, best.block_1, "cublasXt, 1 GPU") : nan;
  const double e_xt1 = worst_err;
  worst_err = 0;
  const double t_xtn = !with_xt ? nan : ndev > 1 ? xt(ndev, best.block_all, "cublasXt, all GPUs") : t_xt1;
  const double e_xtn = ndev > 1 ? worst_err : e_xt1;

  std::printf("  host/device-memory: 1 GPU %.3f; tilekit/cublasXt: 1 GPU %.3f, all %.3f; all/1 GPU: tilekit %.3f, cublasXt %.3f\n",
              t_dev / t_tk1, t_xt1 / t_tk1, t_xtn / t_tkn, t_tk1 / t_tkn, t_xt1 / t_xtn);
  std::printf("RESULT blas_host_gemm dtype=%s n=%d gpus=%d device_s=%.6f tk1_s=%.6f tkall_s=%.6f xt1_s=%.6f xtall_s=%.6f "
              "xt1_block=%d xtall_block=%d host_fraction=%.4f tk_vs_xt_1=%.4f tk_vs_xt_all=%.4f tk_speedup_all=%.4f "
              "xt_speedup_all=%.4f\n",
              dt, n, ndev, t_dev, t_tk1, t_tkn, t_xt1, t_xtn, best.block_1, ndev > 1 ? best.block_all : best.block_1,
              t_dev / t_tk1, t_xt1 / t_tk1, t_xtn / t_tkn, t_tk1 / t_tkn, t_xt1 / t_xtn);
  const std::string dev = gpu_name();
  const double tol = (std::is_same_v<T, float> ? 1e-5 : 1e-13) * 8;
  // variant, gpus, seconds, cuBLASXt seconds on as many GPUs, sampled error, reps, warm-up
  auto json = [&](const char* variant, int gpus, double s, double xt_s, double err, int r, bool warm, bool peer) {
    std::printf("{\"op\": \"blas-host-gemm\", \"dtype\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"backend\": \"cuda\", "
                "\"variant\": \"%s\", \"peer\": %s, \"device\": \"%s\", \"gpus_used\": %d, \"seconds\": %.6f, "
                "\"gflops\": %.1f, \"metric\": \"gflops\", \"reps\": %d, \"warm_up\": %s, \"baseline\": %s, "
                "\"baseline_seconds\": %s, \"ratio\": %s, \"tk_vs_xt\": %s, \"host_fraction\": %.4f, "
                "\"device_seconds\": %.6f, \"xt_block\": %d, \"xt_reps\": %d, \"xt_warmup\": %s, "
                "\"memory\": \"%s\", \"verified\": %s, \"rel_error\": %s, \"check\": \"64 sampled entries, "
                "relative to sum |a b|, tolerance %.0e\"}\n",
                dt, n, n, n, variant, peer ? "true" : "false", dev.c_str(), gpus, s, flops / s * 1e-9, r,
                warm ? "true" : "false", with_xt ? "\"cublasXt\"" : "null", number(xt_s).c_str(), number(s / xt_s).c_str(),
                number(xt_s / s).c_str(), t_dev / s, t_dev,
                gpus == 1 ? best.block_1 : best.block_all, xt_reps, xt_warm ? "true" : "false",
                std::strcmp(variant, "device-memory") == 0 ? "device" : "pageable host", err <= tol ? "true" : "false",
                number(err).c_str(), tol);
  };
  json("device-memory", 1, t_dev, t_xt1, e_dev, reps, true, false);
  json("host", 1, t_tk1, t_xt1, e_tk1, reps, true, false);
  if (ndev > 1) json("host", ndev, t_tkn, t_xtn, e_tkn, reps, true, false);
  if (with_xt) json("cublasXt", 1, t_xt1, t_xt1, e_xt1, xt_reps, xt_warm, true);
  if (with_xt && ndev > 1) json("cublasXt", ndev, t_xtn, t_xtn, e_xtn, xt_reps, xt_warm, true);
  std::fflush(stdout);
}

// The staging's parts, each alone: packing pageable rows into pinned memory with one thread and
// with every core (the engine's pool), and pinned H2D / D2H copies of 64 MiB on device 0.
void probe() {
  constexpr std::size_t chunk = std::size_t(64) << 20, total = std::size_t(1) << 30;
  std::vector<char> src(total, 1);
  void* pinned = nullptr;
  if (cudaHostAlloc(&pinned, chunk, cudaHostAllocPortable) != cudaSuccess) {
    std::fprintf(stderr, "cudaHostAlloc failed\n");
    std::exit(3);
  }
  auto pack = [&](bool all) {
    std::vector<double> t;
    for (int r = 0; r < 4; ++r) {
      const auto t0 = clock_type::now();
      for (std::size_t off = 0; off < total; off += chunk) {
        if (all)
          parallel(chunk, [&](std::size_t lo, std::size_t hi) {
            std::memcpy(static_cast<char*>(pinned) + lo, src.data() + off + lo, hi - lo);
          });
        else
          std::memcpy(pinned, src.data() + off, chunk);
      }
      if (r > 0) t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    }
    return double(total) / median(t) * 1e-9;
  };
  const double pack1 = pack(false), packn = pack(true);
  void* dev = nullptr;
  cudaStream_t s;
  if (cudaMalloc(&dev, chunk) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    std::exit(3);
  }
  auto dma = [&](cudaMemcpyKind kind) {
    std::vector<double> t;
    for (int r = 0; r < 4; ++r) {
      const auto t0 = clock_type::now();
      for (std::size_t off = 0; off < total; off += chunk)
        kind == cudaMemcpyHostToDevice ? cudaMemcpyAsync(dev, pinned, chunk, kind, s) : cudaMemcpyAsync(pinned, dev, chunk, kind, s);
      cudaStreamSynchronize(s);
      if (r > 0) t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    }
    return double(total) / median(t) * 1e-9;
  };
  const double h2d = dma(cudaMemcpyHostToDevice), d2h = dma(cudaMemcpyDeviceToHost);
  cudaStreamDestroy(s);
  cudaFree(dev);
  cudaFreeHost(pinned);
  std::printf("staging parts: pack pageable -> pinned %.1f GB/s (1 thread), %.1f GB/s (%u threads); pinned H2D %.1f GB/s, "
              "D2H %.1f GB/s (64 MiB copies)\n",
              pack1, packn, std::max(1u, std::thread::hardware_concurrency()), h2d, d2h);
  std::printf("RESULT blas_staging_parts pack1_gbs=%.2f packall_gbs=%.2f threads=%u h2d_gbs=%.2f d2h_gbs=%.2f\n", pack1,
              packn, std::max(1u, std::thread::hardware_concurrency()), h2d, d2h);
  std::printf("{\"op\": \"blas-staging\", \"backend\": \"cuda\", \"device\": \"%s\", \"gbps\": %.2f, \"metric\": \"gbps\", "
              "\"pack1_gbs\": %.2f, \"packall_gbs\": %.2f, \"threads\": %u, \"h2d_gbs\": %.2f, \"d2h_gbs\": %.2f, "
              "\"bytes\": %zu, \"chunk_bytes\": %zu}\n",
              gpu_name().c_str(), packn, pack1, packn, std::max(1u, std::thread::hardware_concurrency()), h2d, d2h, total,
              chunk);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{16384, 32768}, blocks{2048, 4096};
  std::vector<std::string> dtypes{"float", "double"};
  int reps = 3, xt_reps_later = 0;
  bool from_first = false, with_probe = false, with_xt = true;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has = i + 1 < argc;
    if (k == "--sizes" && has) sizes = ints(argv[++i]);
    else if (k == "--blocks" && has) blocks = ints(argv[++i]);
    else if (k == "--reps" && has) reps = std::atoi(argv[++i]);
    else if (k == "--xt-block-from-first") from_first = true;
    else if (k == "--xt-reps-after-first" && has) xt_reps_later = std::atoi(argv[++i]);
    else if (k == "--probe") with_probe = true;
    else if (k == "--no-xt") with_xt = false;
    else if (k == "--dtypes" && has) {
      dtypes.clear();
      const std::string s = argv[++i];
      for (const char* d : {"float", "double"})
        if (s.find(d) != std::string::npos) dtypes.push_back(d);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--sizes N,N] [--dtypes float,double] [--reps R] [--blocks B,B] [--xt-block-from-first] "
                   "[--xt-reps-after-first R] [--probe] [--no-xt]\n",
                   argv[0]);
      return 2;
    }
  }
  if (reps < 1 || xt_reps_later < 0 || sizes.empty() || blocks.empty() || dtypes.empty() ||
      std::any_of(sizes.begin(), sizes.end(), [](int n) { return n < 1; }) ||
      std::any_of(blocks.begin(), blocks.end(), [](int b) { return b < 1; })) {
    std::fprintf(stderr, "bad --sizes, --blocks, --dtypes, --reps or --xt-reps-after-first\n");
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    std::fprintf(stderr, "no CUDA device\n");
    return 3;
  }
  try {
    if (with_probe) probe();
    for (const std::string& dt : dtypes) {
      Best best;
      for (std::size_t s = 0; s < sizes.size(); ++s) {
        if (dt == "float")
          run<float>(sizes[s], reps, ndev, blocks, best, from_first && s > 0, s > 0 ? xt_reps_later : 0, with_xt);
        else
          run<double>(sizes[s], reps, ndev, blocks, best, from_first && s > 0, s > 0 ? xt_reps_later : 0, with_xt);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilekit_blas_xt_bench: %s\n", e.what());
    return 3;
  }
  return failures ? 1 : 0;
}
