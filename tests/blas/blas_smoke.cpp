/* A small program, written as C would be, linked against libtilekit_blas alone, for the tests of what the library
 * prints and how it ends: "calls" makes one call through each entry point; "fortran-error" and
 * "cblas-error" make a call with a bad argument, which the default xerbla_ / cblas_xerbla
 * report before ending the program as the reference BLAS does. */
#include <stdio.h>
#include <string.h>

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "calls";
  const int two = 2;
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0, 0, 0, 0};
  double da[4] = {1, 2, 3, 4}, db[4] = {1, 0, 0, 1}, dc[4] = {0, 0, 0, 0};
  const float one = 1, zero = 0;
  const double done = 1, dzero = 0;
  if (strcmp(what, "calls") == 0) {
    sgemm_("N", "N", &two, &two, &two, &one, a, &two, b, &two, &zero, c, &two);
    dgemm_("T", "N", &two, &two, &two, &done, da, &two, db, &two, &dzero, dc, &two);
    cblas_sgemm(101, 111, 112, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
    cblas_dgemm(102, 111, 111, 2, 2, 2, 1.0, da, 2, db, 2, 0.0, dc, 2);
    /* A B with B = I: A itself (row-major for the cblas_sgemm call, transposed for dgemm_ T). */
    const int ok = c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4 && dc[0] == 1 && dc[3] == 4;
    printf("%s\n", ok ? "results ok" : "results WRONG");
    fflush(stdout);  /* before the library's summary line on stderr, at exit */
    return ok ? 0 : 1;
  }
  if (strcmp(what, "fortran-error") == 0) {
    const int m = 3;
    sgemm_("N", "N", &m, &two, &two, &one, a, &two, b, &two, &zero, c, &m); /* lda 2 < m: parameter 8 */
    printf("returned after the error\n");
    return 1;
  }
  if (strcmp(what, "cblas-error") == 0) {
    cblas_sgemm(101, 111, 111, -1, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2); /* M < 0: parameter 4 */
    printf("returned after the error\n");
    return 1;
  }
  fprintf(stderr, "usage: %s calls|fortran-error|cblas-error\n", argv[0]);
  return 2;
}
