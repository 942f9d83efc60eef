// Launchers of the gemm kernels (gemm.cuh): pick the instantiation a plan names, check the
// launch.
#include "common/gpu/gemm_dmma.cuh"  // empty under hipcc
#include "common/gpu/gemm_sm90.cuh"  // empty under hipcc
#include "gemm.cuh"
#include "common/gpu/gemm_tf32x3.cuh"  // empty under hipcc
#include "gemm_tf32x3_sm90.hpp"
#include "tiled.cuh"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tilekit::gpu {
namespace {

template <class T>
GemmParams<T> params(const GemmArgs<T>& a) {
  return {int(a.m), int(a.n), int(a.k), a.alpha, a.beta, a.a, int(a.lda), a.b, int(a.ldb), a.c, int(a.ldc)};
}

template <class T>
bool vectorizable(const GemmParams<T>& g) {
  constexpr int w = 16 / sizeof(T);
  return aligned16(g.a) && aligned16(g.b) && aligned16(g.c) && g.lda % w == 0 && g.ldb % w == 0 &&
         g.ldc % w == 0 && g.k % w == 0 && g.n % w == 0;
}

// The optimized instantiations (tile_choice.cpp's compiled_tiles lists the same shapes).
template <class T, bool kVec>
const void* optimized_kernel(const TileConfig& t) {
  if constexpr (sizeof(T) == 4) {  // (a 16-deep double tile would exceed 48 KiB of static shared memory)
    // The float default below sm_90 and on AMD (sm_90 runs gemm_sm90.cuh's kernels for this tile).
    if (t.rows == 128 && t.cols == 128 && t.depth == 16)
#if TILEKIT_GPU_PRE_SM90_KERNELS
      return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 128, 128, 16, 8, 8, kVec>);
#else
      return nullptr;
#endif
  }
  if (t.rows == 128 && t.cols == 128)
    return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 128, 128, 8, 8, 8, kVec>);
  if (t.rows == 128 && t.cols == 64)
    return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 128, 64, 8, 8, 4, kVec>);
  return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 64, 64, 8, 4, 4, kVec>);
}

#if !defined(__HIPCC__)
// The DMMA instantiations (tile_choice.hpp: dmma_warps_m/n, dmma_stages, dmma_min_blocks and
// compiled_tiles list the same).
template <bool kWide>
const void* dmma_kernel_shape(const LaunchPlan& pl) {
  const TileConfig& t = pl.tile;
#ifdef TILEKIT_HAS_SWEEPS
  if (t.rows == 128 && t.cols == 128 && pl.dmma_stages == 3)
    return reinterpret_cast<const void*>(&gemm_dmma_kernel<128, 128, 2, 4, kWide, 3>);
#endif
  if (t.rows == 128 && t.cols == 128)
    return reinterpret_cast<const void*>(&gemm_dmma_kernel<128, 128, 2, 4, kWide, dmma_stages(128, 128)>);
  if (t.rows == 128 && t.cols == 64)
    return reinterpret_cast<const void*>(&gemm_dmma_kernel<128, 64, 4, 2, kWide, dmma_stages(128, 64)>);
  if (t.rows == 64 && t.cols == 128)
    return reinterpret_cast<const void*>(&gemm_dmma_kernel<64, 128, 2, 2, kWide, dmma_stages(64, 128),
                                                           dmma_min_blocks(64, 128), dmma_depth(64, 128)>);
  return reinterpret_cast<const void*>(
      &gemm_dmma_kernel<64, 64, 2, 2, kWide, dmma_stages(64, 64), dmma_min_blocks(64, 64)>);
}
const void* dmma_kernel(const LaunchPlan& pl) {
  if (pl.dmma == 16816) return dmma_kernel_shape<true>(pl);
#if TILEKIT_GPU_PRE_SM90_KERNELS
  return dmma_kernel_shape<false>(pl);  // m8n8k4: sm_80's default
#else
  return nullptr;
#endif
}
#endif

#if !defined(__HIPCC__)
// The gemm_sm90 instantiations: one per kSgemmVariants entry after "sm80" (tile_choice.hpp), made
// from the table itself, so the table and the compiled kernels cannot disagree. 128-row blocks
// are launch-bounded for two blocks an SM, 256-row ones for one.
template <int I>
const void* sm90_instance() {
  constexpr SgemmVariant v = kSgemmVariants[I];
  static_assert(v.rows == 128 || v.rows == 256, "a gemm_sm90 block is 128 or 256 rows");
  return reinterpret_cast<const void*>(&gemm_sm90_kernel<v.rows, v.cols, v.depth, v.tm, v.tn, v.stages, v.rows == 256 ? 1 : 2,
                                                         v.early, v.fast, v.ku != 0 ? v.ku : v.depth, v.ahead, v.zig,
                                                         v.steady, v.spread, v.spread_k, v.serp>);
}
template <std::size_t... I>
const void* sm90_kernel_of(int sv, std::index_sequence<I...>) {
  static const void* const table[] = {nullptr, sm90_instance<int(I) + 1>()...};
  return sv > 0 && sv < kSgemmVariantCount ? table[sv] : nullptr;
}
const void* sm90_kernel(int sv) { return sm90_kernel_of(sv, std::make_index_sequence<kSgemmVariantCount - 1>{}); }
#endif

#if !defined(__HIPCC__)
// The 3xTF32 instantiations, one per kTf32x3Shapes entry (tile_choice.hpp).
const void* tf32x3_kernel(int shape) {
  static_assert(kTf32x3ShapeCount == 2, "tf32x3_kernel lists every kTf32x3Shapes entry");
  if (shape == 1) return reinterpret_cast<const void*>(&gemm_tf32x3_kernel<128, 128, 32, 2, 4, 3, 1>);
  return reinterpret_cast<const void*>(&gemm_tf32x3_kernel<128, 64, 16, 2, 2, 3, 2>);
}
static_assert(tf32x3::smem_bytes(128, 128, 32, 3) == int(tf32x3_smem_bytes(kTf32x3Shapes[0])) &&
                  tf32x3::smem_bytes(128, 64, 16, 3) == int(tf32x3_smem_bytes(kTf32x3Shapes[1])),
              "the plan's shared bytes are the kernel's");
#endif

// The plan asks for 3xTF32 (gemm.precision=tf32x3): only the cuda build of a float gemm can follow it.
template <class T>
void launch_tf32x3(const GemmParams<T>& g0, const LaunchPlan& pl, gpuStream_t s) {
#if !defined(__HIPCC__)
  if constexpr (std::is_same_v<T, float>) {
    if (pl.tf32x3_wgmma) {
      launch_tf32x3_wgmma(g0, pl, s);
      return;
    }
    GemmParams<float> g = g0;
    int tx = ceil_div(g.n, pl.tile.cols), ty = ceil_div(g.m, pl.tile.rows);
    int vec = aligned16(g.a) && aligned16(g.b) && g.lda % 4 == 0 && g.ldb % 4 == 0;
    int cvec = reinterpret_cast<std::uintptr_t>(g.c) % 8 == 0 && g.ldc % 2 == 0;
    void* args[] = {&g, &tx, &ty, &vec, &cvec};
    launch_kernel(tf32x3_kernel(pl.tf32x3), pl, tx * ty, args, s, "gemm_tf32x3_kernel");
    return;
  }
#endif
  (void)g0, (void)s;
  throw Error("gemm plan '" + pl.kernel + "' needs the TF32 tensor cores, which this build cannot use");
}

// The plan names a gemm_sm90 kernel: only the cuda build of a float gemm can follow it.
template <class T>
void launch_sm90(const GemmParams<T>& g0, const LaunchPlan& pl, gpuStream_t s) {
#if !defined(__HIPCC__)
  if constexpr (std::is_same_v<T, float>) {
    GemmParams<float> g = g0;
    int tx = ceil_div(g.n, pl.tile.cols), ty = ceil_div(g.m, pl.tile.rows);
    int bvec = aligned16(g.b) && g.ldb % 4 == 0;
    int cvec = aligned16(g.c) && g.ldc % 4 == 0;
    void* args[] = {&g, &tx, &ty, &bvec, &cvec};
    const void* k = sm90_kernel(pl.sgemm);
    if (k != nullptr) {
      launch_kernel(k, pl, tx * ty, args, s, "gemm_sm90_kernel");
      return;
    }
  }
#endif
  (void)g0, (void)s;
  throw Error("gemm plan '" + pl.kernel + "' needs the sm_90 float kernel, which this build does not have");
}

// The plan asks for the tensor cores: only the cuda build of a double gemm can follow it.
template <class T>
void launch_dmma(const GemmParams<T>& g0, const LaunchPlan& pl, gpuStream_t s) {
#if !defined(__HIPCC__)
  if constexpr (std::is_same_v<T, double>) {
    GemmParams<double> g = g0;
    int tx = ceil_div(g.n, pl.tile.cols), ty = ceil_div(g.m, pl.tile.rows);
    int vec = aligned16(g.a) && aligned16(g.b) && g.lda % 2 == 0 && g.ldb % 2 == 0;
    int cvec = aligned16(g.c) && g.ldc % 2 == 0;
    void* args[] = {&g, &tx, &ty, &vec, &cvec};
    launch_kernel(dmma_kernel(pl), pl, tx * ty, args, s, "gemm_dmma_kernel");
    return;
  }
#endif
  (void)g0, (void)s;
  throw Error("gemm plan '" + pl.kernel + "' needs the FP64 tensor cores, which this build cannot use");
}

}  // namespace

template <class T>
void launch_gemm(Variant v, const GemmArgs<T>& a, const LaunchPlan& pl, gpuStream_t s) {
  GemmParams<T> g = params(a);
  const dim3 block(pl.block_x, pl.block_y);
  if (v == Variant::naive) {
    const int tx = ceil_div(g.n, pl.block_x), ty = ceil_div(g.m, pl.block_y);
    gemm_naive_kernel<T><<<dim3(tx * ty), block, 0, s>>>(g, tx);
    TILEKIT_GPU_CHECK_LAUNCH("gemm_naive_kernel");
  } else if (v == Variant::tiled) {
    portable::gemm_tiled<true>(a, pl.tile, on_stream(s));
  } else if (pl.tf32x3 != 0) {
    launch_tf32x3(g, pl, s);
  } else if (pl.dmma != 0) {
    launch_dmma(g, pl, s);
  } else if (pl.sgemm != 0) {
    launch_sm90(g, pl, s);
  } else {
    int tx = ceil_div(g.n, pl.tile.cols), ty = ceil_div(g.m, pl.tile.rows);
    const void* k = vectorizable(g) ? optimized_kernel<T, true>(pl.tile) : optimized_kernel<T, false>(pl.tile);
    void* args[] = {&g, &tx, &ty};
    launch_kernel(k, pl, tx * ty, args, s, "gemm_optimized_kernel");
  }
}

const void* gemm_kernel(Variant v, DType t, const LaunchPlan& pl) {
  const bool f = t == DType::f32;
  switch (v) {
    case Variant::naive:
      return f ? reinterpret_cast<const void*>(&gemm_naive_kernel<float>)
               : reinterpret_cast<const void*>(&gemm_naive_kernel<double>);
    case Variant::tiled: {
      const void* k = nullptr;
      if (f)
        portable::gemm_tiled<true>(GemmArgs<float>{}, pl.tile, EntryOf{&k});
      else
        portable::gemm_tiled<true>(GemmArgs<double>{}, pl.tile, EntryOf{&k});
      return k;
    }
    case Variant::optimized:
#if !defined(__HIPCC__)
      if (f && pl.tf32x3_wgmma) return tf32x3_wgmma_kernel();
      if (f && pl.tf32x3 != 0) return tf32x3_kernel(pl.tf32x3);
      if (!f && pl.dmma != 0) return dmma_kernel(pl);
      if (f && pl.sgemm != 0) return sm90_kernel(pl.sgemm);
#endif
      return f ? optimized_kernel<float, true>(pl.tile) : optimized_kernel<double, true>(pl.tile);
  }
  return nullptr;
}

template void launch_gemm<float>(Variant, const GemmArgs<float>&, const LaunchPlan&, gpuStream_t);
template void launch_gemm<double>(Variant, const GemmArgs<double>&, const LaunchPlan&, gpuStream_t);

}  // namespace tilekit::gpu
