// What every backend that computes in host memory shares: aligned allocation, memcpy
// transfers, a steady-clock timer, and the CPU's cache sizes read at run time.
#pragma once

#include <cstdint>

#include "tilekit/backend.hpp"

namespace tilekit::host {

// Cache sizes from sysfs (Linux), falling back to sysconf, then to common defaults.
struct CpuCaches {
  std::size_t l1d = 32 * 1024, l2 = 1024 * 1024, l3 = 32 * 1024 * 1024;
  int line = 64;
};
CpuCaches detect_caches();
std::string cpu_model_name();
// The first line of /proc/cpuinfo that starts with `key`, after its colon ("" when none).
std::string cpuinfo_field(const std::string& key);
// "GenuineIntel family 6 model 207, avx2 fma avx512f ...": vendor, family and model numbers and
// the vector extensions present ("" where /proc/cpuinfo says nothing).
std::string cpu_id();
// AMD CPU family 26 or later (Zen 5): kernels whose best shape was measured to differ there.
bool cpu_is_amd_family_26();
// Host memory for matrices and work buffers, released with std::free; nullptr when it cannot be
// had. 64-byte aligned; from 4 MiB up, 2 MiB aligned and marked for transparent huge pages
// (Linux madvise), so that kernels whose rows lie far apart (transpose, gemm packing) do not
// take a TLB miss at every row: measured +2% on the Zen 5 gemm and +5-10% on its transpose
// (docs/design/host-huge-pages.md). The tuning host.huge_pages=off leaves them to the OS.
void* alloc_aligned(std::size_t bytes);
// For host memory allocated elsewhere (kokkos_malloc on a host space): the alignment an allocation
// of `bytes` wants so that it can sit on transparent huge pages (2 MiB; 0 where it stays on normal
// pages: under 4 MiB, host.huge_pages=off, no madvise), and the advice itself for [p, p + bytes), p
// aligned so (whole huge pages only).
std::size_t huge_page_alignment(std::size_t bytes);
void advise_huge_pages(void* p, std::size_t bytes);

// fp32 lanes of the widest vector unit this binary may use (runtime check of AVX-512/AVX2).
int simd_lanes_f32();

// Fills a DeviceInfo for the host CPU: scratch_bytes is the L2, the level CPU tiles target.
DeviceInfo cpu_device_info(int threads);

// A vector FMA kernel for the peak measurement (ceilings.cpp): run(t, iters) runs `chains`
// independent chains of `iters` FMAs each on the calling thread and returns the FLOPs done.
// The openmp backend installs Highway's (widest vector the CPU has); without one, a scalar loop.
struct SimdFma {
  double (*run)(DType, std::uint64_t iters) = nullptr;
  const char* (*target)() = nullptr;
  int chains = 0;
};
void set_simd_fma(const SimdFma& k);
// Bandwidth (memory, and the L2 and L3 sizes given) and FMA peak on `threads` threads, beside
// the datasheet-style estimate.
Ceilings measure_cpu_ceilings(int threads, const CpuCaches& caches);

class HostBackend : public Backend {
 public:
  // Measured with info().compute_units threads: serial 1, openmp all.
  Ceilings measure_ceilings() override;
  bool host_accessible() const override { return true; }
  index_t max_matrix_elements() const override { return INT64_MAX; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void device_copy(void* dst, const void* src, std::size_t bytes) override;
};

}  // namespace tilekit::host

namespace tilekit::host {
// Cache-blocking tile for a CPU, derived from the caches in `info` the way a GPU backend
// derives its tile from shared memory per block: gemm blocks of A, B and C share half the
// L2; transpose and conv2d tiles (with their halo) take half the L1.
TileConfig auto_cpu_tile(const DeviceInfo& info, const Problem& p);
// Validates an explicit tile against the L2 (what `scratch_bytes` reports for CPUs).
TileConfig resolve_cpu_tile(const Backend& be, const Problem& p, const TileConfig& requested);
}  // namespace tilekit::host
