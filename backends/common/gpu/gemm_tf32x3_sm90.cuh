// The FP32-accurate float GEMM (3xTF32) on sm_90's warpgroup tensor-core instructions (wgmma),
// C = alpha*A*B + beta*C, row-major, any m, n, k and ld. Chosen under gemm.precision=tf32x3 by the
// tuning cuda.tf32x3.kernel=wgmma on NVIDIA sm_90 (the arch-specific sm_90a code: wgmma is not in
// plain sm_90 nor in later architectures). docs/design/gpu-sgemm-tf32x3.md has the reasoning;
// gemm_tf32x3.cuh (mma.sync) is the kernel it replaces and shares the split with.
//
// Two passes.
//   1. The split (tf32x3_split_kernel, once per operand): A (m x k) and B^T (n x k: wgmma's TF32
//      operands must both be K-major, so B is transposed here) become big = tf32(x) and
//      small = tf32(x - big) (tf32x3::split, the same rounding as the mma.sync kernel), written
//      as 128 x 32 tiles already in the shared-memory image the wgmma descriptors describe
//      (K-major, 128-byte swizzle), zero past the borders. Tile (r, s) of an operand (rows
//      128 r.., K 32 s..) is big then small, 2 x 16 KiB contiguous: one bulk copy a step.
//   2. The product (gemm_tf32x3_wgmma_kernel): a block of 128 x 128 of C, two consumer
//      warpgroups (64 x 128 each) and one producer warp. The producer's lane 0 fills kStages
//      stages of 64 KiB (A big+small, B big+small of one 32-deep step) with two cp.async.bulk
//      copies each, completing on the stage's `full` mbarrier; consumers release a stage on its
//      `empty` mbarrier. Per step a warpgroup issues 3 x 4 wgmma m64n128k8 (small*big,
//      big*small, big*big per 8-deep slice) into fresh accumulators (the first with scale-d = 0),
//      waits for them, and adds them to its running sums by FADD: the tensor cores truncate
//      their FP32 sums, FADD rounds to nearest (the same accuracy scheme as the mma.sync kernel:
//      12 truncated additions a step, then one rounded one).
//
// Shared-memory image of a 128 x 32 TF32 tile (K-major, SWIZZLE_128B): row r at byte
// (r / 8) * 1024 + (r % 8) * 128; within it the 16-byte chunk c (k = 4c..4c+3) at chunk c ^ (r % 8).
// Every tile starts on a 1024-byte boundary, so the hardware's swizzle (address bits 4-6 XOR bits
// 7-9) and this one agree and the descriptors' base offset is 0. A descriptor names the first
// row of its 8-row groups (start address), their distance (stride byte offset 1024) and the
// swizzle mode; the leading byte offset is unused by swizzled K-major layouts whose K extent
// (8 TF32 = 32 bytes) lies inside one 128-byte row. The 8-deep slice kk of a tile starts 32 kk
// bytes into it (the hardware applies the swizzle to the address it forms).
//
// Accumulator fragment of wgmma m64nN (PTX ISA, "wgmma .m64nNk8 register fragment D"): warp w of
// the warpgroup holds rows 16w..16w+15; lane (g = lane / 4, t = lane % 4) holds d[i] at row
// 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2t + i % 2.
#pragma once

#if !defined(__HIPCC__)

#include <cstddef>
#include <cstdint>

#include "device_common.cuh"
#include "gemm_tf32x3.cuh"  // tf32x3::split

namespace tilekit::gpu {
namespace tf32x3_sm90 {

constexpr int BM = 128, BN = 128, BK = 32, kStages = 3;
constexpr int kConsumers = 2;                    // warpgroups of 64 x 128
constexpr int kThreads = 128 * kConsumers + 32;  // + the producer warp
constexpr int kTileFloats = 128 * BK;            // one 128 x 32 operand part: 16 KiB
constexpr int kPartBytes = kTileFloats * 4;
constexpr int kStepBytes = 2 * kPartBytes;       // big + small of one operand, one step
constexpr int kStageBytes = 2 * kStepBytes;      // A and B
// Dynamic shared memory of a block: the stages, 1024 bytes to align them, the mbarriers.
constexpr int smem_bytes() { return kStages * kStageBytes + 1024 + 2 * kStages * 8; }

// Float index of element (r, k) of a 128 x 32 tile in its swizzled image (above).
__host__ __device__ constexpr int image_index(int r, int k) {
  return (r >> 3) * 256 + (r & 7) * 32 + ((((k >> 2) ^ (r & 7))) << 2) + (k & 3);
}
// Float offset of tile (rb, kb) of an operand split into `ktiles` 32-deep tiles a row of tiles:
// big at this offset, small kTileFloats after it.
__host__ __device__ constexpr std::size_t tile_offset(int rb, int kb, int ktiles) {
  return (std::size_t(rb) * std::size_t(ktiles) + std::size_t(kb)) * 2 * std::size_t(kTileFloats);
}
// The workspace of one product: A's tiles, then B^T's.
inline std::size_t workspace_floats(int m, int n, int k) {
  const std::size_t kt = std::size_t((k + BK - 1) / BK);
  return (std::size_t((m + BM - 1) / BM) + std::size_t((n + BN - 1) / BN)) * kt * 2 * kTileFloats;
}
// Matrix descriptor of a K-major SWIZZLE_128B operand whose 8-row groups are 1024 bytes apart,
// starting at shared address `addr` (PTX ISA "matrix-descriptor-encode"; CUTLASS's
// GmmaDescriptor has the same fields): bits 0-13 addr >> 4, 16-29 leading byte offset >> 4
// (unused here: 1), 32-45 stride byte offset >> 4, 49-51 base offset (0: 1024-aligned tiles),
// 62-63 the layout (1: 128-byte swizzle).
__host__ __device__ constexpr std::uint64_t make_desc(std::uint32_t addr) {
  return std::uint64_t((addr & 0x3ffffu) >> 4) | (std::uint64_t(1) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}
// Shared addresses of stage s (base: 1024-aligned): A's big and small parts, then B's.
__host__ __device__ constexpr std::uint32_t stage_a(std::uint32_t base, int s) { return base + unsigned(s) * kStageBytes; }
__host__ __device__ constexpr std::uint32_t stage_b(std::uint32_t base, int s) { return stage_a(base, s) + kStepBytes; }
// The operand of one wgmma: the big (small = 0) or small part of the tile at `tile`, its rows
// row0.. (a multiple of 8), the 8-deep slice kk.
__host__ __device__ constexpr std::uint32_t operand(std::uint32_t tile, int small, int row0, int kk) {
  return tile + unsigned(small) * kPartBytes + unsigned(row0) * 128 + 32u * unsigned(kk);
}
// Grouped block order (device_common.cuh's grouped_tile, here also for the host emulation,
// backends/cuda/scripts/tf32x3_wgmma_emulate.sh).
__host__ __device__ inline void block_coords(int pid, int tiles_x, int tiles_y, int& by, int& bx) {
  constexpr int kGroup = 8;
  const int per_group = kGroup * tiles_x, first = (pid / per_group) * kGroup;
  const int gsize = tiles_y - first < kGroup ? tiles_y - first : kGroup;
  by = first + (pid % per_group) % gsize;
  bx = (pid % per_group) / gsize;
}
// Row and column within the warpgroup's 64 x 128 of accumulator d[i] of `lane` in warp `w` (0..3).
__host__ __device__ constexpr int acc_row(int i, int lane, int w) { return 16 * w + (lane >> 2) + 8 * ((i >> 1) & 1); }
__host__ __device__ constexpr int acc_col(int i, int lane) { return 8 * (i >> 2) + 2 * (lane & 3) + (i & 1); }

// ---- the split: one block of 256 threads per 128 x 32 tile (a 1D grid, block rb * ktiles + kb). kTrans:
// the source is B (k x rows, row (of B^T) r, depth kk at src[kk * ld + r]), else A (rows x k).
// Through shared memory so that both the reads (rows of the source) and the writes (the image,
// 16 bytes a thread) are coalesced; the 33-float rows make both shared passes conflict-free.
template <bool kTrans>
__device__ __forceinline__ void split_tile(const float* src, int ld, int rows, int k, int ktiles, float* dst, int rb,
                                           int kb, int tid, int nthreads, float (*t)[BK + 1]) {
  const int r0 = rb * BM, k0 = kb * BK;
  for (int i = tid; i < BM * BK; i += nthreads) {
    const int r = kTrans ? i % BM : i / BK, kk = kTrans ? i / BM : i % BK;
    const int gr = r0 + r, gk = k0 + kk;
    t[r][kk] = gr < rows && gk < k ? (kTrans ? src[std::size_t(gk) * ld + gr] : src[std::size_t(gr) * ld + gk]) : 0.0f;
  }
}
template <bool kTrans>
__device__ __forceinline__ void write_image(const float (*t)[BK + 1], float* out, int tid, int nthreads) {
  for (int p = tid; p < kTileFloats / 4; p += nthreads) {  // 16-byte chunks of the image, in order
    const int r = (p >> 6) * 8 + ((p >> 3) & 7), c = (p & 7) ^ (r & 7);
    unsigned big[4], small[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) tf32x3::split(t[r][4 * c + j], big[j], small[j]);
    reinterpret_cast<uint4*>(out)[p] = make_uint4(big[0], big[1], big[2], big[3]);
    reinterpret_cast<uint4*>(out + kTileFloats)[p] = make_uint4(small[0], small[1], small[2], small[3]);
  }
}

}  // namespace tf32x3_sm90

template <bool kTrans>
__global__ __launch_bounds__(256) void tf32x3_split_kernel(const float* src, int ld, int rows, int k, int ktiles,
                                                           float* dst) {
  using namespace tf32x3_sm90;
  __shared__ float t[BM][BK + 1];
  const int kb = int(blockIdx.x % unsigned(ktiles)), rb = int(blockIdx.x / unsigned(ktiles));
  split_tile<kTrans>(src, ld, rows, k, ktiles, dst, rb, kb, int(threadIdx.x), 256, t);
  __syncthreads();
  write_image<kTrans>(t, dst + tile_offset(rb, kb, ktiles), int(threadIdx.x), 256);
}

namespace tf32x3_sm90 {

// The sm_90a instructions. Elsewhere (another architecture's pass, the host) they are never run:
// the plan only launches this kernel on sm_90 from a build with sm_90a code.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TILEKIT_WGMMA 1
#else
#define TILEKIT_WGMMA 0
#endif

__device__ __forceinline__ std::uint32_t shared_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bar_init(std::uint32_t bar, unsigned count) {
#if TILEKIT_WGMMA
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#endif
}
// Makes the initialised barriers visible to the asynchronous proxy (the bulk copies).
__device__ __forceinline__ void bar_init_fence() {
#if TILEKIT_WGMMA
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void bar_arrive(std::uint32_t bar) {
#if TILEKIT_WGMMA
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#endif
}
__device__ __forceinline__ void bar_arrive_tx(std::uint32_t bar, unsigned bytes) {
#if TILEKIT_WGMMA
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
// Waits until the barrier's phase `parity` (0 or 1) has completed. The loop is inside the asm so
// that the warp leaves it together (the wgmma after it are .aligned: the whole warp, converged).
__device__ __forceinline__ void bar_wait(std::uint32_t bar, unsigned parity) {
#if TILEKIT_WGMMA
  asm volatile(
      "{\n.reg .pred ready;\n"
      "TK_BAR_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 ready, [%0], %1;\n"
      "@!ready bra TK_BAR_WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}
// `bytes` (a multiple of 16) from global to shared memory, completing on `bar` (which expects them).
__device__ __forceinline__ void bulk_copy(std::uint32_t dst, const void* src, unsigned bytes, std::uint32_t bar) {
#if TILEKIT_WGMMA
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}
__device__ __forceinline__ void wgmma_fence() {
#if TILEKIT_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if TILEKIT_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_wait_all() {
#if TILEKIT_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}
// Keeps the compiler from moving reads or writes of the accumulators across the fences and
// waits above (the asynchronous wgmma writes them behind its back).
__device__ __forceinline__ void pin(float (&d)[64]) {
#if TILEKIT_WGMMA
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
#else
  (void)d;
#endif
}
// d = A(64 x 8) * B(8 x 128)^T-in-K-major + (accumulate ? d : 0), TF32 operands from shared memory.
__device__ __forceinline__ void wgmma_tf32(float (&d)[64], std::uint64_t da, std::uint64_t db, int accumulate) {
#if TILEKIT_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(accumulate));
#else
  (void)d, (void)da, (void)db, (void)accumulate;
#endif
}

}  // namespace tf32x3_sm90

// aw, bw: the split operands (tf32x3_split_kernel: A's tiles, B^T's), ksteps 32-deep tiles a row
// of tiles. cvec: C allows 8-byte stores (8-byte aligned base, even ldc).
__global__ __launch_bounds__(tf32x3_sm90::kThreads, 1) void gemm_tf32x3_wgmma_kernel(GemmParams<float> g, const float* aw,
                                                                                    const float* bw, int tiles_x,
                                                                                    int tiles_y, int ksteps, int cvec) {
  using namespace tf32x3_sm90;
  extern __shared__ __align__(1024) unsigned char gemm_tf32x3_wgmma_smem[];
  // The stages on a 1024-byte boundary (the swizzle's period), the barriers after them.
  const std::uint32_t raw = shared_addr(gemm_tf32x3_wgmma_smem);
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  const std::uint32_t bars = base + kStages * kStageBytes;  // full[s] at bars + 8 s, empty[s] after them
  auto full = [&](int s) { return bars + 8u * unsigned(s); };
  auto empty = [&](int s) { return bars + 8u * unsigned(kStages + s); };

  const int tid = int(threadIdx.x), warp = tid >> 5, lane = tid & 31;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      bar_init(full(s), 1);                // the producer's arrive (with the bytes expected)
      bar_init(empty(s), 4 * kConsumers);  // one arrive per consumer warp
    }
    bar_init_fence();
  }
  __syncthreads();

  int by, bx;
  block_coords(int(blockIdx.x), tiles_x, tiles_y, by, bx);

  if (warp == 4 * kConsumers) {  // the producer
    if (lane == 0) {
      const float* a = aw + tile_offset(by, 0, ksteps);
      const float* b = bw + tile_offset(bx, 0, ksteps);
      for (int t = 0; t < ksteps; ++t) {
        const int s = t % kStages;
        if (t >= kStages) bar_wait(empty(s), unsigned((t / kStages - 1) & 1));
        bar_arrive_tx(full(s), kStageBytes);
        bulk_copy(stage_a(base, s), a + std::size_t(t) * 2 * kTileFloats, kStepBytes, full(s));
        bulk_copy(stage_b(base, s), b + std::size_t(t) * 2 * kTileFloats, kStepBytes, full(s));
      }
    }
    return;
  }

  const int wg = warp >> 2;  // consumer warpgroup: rows 64 wg.. of the block
  float acc[64], part[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = part[i] = 0.0f;
  for (int t = 0; t < ksteps; ++t) {
    const int s = t % kStages;
    bar_wait(full(s), unsigned((t / kStages) & 1));
    const std::uint32_t a = stage_a(base, s), b = stage_b(base, s);
    wgmma_fence();
    pin(part);
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {  // this warpgroup's 64 rows of A, all 128 of B^T
      const std::uint64_t a_big = make_desc(operand(a, 0, 64 * wg, kk)), a_small = make_desc(operand(a, 1, 64 * wg, kk));
      const std::uint64_t b_big = make_desc(operand(b, 0, 0, kk)), b_small = make_desc(operand(b, 1, 0, kk));
      wgmma_tf32(part, a_small, b_big, kk != 0);
      wgmma_tf32(part, a_big, b_small, 1);
      wgmma_tf32(part, a_big, b_big, 1);
    }
    wgmma_commit();
    wgmma_wait_all();
    pin(part);
    if (lane == 0) bar_arrive(empty(s));
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += part[i];
  }

  // Epilogue: pairs of adjacent columns, one 8-byte store where C allows it; beta == 0 never reads C.
  const int w = warp & 3;
  const int m0 = by * BM + 64 * wg, n0 = bx * BN;
#pragma unroll
  for (int i = 0; i < 64; i += 2) {
    const int row = m0 + acc_row(i, lane, w), col = n0 + acc_col(i, lane);
    if (row >= g.m) continue;
    gemm_parts::store_pair<float, float2>(g.c + std::size_t(row) * g.ldc + col, col, g.n, g.alpha * acc[i],
                                          g.alpha * acc[i + 1], g.beta, cvec);
  }
}

}  // namespace tilekit::gpu

#endif  // !__HIPCC__
