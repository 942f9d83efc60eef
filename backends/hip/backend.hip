// The hip backend: the shared GPU backend (backends/gpu) on the HIP runtime for AMD GPUs. The
// kernels are the very sources the cuda backend runs, compiled by hipcc for the AMD targets
// in TILEKIT_HIP_ARCHITECTURES (CMake); everything vendor-specific sits in the HIP branch of
// backends/common/gpu/portability.hpp. What is added here is what only an AMD machine needs to be
// told: why there is no usable device, and whether the device is one this build has code for.
//
// No gemm peer: rocBLAS/hipBLAS are not packaged in the Debian release tilekit's CI builds on
// (docs/porting-to-amd.md), so `compare` times the hip kernels alone.
#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/gpu_backend.hpp"
#include "plugin.hpp"

#ifndef TILEKIT_HIP_TARGETS
#error "TILEKIT_HIP_TARGETS (the --offload-arch list, comma-separated) must be defined by the build"
#endif

namespace tilekit {
namespace hip {
namespace {

std::vector<std::string> split_targets(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) {
    t.erase(0, t.find_first_not_of(' '));
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

// "gfx90a:sramecc+:xnack-" -> "gfx90a": code objects are selected by processor; the feature
// flags only matter when the build names them (then the runtime itself refuses a mismatch).
std::string processor(const std::string& target_id) { return target_id.substr(0, target_id.find(':')); }

bool path_exists(const char* p) {
  struct stat st;
  return ::stat(p, &st) == 0;
}

class HipBackend final : public gpu::GpuBackend {
 public:
  HipBackend() : GpuBackend("hip", 90), targets_(split_targets(TILEKIT_HIP_TARGETS)) {
    if (!GpuBackend::available()) {
      // The runtime's own words first, then what an AMD user checks next.
      reason_ = fmt::format("no AMD GPU: {}", GpuBackend::unavailable_reason());
      if (!path_exists("/dev/kfd"))
        reason_ += " (/dev/kfd is absent: no amdgpu kernel driver, or the device is not passed to this container)";
      reason_ += fmt::format("; compiled for {}", fmt::join(targets_, ", "));
      return;
    }
    // A device this build has no code object for would fail at the first launch with
    // hipErrorNoBinaryForGpu; say so up front, with the CMake setting that fixes it.
    hipDeviceProp_t p{};
    const hipError_t e = hipGetDeviceProperties(&p, 0);
    if (e != hipSuccess) {
      reason_ = fmt::format("hipGetDeviceProperties: {}: {}", hipGetErrorName(e), hipGetErrorString(e));
      arch_ok_ = false;
      return;
    }
    arch_ = p.gcnArchName;
    const std::string proc = processor(arch_);
    arch_ok_ = std::any_of(targets_.begin(), targets_.end(), [&](const std::string& t) { return processor(t) == proc; });
    if (!arch_ok_)
      reason_ = fmt::format(
          "the AMD GPU '{}' is {}, but this build has code for {} only; reconfigure with "
          "-DTILEKIT_HIP_ARCHITECTURES=\"{}\"",
          p.name, arch_, fmt::join(targets_, ", "), proc);
    info_ = GpuBackend::info();
    info_.extra.emplace_back("gfx target", fmt::format("{} (compiled for {})", arch_, fmt::join(targets_, ", ")));
    info_.extra.emplace_back("gemm peer", "none (no rocBLAS/hipBLAS in this build)");
  }

  bool available() const override { return GpuBackend::available() && arch_ok_; }
  std::string unavailable_reason() const override { return reason_; }
  const DeviceInfo& info() const override { return GpuBackend::available() ? info_ : GpuBackend::info(); }

 private:
  std::vector<std::string> targets_;
  std::string arch_, reason_;
  bool arch_ok_ = true;
  DeviceInfo info_;
};

}  // namespace
}  // namespace hip

namespace detail {
std::unique_ptr<Backend> make_hip_backend() { return std::make_unique<hip::HipBackend>(); }
}  // namespace detail

}  // namespace tilekit

// The plugin entry points: tilekit-hip.so is loaded by the registry (src/backend.cpp).
TILEKIT_PLUGIN_ENTRY(tilekit::detail::make_hip_backend)
