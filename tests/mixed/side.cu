// The .cu file: nvcc compiles helper.hpp here, with its own copy of run_and_check.
#include <cstdio>

#include "helper.hpp"

int cu_side() {
  int failures = 0;
  for (const std::string& name : tilekit::compiled_backends()) {
    tilekit::Backend* be = tilekit::find_backend(name);
    const bool host = name == "serial" || name == "openmp";
    if (!host && name != "cuda") continue;
    if (!be->available()) {
      std::printf("from the .cu:  %-6s unavailable: %s\n", name.c_str(), be->unavailable_reason().c_str());
      continue;
    }
    const std::string r = run_and_check(*be);
    std::printf("from the .cu:  %-6s %s\n", name.c_str(), r.empty() ? "ok" : r.c_str());
    // A cuda launch from the host compiler's copy is refused with the reason: not a failure here.
    if (!r.empty() && (host || r.find("cannot run on backend 'cuda'") == std::string::npos)) ++failures;
  }
  return failures;
}
