// The double optimized GEMM on the FP64 tensor cores (DMMA, NVIDIA sm_80+), C = alpha*A*B + beta*C,
// row-major, any m, n, k and ld. CUDA only: hipcc never sees this file's contents (the SIMT
// kernel of gemm.cuh stays the double path on AMD and on NVIDIA before sm_80).
//
// Shape of the work:
//   block  BM x BN of C, BK = 16 deep per step (8 for 64x128: at 16 its B fragments would not fit
//          the registers beside 64 accumulators), kStages shared stages filled by cp.async (16-byte
//          copies when the operands allow them, 8-byte ones otherwise; zero-fill past the borders),
//          one barrier per step: the copies of step t + kStages - 1 fly while step t computes.
//   warp   WM x WN of C as (WM/16) x (WN/8) accumulators of 16 x 8 (4 doubles per thread each).
//   atom   kWide: one mma.sync m16n8k16 (m16n8k8 at BK = 8) per accumulator and step (sm_90's DMMA
//          shapes; elsewhere issued as the m8n8k4 they equal); otherwise mma.sync m8n8k4 (sm_80's).
//          Both read the same registers: a 16 x 8 accumulator of m16n8k16 is two 8 x 8 ones of
//          m8n8k4 stacked, and its 16 k values are four m8n8k4 k-slices.
//
// Fragments (PTX ISA, mma.sync f64; g = lane / 4, t = lane % 4): m8n8k4 takes A[g][t], B[t][g] and
// accumulates C[g][2t], C[g][2t+1]; m16n8k16 takes a[v0 + 2 v1] = A[g + 8 v0][t + 4 v1],
// b[v1] = B[t + 4 v1][g] and accumulates c[v0 + 2 v1] = C[g + 8 v1][2t + v0]; m16n8k8 the same
// with v1 < 2.
//
// Shared layout: A as rows of k (BK + 4 doubles a row), B as rows of n (BN + 4 a row), both as in
// global memory, so a cp.async copies 16 bytes straight across. The 4-double pad makes the
// fragment loads conflict-free: a half-warp (g = 0..3, t = 0..3) reads 8 bytes from each of four
// rows, and rows 4 doubles (32 bytes) apart mod 128 bytes put the four rows' 32-byte pieces in
// four different quarters of the banks (A: 4 consecutive k of rows g; B: 8 consecutive n of rows t).
// At BK = 8 A's rows are 12 doubles, 96 bytes: -32 mod 128, four different quarters again.
#pragma once

#if !defined(__HIPCC__)

#include "device_common.cuh"

namespace tilekit::gpu {

namespace dmma {

constexpr int kDepth = 16;  // BK unless the launch names its own: one m16n8k16, or four m8n8k4 k-slices
constexpr int kStages = 3;  // shared stages unless the launch names its own
constexpr int kPad = 4;     // doubles of padding per shared row (see the layout note above)

// Shared bytes of one block of `stages` stages of depth bk (dynamic: above 48 KiB it needs the
// opt-in). tile_choice.cpp computes the same figure for the plan; the kokkos backend's teams run 2 stages.
__host__ __device__ constexpr int smem_bytes(int bm, int bn, int stages = kStages, int bk = kDepth) {
  return stages * (bm * (bk + kPad) + bk * (bn + kPad)) * int(sizeof(double));
}

// c[0..1] += A(8x4) * B(4x8) for this lane's two elements of C (fragments as above). Below sm_80
// the same product from warp shuffles: correct, slow, and never chosen by the plan there.
__device__ __forceinline__ void mma884(double& c0, double& c1, double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(c0), "+d"(c1)
      : "d"(a), "d"(b));
#else
  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  for (int k = 0; k < 4; ++k) {
    const double ak = __shfl_sync(0xffffffffu, a, g * 4 + k);  // A[g][k] lives in lane g*4 + k
    c0 += ak * __shfl_sync(0xffffffffu, b, (2 * t) * 4 + k);   // B[k][n] lives in lane n*4 + k
    c1 += ak * __shfl_sync(0xffffffffu, b, (2 * t + 1) * 4 + k);
  }
#endif
}

// c += A(16 x 4KS) * B(4KS x 8), KS k-slices of 4: m16n8k16 (KS = 4) or m16n8k8 (KS = 2) f64, which
// exist from sm_90 (PTX ISA 7.8); elsewhere the 2 KS m8n8k4 they equal.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && \
    (__CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 8))
#define TILEKIT_DMMA_M16N8K16 1
#else
#define TILEKIT_DMMA_M16N8K16 0
#endif
template <int KS>
__device__ __forceinline__ void mma16n8(double (&c)[4], const double (&a)[2 * KS], const double (&b)[KS]) {
  static_assert(KS == 4 || KS == 2, "m16n8k16 or m16n8k8");
#if TILEKIT_DMMA_M16N8K16
  if constexpr (KS == 4)
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
  else
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    mma884(c[0], c[1], a[2 * s], b[s]);
    mma884(c[2], c[3], a[2 * s + 1], b[s]);
  }
#endif
}

// The FP64 tensor-core peak's work for one thread (the roofline's double ceiling where the double
// gemm runs on these units: the cuda backend's ceilings.cu and the kokkos backend's): 4 independent
// accumulators, each one m16n8k16 a step (8 m8n8k4 below sm_90), `iters` steps, 4 x 128 flops a
// step for the thread. A is tiny and B one, so the sums stay normal. Every lane of a full warp
// must call it (mma.sync is warp-collective).
__device__ __forceinline__ double peak_chains(int tid, int iters) {
  double a[8], b[4], c[4][4];
#pragma unroll
  for (int q = 0; q < 8; ++q) a[q] = 1e-6 * double((tid + q) % 5);
#pragma unroll
  for (int q = 0; q < 4; ++q) b[q] = 1.0;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int q = 0; q < 4; ++q) c[j][q] = double(j);
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) mma16n8<4>(c[j], a, b);
  }
  double s = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  return s;
}
inline constexpr double kPeakFlopsPerStep = 4.0 * 128.0;  // per thread: 4 chains x (2 x 16 x 8 x 16 / 32)

}  // namespace dmma

// BM x BN per block of WARPS_M x WARPS_N warps (1D block of 32 * WARPS_M * WARPS_N threads).
// kWide: m16n8k16 (true) or m8n8k4 (false), the same arithmetic in the same order per k-slice.
// vec: A and B allow 16-byte copies (16-byte aligned bases, even ld); cvec: C allows 16-byte
// stores. Both are uniform per launch, so they cost a predictable branch, not an instantiation.
// kStages: shared stages (the cuda backend's by block shape, tile_choice.hpp's dmma_stages: 4 at
// 128x128, 3 at 128x64, 2 at 64x64; the kokkos backend's teams, which have only 48 KiB, 2).
// BK: the step's depth, 16 or 8 (tile_choice.hpp's dmma_depth: 8 for 64x128).
//
// The block's body is gemm_dmma_block: whoever launches it supplies the block's index in the grid
// (pid), the thread's rank in the block (tid: 32 consecutive ranks are a warp), the shared stages
// (smem_bytes(BM, BN, kStages, BK) bytes, 16-byte aligned) and the block's barrier. gemm_dmma_kernel
// below is the cuda backend's launch; the kokkos backend runs the same body in a Kokkos team
// (backends/kokkos/gemm_mma.cpp).
template <int BM, int BN, int WARPS_M, int WARPS_N, bool kWide, int kStages = dmma::kStages, int BK = dmma::kDepth,
          class Barrier>
__device__ __forceinline__ void gemm_dmma_block(const GemmParams<double>& g, int tiles_x, int tiles_y, int vec, int cvec,
                                                int pid, int tid, double* smem, Barrier barrier) {
  using dmma::kPad;
  using dmma::mma884;
  using dmma::mma16n8;
  static_assert(kStages >= 2, "a stage computes while the next one loads");
  static_assert(BK == 16 || BK == 8, "a step is one m16n8k16 or one m16n8k8 deep");
  constexpr int NT = 32 * WARPS_M * WARPS_N;
  constexpr int KS = BK / 4;  // m8n8k4 k-slices a step
  constexpr int LDA = BK + kPad, LDB = BN + kPad;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // one warp's part of C
  constexpr int MP = WM / 16, NJ = WN / 8;             // its 16 x 8 accumulators
  constexpr int A_STAGE = BM * LDA, STAGE = A_STAGE + BK * LDB;
  static_assert(WM % 16 == 0 && WN % 8 == 0, "warp tile must be whole 16 x 8 accumulators");
  static_assert((BM * BK / 2) % NT == 0 && (BK * BN / 2) % NT == 0, "tiles must split evenly into 16-byte copies");
  static_assert(BN % 16 == 0, "B rows 4 apart must start 32 bytes apart mod 128 (conflict-free B fragments)");

  const gemm_parts::Tile bt = gemm_parts::grouped_tile(pid, tiles_x, tiles_y);
  const int m0 = bt.y * BM, n0 = bt.x * BN;

  const int lane = tid & 31, warp = tid >> 5;
  const int gq = lane >> 2, tq = lane & 3;  // fragment coordinates g and t
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

  // Global -> shared stage s for the step starting at p0.
  auto load = [&](int s, int p0) {
    double* as = smem + s * STAGE;
    gemm_parts::copy_tiles<double, BM, BN, BK, NT, LDA, LDB>(g, as, as + A_STAGE, m0, n0, p0, tid, vec);
  };
  // A block wholly inside C whose operands allow 16-byte copies copies its whole K steps without bounds.
  const gemm_parts::WholeStepCopies<double, BM, BN, BK, NT, LDA, LDB> copies(g, m0, n0, tid, vec);

  double acc[MP][NJ][4];
  gemm_parts::zero_fragments(acc);

  // One step from stage s: the B fragments of all NJ columns (KS k-slices each) stay in registers
  // while the A fragments stream through one 16-row pair at a time; between(i) runs before the
  // i-th pair (a steady step's copies, spread over the step).
  auto compute = [&](int s, auto&& between) {
    const double* as = smem + s * STAGE + (wm0 + gq) * LDA + tq;
    const double* bs = smem + s * STAGE + A_STAGE + tq * LDB + wn0 + gq;
    double b[NJ][KS];
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int v = 0; v < KS; ++v) b[j][v] = bs[4 * v * LDB + 8 * j];
#pragma unroll
    for (int i = 0; i < MP; ++i) {
      between(i);
      double a[2 * KS];
#pragma unroll
      for (int v = 0; v < KS; ++v) {
        a[2 * v] = as[(16 * i) * LDA + 4 * v];
        a[2 * v + 1] = as[(16 * i + 8) * LDA + 4 * v];
      }
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        if constexpr (kWide) {
          mma16n8<KS>(acc[i][j], a, b[j]);
        } else {
#pragma unroll
          for (int v = 0; v < KS; ++v) {
            mma884(acc[i][j][0], acc[i][j][1], a[2 * v], b[j][v]);
            mma884(acc[i][j][2], acc[i][j][3], a[2 * v + 1], b[j][v]);
          }
        }
      }
    }
  };

  // A steady step's copies (of step t + kStages - 1) spread over its 16-row pairs.
  auto steady = [&](int t, int read, int write) {
    double* ws = smem + write * STAGE;
    compute(read, copies.template spread<MP>(ws, ws + A_STAGE, (t + kStages - 1) * BK));
  };
  gemm_parts::k_pipeline<kStages, BK>(
      g.k, copies.fast, load, [&](int s) { compute(s, [](int) {}); }, steady, barrier);
  // acc[i][j] holds C[wm0 + 16 i + 8 v1 + g][wn0 + 8 j + 2 t + v0] at v0 + 2 v1: 16-byte stores of
  // two columns where C allows them. beta == 0 never reads C.
  gemm_parts::store_fragments<double, double2>(g, acc, m0 + wm0 + gq, n0 + wn0 + 2 * tq, cvec);
}

// MIN_BLOCKS: blocks an SM the register budget must allow (3 for 128 threads: at most 170 a thread).
template <int BM, int BN, int WARPS_M, int WARPS_N, bool kWide, int kStages = dmma::kStages, int MIN_BLOCKS = 1,
          int BK = dmma::kDepth>
__global__ TILEKIT_LAUNCH_BOUNDS_OCC(32 * WARPS_M * WARPS_N, MIN_BLOCKS) void gemm_dmma_kernel(GemmParams<double> g,
                                                                                               int tiles_x, int tiles_y,
                                                                                               int vec, int cvec) {
  extern __shared__ __align__(16) unsigned char gemm_dmma_smem[];
  gemm_dmma_block<BM, BN, WARPS_M, WARPS_N, kWide, kStages, BK>(g, tiles_x, tiles_y, vec, cvec, int(blockIdx.x),
                                                            int(threadIdx.x), reinterpret_cast<double*>(gemm_dmma_smem),
                                                            [] { __syncthreads(); });
}

}  // namespace tilekit::gpu

#endif  // !__HIPCC__
