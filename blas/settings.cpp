#include "settings.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <algorithm>

#include "tilekit/tunings.hpp"
#include "tilekit/types.hpp"

namespace tilekit::blas {
namespace {

std::atomic<const Settings*> read_once{nullptr};

// The blas.* tunings of tilekit's registry (src/tunings.cpp), which checks every TILEKIT_*
// variable. lenient: a bad environment leaves the defaults; otherwise it ends the process.
Settings read(bool lenient) {
  Settings s;
  try {
    s.backend = tuning("blas.backend");
    s.verbose = int(tuning_int("blas.verbose"));
    s.gpu_min = tuning_int("blas.gpu_min");
    const std::string system = tuning("blas.system");
    s.system = system == "default" ? std::string() : system;
    s.stage_always = tuning("blas.stage") == "always";
    s.gpu_tile = tuning_int("blas.gpu_tile");
    const std::string devices = tuning("blas.devices");
    if (devices != "all")
      for (std::size_t p = 0; p < devices.size();) {
        const std::size_t e = std::min(devices.find(',', p), devices.size());
        s.devices.push_back(std::atoi(devices.substr(p, e - p).c_str()));
        p = e + 1;
      }
  } catch (const Error& e) {
    if (lenient) return Settings{};
    std::fprintf(stderr, "tilekit-blas: %s\n", e.what());
    std::fflush(stderr);
    std::exit(2);
  }
  return s;
}

}  // namespace

const Settings& settings() {
  // Never destroyed: the summary line at exit reads it after static destructors have run.
  static const Settings* s = [] {
    const Settings* r = new Settings(read(false));
    read_once.store(r);
    return r;
  }();
  return *s;
}

Settings settings_at_exit() {
  if (const Settings* s = read_once.load()) return *s;
  return read(true);
}

}  // namespace tilekit::blas
