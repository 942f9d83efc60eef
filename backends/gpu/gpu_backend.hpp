// The Backend shared by the GPU backends: device memory, one stream, events for timing,
// device properties, tile choice and kernel dispatch, written over portability.hpp so the
// same source serves CUDA (backends/cuda) and HIP (backends/hip). A vendor backend derives
// from it to add its gemm library as the peer.
#pragma once

#include <string>

#include "common/gpu/portability.hpp"
#include "tile_choice.hpp"
#include "tilekit/backend.hpp"

namespace tilekit::gpu {

// Reads the properties tile choice needs from the runtime.
DeviceProps query_props(int device);

class GpuBackend : public Backend {
 public:
  // Never throws: when the runtime finds no usable device, available() is false and
  // unavailable_reason() carries the runtime's message.
  GpuBackend(std::string name, int priority);
  ~GpuBackend() override;

  std::string name() const override { return name_; }
  const DeviceInfo& info() const override { return info_; }
  bool available() const override { return available_; }
  std::string unavailable_reason() const override { return reason_; }
  int priority() const override { return priority_; }

  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void device_copy(void* dst, const void* src, std::size_t bytes) override;
  void synchronize() override;
  void* native_queue() const override { return stream_; }
  std::size_t memory_available() const override;
  double time_seconds(const std::function<void()>& fn) override;

  // The plan's detail is the LaunchPlan the kernels launch with.
  Plan plan(Variant v, const Problem& p, const TileConfig& requested) const override;
  std::string describe_launch(const Plan& pl) const override;
  // Copy kernel and FFMA/DFMA chains (ceilings.cu).
  Ceilings measure_ceilings() override;

  void gemm(const Plan& pl, const GemmArgs<float>& a) override;
  void gemm(const Plan& pl, const GemmArgs<double>& a) override;
  void transpose(const Plan& pl, const TransposeArgs<float>& a) override;
  void transpose(const Plan& pl, const TransposeArgs<double>& a) override;
  void conv2d(const Plan& pl, const Conv2dArgs<float>& a) override;
  void conv2d(const Plan& pl, const Conv2dArgs<double>& a) override;

  // Host-memory gemm (host_gemm_gpu.cu): tiles of C over the devices the call names (all by
  // default), operands staged through pinned buffers, transfers overlapped with the gemms.
  bool has_gemm_host() const override { return available_; }
  bool gemm_host(const HostGemm<float>& g) override;
  bool gemm_host(const HostGemm<double>& g) override;

  const DeviceProps& props() const { return props_; }
  gpuStream_t stream() const { return stream_; }
  // The launch plan_launch() gives this device (or, without one, the datasheet device of this
  // build's vendor) for a call.
  LaunchPlan launch_plan(Variant v, const Problem& p, const TileConfig& requested) const;

 protected:
  void require_available() const;

 private:
  std::string name_, reason_;
  int priority_;
  bool available_ = false;
  int device_ = 0;
  DeviceProps props_;
  DeviceInfo info_;
  gpuStream_t stream_ = nullptr;
  gpuEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace tilekit::gpu
