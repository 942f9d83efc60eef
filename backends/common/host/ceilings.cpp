// The roofline ceilings of the host CPU as a CPU backend reaches them with its own thread count
// (serial: 1, openmp: all): a streaming copy for bandwidth, independent FMA chains for the peak.
// Plain std::threads, so the same code serves every CPU backend, OpenMP or not.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "host_backend.hpp"

namespace tilekit::host {
namespace {

SimdFma g_simd_fma;  // set by a backend that has a vector FMA kernel (openmp: Highway)

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Runs fn(thread index) on `threads` threads and returns the wall seconds of the whole team.
template <class F>
double on_threads(int threads, F&& fn) {
  std::vector<std::thread> team;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  for (int t = 1; t < threads; ++t)
    team.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      fn(t);
    });
  // Start the clock once every thread exists, so thread creation is not timed.
  while (ready.load() < threads - 1) std::this_thread::yield();
  const double t0 = now();
  go.store(true, std::memory_order_release);
  fn(0);
  for (auto& th : team) th.join();
  return now() - t0;
}

// Copies with non-temporal stores where the CPU has them (every x86-64 has SSE2): the
// destination's lines are not read first, so the bytes counted are the bytes that move.
void stream_copy(char* dst, const char* src, std::size_t bytes) {
#if defined(__SSE2__)
  std::size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Bytes read + written per second by the best of a streaming copy and memcpy, each thread
// copying its own cache-line-aligned share of `bytes` `inner` times per timed run (small,
// cache-resident arrays need many passes to outlast the team's start).
struct Bandwidth {
  double gbps = 0, stream_gbps = 0, memcpy_gbps = 0;
};
Bandwidth measure_bandwidth(int threads, std::size_t bytes, int inner, int runs) {
  // Plain 4 KiB pages, not alloc_aligned's huge pages: on the Zen 5 VM the copies of the large
  // levels ran slower on huge pages, and the rows of matrices under 4 MiB (on 4 KiB pages) then
  // stood 7-11% above their roof (tests/roofline_test.cpp; docs/design/host-huge-pages.md).
  char* src = static_cast<char*>(std::aligned_alloc(64, bytes));
  char* dst = static_cast<char*>(std::aligned_alloc(64, bytes));
  if (!src || !dst) {
    std::free(src);
    std::free(dst);
    throw Error(fmt::format("cannot allocate 2 x {} MiB to measure the memory bandwidth", bytes >> 20));
  }
  const std::size_t share = (bytes / std::size_t(threads) + 63) / 64 * 64;
  auto part = [&](int t, auto&& f) {
    const std::size_t b = std::min(bytes, share * std::size_t(t)), e = std::min(bytes, b + share);
    if (e > b)
      for (int i = 0; i < inner; ++i) f(dst + b, src + b, e - b);
  };
  // First touch by the thread that will copy the share: its pages land on that thread's node.
  on_threads(threads, [&](int t) {
    const std::size_t b = std::min(bytes, share * std::size_t(t)), e = std::min(bytes, b + share);
    std::memset(src + b, 1, e - b);
    std::memset(dst + b, 0, e - b);
  });
  double best_stream = std::numeric_limits<double>::infinity(), best_memcpy = best_stream;
  for (int rep = 0; rep < runs; ++rep) {
    best_stream = std::min(best_stream, on_threads(threads, [&](int t) { part(t, stream_copy); }));
    best_memcpy = std::min(best_memcpy, on_threads(threads, [&](int t) {
      part(t, [](char* d, const char* s, std::size_t n) { std::memcpy(d, s, n); });
    }));
  }
  std::free(src);
  std::free(dst);
  Bandwidth b;
  const double moved = 2e-9 * double(bytes) * inner;
  b.stream_gbps = moved / best_stream;
  b.memcpy_gbps = moved / best_memcpy;
  b.gbps = std::max(b.stream_gbps, b.memcpy_gbps);
  return b;
}

// Without a vector kernel: 16 independent scalar chains (what the compiler makes of them at the
// baseline instruction set). Its peak is far below the vector units': the warning will say so.
double scalar_fma(DType t, std::uint64_t iters) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T acc[16];
    for (int j = 0; j < 16; ++j) acc[j] = T(j);
    const T a = T(0.999), b = T(0.001);
    for (std::uint64_t i = 0; i < iters; ++i)
      for (int j = 0; j < 16; ++j) acc[j] = acc[j] * a + b;
    T s = 0;
    for (int j = 0; j < 16; ++j) s += acc[j];
    volatile T sink = s;
    (void)sink;
    return 2.0 * 16.0 * double(iters);
  };
  return t == DType::f32 ? run(0.0f) : run(0.0);
}

double measure_peak(int threads, DType t) {
  auto kernel = g_simd_fma.run ? g_simd_fma.run : &scalar_fma;
  // Calibrate on one thread to ~1.5 ms a run, then take the best of 30 runs on the whole team:
  // short runs, many of them, so that one of them runs undisturbed on a machine others share.
  std::uint64_t iters = 1 << 14;
  for (;;) {
    const double t0 = now();
    kernel(t, iters);
    const double s = now() - t0;
    if (s > 0.5e-3 || iters > (std::uint64_t(1) << 34)) {
      iters = std::max<std::uint64_t>(iters, std::uint64_t(double(iters) * 1.5e-3 / std::max(s, 1e-9)));
      break;
    }
    iters *= 4;
  }
  double best = std::numeric_limits<double>::infinity(), flops = 0;
  for (int rep = 0; rep < 30; ++rep) {
    std::vector<double> done(std::size_t(threads), 0.0);
    best = std::min(best, on_threads(threads, [&](int th) { done[std::size_t(th)] = kernel(t, iters); }));
    flops = 0;
    for (double f : done) flops += f;
  }
  return flops / best * 1e-9;
}

// Physical cores: distinct (physical id, core id) pairs, so SMT siblings count once (they
// share the FMA units).
int physical_cores() {
  std::ifstream f("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string phys = "0";
  for (std::string line; std::getline(f, line);) {
    auto pos = line.find(':');
    if (pos == std::string::npos) continue;
    if (line.rfind("physical id", 0) == 0) phys = line.substr(pos + 2);
    if (line.rfind("core id", 0) == 0) cores.emplace(phys, line.substr(pos + 2));
  }
  return cores.empty() ? int(std::max(1u, std::thread::hardware_concurrency())) : int(cores.size());
}

// The clock of a core running flat out, timed: a chain of dependent register-register integer
// adds retires one per cycle on x86 cores, so adds / second is the clock. Best of 10 short runs
// (a VM's /proc/cpuinfo says the nominal clock; boost runs ~40% above it on EPYCs). Not adds of
// an immediate: Intel's Golden Cove and later fold those at rename, several per cycle (the
// H200 host's Xeon then "ran" at 15.4 GHz). A result outside 0.5-7 GHz is no clock: 0.
double timed_clock_ghz() {
#if defined(__x86_64__)
  double best = 0;
  for (int run = 0; run < 10; ++run) {
    std::uint64_t x = 0, one = 1;
    const std::uint64_t iters = 20000;
    const double t0 = now();
    for (std::uint64_t i = 0; i < iters; ++i)
      asm volatile(".rept 100\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
    best = std::max(best, 100.0 * double(iters) / (now() - t0) * 1e-9);
  }
  return best >= 0.5 && best <= 7.0 ? best : 0;
#else
  return 0;
#endif
}

// The clock the estimate uses: cpufreq's maximum (the boost clock) where the kernel exposes
// it, else the timed one, else the "cpu MHz" of /proc/cpuinfo.
double clock_ghz(std::string& source) {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (f >> khz && khz > 0) {
    source = "cpufreq max";
    return khz * 1e-6;
  }
  const double mhz = std::atof(cpuinfo_field("cpu MHz").c_str());
  if (const double timed = timed_clock_ghz(); timed > 0) {
    source = fmt::format("timed with dependent adds; /proc/cpuinfo says {:.2f}", mhz * 1e-3);
    return timed;
  }
  source = "/proc/cpuinfo cpu MHz";
  return mhz * 1e-3;
}

// fp32 FMA lanes one core retires per cycle: vector width x FMA pipes, by microarchitecture.
int fma_lanes_f32(std::string& why) {
  const std::string vendor = cpuinfo_field("vendor_id");
  const int family = std::atoi(cpuinfo_field("cpu family").c_str());
  const int lanes = simd_lanes_f32();
  if (vendor == "AuthenticAMD" && family >= 26) {
    why = "Zen 5: 2 x 512-bit FMA";
    return 32;
  }
  if (vendor == "AuthenticAMD" && family >= 23) {
    // Zen 2-4: two 256-bit FMA pipes; Zen 4 runs AVX-512 on them in two halves.
    why = "Zen 2-4: 2 x 256-bit FMA";
    return 16;
  }
  if (vendor == "GenuineIntel" && lanes >= 16) {
    why = "Intel AVX-512: 2 x 512-bit FMA (1 on some Xeon Silver/Bronze)";
    return 32;
  }
  if (lanes >= 8) {
    why = "AVX2: 2 x 256-bit FMA";
    return 16;
  }
  why = "128-bit vectors, 1 multiply-add";
  return 4;
}

}  // namespace

void set_simd_fma(const SimdFma& k) { g_simd_fma = k; }

Ceilings measure_cpu_ceilings(int threads, const CpuCaches& caches) {
  const double t0 = now();
  Ceilings c;
  threads = std::max(1, threads);
  const char* plural = threads > 1 ? "s" : "";
  // Each level's ceiling is its bandwidth at the smallest footprint it serves (bandwidth falls
  // as footprints grow), so no problem that Ceilings::bandwidth_for assigns to a level can
  // outrun it: a level serves footprints from kServes times the capacity below it to kServes
  // times its own. Past the L3, a last cache level ("L3+memory", 4x the L3) covers the sizes
  // whose streams the L3 still partly serves (a victim cache keeps more than LRU would: 2 x 32
  // MiB copies ran ~35% faster than 2 x 128 MiB on a Zen 4), and memory starts beyond it.
  constexpr double k = Ceilings::kServes;
  const double l3 = double(caches.l3);
  const std::size_t mem_bytes =
      std::clamp<std::size_t>(std::size_t(k * 4 * l3 / 2), std::size_t(64) << 20, std::size_t(1) << 30) / 64 * 64;
  const Bandwidth mem = measure_bandwidth(threads, mem_bytes, 1, 6);
  c.gbps = mem.gbps;
  c.bandwidth_method = fmt::format("copy of 2 x {} MiB on {} thread{}, best of 6 (streaming stores {:.1f}, memcpy {:.1f} GB/s)",
                                   mem_bytes >> 20, threads, plural, mem.stream_gbps, mem.memcpy_gbps);
  // Private L1s and L2s add up over the threads; the L3 is shared.
  double below = 0;
  for (auto [name, capacity] : {std::pair{"L1", double(caches.l1d) * threads}, {"L2", double(caches.l2) * threads},
                                {"L3", l3}, {"L3+memory", 4 * l3}}) {
    if (capacity <= below) continue;
    const double footprint = below > 0 ? k * below : capacity / 2;  // both arrays together
    const std::size_t bytes = std::max<std::size_t>(std::size_t(footprint / 2) / 64 * 64, 4096);
    // Best of 16 runs where a run is short: a shared VM's slow moment otherwise sets a low roof
    // (CI once had a serial memcpy peer 9% above its L3 roof, in both of the test's runs). Each
    // thread copies 32 MiB of its share a run, whatever the team: with 32 MiB for the whole team,
    // sixteen threads copied their L1 shares for 20-30 us, the span of the team's start, and the
    // 16-core Xeon's L1 and L2 "ceilings" came out at 220-370 GB/s, below its memory copy's rate.
    const std::size_t passes = (std::size_t(32) << 20) * std::size_t(threads) / bytes;
    const Bandwidth b = measure_bandwidth(threads, bytes, int(std::clamp<std::size_t>(passes, 1, 1 << 20)),
                                          bytes > (std::size_t(8) << 20) ? 4 : 16);
    c.caches.push_back({name, capacity, b.gbps});
    c.bandwidth_method += fmt::format("; {}: copy of 2 x {} KiB, {:.1f} GB/s", name, bytes >> 10, b.gbps);
    below = capacity;
  }
  c.gflops_f32 = measure_peak(threads, DType::f32);
  c.gflops_f64 = measure_peak(threads, DType::f64);
  c.compute_method = g_simd_fma.run ? fmt::format("{} chains of vector FMA ({}) on {} thread{}, best of 30",
                                                  g_simd_fma.chains, g_simd_fma.target ? g_simd_fma.target() : "?",
                                                  threads, plural)
                                    : fmt::format("16 scalar multiply-add chains on {} thread{} (no vector FMA "
                                                  "kernel compiled: the openmp backend brings Highway's)",
                                                  threads, plural);
  std::string clock_src, why;
  const double ghz = clock_ghz(clock_src);
  const int lanes = fma_lanes_f32(why);
  const int cores = std::min(threads, physical_cores());
  c.est_gflops_f32 = double(cores) * lanes * 2.0 * ghz;
  c.est_gflops_f64 = c.est_gflops_f32 / 2;
  c.estimate_basis = fmt::format("{} core{} x {} fp32 FMA lanes ({}) x 2 x {:.2f} GHz ({}); memory bandwidth: not "
                                 "computable from what the OS reports",
                                 cores, cores > 1 ? "s" : "", lanes, why, ghz, clock_src);
  c.measure_seconds = now() - t0;
  return c;
}

Ceilings HostBackend::measure_ceilings() {
  const DeviceInfo& d = info();
  CpuCaches caches;
  caches.l1d = d.l1_bytes;
  caches.l2 = d.l2_bytes;
  caches.l3 = d.l3_bytes;
  return measure_cpu_ceilings(d.compute_units, caches);
}

}  // namespace tilekit::host
