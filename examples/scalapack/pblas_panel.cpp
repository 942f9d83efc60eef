// The PBLAS panel width, from the environment: preloaded next to the BLAS, this pilaenv_ replaces
// ScaLAPACK's, which returns 32. P?GEMM on more than one process updates each rank's local C with
// one BLAS call per panel of that many columns of A (rows of B); a BLAS that copies its operands
// to a GPU on every call moves the whole local C twice per panel, so it needs wide panels (a few
// thousand) to spend its time computing (docs/scalapack.md). Wider panels cost host memory: each
// rank holds a panel of A and one of B, (local rows + local columns) x width elements.
//
//   TILEKIT_PBLAS_PANEL=<width>   a whole number >= 1 (default 32, the reference's)
//
// ScaLAPACK calls pilaenv_ through the dynamic linker (it is exported from libscalapack), so the
// first definition in the process, this one when preloaded, is the one used.
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace {
int panel_width() {
  const char* v = std::getenv("TILEKIT_PBLAS_PANEL");
  if (!v || !*v) return 32;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || errno == ERANGE || n < 1 || n > INT_MAX) {
    std::fprintf(stderr, "tilekit-pblas-panel: TILEKIT_PBLAS_PANEL=%s: a whole number >= 1 (the PBLAS panel width)\n", v);
    std::exit(2);
  }
  return int(n);
}
}  // namespace

extern "C" int pilaenv_(const int* /*context*/, const char* /*precision*/) {
  static const int width = panel_width();
  return width;
}
