// Vocabulary shared by every part of tilekit: operations, variants, element types,
// the argument bundles a backend's kernels receive, and the library's error type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tilekit {

using index_t = std::int64_t;

// Every failure tilekit reports. The message names the problem (both sizes when a
// tile does not fit, the CUDA/HIP message when a runtime call fails).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A failure of the device or its runtime (a CUDA/HIP/Kokkos call), as opposed to bad input.
class DeviceError : public Error {
 public:
  using Error::Error;
};

enum class Op { gemm, transpose, conv2d };
enum class Variant { naive, tiled, optimized };
enum class DType { f32, f64 };
enum class DeviceKind { cpu, gpu };

inline constexpr Op kAllOps[] = {Op::gemm, Op::transpose, Op::conv2d};
inline constexpr Variant kAllVariants[] = {Variant::naive, Variant::tiled, Variant::optimized};
inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64};

std::string_view to_string(Op);
std::string_view to_string(Variant);
std::string_view to_string(DType);
std::string_view to_string(DeviceKind);
// Parsers throw tilekit::Error listing the accepted names.
Op parse_op(std::string_view);
Variant parse_variant(std::string_view);
DType parse_dtype(std::string_view);  // "float"/"f32", "double"/"f64"

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
inline std::size_t size_of(DType t) { return t == DType::f32 ? 4 : 8; }

// What a backend reports about the hardware it drives. GPU backends fill it from the
// runtime's device properties, CPU backends from sysfs/sysconf, so that tile sizes can be
// derived at run time rather than compiled in.
struct DeviceInfo {
  std::string name;
  DeviceKind kind = DeviceKind::cpu;
  int compute_units = 1;           // SMs, CUs, or CPU threads the backend will use
  int simd_width = 1;              // warp/wavefront size on GPUs, fp32 SIMD lanes on CPUs
  std::size_t scratch_bytes = 0;   // fast memory one tile may use: shared memory/LDS per block
                                   // (largest opt-in), or the CPU cache level tiles target (L2)
  std::size_t l1_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // caches (GPU: L2 only)
  int max_tile_lanes = 0;          // lanes one tile kernel's tile may have (threads per block on
                                   // GPUs); 0: no limit (CPUs loop over lanes)
  std::vector<std::pair<std::string, std::string>> extra;  // backend-specific facts, printed by `info`
};

// Tile geometry for one call. Zero fields mean "choose automatically". Meaning per operation:
//   gemm:      rows x cols block of C per thread block / cache block, depth = K step
//   transpose: rows x cols tile of the input
//   conv2d:    rows x cols tile of the output (the input tile adds an R-1 halo)
struct TileConfig {
  int rows = 0, cols = 0, depth = 0;
  bool is_auto() const { return rows == 0 && cols == 0 && depth == 0; }
  std::string str() const;
};

// Argument bundles a backend receives. Pointers are the backend's own memory; shapes,
// leading dimensions and tile have already been validated by the front end (ops.cpp).
template <class T>
struct GemmArgs {
  index_t m, n, k;
  T alpha;
  const T* a; index_t lda;  // m x k
  const T* b; index_t ldb;  // k x n
  T beta;
  T* c; index_t ldc;        // m x n
};

template <class T>
struct TransposeArgs {
  index_t rows, cols;        // of the input
  const T* in; index_t ld_in;
  T* out; index_t ld_out;    // cols x rows
};

template <class T>
struct Conv2dArgs {
  index_t h, w;
  const T* in; index_t ld_in;
  const T* filter; int r;    // r x r, odd, densely stored (ld = r)
  T* out; index_t ld_out;
};

}  // namespace tilekit
