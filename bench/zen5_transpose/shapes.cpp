// The 8192^2 float transpose's access patterns on this project's 2-core Zen 5 VM (issue #15,
// session 9; results and reading: bench/results/zen5-r9-transpose.txt, openmp NOTES.md). AVX-512
// 16 x 16 register squares, streaming stores, 2 MiB-aligned MADV_HUGEPAGE buffers, each figure
// the median of 6 timed runs in GB/s (read + write bytes; the "read"/"write" rows one side).
//   g++ -O3 -march=native -fopenmp bench/zen5_transpose/shapes.cpp -o /tmp/shapes
//   OMP_NUM_THREADS=2 /tmp/shapes ROUNDS [groups]
//     default: block shapes (input rows x cols), strips, bands, blocks through a buffer, and the
//              sequential and block patterns' reads and writes alone
//     groups:  memcpy and blocks walked in groups of H input rows (gBRxBChH)
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
using idx = long;
static const idx N = 8192;
static float* huge_alloc(size_t bytes) {
  void* p = nullptr; posix_memalign(&p, 2 << 20, bytes); madvise(p, bytes, MADV_HUGEPAGE); return (float*)p;
}
static inline void tr16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) { t[i] = _mm512_unpacklo_ps(r[i], r[i+1]); t[i+1] = _mm512_unpackhi_ps(r[i], r[i+1]); }
  for (int i = 0; i < 16; i += 4) {
    r[i]   = _mm512_shuffle_ps(t[i], t[i+2], 0x44); r[i+1] = _mm512_shuffle_ps(t[i], t[i+2], 0xEE);
    r[i+2] = _mm512_shuffle_ps(t[i+1], t[i+3], 0x44); r[i+3] = _mm512_shuffle_ps(t[i+1], t[i+3], 0xEE);
  }
  for (int i = 0; i < 16; i += 8) for (int k = 0; k < 4; ++k) {
    t[i+k]   = _mm512_shuffle_f32x4(r[i+k], r[i+4+k], 0x88); t[i+4+k] = _mm512_shuffle_f32x4(r[i+k], r[i+4+k], 0xDD);
  }
  for (int k = 0; k < 8; ++k) { r[k] = _mm512_shuffle_f32x4(t[k], t[k+8], 0x88); r[k+8] = _mm512_shuffle_f32x4(t[k], t[k+8], 0xDD); }
}
// one 16x16 square: in(i.., j..) -> out(j.., i..)
template <bool NT, int PF>
static inline void sq(const float* in, float* out, idx i, idx j) {
  __m512 r[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(in + (i + k) * N + j);
  if (PF) for (int k = 0; k < 16; ++k) _mm_prefetch((const char*)(in + (i + PF + k) * N + j), _MM_HINT_T0);
  tr16(r);
  for (int k = 0; k < 16; ++k) { if (NT) _mm512_stream_ps(out + (j + k) * N + i, r[k]); else _mm512_storeu_ps(out + (j + k) * N + i, r[k]); }
}
// but the permutation of tr16 rows is not the identity; correctness checked separately
int main(int argc, char** argv) {
  float* a = huge_alloc(N * N * 4); float* b = huge_alloc(N * N * 4);
#pragma omp parallel for
  for (idx i = 0; i < N * N; ++i) { a[i] = float(i % 100003); b[i] = 0; }
  std::vector<std::pair<std::string, std::function<void()>>> v;
  const bool groups = argc > 2 && std::string(argv[2]) == "groups";
  v.push_back({"memcpy", [&] {
#pragma omp parallel
    { int t = omp_get_thread_num(), T = omp_get_num_threads(); size_t n = N * N * 4 / T; memcpy((char*)b + t * n, (char*)a + t * n, n); } }});
  // current: blocks BR x BC, static over blocks
  auto blocks = [&](idx BR, idx BC) { return [=] {
#pragma omp parallel for collapse(2) schedule(static)
    for (idx bi = 0; bi < N / BR; ++bi) for (idx bj = 0; bj < N / BC; ++bj)
      for (idx i = bi * BR; i < bi * BR + BR; i += 16) for (idx j = bj * BC; j < bj * BC + BC; j += 16) sq<true, 0>(a, b, i, j);
  }; };
  v.push_back({"blk512x64", blocks(512, 64)});
  v.push_back({"blk256x256", blocks(256, 256)});
  // output-row-major strips of W columns of input: each thread whole strips; walk all rows
  auto strips = [&](idx W, auto pfc) { return [=] {
    constexpr int PF = decltype(pfc)::value;
#pragma omp parallel for schedule(static)
    for (idx s = 0; s < N / W; ++s)
      for (idx i = 0; i < N; i += 16) for (idx j = s * W; j < s * W + W; j += 16) sq<true, PF>(a, b, i, j);
  }; };
  v.push_back({"strip16", strips(16, std::integral_constant<int, 0>())});
  v.push_back({"strip32", strips(32, std::integral_constant<int, 0>())});
  v.push_back({"strip64", strips(64, std::integral_constant<int, 0>())});
  v.push_back({"strip16pf64", strips(16, std::integral_constant<int, 64>())});
  v.push_back({"strip32pf64", strips(32, std::integral_constant<int, 64>())});
  v.push_back({"strip64pf32", strips(64, std::integral_constant<int, 32>())});
  // input-row-major bands of H rows: walk all columns
  v.push_back({"band16", [&] {
#pragma omp parallel for schedule(static)
    for (idx bi = 0; bi < N / 16; ++bi) for (idx j = 0; j < N; j += 16) sq<true, 0>(a, b, bi * 16, j); }});
  // band of 16 rows with column blocks BC: block 16 x BC? equals blk16xBC
  v.push_back({"blk1024x32", blocks(1024, 32)});
  v.push_back({"blk2048x16", blocks(2048, 16)});
  v.push_back({"blk8192x16", blocks(8192, 16)});
  auto blocksp = [&](idx BR, idx BC, auto pfc) { return [=] {
    constexpr int PF = decltype(pfc)::value;
#pragma omp parallel for collapse(2) schedule(static)
    for (idx bi = 0; bi < N / BR; ++bi) for (idx bj = 0; bj < N / BC; ++bj)
      for (idx i = bi * BR; i < bi * BR + BR; i += 16) for (idx j = bj * BC; j < bj * BC + BC; j += 16) sq<true, PF>(a, b, i, j);
  }; };
  v.push_back({"blk512x64pf32", blocksp(512, 64, std::integral_constant<int, 32>())});
  v.push_back({"blk512x64pf64", blocksp(512, 64, std::integral_constant<int, 64>())});
  auto buf = [&](idx BR, idx BC) { return [=] {
#pragma omp parallel
    {
      float* t = (float*)aligned_alloc(64, BR * BC * 4);
#pragma omp for collapse(2) schedule(static)
      for (idx bi = 0; bi < N / BR; ++bi) for (idx bj = 0; bj < N / BC; ++bj) {
        for (idx i = 0; i < BR; i += 16) for (idx j = 0; j < BC; j += 16) {
          __m512 r[16];
          for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(a + (bi * BR + i + k) * N + bj * BC + j);
          tr16(r);
          for (int k = 0; k < 16; ++k) _mm512_store_ps(t + (j + k) * BR + i, r[k]);
        }
        for (idx j = 0; j < BC; ++j) { float* o = b + (bj * BC + j) * N + bi * BR; const float* s = t + j * BR;
          for (idx i = 0; i < BR; i += 16) _mm512_stream_ps(o + i, _mm512_load_ps(s + i)); }
      }
      free(t);
    } }; };
  v.push_back({"buf256x256", buf(256, 256)});
  v.push_back({"buf128x128", buf(128, 128)});
  v.push_back({"buf512x128", buf(512, 128)});
  v.push_back({"buf128x512", buf(128, 512)});
  v.push_back({"buf64x1024", buf(64, 1024)});
  static volatile float sink;
  v.push_back({"seqread", [&] { float acc = 0;
#pragma omp parallel for reduction(+:acc) schedule(static)
    for (idx i = 0; i < N; ++i) { __m512 x = _mm512_setzero_ps(); for (idx j = 0; j < N; j += 16) x = _mm512_add_ps(x, _mm512_load_ps(a + i * N + j)); acc += _mm512_reduce_add_ps(x); }
    sink = acc; }});
  v.push_back({"seqntwrite", [&] {
#pragma omp parallel for schedule(static)
    for (idx i = 0; i < N; ++i) { __m512 x = _mm512_set1_ps(1.f); for (idx j = 0; j < N; j += 16) _mm512_stream_ps(b + i * N + j, x); } }});
  v.push_back({"blkread", [&] { float acc = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(+:acc)
    for (idx bi = 0; bi < N / 512; ++bi) for (idx bj = 0; bj < N / 64; ++bj) { __m512 x = _mm512_setzero_ps();
      for (idx i = bi * 512; i < bi * 512 + 512; i += 16) for (idx j = bj * 64; j < bj * 64 + 64; j += 16)
        for (int k = 0; k < 16; ++k) x = _mm512_add_ps(x, _mm512_loadu_ps(a + (i + k) * N + j));
      acc += _mm512_reduce_add_ps(x); }
    sink = acc; }});
  v.push_back({"blkwrite", [&] {
#pragma omp parallel for collapse(2) schedule(static)
    for (idx bi = 0; bi < N / 512; ++bi) for (idx bj = 0; bj < N / 64; ++bj) { __m512 x = _mm512_set1_ps(1.f);
      for (idx i = bi * 512; i < bi * 512 + 512; i += 16) for (idx j = bj * 64; j < bj * 64 + 64; j += 16)
        for (int k = 0; k < 16; ++k) _mm512_stream_ps(b + (j + k) * N + i, x); } }});
  if (groups) v.erase(v.begin() + 1, v.end());  // memcpy only, then the groups
  auto grp = [&](idx BR, idx BC, idx H) { return [=] {
#pragma omp parallel for collapse(2) schedule(static)
    for (idx bi = 0; bi < N / BR; ++bi) for (idx bj = 0; bj < N / BC; ++bj)
      for (idx i = bi * BR; i < bi * BR + BR; i += H) for (idx j = bj * BC; j < bj * BC + BC; j += 16)
        for (idx h = 0; h < H; h += 16) sq<true, 0>(a, b, i + h, j);
  }; };
  if (groups) v.push_back({"g512x64h16", grp(512, 64, 16)});
  if (groups) v.push_back({"g1024x32h16", grp(1024, 32, 16)});
  if (groups) v.push_back({"g512x32h16", grp(512, 32, 16)});
  if (groups) v.push_back({"g512x32h32", grp(512, 32, 32)});
  if (groups) v.push_back({"g512x64h32", grp(512, 64, 32)});
  if (groups) v.push_back({"g512x32h64", grp(512, 32, 64)});
  if (groups) v.push_back({"g256x128h64", grp(256, 128, 64)});
  if (groups) v.push_back({"g512x16h64", grp(512, 16, 64)});
  if (groups) v.push_back({"g256x256h16", grp(256, 256, 16)});
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  for (int r = 0; r < rounds; ++r) {
    for (auto& [name, f] : v) {
      std::vector<double> t;
      for (int k = 0; k < 6; ++k) { auto t0 = std::chrono::steady_clock::now(); f(); t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
      std::sort(t.begin(), t.end());
      printf("%s %.1f  ", name.c_str(), (name.find("read")!=std::string::npos||name.find("write")!=std::string::npos ? 1.0 : 2.0) * N * N * 4 / t[3] / 1e9);
    }
    printf("\n"); fflush(stdout);
  }
}
