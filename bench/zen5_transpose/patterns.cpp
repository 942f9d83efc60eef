// Bandwidth of N write streams (streaming stores) and N read streams, each advanced RUN bytes at a
// time, 2 threads, 8192^2 floats on huge pages (session 9; bench/results/zen5-r9-transpose.txt).
//   g++ -O3 -march=native -fopenmp bench/zen5_transpose/patterns.cpp -o /tmp/patterns && OMP_NUM_THREADS=2 /tmp/patterns
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>
using idx = long; static const idx N = 8192;
int main() {
  float* b; posix_memalign((void**)&b, 2 << 20, N * N * 4); madvise(b, N * N * 4, MADV_HUGEPAGE);
  float* a; posix_memalign((void**)&a, 2 << 20, N * N * 4); madvise(a, N * N * 4, MADV_HUGEPAGE);
#pragma omp parallel for
  for (idx i = 0; i < N * N; ++i) b[i] = a[i] = 1;
  static volatile float sink;
  for (int rep = 0; rep < 2; ++rep) {
  for (idx S : {1, 2, 4, 8, 16, 32, 64, 128}) {
    printf("streams %3ld:", S);
    for (idx run : {64, 128, 256, 512}) {  // bytes per visit
      // write: output rows grouped S at a time; each visit writes run bytes to each of S rows
      auto w = [&] {
#pragma omp parallel for schedule(static)
        for (idx g = 0; g < N / S; ++g)
          for (idx c = 0; c < N; c += run / 4)
            for (idx k = 0; k < S; ++k) { float* o = b + (g * S + k) * N + c; __m512 x = _mm512_set1_ps(2.f);
              for (idx e = 0; e < run / 4; e += 16) _mm512_stream_ps(o + e, x); } };
      auto r = [&] { float acc = 0;
#pragma omp parallel for schedule(static) reduction(+:acc)
        for (idx g = 0; g < N / S; ++g) { __m512 x = _mm512_setzero_ps();
          for (idx c = 0; c < N; c += run / 4)
            for (idx k = 0; k < S; ++k) { const float* o = a + (g * S + k) * N + c;
              for (idx e = 0; e < run / 4; e += 16) x = _mm512_add_ps(x, _mm512_load_ps(o + e)); }
          acc += _mm512_reduce_add_ps(x); }
        sink = acc; };
      for (int which = 0; which < 2; ++which) {
        std::vector<double> t;
        for (int k = 0; k < 5; ++k) { auto t0 = std::chrono::steady_clock::now(); which ? r() : w(); t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
        std::sort(t.begin(), t.end());
        printf(" %s%ld %.1f", which ? "R" : "W", run, 1.0 * N * N * 4 / t[2] / 1e9);
      }
    }
    printf("\n"); fflush(stdout);
  }}
}
