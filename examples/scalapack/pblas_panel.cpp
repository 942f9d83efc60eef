// The PBLAS panel width, from the environment: preloaded next to the BLAS, this pilaenv_ replaces
// ScaLAPACK's, which returns 32. P?GEMM on more than one process updates each rank's local C with
// one BLAS call per panel of that many columns of A (rows of B); a BLAS that copies its operands
// to a GPU on every call moves the whole local C twice per panel, so it needs wide panels to
// spend its time computing (docs/scalapack.md).
//
//   TILEKIT_PBLAS_PANEL=max       (the default) P?GEMM's panels as wide as K, within the limit below
//   TILEKIT_PBLAS_PANEL=<width>   a whole number >= 1: that width, within the same limit
//
// The limit: PBLAS sizes its panel workspaces in bytes with 32-bit ints (PB_COutV and PB_Cpgemm*
// call PB_Cmalloc(rows * width * element size), rows being a rank's share of M, N or K), so a
// workspace of 2^31 bytes or more overflows: PB_Cmalloc gets a negative size and returns NULL, or a
// wrapped size and a buffer too small, and the first copy into it crashes (in dmmadd_'s dcopy).
// This library therefore also wraps p{s,d,c,z}gemm_: it learns the operation's shapes and grid,
// and answers the PILAENV calls made inside it with the largest width whose every workspace stays
// below 2^31 bytes (and never wider than K: PBLAS allocates the full width even when K is
// smaller). When it lowers a width that was asked for by number it says so once, on stderr.
// The other PBLAS routines (P?TRSM, P?SYRK, ...) call PILAENV too; they get a width given by
// number as it is, and the reference's 32 for `max`: this library does not see their shapes.
// For them, PB_Cmalloc is wrapped too: a negative size (a workspace of 2^31 to 2^32 bytes whose
// size overflowed) ends the job with a message naming the panel width, instead of a crash.
//
// PBLAS copies each panel of A and B into its workspace with ?mmadd_ (alpha = 1, beta = 0: a
// dcopy per column, on one core); with panels thousands wide that is gigabytes a PDGEMM, as long
// as the product itself on a GPU. This library makes those copies with the rank's threads
// (OMP_NUM_THREADS of them, the count the rank's BLAS uses) and leaves every other ?mmadd_ to
// ScaLAPACK.
//
// ScaLAPACK calls pilaenv_, p?gemm_, ?mmadd_ and PB_Cmalloc through the dynamic linker (all
// exported from libscalapack), so the first definitions in the process, these when preloaded, are
// the ones used. A program that defines its own PILAENV (ScaLAPACK's test programs do) keeps it.
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kReferenceWidth = 32;
constexpr std::int64_t kMaxBytes = std::int64_t(INT_MAX);  // PB_Cmalloc's argument is an int

// The width asked for: 0 for max.
int requested_width() {
  const char* v = std::getenv("TILEKIT_PBLAS_PANEL");
  if (!v || !*v || std::strcmp(v, "max") == 0) return 0;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || errno == ERANGE || n < 1 || n > INT_MAX) {
    std::fprintf(stderr, "tilekit-pblas-panel: TILEKIT_PBLAS_PANEL=%s: max or a whole number >= 1 (the PBLAS panel width)\n", v);
    std::exit(2);
  }
  return int(n);
}

int requested() {
  static const int width = requested_width();
  return width;
}

// The P?GEMM call in progress on this thread (PBLAS calls PILAENV from inside it).
struct Gemm {
  bool active = false;
  int limit = INT_MAX;  // the widest panel whose workspaces stay below 2^31 bytes
  int k = 0;
  int elem = 8;  // bytes an element
};
thread_local Gemm current;

// Descriptor entries (ScaLAPACK's DESC: DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD).
constexpr int kCtxt = 1, kMb = 4, kNb = 5;

using Gridinfo = void (*)(int, int*, int*, int*, int*);

// The most rows (or columns) any rank holds of an extent of n distributed in blocks of nb over
// procs processes, whatever block the operand starts in: every workspace PBLAS allocates for a
// P?GEMM panel is one such share times the width.
std::int64_t share(std::int64_t n, std::int64_t nb, std::int64_t procs) {
  if (n <= 0) return 0;
  nb = std::max<std::int64_t>(nb, 1);
  procs = std::max<std::int64_t>(procs, 1);
  const std::int64_t blocks = (n + nb - 1) / nb + 1;  // + 1: a partial first block
  return std::min(n, (blocks + procs - 1) / procs * nb);
}

int width_limit(int elem, int m, int n, int k, const int* desca, const int* descb, const int* descc) {
  int nprow = 1, npcol = 1, myrow = 0, mycol = 0;
  static const auto gridinfo = reinterpret_cast<Gridinfo>(dlsym(RTLD_DEFAULT, "Cblacs_gridinfo"));
  if (gridinfo && descc) gridinfo(descc[kCtxt], &nprow, &npcol, &myrow, &mycol);
  // Which grid dimension distributes M, N or K depends on the transposes; the fewer processes
  // (the larger share) bounds every case.
  const int procs = std::max(1, std::min(nprow, npcol));
  int nb = 1;
  for (const int* d : {desca, descb, descc})
    if (d) nb = std::max({nb, d[kMb], d[kNb]});
  const std::int64_t rows = std::max({share(m, nb, procs), share(n, nb, procs), share(k, nb, procs), std::int64_t(1)});
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>(INT_MAX, kMaxBytes / (rows * elem))));
}

void note_lowered(int asked, int given, int elem, int limit) {
  static bool said = false;
  if (said) return;
  said = true;
  std::fprintf(stderr,
               "tilekit-pblas-panel: panel width %d lowered to %d for P?GEMM: ScaLAPACK sizes its panel workspaces "
               "(a rank's rows x width x %d bytes) with 32-bit ints, so a width above %d would overflow them\n",
               asked, given, elem, limit);
}

template <class Fn>
Fn next(const char* name) {
  Fn f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (!f) {
    std::fprintf(stderr, "tilekit-pblas-panel: no %s after this library (is ScaLAPACK loaded?): %s\n", name, dlerror());
    std::exit(3);
  }
  return f;
}

using PGemm = void (*)(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
                       const int*, const int*, const int*, const void*, const int*, const int*, const int*,
                       const void*, void*, const int*, const int*, const int*);

// Runs the real P?GEMM with this thread's panel limit set from its operands.
void gemm(PGemm real, int elem, const char* ta, const char* tb, const int* m, const int* n, const int* k,
          const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, const void* b,
          const int* ib, const int* jb, const int* descb, const void* beta, void* c, const int* ic, const int* jc,
          const int* descc) {
  const Gemm saved = current;
  current.active = true;
  current.k = k ? *k : 0;
  current.elem = elem;
  current.limit = (m && n && k) ? width_limit(elem, *m, *n, *k, desca, descb, descc) : INT_MAX;
  real(ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
  current = saved;
}

// Threads for the panel copies: OMP_NUM_THREADS (its first number), else the cores.
unsigned copy_threads() {
  static const unsigned n = [] {
    const char* v = std::getenv("OMP_NUM_THREADS");
    const long t = v ? std::strtol(v, nullptr, 10) : 0;
    if (t >= 1) return unsigned(std::min<long>(t, 256));
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return n;
}

// B := A, m x n column-major: what ?mmadd_ does with alpha = 1, beta = 0.
template <class T>
void copy_columns(int m, int n, const T* a, std::int64_t lda, T* b, std::int64_t ldb) {
  const std::size_t bytes = std::size_t(m) * sizeof(T);
  auto part = [&](int j0, int j1) {
    for (int j = j0; j < j1; ++j) std::memmove(b + j * ldb, a + j * lda, bytes);
  };
  // Threads pay off from a few megabytes; below, one core copies.
  const unsigned threads = std::min<std::int64_t>(copy_threads(), std::max<std::int64_t>(1, std::int64_t(bytes) * n >> 22));
  if (threads <= 1 || n < 2) return part(0, n);
  const unsigned use = std::min<unsigned>(threads, unsigned(n));
  std::vector<std::thread> team;
  team.reserve(use - 1);
  for (unsigned t = 1; t < use; ++t) team.emplace_back(part, int(std::int64_t(n) * t / use), int(std::int64_t(n) * (t + 1) / use));
  part(0, int(n / use));
  for (auto& th : team) th.join();
}

template <class T>
using Mmadd = void (*)(const int*, const int*, const T*, const T*, const int*, const T*, T*, const int*);

template <class T>
void mmadd(Mmadd<T> real, const int* m, const int* n, const T* alpha, const T* a, const int* lda, const T* beta, T* b,
           const int* ldb) {
  if (*alpha == T(1) && *beta == T(0) && *m > 0 && *n > 0) return copy_columns(*m, *n, a, *lda, b, *ldb);
  real(m, n, alpha, a, lda, beta, b, ldb);
}

}  // namespace

extern "C" {

void dmmadd_(const int* m, const int* n, const double* alpha, const double* a, const int* lda, const double* beta,
             double* b, const int* ldb) {
  static const auto real = next<Mmadd<double>>("dmmadd_");
  mmadd(real, m, n, alpha, a, lda, beta, b, ldb);
}
void smmadd_(const int* m, const int* n, const float* alpha, const float* a, const int* lda, const float* beta,
             float* b, const int* ldb) {
  static const auto real = next<Mmadd<float>>("smmadd_");
  mmadd(real, m, n, alpha, a, lda, beta, b, ldb);
}

int pilaenv_(const int* /*context*/, const char* /*precision*/) {
  const int asked = requested();
  if (!current.active) return asked ? asked : kReferenceWidth;
  const int want = asked ? asked : std::max(1, current.k);
  const int given = std::max(1, std::min({want, current.limit, std::max(1, current.k)}));
  if (asked > current.limit) note_lowered(asked, given, current.elem, current.limit);
  return given;
}

#define TILEKIT_PGEMM(name, elem)                                                                                  \
  void name(const char* ta, const char* tb, const int* m, const int* n, const int* k, const void* alpha,          \
            const void* a, const int* ia, const int* ja, const int* desca, const void* b, const int* ib,           \
            const int* jb, const int* descb, const void* beta, void* c, const int* ic, const int* jc,              \
            const int* descc) {                                                                                    \
    static const PGemm real = next<PGemm>(#name);                                                                  \
    gemm(real, elem, ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);          \
  }
TILEKIT_PGEMM(psgemm_, 4)
TILEKIT_PGEMM(pdgemm_, 8)
TILEKIT_PGEMM(pcgemm_, 8)
TILEKIT_PGEMM(pzgemm_, 16)
#undef TILEKIT_PGEMM

// ScaLAPACK's allocator (PBLAS/SRC/PTOOLS/PB_Cmalloc.c), called through the dynamic linker from
// every PBLAS routine. Its size is an int: a negative one is a size that overflowed.
char* PB_Cmalloc(int length) {
  using Malloc = char* (*)(int);
  static const Malloc real = next<Malloc>("PB_Cmalloc");
  if (length < 0) {
    std::fprintf(stderr,
                 "tilekit-pblas-panel: a PBLAS routine asked for a workspace of %d bytes: its size overflowed "
                 "ScaLAPACK's 32-bit ints (2^31 bytes or more). The PBLAS panel width is %s (TILEKIT_PBLAS_PANEL); "
                 "a smaller one makes smaller workspaces\n",
                 length, std::getenv("TILEKIT_PBLAS_PANEL") ? std::getenv("TILEKIT_PBLAS_PANEL") : "max");
    std::fflush(stderr);
    using Abort = void (*)(int, int);
    if (const auto blacs_abort = reinterpret_cast<Abort>(dlsym(RTLD_DEFAULT, "Cblacs_abort"))) blacs_abort(-1, 3);
    std::exit(3);
  }
  return real(length);
}

}  // extern "C"
