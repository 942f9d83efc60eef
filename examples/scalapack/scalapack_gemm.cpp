// PDGEMM / PSGEMM on a P x Q BLACS grid: C = alpha op(A) op(B) + beta C, C M x N, op(A) M x K and
// op(B) K x N (all N x N unless --m or --k say otherwise), distributed block-cyclically (NB x NB
// blocks), verified against exact values and timed.
//
// The program knows nothing of tilekit: ScaLAPACK calls the BLAS for each rank's local products,
// and whatever library provides dgemm_/sgemm_ does that work. With tilekit's BLAS preloaded,
//   mpirun -np 4 -x LD_PRELOAD=.../libtilekit_blas.so.0 -x TILEKIT_BLAS_BACKEND=openmp scalapack_gemm
// every rank's local GEMM runs on tilekit (docs/scalapack.md).
//
//   scalapack_gemm [--n N] [--m M] [--k K] [--nb NB] [--grid PxQ] [--dtype double|float]
//                  [--transa N|T] [--transb N|T] [--reps R] [--verify auto|full|sample|off]
//
// Prints one JSON line (rank 0). Exit status: 0 verified (or not checked), 1 verification failed;
// a bad argument or a failing rank ends the job through MPI_Abort (status 2: usage, 3: resources)
// with a message, so no rank is left waiting for one that is gone.
//
// Verification needs no gathering: every entry of A, B and C is a function of its global
// indices, so each rank recomputes the entries of C it holds. The values have 11 significant bits
// (exact in float), their products 22, so the reference sums are exact in double for any N that
// fits in memory: the error printed is the library's alone.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

extern "C" {
// BLACS, C interface (part of libscalapack).
void Cblacs_pinfo(int* mypnum, int* nprocs);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int not_done);
// ScaLAPACK tools and the PBLAS (Fortran calling convention).
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const float* alpha, const float* a, const int* ia, const int* ja, const int* desca,
             const float* b, const int* ib, const int* jb, const int* descb, const float* beta,
             float* c, const int* ic, const int* jc, const int* descc);
}

namespace {

constexpr int kExitVerify = 1, kExitUsage = 2, kExitResources = 3;
constexpr int kSampleLines = 64;  // rows and columns checked at large N (--verify sample)
constexpr int kFullCheckMaxN = 1024;  // --verify auto: every entry up to here, a sample above

int g_rank = 0;

const char* const kUsage =
    "usage: scalapack_gemm [--n N] [--m M] [--k K] [--nb NB] [--grid PxQ] [--dtype double|float]\n"
    "                      [--transa N|T] [--transb N|T] [--reps R] [--verify auto|full|sample|off]\n"
    "  --n N         order of the matrices: columns of C and op(B) (default 1024)\n"
    "  --m M         rows of C and op(A) (default N)\n"
    "  --k K         columns of op(A), rows of op(B) (default N)\n"
    "  --nb NB       block size of the block-cyclic distribution (default 64)\n"
    "  --grid PxQ    process grid; P*Q must equal the number of ranks (default: the squarest)\n"
    "  --dtype T     double (pdgemm_) or float (psgemm_) (default double)\n"
    "  --transa C    op(A), passed to ScaLAPACK as given (default N)\n"
    "  --transb C    op(B), likewise (default N)\n"
    "  --reps R      timed calls after one untimed call; the median is reported (default 5)\n"
    "  --verify V    full: every entry of C; sample: 64 rows x 64 columns; auto: full up to\n"
    "                M, N = 1024, sample above (default auto); off: none\n";

// Arguments are parsed identically on every rank, so every rank normally gets here with the same
// message: rank 0 prints it and ends the job. The others give it time to, then print and end the
// job themselves (a rank started with arguments of its own, in an MPMD launch).
[[noreturn]] void usage_error(const std::string& message) {
  if (g_rank != 0) sleep(2);
  std::fprintf(stderr, "scalapack_gemm: %s%s (--help for usage)\n",
               g_rank ? ("rank " + std::to_string(g_rank) + ": ").c_str() : "", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kExitUsage);
  std::abort();
}

// A failure of this rank alone: the others may be waiting for it in a collective.
[[noreturn]] void rank_failure(int code, const std::string& message) {
  std::fprintf(stderr, "scalapack_gemm: rank %d: %s\n", g_rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

struct Options {
  int n = 1024;
  int m = 0, k = 0;  // 0: n
  int nb = 64;
  int p = 0, q = 0;  // 0: chosen from the rank count
  bool single = false;
  char transa = 'N', transb = 'N';
  int reps = 5;
  std::string verify = "auto";
};

int parse_int(const std::string& name, const std::string& text, int min) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v > INT_MAX || v < INT_MIN)
    usage_error("--" + name + " takes a whole number, not '" + text + "'");
  if (v < min) usage_error("--" + name + " must be at least " + std::to_string(min) + ", not " + text);
  return int(v);
}

Options parse(int argc, char** argv, int ranks) {
  Options o;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) usage_error("unexpected argument '" + arg + "'");
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      value = argv[++i];
    }
    const std::string name = arg.substr(2);
    if (name == "n") {
      o.n = parse_int(name, value, 1);
    } else if (name == "m" || name == "k") {
      (name == "m" ? o.m : o.k) = parse_int(name, value, 1);
    } else if (name == "nb") {
      o.nb = parse_int(name, value, 1);
    } else if (name == "reps") {
      o.reps = parse_int(name, value, 1);
    } else if (name == "grid") {
      const auto x = value.find_first_of("xX");
      if (x == std::string::npos) usage_error("--grid takes PxQ (such as 2x2), not '" + value + "'");
      o.p = parse_int("grid", value.substr(0, x), 1);
      o.q = parse_int("grid", value.substr(x + 1), 1);
    } else if (name == "dtype") {
      if (value != "double" && value != "float") usage_error("--dtype is double or float, not '" + value + "'");
      o.single = value == "float";
    } else if (name == "transa" || name == "transb") {
      // Not checked here: an illegal value reaches ScaLAPACK, whose own check reports it.
      if (value.size() != 1) usage_error("--" + name + " takes one character, not '" + value + "'");
      (name == "transa" ? o.transa : o.transb) = value[0];
    } else if (name == "verify") {
      if (value != "auto" && value != "full" && value != "sample" && value != "off")
        usage_error("--verify is auto, full, sample or off, not '" + value + "'");
      o.verify = value;
    } else {
      usage_error("unknown option '" + arg + "'");
    }
  }
  if (help) {
    if (g_rank == 0) std::fputs(kUsage, stdout);
    MPI_Finalize();
    std::exit(0);
  }
  if (o.p == 0) {  // the squarest grid, P <= Q
    for (int p = 1; p * p <= ranks; ++p)
      if (ranks % p == 0) o.p = p;
    o.q = ranks / o.p;
  } else if (long(o.p) * o.q != ranks) {
    usage_error("the grid " + std::to_string(o.p) + "x" + std::to_string(o.q) + " needs " +
                std::to_string(long(o.p) * o.q) + " ranks, but " + std::to_string(ranks) +
                (ranks == 1 ? " was" : " were") + " started");
  }
  if (o.m == 0) o.m = o.n;
  if (o.k == 0) o.k = o.n;
  if (o.verify == "auto") o.verify = std::max(o.m, o.n) <= kFullCheckMaxN ? "full" : "sample";
  return o;
}

// Entry (i, j) of matrix `which`: a multiple of 1/1024 in [-1, 1), from a hash of the indices.
double entry(int which, int i, int j) {
  std::uint64_t x = (std::uint64_t(which) << 62) ^ (std::uint64_t(i) << 31) ^ std::uint64_t(j);
  x += 0x9e3779b97f4a7c15ull;  // splitmix64
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return double(int((x >> 53) & 2047) - 1024) / 1024.0;
}
constexpr int kA = 0, kB = 1, kC = 2;

bool transposed(char t) { return t == 'T' || t == 't' || t == 'C' || t == 'c'; }

// The global index of local index l, blocks of nb dealt round-robin from process 0.
int global_index(int l, int nb, int me, int procs) { return (l / nb * procs + me) * nb + l % nb; }

struct Grid {
  int context = -1, nprow = 0, npcol = 0, myrow = -1, mycol = -1;
};

struct Result {
  bool checked = false, ok = true;
  double rel_error = 0, worst_ratio = 0;
  long long failures = 0, entries = 0;
};

// Recomputes the entries of C this rank holds (all of them, or those in 64 sampled rows and
// columns) and compares: an entry passes when |C - exact| <= (N + 2) eps bound 4, bound being
// sum_k |alpha op(A)_ik op(B)_kj| + |beta C0_ij| (tilekit's own criterion, src/verify.cpp).
template <class T>
Result verify(const Options& o, const Grid& g, int mloc, int nloc, const std::vector<T>& c, double alpha,
              double beta) {
  Result r;
  r.checked = true;
  const int n = o.k;  // the length of each sum
  std::vector<int> rows, cols;  // local indices to check
  // Sampled: 64 lines spread over [0, extent), the last included.
  auto sampled = [&](int extent) {
    std::vector<char> wanted;
    if (o.verify != "sample") return wanted;
    wanted.assign(std::size_t(extent), 0);
    for (int t = 0; t < kSampleLines; ++t)
      wanted[std::size_t(kSampleLines > 1 ? (long long)t * (extent - 1) / (kSampleLines - 1) : 0)] = 1;
    return wanted;
  };
  const std::vector<char> want_rows = sampled(o.m), want_cols = sampled(o.n);
  for (int l = 0; l < mloc; ++l) {
    const int gi = global_index(l, o.nb, g.myrow, g.nprow);
    if (want_rows.empty() || want_rows[std::size_t(gi)]) rows.push_back(l);
  }
  for (int l = 0; l < nloc; ++l) {
    const int gj = global_index(l, o.nb, g.mycol, g.npcol);
    if (want_cols.empty() || want_cols[std::size_t(gj)]) cols.push_back(l);
  }
  std::vector<double> arow, bcol;  // op(A) rows and op(B) columns, each n long
  try {
    arow.resize(rows.size() * std::size_t(n));
    bcol.resize(cols.size() * std::size_t(n));
  } catch (const std::bad_alloc&) {
    rank_failure(kExitResources, "cannot allocate the verification's reference rows (--verify sample needs less)");
  }
  for (std::size_t r2 = 0; r2 < rows.size(); ++r2) {
    const int gi = global_index(rows[r2], o.nb, g.myrow, g.nprow);
    for (int k = 0; k < n; ++k)
      arow[r2 * n + k] = transposed(o.transa) ? entry(kA, k, gi) : entry(kA, gi, k);
  }
  for (std::size_t c2 = 0; c2 < cols.size(); ++c2) {
    const int gj = global_index(cols[c2], o.nb, g.mycol, g.npcol);
    for (int k = 0; k < n; ++k)
      bcol[c2 * n + k] = transposed(o.transb) ? entry(kB, gj, k) : entry(kB, k, gj);
  }
  const double eps = std::numeric_limits<T>::epsilon();
  double diff2 = 0, ref2 = 0;
  const int lld = std::max(1, mloc);
  for (std::size_t c2 = 0; c2 < cols.size(); ++c2) {
    const int gj = global_index(cols[c2], o.nb, g.mycol, g.npcol);
    const double* bj = bcol.data() + c2 * n;
    for (std::size_t r2 = 0; r2 < rows.size(); ++r2) {
      const int gi = global_index(rows[r2], o.nb, g.myrow, g.nprow);
      const double* ai = arow.data() + r2 * n;
      double sum = 0, mag = 0;
      for (int k = 0; k < n; ++k) {
        const double t = ai[k] * bj[k];
        sum += t;
        mag += std::fabs(t);
      }
      const double c0 = beta * entry(kC, gi, gj);
      const double ref = alpha * sum + c0;
      const double bound = std::fabs(alpha) * mag + std::fabs(c0);
      const double got = double(c[std::size_t(cols[c2]) * lld + rows[r2]]);
      const double err = std::fabs(got - ref);
      const double tol = (double(n) + 2) * eps * bound * 4;
      const double ratio = err == 0 ? 0 : (tol > 0 ? err / tol : INFINITY);
      if (!(err <= tol)) ++r.failures;  // NaN fails too
      r.worst_ratio = std::isnan(ratio) || ratio > r.worst_ratio ? ratio : r.worst_ratio;
      diff2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
      ++r.entries;
    }
  }
  double sums[2] = {diff2, ref2}, worst = std::isnan(r.worst_ratio) ? INFINITY : r.worst_ratio;
  long long counts[2] = {r.failures, r.entries};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  r.rel_error = sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
  r.worst_ratio = worst;
  r.failures = counts[0];
  r.entries = counts[1];
  r.ok = r.failures == 0 && std::isfinite(r.rel_error);
  return r;
}

struct Descs {
  int a[9], b[9], c[9];
};

void gemm(const Options& o, const double* alpha, const double* a, const Descs& d, const double* b,
          const double* beta, double* c) {
  const int one = 1;
  pdgemm_(&o.transa, &o.transb, &o.m, &o.n, &o.k, alpha, a, &one, &one, d.a, b, &one, &one, d.b, beta, c,
          &one, &one, d.c);
}
void gemm(const Options& o, const float* alpha, const float* a, const Descs& d, const float* b,
          const float* beta, float* c) {
  const int one = 1;
  psgemm_(&o.transa, &o.transb, &o.m, &o.n, &o.k, alpha, a, &one, &one, d.a, b, &one, &one, d.b, beta, c,
          &one, &one, d.c);
}

std::string json_string(const char* s) {
  std::string out = "\"";
  for (const char* p = s ? s : ""; *p; ++p) {
    if (*p == '"' || *p == '\\') out += '\\';
    if (static_cast<unsigned char>(*p) >= 0x20) out += *p;
  }
  return out + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return "\"inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string base_name(const char* path) {
  if (!path) return "";
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

template <class T>
int run(const Options& o, int ranks) {
  Grid g;
  Cblacs_get(-1, 0, &g.context);
  Cblacs_gridinit(&g.context, "Row", o.p, o.q);
  Cblacs_gridinfo(g.context, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  if (g.myrow < 0 || g.nprow != o.p || g.npcol != o.q)
    rank_failure(4, "BLACS did not place this rank on the " + std::to_string(o.p) + "x" + std::to_string(o.q) + " grid");

  // A is M x K (K x M when transposed), B K x N (N x K), C M x N: each in NB x NB blocks from
  // process (0, 0), column-major locally.
  const int zero = 0;
  struct Local {
    int rows, cols, mloc, nloc, lld;
  };
  auto layout = [&](int rows, int cols, int* desc) {
    Local l{rows, cols, numroc_(&rows, &o.nb, &g.myrow, &zero, &g.nprow), numroc_(&cols, &o.nb, &g.mycol, &zero, &g.npcol), 0};
    l.lld = std::max(1, l.mloc);
    int info = 0;
    descinit_(desc, &rows, &cols, &o.nb, &o.nb, &zero, &zero, &g.context, &l.lld, &info);
    if (info != 0) rank_failure(kExitUsage, "descinit_ rejected argument " + std::to_string(-info));
    return l;
  };
  Descs d;
  const bool ta = transposed(o.transa), tb = transposed(o.transb);
  const Local la = ta ? layout(o.k, o.m, d.a) : layout(o.m, o.k, d.a);
  const Local lb = tb ? layout(o.n, o.k, d.b) : layout(o.k, o.n, d.b);
  const Local lc = layout(o.m, o.n, d.c);
  const int mloc = lc.mloc, nloc = lc.nloc;

  auto elements = [](const Local& l) { return std::max<std::size_t>(1, std::size_t(l.mloc) * std::size_t(l.nloc)); };
  std::vector<T> a, b, c;
  try {
    a.resize(elements(la));
    b.resize(elements(lb));
    c.resize(elements(lc));
  } catch (const std::bad_alloc&) {
    rank_failure(kExitResources, "cannot allocate its local blocks of A, B and C (" +
                                     std::to_string(double(elements(la) + elements(lb) + elements(lc)) * sizeof(T) / 1e9) +
                                     " GB)");
  }
  auto fill = [&](std::vector<T>& v, const Local& l, int which) {
    for (int lj = 0; lj < l.nloc; ++lj) {
      const int gj = global_index(lj, o.nb, g.mycol, g.npcol);
      for (int li = 0; li < l.mloc; ++li)
        v[std::size_t(lj) * l.lld + li] = T(entry(which, global_index(li, o.nb, g.myrow, g.nprow), gj));
    }
  };
  fill(a, la, kA);
  fill(b, lb, kB);
  fill(c, lc, kC);
  const T alpha = T(0.75), beta = T(-0.5);  // exact in both precisions

  // The first call is untimed: it is checked (from the initial C), or is the warm-up.
  gemm(o, &alpha, a.data(), d, b.data(), &beta, c.data());
  Result res;
  if (o.verify != "off") res = verify<T>(o, g, mloc, nloc, c, alpha, beta);

  std::vector<double> times;
  for (int r = 0; r < o.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    gemm(o, &alpha, a.data(), d, b.data(), &beta, c.data());
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  const std::size_t h = times.size() / 2;
  const double seconds = times.size() % 2 ? times[h] : 0.5 * (times[h - 1] + times[h]);
  const double gflops = 2.0 * o.m * double(o.n) * o.k / seconds / 1e9;

  if (g_rank == 0) {
    char line[1024];
    std::snprintf(line, sizeof line,
                  "{\"n\": %d, \"m\": %d, \"k\": %d, \"nb\": %d, \"p\": %d, \"q\": %d, \"ranks\": %d, \"dtype\": \"%s\", "
                  "\"transa\": \"%c\", \"transb\": \"%c\", \"reps\": %d, \"seconds\": %.6g, \"seconds_min\": %.6g, "
                  "\"gflops\": %.6g, \"rel_error\": %s, \"worst_ratio\": %s, \"check\": \"%s\", "
                  "\"checked_entries\": %lld, \"verified\": %s, \"preload\": %s, \"blas_backend\": %s}\n",
                  o.n, o.m, o.k, o.nb, o.p, o.q, ranks, o.single ? "float" : "double", o.transa, o.transb, o.reps, seconds,
                  times.front(), gflops, res.checked ? number(res.rel_error).c_str() : "null",
                  res.checked ? number(res.worst_ratio).c_str() : "null",
                  res.checked ? o.verify.c_str() : "off", res.entries, res.checked && res.ok ? "true" : "false",
                  json_string(base_name(std::getenv("LD_PRELOAD")).c_str()).c_str(),
                  json_string(std::getenv("TILEKIT_BLAS_BACKEND")).c_str());
    std::fputs(line, stdout);
    std::fflush(stdout);
    if (!res.ok)
      std::fprintf(stderr,
                   "scalapack_gemm: verification failed: %lld of %lld checked entries off by more than the "
                   "rounding bound (worst %.3g times it), relative error %.3g\n",
                   res.failures, res.entries, res.worst_ratio, res.rel_error);
  }
  Cblacs_gridexit(g.context);
  return res.ok ? 0 : kExitVerify;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Options o = parse(argc, argv, ranks);
  const int status = o.single ? run<float>(o, ranks) : run<double>(o, ranks);
  Cblacs_exit(1);  // BLACS leaves MPI to us
  MPI_Finalize();
  return status;
}
