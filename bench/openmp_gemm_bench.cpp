// Times the openmp backend's optimized SGEMM drivers and its OpenBLAS peer on one square
// problem, alternating them round by round in one process (same inputs, same thread team), for
// the scaling sweeps on many-core hosts (bench/suites.toml, host-scaling) where `tilekit run` would
// spend most of its time on a fresh one-core double-precision reference per row.
//
//   tilekit_openmp_gemm_bench [--double] [--pause MS] N REPS VARIANT...
//
// --double: DGEMM (the default is SGEMM).
// --pause MS: idle time before every timed call (default 250). Each library's worker threads keep
// spinning after a call (OpenBLAS 0.3's for 2^28 cycles, about 0.1 s; libgomp's much less), and
// on a machine whose every core the other library uses, those spinners take the cores of the call
// that follows: back to back on a 16-core Xeon, tilekit's AVX2 SGEMM lost a third of its speed
// after each OpenBLAS call. With the pause, every call starts with the other's threads asleep.
// VARIANT: new (the default driver), peer (OpenBLAS), kokkos (the kokkos backend's optimized gemm,
// on its own copies of the inputs: on a host space the same micro-kernel under Kokkos' parallel_for,
// docs/design/kokkos-host-optimized.md; its row's threads are the space's concurrency, 1 on Serial;
// an error row where kokkos is not built or runs on a GPU),
// and, in sweep builds only (the measured alternatives, -DTILEKIT_BUILD_SWEEPS=ON), prof
// (openmp.gemm.profile=on: where each thread's time went, on stderr, per call), scalarpack
// (openmp.gemm.pack_a=scalar), apf (openmp.gemm.prefetch_a=on); each optionally followed by @RxC (a
// forced thread grid) and/or :ROWS,COLS,DEPTH (an explicit tile). Threads: OMP_NUM_THREADS.
// Each variant is checked on 64 sampled elements of C against a double-precision dot product
// (bound: 4 K eps sum |a b|; that first run is also the warm-up: workspaces, thread pools), then
// timed REPS times, the variants alternating; prints one JSON line per variant in the shape of
// `tilekit run --json` (median and best GFLOP/s, all times; "new" is reported as the optimized
// variant, "peer" as openblas; every variant after the first with speed_ratio, the median over the
// rounds of its speed / the first's in that round) and exits 1 if any check failed.
// bench/suites.toml's host-scaling, cpu-avx2 and kokkos-host-gemm steps run it.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <tilekit/tilekit.hpp>
#include <tilekit/tunings.hpp>
#include <tilekit/verify.hpp>

namespace {

struct Variant {
  std::string spec, kind, grid;
  tilekit::TileConfig tile{};
};

Variant parse(const std::string& spec) {
  Variant v{spec, spec, "", {}};
  if (auto colon = v.kind.find(':'); colon != std::string::npos) {
    int r = 0, c = 0, d = 0;
    if (std::sscanf(v.kind.c_str() + colon + 1, "%d,%d,%d", &r, &c, &d) == 3) v.tile = {r, c, d};
    v.kind.erase(colon);
  }
  if (auto at = v.kind.find('@'); at != std::string::npos) {
    v.grid = v.kind.substr(at + 1);
    v.kind.erase(at);
  }
  return v;
}

// The variant's tunings (include/tilekit/tunings.hpp), set before each of its runs. Every variant
// but `new` and `peer` selects a measured alternative compiled only in sweep builds
// (-DTILEKIT_BUILD_SWEEPS=ON): set_tuning refuses it, naming the option, in other builds.
void set_env(const Variant& v) {
  tilekit::set_tuning("openmp.gemm.pack_a", v.kind == "scalarpack" ? "scalar" : "vector");
  tilekit::set_tuning("openmp.gemm.prefetch_a", v.kind == "apf" ? "on" : "off");
  tilekit::set_tuning("openmp.gemm.profile", v.kind == "prof" ? "on" : "off");
  tilekit::set_tuning("openmp.gemm.grid", v.grid.empty() ? "auto" : v.grid);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class T>
int bench(tilekit::index_t n, int reps, int pause_ms, std::vector<Variant> variants) {
  tilekit::Backend& be = tilekit::backend("openmp");
  const auto ha = tilekit::verify::random_values<T>(std::size_t(n * n), 1);
  const auto hb = tilekit::verify::random_values<T>(std::size_t(n * n), 2);
  tilekit::Matrix<T> a(be, n, n), b(be, n, n), c(be, n, n);
  a.upload(ha);
  b.upload(hb);
  // The kokkos backend's own matrices (its allocator, its alignment), made only if a variant asks.
  std::unique_ptr<tilekit::Matrix<T>> ka, kb, kc;
  auto kokkos_matrices = [&] {
    if (ka) return;
    tilekit::Backend& kbe = tilekit::backend("kokkos");
    if (!kbe.host_accessible()) throw tilekit::Error("backend 'kokkos' runs on a GPU here: its matrices are not host memory");
    ka = std::make_unique<tilekit::Matrix<T>>(kbe, n, n);
    kb = std::make_unique<tilekit::Matrix<T>>(kbe, n, n);
    kc = std::make_unique<tilekit::Matrix<T>>(kbe, n, n);
    ka->upload(ha);
    kb->upload(hb);
  };
  auto out = [&](const Variant& v) { return v.kind == "kokkos" ? kc->data() : c.data(); };

  auto run = [&](const Variant& v) {
    set_env(v);
    if (v.kind == "peer") {
      be.gemm_peer(tilekit::GemmArgs<T>{n, n, n, T(1), a.data(), n, b.data(), n, T(0), c.data(), n});
    } else if (v.kind == "kokkos") {
      kokkos_matrices();
      tilekit::gemm(tilekit::Variant::optimized, T(1), *ka, *kb, T(0), *kc, v.tile);
    } else {
      tilekit::gemm(tilekit::Variant::optimized, T(1), a, b, T(0), c, v.tile);
    }
  };
  auto seconds = [&](const Variant& v) {
    if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    const auto t0 = std::chrono::steady_clock::now();
    run(v);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  // Correctness of each variant on sampled elements (C is poisoned first, so a skipped block shows).
  std::vector<std::string> checks(variants.size());
  bool all_ok = true;
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    try {
      if (variants[vi].kind == "kokkos") kokkos_matrices();
      std::fill(out(variants[vi]), out(variants[vi]) + n * n, std::numeric_limits<T>::quiet_NaN());
      run(variants[vi]);
    } catch (const tilekit::Error& e) {  // e.g. a tile the L2 cannot hold: reported, not timed
      std::printf("{\"n\": %ld, \"threads\": %d, \"variant\": \"%s\", \"error\": \"%s\"}\n", long(n),
                  omp_get_max_threads(), variants[vi].spec.c_str(), e.what());
      variants.erase(variants.begin() + long(vi--));
      continue;
    }
    double worst = 0;
    std::uint64_t s = 12345;
    for (int e = 0; e < 64; ++e) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      const tilekit::index_t i = tilekit::index_t((s >> 33) % std::uint64_t(n)), j = tilekit::index_t((s >> 13) % std::uint64_t(n));
      double ref = 0, mag = 0;
      for (tilekit::index_t p = 0; p < n; ++p) {
        ref += double(ha[std::size_t(i * n + p)]) * double(hb[std::size_t(p * n + j)]);
        mag += std::fabs(double(ha[std::size_t(i * n + p)]) * double(hb[std::size_t(p * n + j)]));
      }
      const double got = out(variants[vi])[i * n + j];
      const double err = std::fabs(got - ref) / (4.0 * double(n) * 0.5 * double(std::numeric_limits<T>::epsilon()) * mag);
      worst = std::isfinite(got) ? std::max(worst, err) : 1e30;
    }
    const bool ok = worst <= 1.0;
    all_ok &= ok;
    checks[vi] = ok ? "ok" : "FAILED";
  }

  std::vector<std::vector<double>> times(variants.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t vi = 0; vi < variants.size(); ++vi) times[vi].push_back(seconds(variants[vi]));

  // One JSON line per variant in `tilekit run --json`'s shape (bench/run.py records them), with the
  // driver's setting and every repetition's time beside the median.
  const double flops = 2.0 * double(n) * double(n) * double(n);
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    const double med = median(times[vi]);
    const auto [fastest, slowest] = std::minmax_element(times[vi].begin(), times[vi].end());
    std::string list;
    for (double x : times[vi]) list += (list.empty() ? "" : ",") + std::to_string(x);
    // Against the first variant, call by call: on a shared VM whose speed moves by 2x within
    // seconds, the median of the per-round ratios holds still where the two medians do not.
    std::string versus;
    if (vi > 0) {
      std::vector<double> r;
      for (std::size_t i = 0; i < times[vi].size(); ++i) r.push_back(times[0][i] / times[vi][i]);
      versus = ", \"versus\": \"" + variants[0].spec + "\", \"speed_ratio\": " + std::to_string(median(r));
    }
    const bool peer = variants[vi].kind == "peer", kokkos = variants[vi].kind == "kokkos";
    const char* variant = peer ? "openblas" : variants[vi].spec == "new" || kokkos ? "optimized" : variants[vi].spec.c_str();
    std::printf(
        "{\"op\": \"gemm\", \"backend\": \"%s\", \"variant\": \"%s\", \"setting\": \"%s\", \"peer\": %s, "
        "\"dtype\": \"%s\", \"m\": %ld, \"n\": %ld, \"k\": %ld, \"threads\": %d, \"reps\": %d, \"seconds\": %.9g, "
        "\"min_seconds\": %.9g, \"max_seconds\": %.9g, \"gflops\": %.6g, \"gflops_best\": %.6g, \"gbps\": %.6g, "
        "\"times\": [%s]%s, \"verified\": %s, \"check\": \"%s\"}\n",
        kokkos ? "kokkos" : "openmp", variant, variants[vi].spec.c_str(), peer ? "true" : "false",
        sizeof(T) == 4 ? "float" : "double", long(n), long(n), long(n),
        kokkos ? tilekit::backend("kokkos").info().compute_units : omp_get_max_threads(),
        reps, med, *fastest, *slowest, flops / med * 1e-9, flops / *fastest * 1e-9,
        3.0 * sizeof(T) * double(n) * double(n) / med * 1e-9, list.c_str(), versus.c_str(), checks[vi] == "ok" ? "true" : "false",
        checks[vi].c_str());
  }
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* prog = argv[0];
  bool dbl = false;
  int pause_ms = 250;
  for (;;) {
    if (argc > 1 && std::string(argv[1]) == "--double") {
      dbl = true, --argc, ++argv;
    } else if (argc > 2 && std::string(argv[1]) == "--pause") {
      pause_ms = std::max(0, std::atoi(argv[2])), argc -= 2, argv += 2;
    } else {
      break;
    }
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s [--double] [--pause MS] N REPS VARIANT... (new, peer, ...; [@RxC][:ROWS,COLS,DEPTH])\n", prog);
    return 2;
  }
  const tilekit::index_t n = std::atol(argv[1]);
  const int reps = std::max(1, std::atoi(argv[2]));
  std::vector<Variant> variants;
  for (int i = 3; i < argc; ++i) variants.push_back(parse(argv[i]));
  return dbl ? bench<double>(n, reps, pause_ms, variants) : bench<float>(n, reps, pause_ms, variants);
}
