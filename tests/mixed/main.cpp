// The .cpp file: the host compiler compiles helper.hpp here, with its own copy of run_and_check.
// Runs the helper on every host backend from both files; exit status 0 when all ran right.
#include <cstdio>

#include "helper.hpp"

int cu_side();  // side.cu

int main() {
  int failures = 0;
  for (const std::string& name : tilekit::compiled_backends()) {
    if (name != "serial" && name != "openmp") continue;
    const std::string r = run_and_check(tilekit::backend(name));
    std::printf("from the .cpp: %-6s %s\n", name.c_str(), r.empty() ? "ok" : r.c_str());
    failures += !r.empty();
  }
  failures += cu_side();
  std::printf("(main.cpp sees the same: %s)\n", compiled_by());
  return failures == 0 ? 0 : 1;
}
