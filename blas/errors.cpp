// The default error handlers. Weak, and called through the dynamic linker (they are called from
// other files, and nothing here is bound locally), so that a program's own xerbla_ or
// cblas_xerbla is the one that runs: the netlib testers define both to check the positions that
// the routines report.
#include "errors.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {

__attribute__((weak)) void xerbla_(const char* srname, const int* info, std::size_t srname_len) {
  std::size_t n = srname_len;
  while (n > 0 && srname[n - 1] == ' ') --n;  // Fortran's LEN_TRIM
  std::printf(" ** On entry to %.*s parameter number %2d had an illegal value\n", int(n), srname, *info);
  std::fflush(stdout);
  std::exit(0);
}

__attribute__((weak)) void cblas_xerbla(int info, const char* rout, const char* form, ...) {
  if (RowMajorStrg) {
    // The reference CBLAS passes a row-major call to its Fortran routine with these arguments
    // swapped; the position the routine reports is put back where the caller wrote it.
    struct Swap {
      const char* routine;
      int a, b;
    };
    static const Swap kSwaps[] = {{"gemm", 4, 5},  {"gemm", 9, 11}, {"symm", 4, 5}, {"hemm", 4, 5},
                                  {"trmm", 6, 7},  {"trsm", 6, 7},  {"gemv", 3, 4}, {"gbmv", 3, 4},
                                  {"gbmv", 5, 6},  {"ger", 2, 3},   {"ger", 6, 8},  {"her2", 6, 8},
                                  {"hpr2", 6, 8}};
    const bool her2k = std::strstr(rout, "her2k") != nullptr;
    for (const Swap& s : kSwaps) {
      if (!std::strstr(rout, s.routine) || (her2k && std::strcmp(s.routine, "her2") == 0)) continue;
      if (info == s.a) {
        info = s.b;
        break;
      }
      if (info == s.b) {
        info = s.a;
        break;
      }
    }
  }
  if (info) std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
  va_list args;
  va_start(args, form);
  std::vfprintf(stderr, form, args);
  va_end(args);
  std::fflush(stderr);
  std::exit(-1);
}

}  // extern "C"

namespace tilekit::blas {
void call_xerbla(const char* name6, int info) { xerbla_(name6, &info, std::strlen(name6)); }
}  // namespace tilekit::blas
