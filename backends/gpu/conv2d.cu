// Launchers of the conv2d kernels (conv2d.cuh; the tiled one is the portable kernel, through
// tiled.cuh). The optimized kernel's __constant__ filter lives in this translation unit, so the
// copy into it is made here too.
#include "conv2d.cuh"
#include "tiled.cuh"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tilekit::gpu {
namespace {

// The tiled kernel (the portable one) with the plan's block: rows per thread as
// conv2d_tiled_choice says for the compiled 64-wide tile (R <= 9), one otherwise.
template <class T, class Run>
void conv2d_tiled(const Conv2dArgs<T>& a, const LaunchPlan& pl, Run&& run) {
  const int rows = pl.tile.cols == kConvTiledCols && a.r <= 9
                       ? conv2d_tiled_choice(a.r, int(sizeof(T)), pl.async_copy).rows
                       : 1;
  portable::conv2d_tiled<true>(a, pl.tile, {pl.block_x, pl.block_y}, rows, run);
}

template <class T, bool kVec>
const void* optimized_kernel(int r) {
  constexpr int kRows = kConvRowsPerThread;
  static_assert(kConvUnrolledMaxFilter == 15, "update the list below");
  static_assert(kConvAlignedMaxFilter == 9, "R <= 9 runs the sector-aligned kernels where cp.async is");
  switch (r) {
#if TILEKIT_GPU_PRE_SM80_KERNELS  // (with cp.async, R <= 9 runs the sector-aligned kernels)
    case 1: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 1, kRows, kVec>);
    case 3: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 3, kRows, kVec>);
    case 5: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 5, kRows, kVec>);
    case 7: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 7, kRows, kVec>);
    case 9: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 9, kRows, kVec>);
#endif
    case 11: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 11, kRows, kVec>);
    case 13: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 13, kRows, kVec>);
    case 15: return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, 15, kRows, kVec>);
    default: return nullptr;  // R > 15: no unrolled kernel; the tiled one runs (the plan says so)
  }
}

#ifdef TILEKIT_HAS_SWEEPS
constexpr bool kSweeps = true;
#else
constexpr bool kSweeps = false;
#endif

// The kernels gpu.conv2d.optimized selects, compiled for R <= kConvAlignedMaxFilter: the one-tile
// kernel with sector-aligned rows (NVIDIA's default with cp.async: none in a default hip build).
// With vector images at R = 3 and 5 the default runs the lines kernel (opt_kernel) instead: this
// one is compiled for them in sweep builds only (`aligned`).
template <class T, int R, bool kVec>
const void* aligned_instance() {
  if constexpr (!TILEKIT_GPU_ALIGNED_CONV_KERNELS || (kVec && (R == 3 || R == 5) && !kSweeps))
    return nullptr;
  else
    return reinterpret_cast<const void*>(&conv2d_optimized_kernel<T, R, kConvRowsPerThread, kVec, 32 / int(sizeof(T))>);
}
template <class T, bool kVec>
const void* aligned_kernel(int r) {
  static_assert(kConvAlignedMaxFilter == 9, "update the list below");
  switch (r) {
    case 1: return aligned_instance<T, 1, kVec>();
    case 3: return aligned_instance<T, 3, kVec>();
    case 5: return aligned_instance<T, 5, kVec>();
    case 7: return aligned_instance<T, 7, kVec>();
    case 9: return aligned_instance<T, 9, kVec>();
    default: return nullptr;
  }
}

// aligned-occ (sweep builds): float R = 3 and 5 with the registers capped at 48 (10 blocks of
// 128 threads); elsewhere the uncapped kernel.
template <class T>
const void* capped_kernel(int r) {
#ifdef TILEKIT_HAS_SWEEPS
  constexpr int kRows = kConvRowsPerThread, PU = 32 / int(sizeof(T));
  if constexpr (sizeof(T) == 4) {
    if (r == 3) return reinterpret_cast<const void*>(&conv2d_optimized_capped_kernel<T, 3, kRows, true, PU, 5>);
    if (r == 5) return reinterpret_cast<const void*>(&conv2d_optimized_capped_kernel<T, 5, kRows, true, PU, 5>);
  }
#endif
  return aligned_kernel<T, true>(r);
}

// aligned-lines (the default), and in sweep builds -split, -pf and their combinations: float and
// double R = 3 and 5 (the launcher sends other R to aligned).
template <class T, bool kSplit, bool kLines>
const void* opt_kernel_of(int r) {
#if TILEKIT_GPU_ALIGNED_CONV_KERNELS
  constexpr int kRows = kConvRowsPerThread, PU = 32 / int(sizeof(T));
  if (r == 3) return reinterpret_cast<const void*>(&conv2d_optimized_opt_kernel<T, 3, kRows, PU, kSplit, kLines>);
  if (r == 5) return reinterpret_cast<const void*>(&conv2d_optimized_opt_kernel<T, 5, kRows, PU, kSplit, kLines>);
#endif
  (void)r;
  return nullptr;
}
template <class T>
const void* opt_kernel(int r, const LaunchPlan& pl) {
#ifdef TILEKIT_HAS_SWEEPS
  if (pl.conv_split) return pl.conv_lines ? opt_kernel_of<T, true, true>(r) : opt_kernel_of<T, true, false>(r);
  if (!pl.conv_lines) return opt_kernel_of<T, false, false>(r);
#endif
  (void)pl;  // a default build plans the lines kernel only
  return opt_kernel_of<T, false, true>(r);
}
template <class T>
bool opt_kernel_applies(int r, const LaunchPlan& pl) {
  return (r == 3 || r == 5) && (pl.conv_split || pl.conv_lines || pl.conv_prefetch > 0);
}

#if !defined(__HIPCC__) && defined(TILEKIT_HAS_SWEEPS)
// aligned-tma (sweep builds): float and double R = 3 and 5.
template <class T>
const void* tma_kernel(int r) {
  constexpr int kRows = kConvRowsPerThread, PU = 32 / int(sizeof(T));
  if (r == 3) return reinterpret_cast<const void*>(&conv2d_optimized_tma_kernel<T, 3, kRows, PU>);
  if (r == 5) return reinterpret_cast<const void*>(&conv2d_optimized_tma_kernel<T, 5, kRows, PU>);
  return nullptr;
}

// The tensor map of the input for aligned-tma: the image (w x h elements, rows ld_in apart) and
// the box of one window (rows x SW), zero outside. cuTensorMapEncodeTiled is a driver function,
// reached through the runtime (no link to libcuda). False where the map cannot be made (then the
// launcher runs the cp.async kernel).
template <class T>
bool encode_window_map(CUtensorMap& map, const Conv2dParams<T>& c, int tile_rows, int tile_cols) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  const int unit = 32 / int(sizeof(T)), pad = (c.r / 2 + unit - 1) / unit * unit;
  const cuuint32_t box[2] = {cuuint32_t(tile_cols + 2 * pad), cuuint32_t(tile_rows + c.r - 1)};
  if (!encode || box[0] > 256 || box[1] > 256) return false;
  const cuuint64_t dims[2] = {cuuint64_t(c.w), cuuint64_t(c.h)}, strides[1] = {cuuint64_t(c.ld_in) * sizeof(T)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return encode(&map, sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2,
                const_cast<T*>(c.in), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
#endif

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
  if (v == Variant::optimized && c.r <= kConvUnrolledMaxFilter) {
    copy_filter(a.filter, a.r, s);
    int tx = ceil_div(c.w, pl.tile.cols), ty = ceil_div(c.h, pl.tile.rows), tile_rows = pl.tile.rows;
    const bool vec = vectorizable(c) && vectorizable_out(c);
    if (pl.conv_pad_unit == 32 / int(sizeof(T))) {
      const LaunchPlan& o = pl;
#if !defined(__HIPCC__) && defined(TILEKIT_HAS_SWEEPS)
      if (CUtensorMap map; o.conv_tma && vec && tma_kernel<T>(c.r) &&
                           encode_window_map(map, c, tile_rows, o.tile.cols)) {
        int pf = o.conv_prefetch;
        void* args[] = {&map, &c, &tile_rows, &tx, &pf};
        launch_kernel(tma_kernel<T>(c.r), o, tx * ty, args, s, "conv2d_optimized_tma_kernel");
        return;
      }
#endif
      if (vec && opt_kernel_applies<T>(c.r, o)) {
        int pf = o.conv_prefetch;
        void* args[] = {&c, &tile_rows, &tx, &pf};
        launch_kernel(opt_kernel<T>(c.r, o), o, tx * ty, args, s, "conv2d_optimized_opt_kernel");
        return;
      }
      void* args[] = {&c, &tile_rows, &tx};
      const void* k = vec ? aligned_kernel<T, true>(c.r) : aligned_kernel<T, false>(c.r);
      if (o.conv_capped && vec) k = capped_kernel<T>(c.r);
      launch_kernel(k, o, tx * ty, args, s, "conv2d_optimized_kernel");
      return;
    }
    void* args[] = {&c, &tile_rows, &tx};
    const void* k = vec ? optimized_kernel<T, true>(c.r) : optimized_kernel<T, false>(c.r);
    launch_kernel(k, pl, tx * ty, args, s, "conv2d_optimized_kernel");
    return;
  }
  conv2d_tiled(a, pl, on_stream(s));
}

const void* conv2d_kernel(Variant v, DType t, int r, const LaunchPlan& pl) {
  const bool f = t == DType::f32;
  switch (v) {
    case Variant::naive:
      return f ? reinterpret_cast<const void*>(&conv2d_naive_kernel<float>)
               : reinterpret_cast<const void*>(&conv2d_naive_kernel<double>);
    case Variant::optimized:
#if !defined(__HIPCC__) && defined(TILEKIT_HAS_SWEEPS)
      if (pl.conv_pad_unit == (f ? 8 : 4) && pl.conv_tma && (r == 3 || r == 5))
        return f ? tma_kernel<float>(r) : tma_kernel<double>(r);
#endif
      if (pl.conv_pad_unit == (f ? 8 : 4) && pl.conv_capped) return f ? capped_kernel<float>(r) : capped_kernel<double>(r);
      if (pl.conv_pad_unit == (f ? 8 : 4) && (f ? opt_kernel_applies<float>(r, pl) : opt_kernel_applies<double>(r, pl)))
        return f ? opt_kernel<float>(r, pl) : opt_kernel<double>(r, pl);
      if (pl.conv_pad_unit == (f ? 8 : 4))
        return f ? aligned_kernel<float, true>(r) : aligned_kernel<double, true>(r);
      if (r <= kConvUnrolledMaxFilter) return f ? optimized_kernel<float, true>(r) : optimized_kernel<double, true>(r);
      [[fallthrough]];  // R > 15 runs the tiled kernel
    case Variant::tiled: {
      const void* k = nullptr;
      if (f) {
        Conv2dArgs<float> a{};
        a.r = r;
        conv2d_tiled(a, pl, EntryOf{&k});
      } else {
        Conv2dArgs<double> a{};
        a.r = r;
        conv2d_tiled(a, pl, EntryOf{&k});
      }
      return k;
    }
  }
  return nullptr;
}

template void launch_conv2d<float>(Variant, const Conv2dArgs<float>&, const LaunchPlan&, gpuStream_t);
template void launch_conv2d<double>(Variant, const Conv2dArgs<double>&, const LaunchPlan&, gpuStream_t);

}  // namespace tilekit::gpu
