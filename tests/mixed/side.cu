// The .cu file: nvcc compiles helper.hpp here, with its own copy of run_and_check.
#include <cstdio>

#include "helper.hpp"

int cu_side() {
  // compiled_by() is odr-used here too, so that both files emit it and the linker keeps the copy
  // of the same file as for run_and_check (the first object file it meets).
  std::printf("the copy of inline functions this program runs: compiled by %s\n", compiled_by());
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
