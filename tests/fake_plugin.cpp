// A backend plugin for the loader's tests (plugin_test.cpp), built three ways: as it should be;
// with another interface version (FAKE_PLUGIN_ABI); and needing a shared library the loader
// cannot find (FAKE_NEEDS_RUNTIME), as the cuda plugin needs libcudart on a machine without CUDA.
#include "plugin.hpp"
#include "tilekit/types.hpp"

#ifdef FAKE_NEEDS_RUNTIME
extern "C" int tilekit_fake_runtime_version();
#endif

namespace {

using namespace tilekit;

class FakeBackend final : public Backend {
 public:
  std::string name() const override { return "fake"; }
  const DeviceInfo& info() const override { return info_; }
  int priority() const override {
#ifdef FAKE_NEEDS_RUNTIME
    return tilekit_fake_runtime_version();
#else
    return 1;
#endif
  }
  // Thrown here, in the plugin, and caught by the program: tilekit::Error's identity must
  // survive the plugin boundary.
  void* allocate(std::size_t bytes) override {
    throw DeviceError("fake device: cannot allocate " + std::to_string(bytes) + " bytes");
  }
  void deallocate(void*) noexcept override {}
  void copy_to_device(void*, const void*, std::size_t) override {}
  void copy_to_host(void*, const void*, std::size_t) override {}
  void device_copy(void*, const void*, std::size_t) override {}
  Plan plan(Variant, const Problem&, const TileConfig& t) const override {
    Plan p;
    p.tile = t;
    return p;
  }
  void gemm(const Plan&, const GemmArgs<float>&) override {}
  void gemm(const Plan&, const GemmArgs<double>&) override {}
  void transpose(const Plan&, const TransposeArgs<float>&) override {}
  void transpose(const Plan&, const TransposeArgs<double>&) override {}
  void conv2d(const Plan&, const Conv2dArgs<float>&) override {}
  void conv2d(const Plan&, const Conv2dArgs<double>&) override {}

 private:
  DeviceInfo info_;
};

std::unique_ptr<Backend> make_fake() { return std::make_unique<FakeBackend>(); }

}  // namespace

#ifdef FAKE_PLUGIN_ABI
#undef TILEKIT_PLUGIN_ABI
#define TILEKIT_PLUGIN_ABI FAKE_PLUGIN_ABI
#endif
TILEKIT_PLUGIN_ENTRY(make_fake)
