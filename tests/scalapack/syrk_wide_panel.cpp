// PDSYRK on a 2x2 grid: C = A A^T + C, C 512 x 512 and A 512 x 64 in 32 x 32 blocks (each rank
// holds 256 rows of C; N >> K takes PBLAS's algorithm that moves A alone, whose workspaces are a
// full panel wide). With libtilekit_pblas_panel preloaded and TILEKIT_PBLAS_PANEL=1048576, PBLAS
// sizes one of 256 rows x 1048576 x 8 bytes = 2^31 in a 32-bit int: it overflows to a negative
// size, which ScaLAPACK alone answers with no buffer and a crash in the copy into it.
// scripts/scalapack.sh requires the library's message instead (P?SYRK is not a routine whose
// shapes it sees, so it cannot lower the width; it stops with the reason), and at 1048575 the
// product, checked here against a plain loop (exact: multiples of 1/8), with exit status 0.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <vector>

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int not_done);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a,
             const int* ia, const int* ja, const int* desca, const double* beta, double* c, const int* ic,
             const int* jc, const int* descc);
}

namespace {
double a_entry(int i, int j) { return double((i * 7 + j * 3) % 11 - 5) / 8; }
double c_entry(int i, int j) { return double((i + 2 * j) % 5) / 4; }
int global(int l, int nb, int me, int procs) { return (l / nb * procs + me) * nb + l % nb; }
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != 4) {
    std::fprintf(stderr, "syrk_wide_panel: needs 4 ranks, not %d\n", ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int n = 512, k = 64, nb = 32, zero = 0, one = 1;
  int ctxt = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0, info = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 2, 2);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  const int mloc = numroc_(&n, &nb, &myrow, &zero, &nprow), nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  const int kloc = numroc_(&k, &nb, &mycol, &zero, &npcol), lld = mloc > 0 ? mloc : 1;
  int desca[9], descc[9];
  descinit_(desca, &n, &k, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  descinit_(descc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  std::vector<double> a(std::size_t(mloc) * kloc + 1), c(std::size_t(mloc) * nloc + 1);
  for (int li = 0; li < mloc; ++li) {
    const int i = global(li, nb, myrow, nprow);
    for (int lj = 0; lj < kloc; ++lj) a[std::size_t(lj) * lld + li] = a_entry(i, global(lj, nb, mycol, npcol));
    for (int lj = 0; lj < nloc; ++lj) c[std::size_t(lj) * lld + li] = c_entry(i, global(lj, nb, mycol, npcol));
  }
  const double alpha = 1, beta = 1;
  pdsyrk_("U", "N", &n, &k, &alpha, a.data(), &one, &one, desca, &beta, c.data(), &one, &one, descc);
  long bad = 0;
  for (int lj = 0; lj < nloc; ++lj)
    for (int li = 0; li < mloc; ++li) {
      const int i = global(li, nb, myrow, nprow), j = global(lj, nb, mycol, npcol);
      if (i > j) continue;  // the upper triangle is C's
      double want = c_entry(i, j);
      for (int l = 0; l < k; ++l) want += a_entry(i, l) * a_entry(j, l);
      if (std::fabs(c[std::size_t(lj) * lld + li] - want) > 1e-12 * (1 + std::fabs(want))) ++bad;
    }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("syrk_wide_panel: %s (%ld wrong entries)\n", bad ? "FAILED" : "verified", bad);
  Cblacs_gridexit(ctxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return bad ? 1 : 0;
}
