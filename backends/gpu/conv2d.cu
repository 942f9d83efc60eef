// Launchers of the conv2d kernels (conv2d.cuh). The __constant__ filter lives in this
// translation unit, so the copy into it is made here too.
#include "conv2d.cuh"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tilekit::gpu {
namespace {

// R <= 9 is compiled; so is the automatic tile width (tile_choice.cpp's kConvTiledCols).
template <class T, int kCols, class S = ConvTiledDefault>
const void* tiled_kernel_w(int r) {
  switch (r) {
    case 1: return reinterpret_cast<const void*>(&conv2d_tiled_kernel<T, 1, kCols, S>);
    case 3: return reinterpret_cast<const void*>(&conv2d_tiled_kernel<T, 3, kCols, S>);
    case 5: return reinterpret_cast<const void*>(&conv2d_tiled_kernel<T, 5, kCols, S>);
    case 7: return reinterpret_cast<const void*>(&conv2d_tiled_kernel<T, 7, kCols, S>);
    case 9: return reinterpret_cast<const void*>(&conv2d_tiled_kernel<T, 9, kCols, S>);
    default: return reinterpret_cast<const void*>(&conv2d_tiled_kernel<T, 0, kCols, S>);
  }
}

// TILEKIT_CONV_TILED (a measuring knob, read once) overrides conv2d_tiled_choice for the
// compiled 64-wide tiled kernel: "regs8" (batches of four rows through registers, 8 rows per
// thread), "async8" or "async16" (asynchronous copies, 8 or 16 rows per thread), "vec8"
// (16-byte loads through registers into vector-padded rows, 8 rows per thread), "cvec8" or
// "cvec16" (16-byte asynchronous copies, 8 or 16 rows). Unset or unknown: the choice
// tile_choice plans for.
struct TiledMode {
  bool set;
  ConvTiledChoice choice;
};
TiledMode tiled_override() {
  static const TiledMode m = [] {
    const char* e = std::getenv("TILEKIT_CONV_TILED");
    const std::string v = e ? e : "";
    if (v == "regs8") return TiledMode{true, {8, false}};
    if (v == "async8") return TiledMode{true, {8, true}};
    if (v == "async16") return TiledMode{true, {16, true}};
    if (v == "vec8") return TiledMode{true, {8, false, true}};
    if (v == "cvec8") return TiledMode{true, {8, true, true}};
    if (v == "cvec16") return TiledMode{true, {16, true, true}};
    return TiledMode{false, {8, false}};
  }();
  return m;
}
template <class T>
ConvTiledChoice tiled_choice(int r, bool async_copy) {
  const TiledMode m = tiled_override();
  return m.set ? m.choice : conv2d_tiled_choice(r, int(sizeof(T)), async_copy);
}

// vec_ok: the image allows 16-byte loads (vectorizable()); where the choice asks for them and
// it does not, the same rows and loads element by element (less shared memory than planned).
template <class T>
const void* tiled_kernel(int r, int cols, bool async_copy, bool vec_ok) {
  if (cols != kConvTiledCols || r > 9) return tiled_kernel_w<T, 0>(r);
  constexpr int W = kConvTiledCols;
  const ConvTiledChoice m = tiled_choice<T>(r, async_copy);
  if (m.vec && vec_ok) {
    if (!m.async) return tiled_kernel_w<T, W, ConvTiledShape<8, false, true>>(r);
    return m.rows == 16 ? tiled_kernel_w<T, W, ConvTiledShape<16, true, true>>(r)
                        : tiled_kernel_w<T, W, ConvTiledShape<8, true, true>>(r);
  }
  if (!m.async) return tiled_kernel_w<T, W, ConvTiledShape<8, false>>(r);
  return m.rows == 16 ? tiled_kernel_w<T, W, ConvTiledShape<16, true>>(r)
                      : tiled_kernel_w<T, W, ConvTiledShape<8, true>>(r);
}

// The plan already shapes the block for conv2d_tiled_choice; under TILEKIT_CONV_TILED the
// rows per thread may differ, and with them how many row threads have work.
template <class T>
LaunchPlan tiled_plan(const LaunchPlan& pl, int r) {
  LaunchPlan q = pl;
  const ConvTiledChoice m = tiled_choice<T>(r, pl.async_copy);
  if (!tiled_override().set || pl.tile.cols != kConvTiledCols || r > 9 || pl.tile.rows % m.rows != 0) return q;
  q.block_y = std::max(1, std::min(pl.tile.rows / m.rows, std::max(1, 256 / q.block_x)));
  if (m.vec) {
    q.dynamic_smem_bytes = q.smem_bytes = std::size_t(pl.tile.rows + r - 1) *
                                          std::size_t(conv2d_tiled_row_length(r, pl.tile.cols, int(sizeof(T)), true)) *
                                          sizeof(T);
    q.needs_optin = q.dynamic_smem_bytes > 48 * 1024;
  }
  return q;
}

template <class T, bool kVec>
const void* optimized_kernel(int r) {
  constexpr int kRows = kConvRowsPerThread;
  static_assert(kConvUnrolledMaxFilter == 15, "update the list below");
  switch (r) {
    case 1: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 1, kRows, kVec>);
    case 3: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 3, kRows, kVec>);
    case 5: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 5, kRows, kVec>);
    case 7: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 7, kRows, kVec>);
    case 9: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 9, kRows, kVec>);
    case 11: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 11, kRows, kVec>);
    case 13: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 13, kRows, kVec>);
    case 15: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 15, kRows, kVec>);
    default: return tiled_kernel<T>(r, kConvOptimizedCols, false, false);  // R > 15: no unrolled kernel (the plan says so)
  }
}

template <class T>
bool vectorizable(const Conv2dParams<T>& c) {
  constexpr int w = 16 / sizeof(T);
  return aligned16(c.in) && c.ld_in % w == 0 && c.w % w == 0;
}

// The optimized kernel also stores whole vectors: the output must allow them too.
template <class T>
bool vectorizable_out(const Conv2dParams<T>& c) {
  constexpr int w = 16 / sizeof(T);
  return aligned16(c.out) && c.ld_out % w == 0;
}

template <class T>
void copy_filter(const T* filter, int r, gpuStream_t s) {
  const std::size_t bytes = std::size_t(r) * r * sizeof(T);
  if constexpr (sizeof(T) == 4)
    TILEKIT_GPU_CHECK(gpuMemcpyToSymbolAsync(conv_filter_f32, filter, bytes, 0, gpuMemcpyDeviceToDevice, s));
  else
    TILEKIT_GPU_CHECK(gpuMemcpyToSymbolAsync(conv_filter_f64, filter, bytes, 0, gpuMemcpyDeviceToDevice, s));
}

}  // namespace

template <class T>
void launch_conv2d(Variant v, const Conv2dArgs<T>& a, const LaunchPlan& pl, gpuStream_t s) {
  Conv2dParams<T> c{int(a.h), int(a.w), a.r, a.in, int(a.ld_in), a.filter, a.out, int(a.ld_out)};
  if (v == Variant::naive) {
    const int tx = ceil_div(c.w, pl.block_x), ty = ceil_div(c.h, pl.block_y);
    conv2d_naive_kernel<T><<<dim3(tx * ty), dim3(pl.block_x, pl.block_y), 0, s>>>(c, tx);
    TILEKIT_GPU_CHECK_LAUNCH("conv2d_naive_kernel");
    return;
  }
  copy_filter(a.filter, a.r, s);
  int tx = ceil_div(c.w, pl.tile.cols), ty = ceil_div(c.h, pl.tile.rows), tile_rows = pl.tile.rows;
  void* args[] = {&c, &tile_rows, &tx};
  if (v == Variant::optimized) {
    const void* k = vectorizable(c) && vectorizable_out(c) ? optimized_kernel<T, true>(c.r) : optimized_kernel<T, false>(c.r);
    launch_kernel(k, pl, tx * ty, args, s, "conv2d_optimized_kernel");
    return;
  }
  launch_kernel(tiled_kernel<T>(c.r, pl.tile.cols, pl.async_copy, vectorizable(c)), tiled_plan<T>(pl, c.r), tx * ty,
                args, s, "conv2d_tiled_kernel");
}

const void* conv2d_kernel(Variant v, DType t, int r, const LaunchPlan& pl) {
  const bool f = t == DType::f32;
  switch (v) {
    case Variant::naive:
      return f ? reinterpret_cast<const void*>(&conv2d_naive_kernel<float>)
               : reinterpret_cast<const void*>(&conv2d_naive_kernel<double>);
    case Variant::tiled: return f ? tiled_kernel<float>(r, pl.tile.cols, pl.async_copy, true)
                                 : tiled_kernel<double>(r, pl.tile.cols, pl.async_copy, true);
    case Variant::optimized: return f ? optimized_kernel<float, true>(r) : optimized_kernel<double, true>(r);
  }
  return nullptr;
}

template void launch_conv2d<float>(Variant, const Conv2dArgs<float>&, const LaunchPlan&, gpuStream_t);
template void launch_conv2d<double>(Variant, const Conv2dArgs<double>&, const LaunchPlan&, gpuStream_t);

}  // namespace tilekit::gpu
