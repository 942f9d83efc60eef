// What bounds the openmp transpose on this CPU: copies of every store kind, the transpose's read and
// write patterns alone, block copies with a transpose's runs, and transpose variants, all on the
// same 2 MiB-aligned, madvised (transparent huge page) buffers, alternating kind by kind in each
// round; the median of the rounds per kind, in GB/s counting bytes read + bytes written (as
// `tilekit run` does), and as a fraction of the faster glibc memcpy (1 or all threads).
// docs/design/openmp-transpose-blocks.md has the figures and what they decided.
//
// Standalone (x86-64 with AVX2; the 64-byte-store kinds run only where AVX-512 is present):
//   g++ -O3 -march=native -fopenmp bench/transpose_limits.cpp -o build-x/transpose_limits
//   build-x/transpose_limits [n=8192] [rounds=5] [block rows=352] [block cols=352] [kinds...]
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

float* alloc(std::size_t bytes) {
  void* p = std::aligned_alloc(std::size_t(2) << 20, (bytes + (std::size_t(2) << 20) - 1) & ~((std::size_t(2) << 20) - 1));
  if (!std::getenv("NOHUGE")) madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  return static_cast<float*>(p);
}

struct Ctx {
  const float* in;
  float* out;
  long n;      // square n x n floats
  long br, bc; // block rows, cols (input side)
  int threads;
};

// [begin, end) of `count` items for thread t of `threads`, in whole multiples of `unit`.
void split(long count, long unit, int t, int threads, long& b, long& e) {
  const long units = count / unit, per = (units + threads - 1) / threads;
  b = std::min(units, per * t) * unit;
  e = std::min(units, per * (t + 1)) * unit;
  if (t == threads - 1) e = count;
}

// ------------------------------------------------------------------ copies
void copy_glibc(const Ctx& c) {
  const std::size_t bytes = std::size_t(c.n) * c.n * 4;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(long(bytes), 64, omp_get_thread_num(), c.threads, b, e);
    std::memcpy(reinterpret_cast<char*>(c.out) + b, reinterpret_cast<const char*>(c.in) + b, std::size_t(e - b));
  }
}
void copy_movsb(const Ctx& c) {
  const std::size_t bytes = std::size_t(c.n) * c.n * 4;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(long(bytes), 64, omp_get_thread_num(), c.threads, b, e);
    char* d = reinterpret_cast<char*>(c.out) + b;
    const char* s = reinterpret_cast<const char*>(c.in) + b;
    std::size_t k = std::size_t(e - b);
    asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(k) : : "memory");
  }
}
template <int Kind>  // 0 plain 32-byte stores, 1 NT 32-byte, 2 NT 64-byte, 3 NT 32-byte + prefetch
void copy_vec(const Ctx& c) {
  const long count = c.n * c.n;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(count, 16, omp_get_thread_num(), c.threads, b, e);
    const float* s = c.in;
    float* d = c.out;
    for (long i = b; i < e; i += 16) {
      if constexpr (Kind == 2) {
#ifdef __AVX512F__
        _mm512_stream_ps(d + i, _mm512_load_ps(s + i));
#endif
      } else {
        if constexpr (Kind == 3) _mm_prefetch(reinterpret_cast<const char*>(s + i + 512), _MM_HINT_T0);
        const __m256 x0 = _mm256_load_ps(s + i), x1 = _mm256_load_ps(s + i + 8);
        if constexpr (Kind == 0) {
          _mm256_store_ps(d + i, x0);
          _mm256_store_ps(d + i + 8, x1);
        } else {
          _mm256_stream_ps(d + i, x0);
          _mm256_stream_ps(d + i + 8, x1);
        }
      }
    }
    _mm_sfence();
  }
}
// Reads alone and writes alone, sequential.
void read_seq(const Ctx& c) {
  const long count = c.n * c.n;
  float sink = 0;
#pragma omp parallel num_threads(c.threads) reduction(+ : sink)
  {
    long b, e;
    split(count, 32, omp_get_thread_num(), c.threads, b, e);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (long i = b; i < e; i += 32) {
      a0 = _mm256_add_ps(a0, _mm256_load_ps(c.in + i));
      a1 = _mm256_add_ps(a1, _mm256_load_ps(c.in + i + 8));
      a2 = _mm256_add_ps(a2, _mm256_load_ps(c.in + i + 16));
      a3 = _mm256_add_ps(a3, _mm256_load_ps(c.in + i + 24));
    }
    float t[8];
    _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (float x : t) sink += x;
  }
  if (sink == 12345.f) std::puts("");
}
void write_seq_nt(const Ctx& c) {
  const long count = c.n * c.n;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(count, 16, omp_get_thread_num(), c.threads, b, e);
    const __m256 v = _mm256_set1_ps(1.f);
    for (long i = b; i < e; i += 16) {
      _mm256_stream_ps(c.out + i, v);
      _mm256_stream_ps(c.out + i + 8, v);
    }
    _mm_sfence();
  }
}

// ------------------------------------------------------------------ the transpose's blocks
// Blocks of br x bc input elements (bc x br output), split statically over the threads as the
// openmp driver does (collapse(2) over block rows and columns).
template <class F>
void over_blocks(const Ctx& c, F&& f) {
  const long tr = (c.n + c.br - 1) / c.br, tc = (c.n + c.bc - 1) / c.bc;
#pragma omp parallel num_threads(c.threads)
  {
    if (std::getenv("CYCLIC")) {  // block k to thread k % threads: the threads read neighbouring blocks
      for (long k = omp_get_thread_num(); k < tr * tc; k += c.threads) {
        const long bi = k / tc, bj = k % tc;
        f(bi * c.br, std::min(c.n, (bi + 1) * c.br), bj * c.bc, std::min(c.n, (bj + 1) * c.bc));
      }
    } else {
      long b, e;
      split(tr * tc, 1, omp_get_thread_num(), c.threads, b, e);
      for (long k = b; k < e; ++k) {
        const long bi = k / tc, bj = k % tc;
        f(bi * c.br, std::min(c.n, (bi + 1) * c.br), bj * c.bc, std::min(c.n, (bj + 1) * c.bc));
      }
    }
    _mm_sfence();
  }
}

inline void transpose8(__m256* r) {
  __m256 t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k + 0] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    r[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}

// The kernel as it is: groups of 16 input rows; per 8 columns, two 8 x 8 squares into a line-wide
// L1 buffer, then 8 output lines streamed whole (two 32-byte NT stores each).
template <bool Prefetch, bool Plain = false>  // Plain: ordinary stores (the kernel below its streaming threshold)
void tp_kernel(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    for (long i = i0; i + 16 <= i1; i += 16) {
      alignas(64) float buf[8 * 16];
      for (long j = j0; j + 8 <= j1; j += 8) {
        for (int s = 0; s < 2; ++s) {
          __m256 r[8];
          for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(c.in + (i + s * 8 + k) * n + j);
          if constexpr (Prefetch)  // along the rows, a few lines ahead (glibc's memcpy prefetches 512-704 B ahead)
            if ((j & 15) == 0 && j + 128 < j1)
              for (int k = 0; k < 8; ++k) _mm_prefetch(reinterpret_cast<const char*>(c.in + (i + s * 8 + k) * n + j + 128), _MM_HINT_T0);
          transpose8(r);
          for (int k = 0; k < 8; ++k) _mm256_store_ps(buf + k * 16 + s * 8, r[k]);
        }
        float* o = c.out + j * n + i;
        for (int k = 0; k < 8; ++k) {
          if constexpr (Plain) {
            _mm256_storeu_ps(o + k * n, _mm256_load_ps(buf + k * 16));
            _mm256_storeu_ps(o + k * n + 8, _mm256_load_ps(buf + k * 16 + 8));
          } else {
            _mm256_stream_ps(o + k * n, _mm256_load_ps(buf + k * 16));
            _mm256_stream_ps(o + k * n + 8, _mm256_load_ps(buf + k * 16 + 8));
          }
        }
      }
    }
  });
}

// As the kernel, but 16 columns a step: each half-group of 8 input rows is read as whole lines
// (both halves of a line back to back, 8 lines live: the 16 rows of a group lie ld apart, in one
// L1 set of 12 ways when ld is a power of two), then 16 output lines are streamed whole.
void tp_k16(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    for (long i = i0; i + 16 <= i1; i += 16) {
      alignas(64) float buf[16 * 16];
      for (long j = j0; j + 16 <= j1; j += 16) {
        for (int s = 0; s < 2; ++s) {
          __m256 r[8], t[8];
          for (int k = 0; k < 8; ++k) {
            r[k] = _mm256_loadu_ps(c.in + (i + s * 8 + k) * n + j);
            t[k] = _mm256_loadu_ps(c.in + (i + s * 8 + k) * n + j + 8);
          }
          transpose8(r);
          transpose8(t);
          for (int k = 0; k < 8; ++k) {
            _mm256_store_ps(buf + k * 16 + s * 8, r[k]);
            _mm256_store_ps(buf + (8 + k) * 16 + s * 8, t[k]);
          }
        }
        float* o = c.out + j * n + i;
        for (int k = 0; k < 16; ++k) {
          _mm256_stream_ps(o + k * n, _mm256_load_ps(buf + k * 16));
          _mm256_stream_ps(o + k * n + 8, _mm256_load_ps(buf + k * 16 + 8));
        }
      }
    }
  });
}

// The kernel's loads and stores without its shuffles: a copy with the transpose's access pattern.
void tp_pattern(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    for (long i = i0; i + 16 <= i1; i += 16)
      for (long j = j0; j + 8 <= j1; j += 8) {
        __m256 r[16];
        for (int k = 0; k < 16; ++k) r[k] = _mm256_loadu_ps(c.in + (i + k) * n + j);
        float* o = c.out + j * n + i;
        for (int k = 0; k < 8; ++k) {
          _mm256_stream_ps(o + k * n, r[k]);
          _mm256_stream_ps(o + k * n + 8, r[8 + k]);
        }
      }
  });
}

// Groups of G input rows (G a multiple of 8): per 8 columns, G / 8 squares into an L1 buffer of
// 8 output rows x G, then 8 runs of G floats streamed (G * 4 bytes per output row, back to back).
template <int G>
long tp_group_rows(const Ctx& c, long i0, long i1, long j0, long j1) {
  const long n = c.n;
  long i = i0;
  for (; i + G <= i1; i += G) {
      alignas(64) float buf[8 * G];
      for (long j = j0; j + 8 <= j1; j += 8) {
        for (int s = 0; s < G / 8; ++s) {
          __m256 r[8];
          for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(c.in + (i + s * 8 + k) * n + j);
          transpose8(r);
          for (int k = 0; k < 8; ++k) _mm256_store_ps(buf + k * G + s * 8, r[k]);
        }
        float* o = c.out + j * n + i;
        for (int k = 0; k < 8; ++k)
          for (int s = 0; s < G / 8; ++s) _mm256_stream_ps(o + k * n + s * 8, _mm256_load_ps(buf + k * G + s * 8));
      }
  }
  return i;
}
template <int G>
void tp_group(const Ctx& c) {
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    long i = tp_group_rows<G>(c, i0, i1, j0, j1);
    if constexpr (G > 32) i = tp_group_rows<32>(c, i, i1, j0, j1);
    if constexpr (G > 16) i = tp_group_rows<16>(c, i, i1, j0, j1);
  });
}
// A whole block transposed into an L2 buffer (bc rows of br), then each output row streamed as
// one run of br floats: one write-combining stream open at a time, runs of br * 4 bytes.
template <int Store>  // 0 NT 32-byte, 1 NT 64-byte, 2 plain
void tp_rows(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    thread_local std::vector<float, std::allocator<float>> bufv;
    const long br = c.br, bc = c.bc;
    if (long(bufv.size()) < br * bc + 16) bufv.assign(std::size_t(br * bc + 16), 0.f);
    float* buf = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(bufv.data()) + 63) & ~std::uintptr_t(63));
    for (long i = i0; i < i1; i += 8)
      for (long j = j0; j < j1; j += 8) {
        __m256 r[8];
        for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(c.in + (i + k) * n + j);
        transpose8(r);
        for (int k = 0; k < 8; ++k) _mm256_store_ps(buf + (j - j0 + k) * br + (i - i0), r[k]);
      }
    for (long j = j0; j < j1; ++j) {
      const float* s = buf + (j - j0) * br;
      float* o = c.out + j * n + i0;
      for (long k = 0; k < i1 - i0; k += 16) {
        if constexpr (Store == 1) {
#ifdef __AVX512F__
          _mm512_stream_ps(o + k, _mm512_load_ps(s + k));
#endif
        } else if constexpr (Store == 0) {
          _mm256_stream_ps(o + k, _mm256_load_ps(s + k));
          _mm256_stream_ps(o + k + 8, _mm256_load_ps(s + k + 8));
        } else {
          _mm256_store_ps(o + k, _mm256_load_ps(s + k));
          _mm256_store_ps(o + k + 8, _mm256_load_ps(s + k + 8));
        }
      }
    }
  });
}

// Two phases per block, overlapped across blocks: while the squares of block k are read (8 input
// rows at a time) into one L2 buffer, block k - 1's output rows are streamed from the other, each
// as one run of its block's rows (long sequential runs, one write-combining stream at a time),
// so reads from many rows and long writes are in flight together, as in a copy.
template <int Store>  // 0 NT 32-byte, 1 NT 64-byte
void tp_pipe(const Ctx& c) {
  const long n = c.n, br = c.br, bc = c.bc;
  const long tr = (n + br - 1) / br, tc = (n + bc - 1) / bc;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(tr * tc, 1, omp_get_thread_num(), c.threads, b, e);
    std::vector<float> mem(std::size_t(2 * br * bc + 32));
    float* base = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(mem.data()) + 63) & ~std::uintptr_t(63));
    float* bufs[2] = {base, base + ((br * bc + 15) & ~15L)};
    // the pending block's output: rows [pj0, pj1) of out, columns [pi0, pi1), from bufs[pending]
    long pj0 = 0, pj1 = 0, pi0 = 0, pi1 = 0, next_row = 0;
    int cur = 0;
    auto write_rows = [&](long count) {
      const float* buf = bufs[cur ^ 1];
      const long w = pi1 - pi0;
      for (long r = 0; r < count && next_row < pj1; ++r, ++next_row) {
        const float* s = buf + (next_row - pj0) * br;
        float* o = c.out + next_row * n + pi0;
        for (long k = 0; k < w; k += 16) {
          if constexpr (Store == 1) {
#ifdef __AVX512F__
            _mm512_stream_ps(o + k, _mm512_load_ps(s + k));
#endif
          } else {
            _mm256_stream_ps(o + k, _mm256_load_ps(s + k));
            _mm256_stream_ps(o + k + 8, _mm256_load_ps(s + k + 8));
          }
        }
      }
    };
    for (long k = b; k <= e; ++k) {
      if (k < e) {
        const long bi = k / tc, bj = k % tc;
        const long i0 = bi * br, i1 = std::min(n, i0 + br), j0 = bj * bc, j1 = std::min(n, j0 + bc);
        float* buf = bufs[cur];
        const long groups = (i1 - i0) / 16;
        const long per = groups > 0 ? (pj1 - next_row + groups - 1) / groups : 0;
        for (long i = i0; i < i1; i += 16) {  // 16 rows: each buffer line written whole
          for (long j = j0; j < j1; j += 8) {
            __m256 r[8], t[8];
            for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(c.in + (i + q) * n + j);
            for (int q = 0; q < 8; ++q) t[q] = _mm256_loadu_ps(c.in + (i + 8 + q) * n + j);
            transpose8(r);
            transpose8(t);
            for (int q = 0; q < 8; ++q) {
              _mm256_store_ps(buf + (j - j0 + q) * br + (i - i0), r[q]);
              _mm256_store_ps(buf + (j - j0 + q) * br + (i - i0) + 8, t[q]);
            }
          }
          write_rows(per);
        }
        write_rows(pj1);  // whatever is left of the previous block
        pj0 = j0, pj1 = j1, pi0 = i0, pi1 = i1, next_row = j0;
        cur ^= 1;
      } else {
        write_rows(pj1);
      }
    }
    _mm_sfence();
  }
}

// Copies that read as the kernel reads and write sequentially (rk-ws), and that read sequentially
// and write as the kernel writes (rs-wk): what each side's pattern costs with the other side a
// memcpy's.
long elements_before(const Ctx& c, long k) {  // in the blocks before block k (row-major order)
  const long tc = (c.n + c.bc - 1) / c.bc, i0 = k / tc * c.br, j0 = k % tc * c.bc;
  return i0 >= c.n ? c.n * c.n : i0 * c.n + std::min(c.br, c.n - i0) * j0;
}
void hyb_rk_ws(const Ctx& c) {
  const long n = c.n;
  const long tr = (n + c.br - 1) / c.br, tc = (n + c.bc - 1) / c.bc;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(tr * tc, 1, omp_get_thread_num(), c.threads, b, e);
    // this thread's blocks' elements written as one sequential run starting at its first block's
    float* o = c.out + elements_before(c, b);
    for (long k = b; k < e; ++k) {
      const long bi = k / tc, bj = k % tc;
      const long i0 = bi * c.br, i1 = std::min(n, i0 + c.br), j0 = bj * c.bc, j1 = std::min(n, j0 + c.bc);
      for (long i = i0; i + 16 <= i1; i += 16)
        for (long j = j0; j + 8 <= j1; j += 8) {
          for (int q = 0; q < 16; ++q) _mm256_stream_ps(o + q * 8, _mm256_loadu_ps(c.in + (i + q) * n + j));
          o += 128;
        }
    }
    _mm_sfence();
  }
}
void hyb_rs_wk(const Ctx& c) {
  const long n = c.n;
  const long tr = (n + c.br - 1) / c.br, tc = (n + c.bc - 1) / c.bc;
#pragma omp parallel num_threads(c.threads)
  {
    long b, e;
    split(tr * tc, 1, omp_get_thread_num(), c.threads, b, e);
    const float* s = c.in + elements_before(c, b);
    for (long k = b; k < e; ++k) {
      const long bi = k / tc, bj = k % tc;
      const long i0 = bi * c.br, i1 = std::min(n, i0 + c.br), j0 = bj * c.bc, j1 = std::min(n, j0 + c.bc);
      for (long i = i0; i + 16 <= i1; i += 16)
        for (long j = j0; j + 8 <= j1; j += 8) {
          float* o = c.out + j * n + i;
          for (int q = 0; q < 8; ++q) {
            _mm256_stream_ps(o + q * n, _mm256_load_ps(s + q * 16));
            _mm256_stream_ps(o + q * n + 8, _mm256_load_ps(s + q * 16 + 8));
          }
          s += 128;
        }
    }
    _mm_sfence();
  }
}

// The kernel's reads alone (16 rows x 8 floats per step, as the kernel loads them).
void tp_reads(const Ctx& c) {
  const long n = c.n;
  float sink = 0;
  std::vector<float> sinks(64 * 16);
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    __m256 a = _mm256_setzero_ps();
    for (long i = i0; i + 16 <= i1; i += 16)
      for (long j = j0; j + 8 <= j1; j += 8)
        for (int k = 0; k < 16; ++k) a = _mm256_add_ps(a, _mm256_loadu_ps(c.in + (i + k) * n + j));
    float t[8];
    _mm256_storeu_ps(t, a);
    sinks[std::size_t(omp_get_thread_num()) * 16] += t[0];
  });
  for (float x : sinks) sink += x;
  if (sink == 12345.f) std::puts("");
}
// The kernel's writes alone (8 output lines per step, two 32-byte NT stores each).
void tp_writes(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    const __m256 v = _mm256_set1_ps(2.f);
    for (long i = i0; i + 16 <= i1; i += 16)
      for (long j = j0; j + 8 <= j1; j += 8) {
        float* o = c.out + j * n + i;
        for (int k = 0; k < 8; ++k) {
          _mm256_stream_ps(o + k * n, v);
          _mm256_stream_ps(o + k * n + 8, v);
        }
      }
  });
}
// Writes alone in runs of G floats per output row, 8 rows per step (tp_group's stores; G = the
// block's rows: tp_rows's stores, one output row at a time).
template <int G>
void tp_writes_g(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    const __m256 v = _mm256_set1_ps(2.f);
    const long g = G > 0 ? G : i1 - i0;
    for (long i = i0; i + g <= i1; i += g)
      for (long j = j0; j + 8 <= j1; j += (G > 0 ? 8 : 1)) {
        float* o = c.out + j * n + i;
        for (int k = 0; k < (G > 0 ? 8 : 1); ++k)
          for (long s = 0; s < g; s += 8) _mm256_stream_ps(o + k * n + s, v);
      }
  });
}

// A block copy with a transpose's runs: block (bi, bj)'s br rows of bc floats read as the
// transpose reads them, written to the block's transposed position as bc rows of br floats
// (plain NT stores, no shuffles): the transpose's traffic pattern with a copy's instruction mix.
void tp_blockcopy(const Ctx& c) {
  const long n = c.n;
  over_blocks(c, [&](long i0, long i1, long j0, long j1) {
    // the output block at (j0, i0) has bc rows of br; walk it row-major, read the input row-major
    const long br = i1 - i0, bc = j1 - j0;
    for (long r = 0; r < bc; ++r)
      for (long k = 0; k < br; k += 16) {
        const long e = r * br + k;  // element index inside the block
        const float* s = c.in + (i0 + e / bc) * n + j0 + e % bc;
        float* o = c.out + (j0 + r) * n + i0 + k;
        _mm256_stream_ps(o, _mm256_loadu_ps(s));
        _mm256_stream_ps(o + 8, _mm256_loadu_ps(s + 8));
      }
  });
}

bool check(const Ctx& c) {
  for (long i = 0; i < c.n; i += 97)
    for (long j = 0; j < c.n; j += 89)
      if (c.out[j * c.n + i] != c.in[i * c.n + j]) return false;
  return true;
}

struct Kind {
  const char* name;
  std::function<void(const Ctx&)> f;
  bool transposes;
  bool avx512 = false;  // 64-byte streaming stores
};

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 8192;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const long br = argc > 3 ? std::atol(argv[3]) : 352, bc = argc > 4 ? std::atol(argv[4]) : 352;
  if (n <= 0 || br <= 0 || bc <= 0 || n % 16 || br % 16 || bc % 16) {
    std::fprintf(stderr, "n and the block's rows and columns must be positive multiples of 16\n");
    return 2;
  }
  std::vector<std::string> want(argv + std::min(argc, 5), argv + argc);
  const std::size_t bytes = std::size_t(n) * n * 4;
  float* in = alloc(bytes);
  float* out = alloc(bytes);
  for (std::size_t i = 0; i < std::size_t(n) * n; ++i) in[i] = float(i % 1000003);
#ifdef __AVX512F__
  const bool avx512 = __builtin_cpu_supports("avx512f");
#else
  const bool avx512 = false;  // not compiled in
#endif
  std::vector<Kind> kinds = {
      {"memcpy", copy_glibc, false},          {"rep-movsb", copy_movsb, false},
      {"copy-store32", copy_vec<0>, false},   {"copy-nt32", copy_vec<1>, false},
      {"copy-nt32-pf", copy_vec<3>, false},   {"copy-nt64", copy_vec<2>, false, true},
      {"read-seq", read_seq, false},          {"write-seq-nt32", write_seq_nt, false},
      {"tp-kernel", tp_kernel<false>, true},  {"tp-kernel-pf", tp_kernel<true>, true},
      {"tp-kernel-store", tp_kernel<false, true>, true},
      {"tp-pipe-nt32", tp_pipe<0>, true},    {"tp-pipe-nt64", tp_pipe<1>, true, true},
      {"hyb-rk-ws", hyb_rk_ws, false},       {"hyb-rs-wk", hyb_rs_wk, false},
      {"tp-k16", tp_k16, true},               {"tp-pattern", tp_pattern, false},
      {"tp-g32", tp_group<32>, true},         {"tp-g64", tp_group<64>, true},
      {"tp-rows-nt32", tp_rows<0>, true},     {"tp-rows-nt64", tp_rows<1>, true, true},
      {"tp-rows-store", tp_rows<2>, true},    {"tp-reads", tp_reads, false},
      {"tp-writes", tp_writes, false},        {"tp-writes-g64", tp_writes_g<64>, false},
      {"tp-writes-g128", tp_writes_g<128>, false}, {"tp-writes-rows", tp_writes_g<0>, false},        {"tp-blockcopy", tp_blockcopy, false},
  };
  std::vector<Kind> run;
  for (auto& k : kinds) {
    const std::string nm = k.name;
    if (k.avx512 && !avx512) continue;
    if (want.empty() || std::find(want.begin(), want.end(), nm) != want.end() || nm == "memcpy") run.push_back(k);
  }
  const int tmax = omp_get_max_threads();
  std::vector<int> thread_counts = {1};
  if (tmax > 1) thread_counts.push_back(tmax);
  // times[kind][threads][round]
  std::vector<std::vector<std::vector<double>>> gbs(run.size(), std::vector<std::vector<double>>(thread_counts.size()));
  for (int r = 0; r < rounds + 1; ++r)  // round 0 warms up
    for (std::size_t ti = 0; ti < thread_counts.size(); ++ti)
      for (std::size_t k = 0; k < run.size(); ++k) {
        const Ctx c{in, out, n, br, bc, thread_counts[ti]};
        if (r == 0 && run[k].transposes) std::memset(out, 0, bytes);
        const auto t0 = Clock::now();
        run[k].f(c);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        const std::string nm = run[k].name;
        const double moved = (nm == "read-seq" || nm == "tp-reads" || nm.rfind("write", 0) == 0 || nm.rfind("tp-writes", 0) == 0) ? double(bytes) : 2.0 * double(bytes);
        if (r > 0) gbs[k][ti].push_back(moved / s / 1e9);
        if (r == 0 && run[k].transposes && !check(c)) {  // (out was cleared before round 0's transposes)
          std::printf("%s: wrong result\n", run[k].name);
          return 1;
        }
      }
  // Per-round ratios: each kind against the faster memcpy of the same round (this VM's memory
  // bandwidth moves by 2x from minute to minute with its neighbours' load).
  std::vector<std::vector<double>> ratio(run.size());
  for (int r = 0; r < rounds; ++r) {
    double m = 0;
    for (std::size_t ti = 0; ti < thread_counts.size(); ++ti) m = std::max(m, gbs[0][ti][std::size_t(r)]);
    for (std::size_t k = 0; k < run.size(); ++k) {
      double b = 0;
      for (std::size_t ti = 0; ti < thread_counts.size(); ++ti) b = std::max(b, gbs[k][ti][std::size_t(r)]);
      ratio[k].push_back(b / m);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  double best_memcpy = 0;
  for (std::size_t ti = 0; ti < thread_counts.size(); ++ti) best_memcpy = std::max(best_memcpy, median(gbs[0][ti]));
  double load[3] = {0, 0, 0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf("n=%ld block=%ldx%ld rounds=%d load=%.2f %.2f %.2f (GB/s = bytes read + written; reads-/writes-only: bytes moved)\n", n, br, bc,
              rounds, load[0], load[1], load[2]);
  std::printf("%-16s", "kind");
  for (int t : thread_counts) std::printf("  %2d thr: median [min-max]   /memcpy", t);
  std::printf("   best/memcpy per round: median [min-max]\n");
  for (std::size_t k = 0; k < run.size(); ++k) {
    std::printf("%-16s", run[k].name);
    for (std::size_t ti = 0; ti < thread_counts.size(); ++ti) {
      const auto& v = gbs[k][ti];
      const double m = median(v);
      std::printf("  %7.1f [%5.1f-%5.1f]  %6.2f", m, *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()),
                  m / best_memcpy);
    }
    std::printf("   %5.2f [%4.2f-%4.2f]\n", median(ratio[k]), *std::min_element(ratio[k].begin(), ratio[k].end()),
                *std::max_element(ratio[k].begin(), ratio[k].end()));
  }
  // The same as rows for bench/kv_rows.py (and bench/run.py).
  for (std::size_t k = 0; k < run.size(); ++k)
    std::printf("RESULT transpose_limits kind=%s n=%ld block=%ldx%ld rounds=%d threads=%d gbs_1=%.2f gbs_all=%.2f ratio=%.3f load=%.2f\n",
                run[k].name, n, br, bc, rounds, tmax, median(gbs[k][0]), median(gbs[k].back()), median(ratio[k]), load[0]);
  return 0;
}
