// Launchers of the transpose kernels (transpose.cuh).
#include "transpose.cuh"
#include "tiled.cuh"

namespace tilekit::gpu {
namespace {

template <class T>
bool vectorizable(const TransposeParams<T>& t) {
  constexpr int w = 16 / sizeof(T);
  return aligned16(t.in) && aligned16(t.out) && t.rows % w == 0 && t.cols % w == 0 && t.ld_in % w == 0 &&
         t.ld_out % w == 0;
}

template <class T, bool kVec>
const void* optimized_kernel(const TileConfig& t) {
  if (t.rows == 64 && t.cols == 64) return reinterpret_cast<const void*>(&transpose_optimized_kernel<T, 64, 64, kVec>);
  if (t.rows == 32 && t.cols == 64) return reinterpret_cast<const void*>(&transpose_optimized_kernel<T, 32, 64, kVec>);
  if (t.rows == 64 && t.cols == 32) return reinterpret_cast<const void*>(&transpose_optimized_kernel<T, 64, 32, kVec>);
  return reinterpret_cast<const void*>(&transpose_optimized_kernel<T, 32, 32, kVec>);
}

}  // namespace

template <class T>
void launch_transpose(Variant v, const TransposeArgs<T>& a, const LaunchPlan& pl, gpuStream_t s) {
  TransposeParams<T> t{int(a.rows), int(a.cols), a.in, int(a.ld_in), a.out, int(a.ld_out)};
  if (v == Variant::naive) {
    const int tx = ceil_div(t.cols, pl.block_x), ty = ceil_div(t.rows, pl.block_y);
    transpose_naive_kernel<T><<<dim3(tx * ty), dim3(pl.block_x, pl.block_y), 0, s>>>(t, tx);
    TILEKIT_GPU_CHECK_LAUNCH("transpose_naive_kernel");
    return;
  }
  int tx = ceil_div(t.cols, pl.tile.cols), ty = ceil_div(t.rows, pl.tile.rows);
  if (v == Variant::tiled) {
    portable::transpose_tiled(a, pl.tile, {pl.block_x, pl.block_y}, on_stream(s));
  } else {
    const void* k = vectorizable(t) ? optimized_kernel<T, true>(pl.tile) : optimized_kernel<T, false>(pl.tile);
    void* args[] = {&t, &tx};
    launch_kernel(k, pl, tx * ty, args, s, "transpose_optimized_kernel");
  }
}

const void* transpose_kernel(Variant v, DType t, const LaunchPlan& pl) {
  const bool f = t == DType::f32;
  switch (v) {
    case Variant::naive:
      return f ? reinterpret_cast<const void*>(&transpose_naive_kernel<float>)
               : reinterpret_cast<const void*>(&transpose_naive_kernel<double>);
    case Variant::tiled: {
      const void* k = nullptr;
      if (f)
        portable::transpose_tiled(TransposeArgs<float>{}, pl.tile, {pl.block_x, pl.block_y}, EntryOf{&k});
      else
        portable::transpose_tiled(TransposeArgs<double>{}, pl.tile, {pl.block_x, pl.block_y}, EntryOf{&k});
      return k;
    }
    case Variant::optimized:
      return f ? optimized_kernel<float, true>(pl.tile) : optimized_kernel<double, true>(pl.tile);
  }
  return nullptr;
}

template void launch_transpose<float>(Variant, const TransposeArgs<float>&, const LaunchPlan&, gpuStream_t);
template void launch_transpose<double>(Variant, const TransposeArgs<double>&, const LaunchPlan&, gpuStream_t);

}  // namespace tilekit::gpu
