// The gemm peer: OpenBLAS, the library a CPU user would otherwise call, timed beside the
// kernels in `tilekit compare` with the same thread count.
#include <cblas.h>
#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "openmp.hpp"

// A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels ("core type") when it is loaded, before
// main. These re-run that choice after OPENBLAS_CORETYPE changed; weak, as a single-target build
// lacks them.
extern "C" void gotoblas_dynamic_init(void) __attribute__((weak));
extern "C" void gotoblas_dynamic_quit(void) __attribute__((weak));

namespace tilekit::openmp {
namespace {

std::string g_core_note;  // why the core type is what it is, for `info`

bool core_has(const char* const* names, const std::string& core) {
  for (; *names; ++names)
    if (strcasecmp(*names, core.c_str()) == 0) return true;
  return false;
}

// An OpenBLAS older than the CPU falls back to an older core type: 0.3.21 runs Zen 5 (and some
// Xeons) with its AVX2 Haswell kernel or a generic one, half the speed of its AVX-512 kernels
// there (177.6 against 353.1 GFLOP/s on 2 Zen 5 cores: docs/design/openblas-core-type.md).
// Then, unless the user chose a core type, choose the widest kernel the CPU runs, so the peer is
// the library at its best. Done once, before the first OpenBLAS call.
void choose_core_type() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string chosen = openblas_get_corename();
    if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) {
      g_core_note = fmt::format("OPENBLAS_CORETYPE={} from the environment", user);
      return;
    }
    if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) {
      g_core_note = "chosen by OpenBLAS (a single-target build)";
      return;
    }
    static const char* const avx512[] = {"skylakex", "cooperlake", "sapphirerapids", nullptr};
    static const char* const avx2[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids", nullptr};
    const char* want = nullptr;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && !core_has(avx512, chosen))
      want = "SKYLAKEX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !core_has(avx2, chosen))
      want = "HASWELL";
#endif
    if (!want) {
      g_core_note = "chosen by OpenBLAS";
      return;
    }
    setenv("OPENBLAS_CORETYPE", want, 0);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    g_core_note = fmt::format("OPENBLAS_CORETYPE={} set by tilekit: OpenBLAS chose {} on this CPU", want, chosen);
  });
}

// OpenBLAS reads its thread count from the environment once; follow omp_get_max_threads()
// at every call so `OMP_NUM_THREADS=n` and omp_set_num_threads() govern both sides alike.
void match_threads() {
  choose_core_type();
  const int want = max_threads();
  if (openblas_get_num_threads() != want) openblas_set_num_threads(want);
}
// CBLAS insists on ld >= 1 even when the matrix has no columns.
int ld(index_t v) { return int(std::max<index_t>(1, v)); }

}  // namespace

std::string openblas_description() {
  choose_core_type();
  return fmt::format("{} (kernels: {}; {})", openblas_get_config(), openblas_get_corename(), g_core_note);
}

void openblas_gemm(const GemmArgs<float>& g) {
  match_threads();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.m), int(g.n), int(g.k), g.alpha, g.a, ld(g.lda), g.b,
              ld(g.ldb), g.beta, g.c, ld(g.ldc));
}

void openblas_gemm(const GemmArgs<double>& g) {
  match_threads();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.m), int(g.n), int(g.k), g.alpha, g.a, ld(g.lda), g.b,
              ld(g.ldb), g.beta, g.c, ld(g.ldc));
}

}  // namespace tilekit::openmp
