// Launchers of the gemm kernels (gemm.cuh): pick the instantiation a plan names, check the
// launch.
#include "gemm.cuh"
#include "tiled.cuh"

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
    if (t.rows == 128 && t.cols == 128 && t.depth == 16)
      return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 128, 128, 16, 8, 8, kVec>);
  }
  if (t.rows == 128 && t.cols == 128)
    return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 128, 128, 8, 8, 8, kVec>);
  if (t.rows == 128 && t.cols == 64)
    return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 128, 64, 8, 8, 4, kVec>);
  return reinterpret_cast<const void*>(&gemm_optimized_kernel<T, 64, 64, 8, 4, 4, kVec>);
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
      return f ? optimized_kernel<float, true>(pl.tile) : optimized_kernel<double, true>(pl.tile);
  }
  return nullptr;
}

template void launch_gemm<float>(Variant, const GemmArgs<float>&, const LaunchPlan&, gpuStream_t);
template void launch_gemm<double>(Variant, const GemmArgs<double>&, const LaunchPlan&, gpuStream_t);

}  // namespace tilekit::gpu
