// The contract between libtilekit and a backend plugin (tilekit-<name>.so, a MODULE library
// loaded with dlopen by the registry in src/backend.cpp). A plugin defines, once:
//   TILEKIT_PLUGIN_ENTRY(tilekit::detail::make_cuda_backend)
// which exports two C functions the loader looks up by name: the interface version the plugin
// was compiled against (refused unless it equals the loader's), and the factory.
#pragma once

#include <memory>
#include <string>

#include "tilekit/backend.hpp"
#include "tilekit/config.hpp"

extern "C" {
using tilekit_plugin_abi_fn = int();
using tilekit_plugin_make_fn = tilekit::Backend*();
}

#define TILEKIT_PLUGIN_ENTRY(factory)                                                              \
  extern "C" __attribute__((visibility("default"))) int tilekit_plugin_abi() { return TILEKIT_PLUGIN_ABI; } \
  extern "C" __attribute__((visibility("default"))) tilekit::Backend* tilekit_plugin_make() {     \
    return (factory)().release();                                                                   \
  }

namespace tilekit::detail {
// Loads the plugin file at `path` and creates its backend, which must call itself `name`.
// nullptr, with the reason in `why` (the loader's message, an interface version mismatch, a
// factory that threw), when it cannot. The registry's loader, open to the tests.
std::unique_ptr<Backend> load_plugin_file(const std::string& name, const std::string& path, std::string& why);
}  // namespace tilekit::detail
