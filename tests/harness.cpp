#include "harness.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace tilekit::test {

ProgramResult run_program(const std::string& args, bool with_stderr) { return run_program("", args, with_stderr); }

ProgramResult run_program(const std::string& env, const std::string& args, bool with_stderr) {
  const char* path = std::getenv("TILEKIT_PROGRAM");
  const std::string cmd = (env.empty() ? std::string() : "env " + env + " ") + (path ? path : TILEKIT_PROGRAM) + " " +
                          args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

std::vector<Param> all_params() {
  std::vector<Param> ps;
  for (const auto& name : compiled_backends()) {
    Backend* be = find_backend(name);
    for (Variant v : be->variants())
      for (DType t : kAllDTypes) ps.push_back({name, v, t});
  }
  return ps;
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return fmt::format("{}_{}_{}", info.param.backend, to_string(info.param.variant), to_string(info.param.dtype));
}

Backend* backend_or_skip(const Param& p) {
  Backend* be = find_backend(p.backend);
  if (!be || !be->available()) {
    // GTEST_SKIP returns from this function only; callers check for nullptr.
    [&] { GTEST_SKIP() << "backend '" << p.backend << "' unavailable: " << (be ? be->unavailable_reason() : "not compiled"); }();
    return nullptr;
  }
  return be;
}

std::uint64_t base_seed() {
  if (const char* s = std::getenv("TILEKIT_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261121;
}

}  // namespace tilekit::test

namespace tilekit::test {
void PrintTo(const Param& p, std::ostream* os) {
  *os << p.backend << "/" << to_string(p.variant) << "/" << to_string(p.dtype);
}
}  // namespace tilekit::test
