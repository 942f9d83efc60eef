// The FP32-accurate float GEMM on the TF32 tensor cores (3xTF32, NVIDIA sm_80+), C = alpha*A*B +
// beta*C, row-major, any m, n, k and ld. Opt-in (the tuning gemm.precision=tf32x3); CUDA only:
// hipcc never sees this file's contents. docs/design/gpu-sgemm-tf32x3.md has the reasoning.
//
// The arithmetic: each operand element x is split into big = tf32(x) (cvt.rna: 10 explicit
// mantissa bits, to nearest, ties away from zero) and small = tf32(x - big) (x - big is exact in
// FP32). a*b = big_a big_b + big_a small_b + small_a big_b + small_a small_b; the last term is below
// FP32's rounding (|small| <= 2^-11 |x|) and is dropped. The other three are three tensor-core
// products (mma.sync m16n8k8 tf32, FP32 accumulation), the two small ones first. One product
// (plain TF32) keeps 11 significant bits of each operand: not FP32.
//
// Where the sums are kept: the tensor cores' FP32 accumulation does not round to nearest (it
// truncates), and a truncation on a running sum of thousands of terms is biased: modelled, a
// K = 8192 sum summed inside the tensor cores came out 50x less accurate than FFMA's. So each
// K step (BK values) is summed by the tensor cores into fresh accumulators (the step's first
// product starts from zero), which are then added to the block's running sums by FADD (round to
// nearest). Modelled the same way, that is more accurate than FFMA (backends/cuda/scripts/
// tf32x3_emulate.sh checks the kernel's error against a double reference, and fails for 1xTF32).
//
// Shape of the work:
//   block  BM x BN of C, BK deep per step, kStages shared stages filled by cp.async (16-byte
//          copies when the operands allow them, 4-byte ones otherwise; zero-fill past the borders),
//          one barrier per step: the copies of step t + kStages - 1 fly while step t computes.
//   warp   WM x WN of C as (WM/16) x (WN/8) tiles of 16 x 8: per k8 slice a warp loads its A and
//          B fragments once, splits them, and issues 3 (WM/16)(WN/8) mma.sync, each pass over all
//          the tiles before the next pass (no product waits on the one before it).
// Fragments (PTX ISA, mma.m16n8k8 .tf32; g = lane / 4, t = lane % 4): a[0] = A[g][t], a[1] =
// A[g+8][t], a[2] = A[g][t+4], a[3] = A[g+8][t+4]; b[0] = B[t][g], b[1] = B[t+4][g]; c[e] =
// C[g + 8 (e / 2)][2t + e % 2].
//
// Shared layout: A as rows of k (BK + 4 floats a row), B as rows of n (BN + 8 floats a row), as in
// global memory, so a cp.async copies 16 bytes straight across. The pads make the 4-byte fragment
// loads conflict-free: a warp reads A[g][t] at g (BK + 4) + t, 32 distinct banks when (BK + 4) / 4
// is odd; B[t][g] at t (BN + 8) + g, 32 distinct banks when BN + 8 = 8 mod 32.
#pragma once

#if !defined(__HIPCC__)

#include <cstring>

#include "device_common.cuh"

namespace tilekit::gpu {

namespace tf32x3 {

constexpr int kPadA = 4;  // floats of padding per shared row of A (see the layout note above)
constexpr int kPadB = 8;  // ... of B
// Shared bytes of one block; tile_choice.hpp's tf32x3_smem_bytes computes the same for the plan.
__host__ __device__ constexpr int smem_bytes(int bm, int bn, int bk, int stages) {
  return stages * (bm * (bk + kPadA) + bk * (bn + kPadB)) * int(sizeof(float));
}

// x rounded to TF32 (cvt.rna.tf32.f32: 10 explicit mantissa bits, to nearest, ties away from
// zero), as the bits of the float it equals. PTX leaves the 13 low bits of a .tf32 result
// unspecified; they are cleared, so that x - big below is the exact residual. Elsewhere (the host
// emulation) the same rounding from the bits: add half of the dropped part, keep the rest.
__device__ __forceinline__ unsigned to_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r & 0xffffe000u;
#else
  unsigned u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u) u += 0x1000u;  // Inf and NaN stay as they are
  return u & 0xffffe000u;
#endif
}
__device__ __forceinline__ float bits_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
// x = big + small, both TF32 (small's low bits are whatever cvt leaves: mma ignores them).
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
  big = to_tf32(x);
  small = to_tf32(x - bits_float(big));
}

// d = a(16x8) * b(8x8) + c on TF32 operands, FP32 accumulation (fragments as above). Below sm_80
// the same product from warp shuffles: correct, slow, and never chosen by the plan there.
__device__ __forceinline__ void mma1688(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                        const float (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
#else
  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  float r[4] = {c[0], c[1], c[2], c[3]};
  for (int k = 0; k < 8; ++k) {
    // A[row][k] lives in lane row % 8 * 4 + k % 4, register (row / 8) + 2 (k / 4); B[k][n] in lane
    // n * 4 + k % 4, register k / 4.
    const int ar = k / 4 * 2, al = g * 4 + k % 4;
    const float a0 = bits_float(__shfl_sync(0xffffffffu, ar ? a[2] : a[0], al) & 0xffffe000u);
    const float a1 = bits_float(__shfl_sync(0xffffffffu, ar ? a[3] : a[1], al) & 0xffffe000u);
    for (int e = 0; e < 2; ++e) {
      const float bv = bits_float(__shfl_sync(0xffffffffu, k / 4 ? b[1] : b[0], (2 * t + e) * 4 + k % 4) & 0xffffe000u);
      r[e] += a0 * bv;
      r[2 + e] += a1 * bv;
    }
  }
  for (int e = 0; e < 4; ++e) d[e] = r[e];
#endif
}

}  // namespace tf32x3

// BM x BN per block of WARPS_M x WARPS_N warps (1D block of 32 * WARPS_M * WARPS_N threads), BK
// deep per step (a multiple of 8), kStages shared stages. vec: A and B allow 16-byte copies
// (16-byte aligned bases, lda and ldb multiples of 4); cvec: C allows 8-byte stores (8-byte
// aligned base, even ldc). Both are uniform per launch.
//
// The block's body is gemm_tf32x3_block: whoever launches it supplies the block's index in the
// grid (pid), the thread's rank in the block (tid: 32 consecutive ranks are a warp), the shared
// stages (tf32x3::smem_bytes, 16-byte aligned) and the block's barrier. gemm_tf32x3_kernel below
// is the cuda backend's launch; the kokkos backend runs the same body in a Kokkos team
// (backends/kokkos/gemm_mma.cpp).
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int kStages, class Barrier>
__device__ __forceinline__ void gemm_tf32x3_block(const GemmParams<float>& g, int tiles_x, int tiles_y, int vec, int cvec,
                                                  int pid, int tid, float* smem, Barrier barrier) {
  using namespace tf32x3;
  constexpr int NT = 32 * WARPS_M * WARPS_N;
  constexpr int LDA = BK + kPadA, LDB = BN + kPadB;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // one warp's part of C
  constexpr int MI = WM / 16, NJ = WN / 8;             // its 16 x 8 tiles
  constexpr int A_STAGE = BM * LDA, STAGE = A_STAGE + BK * LDB;
  static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "warp tiles of whole 16 x 8 x 8 products");
  static_assert(kStages >= 2, "a stage computes while the next one loads");
  static_assert((LDA / 4) % 2 == 1 && LDB % 32 == 8, "padded rows: conflict-free fragment loads (see above)");
  static_assert((BM * BK / 4) % NT == 0 && (BK * BN / 4) % NT == 0, "tiles must split evenly into 16-byte copies");

  const gemm_parts::Tile bt = gemm_parts::grouped_tile(pid, tiles_x, tiles_y);
  const int m0 = bt.y * BM, n0 = bt.x * BN;

  const int lane = tid & 31, warp = tid >> 5;
  const int gq = lane >> 2, tq = lane & 3;  // fragment coordinates g and t
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

  // Global -> shared stage s for the step starting at p0.
  auto load = [&](int s, int p0) {
    float* as = smem + s * STAGE;
    gemm_parts::copy_tiles<float, BM, BN, BK, NT, LDA, LDB>(g, as, as + A_STAGE, m0, n0, p0, tid, vec);
  };
  // A block wholly inside C whose operands allow 16-byte copies copies its whole K steps without bounds.
  const gemm_parts::WholeStepCopies<float, BM, BN, BK, NT, LDA, LDB> copies(g, m0, n0, tid, vec);

  float acc[MI][NJ][4];  // the running sums (FADD)
  gemm_parts::zero_fragments(acc);

  // One step from stage s: the step's products summed by the tensor cores from zero (the first
  // product of each tile reads zeros), then added to the running sums. between(kk) runs before the
  // kk-th 8-deep slice (a steady step's copies, spread over the step).
  auto compute = [&](int s, auto&& between) {
    const float* as = smem + s * STAGE + (wm0 + gq) * LDA + tq;
    const float* bs = smem + s * STAGE + A_STAGE + tq * LDB + wn0 + gq;
    constexpr float kZero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float part[MI][NJ][4];
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
      between(kk);
      unsigned ab[MI][4], asm_[MI][4], bb[NJ][2], bsm[NJ][2];  // big and small parts
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) split(as[(16 * i + 8 * (r & 1)) * LDA + 8 * kk + 4 * (r >> 1)], ab[i][r], asm_[i][r]);
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) split(bs[(8 * kk + 4 * r) * LDB + 8 * j], bb[j][r], bsm[j][r]);
      // small * big, big * small, big * big: three passes over the tiles, the small terms first.
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
          if (kk == 0) mma1688(part[i][j], asm_[i], bb[j], kZero);
          else mma1688(part[i][j], asm_[i], bb[j], part[i][j]);
        }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) mma1688(part[i][j], ab[i], bsm[j], part[i][j]);
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) mma1688(part[i][j], ab[i], bb[j], part[i][j]);
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
  };

  auto steady = [&](int t, int read, int write) {
    float* ws = smem + write * STAGE;
    compute(read, copies.template spread<BK / 8>(ws, ws + A_STAGE, (t + kStages - 1) * BK));
  };
  gemm_parts::k_pipeline<kStages, BK>(
      g.k, copies.fast, load, [&](int s) { compute(s, [](int) {}); }, steady, barrier);
  // acc[i][j][e] holds C[wm0 + 16 i + 8 (e / 2) + g][wn0 + 8 j + 2 t + e % 2]: 8-byte stores of two
  // columns where C allows them. beta == 0 never reads C.
  gemm_parts::store_fragments<float, float2>(g, acc, m0 + wm0 + gq, n0 + wn0 + 2 * tq, cvec);
}

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int kStages, int MIN_BLOCKS>
__global__ __launch_bounds__(32 * WARPS_M * WARPS_N, MIN_BLOCKS) void gemm_tf32x3_kernel(GemmParams<float> g, int tiles_x,
                                                                                          int tiles_y, int vec, int cvec) {
  extern __shared__ __align__(16) unsigned char gemm_tf32x3_smem[];
  gemm_tf32x3_block<BM, BN, BK, WARPS_M, WARPS_N, kStages>(g, tiles_x, tiles_y, vec, cvec, int(blockIdx.x),
                                                           int(threadIdx.x), reinterpret_cast<float*>(gemm_tf32x3_smem),
                                                           [] { __syncthreads(); });
}

}  // namespace tilekit::gpu

#endif  // !__HIPCC__
