#include "host_backend.hpp"

#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include <fmt/format.h>

#include "tilekit/tunings.hpp"

namespace tilekit::host {
namespace {

// "48K", "2048K", "32M" as sysfs writes them.
std::size_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
  switch (s.back()) {
    case 'K': return v * 1024;
    case 'M': return v * 1024 * 1024;
    case 'G': return v * 1024 * 1024 * 1024;
    default: return v;
  }
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

}  // namespace

CpuCaches detect_caches() {
  CpuCaches c;
  bool found_any = false;
  for (int idx = 0; idx < 8; ++idx) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", idx);
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    const std::size_t size = parse_size(read_line(dir + "size"));
    if (level.empty() || size == 0) continue;
    found_any = true;
    if (level == "1" && type != "Instruction") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") c.l3 = size;
    if (auto line = read_line(dir + "coherency_line_size"); !line.empty()) c.line = std::atoi(line.c_str());
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (!found_any) {
    if (long v = sysconf(_SC_LEVEL1_DCACHE_SIZE); v > 0) c.l1d = std::size_t(v);
    if (long v = sysconf(_SC_LEVEL2_CACHE_SIZE); v > 0) c.l2 = std::size_t(v);
    if (long v = sysconf(_SC_LEVEL3_CACHE_SIZE); v > 0) c.l3 = std::size_t(v);
  }
#endif
  return c;
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0)
      if (auto pos = line.find(':'); pos != std::string::npos) return line.substr(pos + 2);
  return {};
}

std::string cpu_model_name() {
  const std::string name = cpuinfo_field("model name");
  return name.empty() ? "unknown CPU" : name;
}

bool cpu_is_amd_family_26() {
  static const bool yes =
      cpuinfo_field("vendor_id") == "AuthenticAMD" && std::atoi(cpuinfo_field("cpu family").c_str()) >= 26;
  return yes;
}

int simd_lanes_f32() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx2")) return 8;
  return 4;
#else
  return 4;
#endif
}

DeviceInfo cpu_device_info(int threads) {
  const CpuCaches c = detect_caches();
  DeviceInfo d;
  d.name = cpu_model_name();
  d.kind = DeviceKind::cpu;
  d.compute_units = threads;
  d.simd_width = simd_lanes_f32();
  d.scratch_bytes = c.l2;
  d.l1_bytes = c.l1d;
  d.l2_bytes = c.l2;
  d.l3_bytes = c.l3;
  d.extra.emplace_back("cache line", fmt::format("{} B", c.line));
  if (const std::string id = cpu_id(); !id.empty()) d.extra.emplace_back("CPU", id);
  return d;
}

std::string cpu_id() {
  const std::string vendor = cpuinfo_field("vendor_id"), family = cpuinfo_field("cpu family"),
                    model = cpuinfo_field("model");
  if (vendor.empty() && family.empty()) return {};
  // The vector extensions the kernels' paths depend on (a virtual machine's model name is often
  // a generic "Processor": these say which CPU it is).
  std::string flags;
  const std::string all = " " + cpuinfo_field("flags") + " ";
  for (const char* f : {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile"})
    if (all.find(std::string(" ") + f + " ") != std::string::npos) flags += (flags.empty() ? "" : " ") + std::string(f);
  return fmt::format("{} family {} model {}{}{}", vendor, family, model, flags.empty() ? "" : ", ", flags);
}

namespace {
constexpr std::size_t kHugePage = std::size_t(2) << 20, kHugeFrom = std::size_t(4) << 20;

bool huge_pages_wanted() { return tuning_choice<bool>("host.huge_pages", {{"on", true}, {"off", false}}); }
}  // namespace

void* alloc_aligned(std::size_t bytes) {
  if (bytes > SIZE_MAX - kHugePage) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugeFrom && huge_pages_wanted()) {
    const std::size_t whole = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (void* p = std::aligned_alloc(kHugePage, whole)) {
      madvise(p, whole, MADV_HUGEPAGE);  // advice: refused or not, the memory is usable
      return p;
    }
  }
#endif
  // 64-byte alignment: whole cache lines and aligned AVX-512 loads for every matrix start.
  return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
}

std::size_t huge_page_alignment(std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugeFrom && huge_pages_wanted()) return kHugePage;
#endif
  (void)bytes;
  return 0;
}

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (const std::size_t whole = bytes / kHugePage * kHugePage; whole > 0) madvise(p, whole, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void* HostBackend::allocate(std::size_t bytes) {
  huge_pages_wanted();  // a bad TILEKIT_* environment fails here, at the first matrix, not in a kernel
  if (bytes > SIZE_MAX - kHugePage)
    throw ResourceError(fmt::format("backend '{}': {} bytes is too large", name(), bytes));
  void* p = alloc_aligned(bytes);
  if (!p)
    throw ResourceError(fmt::format("backend '{}': cannot allocate {} bytes of host memory ({} available)", name(),
                                    bytes, host_memory_available()));
  return p;
}
void HostBackend::deallocate(void* p) noexcept { std::free(p); }
void HostBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
void HostBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
void HostBackend::device_copy(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

}  // namespace tilekit::host

namespace tilekit {
std::size_t host_memory_available() {
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      const unsigned long long kib = std::strtoull(line.c_str() + 13, nullptr, 10);
      return kib > SIZE_MAX / 1024 ? SIZE_MAX : std::size_t(kib) * 1024;
    }
  return SIZE_MAX;
}
std::size_t Backend::memory_available() const { return host_memory_available(); }
}  // namespace tilekit

#include <cmath>

#include "tilekit/ops.hpp"

namespace tilekit::host {

namespace {
int round_down(int v, int multiple) { return std::max(multiple, v / multiple * multiple); }
}  // namespace

TileConfig auto_cpu_tile(const DeviceInfo& info, const Problem& p) {
  const double e = double(size_of(p.dtype));
  switch (p.op) {
    case Op::gemm: {
      // A, B and the accumulators of a square tile in half the L2, at one of the widths the
      // portable tiled kernel compiles for CPUs (its lane loop then vectorises).
      const int fit = int(std::sqrt(double(info.l2_bytes) / 2.0 / (3.0 * e)));
      int t = 8;
      for (int w : {64, 32, 16})
        if (w <= fit) {
          t = w;
          break;
        }
      return {t, t, t};
    }
    case Op::transpose: {
      const int t = int(std::sqrt(double(info.l1_bytes) / 2.0 / (2.0 * e)));
      return {round_down(t, 8), round_down(t, 8), 0};
    }
    case Op::conv2d: {
      // (t + R - 1)^2 input + t^2 output elements within half the L1, at least 8 x 8.
      const double halo = double(std::max<index_t>(p.k - 1, 0));
      const double budget = double(info.l1_bytes) / 2.0 / e;
      int t = 8;
      while ((t + 8 + halo) * (t + 8 + halo) + (t + 8.0) * (t + 8.0) <= budget) t += 8;
      return {t, t, 0};
    }
  }
  return {};
}

TileConfig resolve_cpu_tile(const Backend& be, const Problem& p, const TileConfig& requested) {
  if (requested.is_auto()) return auto_cpu_tile(be.info(), p);
  check_tile_fits(p, requested, be.info().scratch_bytes,
                  fmt::format("backend '{}' (its L2 cache, {} KiB)", be.name(), be.info().scratch_bytes / 1024));
  return requested;
}

}  // namespace tilekit::host
