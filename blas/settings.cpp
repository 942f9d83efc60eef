#include "settings.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tilekit::blas {
namespace {

std::atomic<const Settings*> read_once{nullptr};

// lenient: an invalid value leaves the default; otherwise it ends the process.
Settings read(bool lenient) {
  const auto bad = [lenient](const char* var, const char* value, const char* expected) {
    if (lenient) return;
    std::fprintf(stderr, "tilekit-blas: %s='%s' is not valid: expected %s\n", var, value, expected);
    std::fflush(stderr);
    std::exit(2);
  };
  Settings s;
  if (const char* v = std::getenv("TILEKIT_BLAS_BACKEND"); v && *v) {
    static const char* const kNames[] = {"auto", "serial", "openmp", "kokkos", "cuda", "hip"};
    bool ok = false;
    for (const char* n : kNames) ok = ok || std::strcmp(v, n) == 0;
    if (ok)
      s.backend = v;
    else
      bad("TILEKIT_BLAS_BACKEND", v, "one of auto, serial, openmp, kokkos, cuda, hip");
  }
  if (const char* v = std::getenv("TILEKIT_BLAS_VERBOSE"); v && *v) {
    if (std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0 || std::strcmp(v, "2") == 0)
      s.verbose = v[0] - '0';
    else
      bad("TILEKIT_BLAS_VERBOSE", v, "0, 1 or 2");
  }
  if (const char* v = std::getenv("TILEKIT_BLAS_GPU_MIN"); v && *v) {
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(v, &end, 10);
    if (errno == 0 && *end == '\0' && n >= 0 && end != v)
      s.gpu_min = n;
    else
      bad("TILEKIT_BLAS_GPU_MIN", v, "a whole number >= 0 (the smallest m, n and k a GPU takes)");
  }
  if (const char* v = std::getenv("TILEKIT_BLAS_SYSTEM"); v && *v) s.system = v;
  if (const char* v = std::getenv("TILEKIT_BLAS_STAGE"); v && *v) {
    if (std::strcmp(v, "auto") == 0 || std::strcmp(v, "always") == 0)
      s.stage_always = std::strcmp(v, "always") == 0;
    else
      bad("TILEKIT_BLAS_STAGE", v, "auto or always");
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
