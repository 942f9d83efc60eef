#include <fmt/format.h>

#include "tilekit/types.hpp"

namespace tilekit {
namespace {
template <class E, std::size_t N>
E parse_enum(std::string_view s, const std::pair<std::string_view, E> (&names)[N], const char* what) {
  for (const auto& [name, value] : names)
    if (s == name) return value;
  std::string accepted;
  for (const auto& [name, value] : names) accepted += (accepted.empty() ? "" : ", ") + std::string(name);
  throw Error(fmt::format("unknown {} '{}' (accepted: {})", what, s, accepted));
}
}  // namespace

std::string_view to_string(Op o) {
  switch (o) {
    case Op::gemm: return "gemm";
    case Op::transpose: return "transpose";
    case Op::conv2d: return "conv2d";
  }
  return "?";
}
std::string_view to_string(Variant v) {
  switch (v) {
    case Variant::naive: return "naive";
    case Variant::tiled: return "tiled";
    case Variant::optimized: return "optimized";
  }
  return "?";
}
std::string_view to_string(DType t) { return t == DType::f32 ? "float" : "double"; }
std::string_view to_string(DeviceKind k) { return k == DeviceKind::cpu ? "cpu" : "gpu"; }

Op parse_op(std::string_view s) {
  static const std::pair<std::string_view, Op> names[] = {
      {"gemm", Op::gemm}, {"transpose", Op::transpose}, {"conv2d", Op::conv2d}};
  return parse_enum(s, names, "operation");
}
Variant parse_variant(std::string_view s) {
  static const std::pair<std::string_view, Variant> names[] = {
      {"naive", Variant::naive}, {"tiled", Variant::tiled}, {"optimized", Variant::optimized}};
  return parse_enum(s, names, "variant");
}
DType parse_dtype(std::string_view s) {
  static const std::pair<std::string_view, DType> names[] = {
      {"float", DType::f32}, {"f32", DType::f32}, {"double", DType::f64}, {"f64", DType::f64}};
  return parse_enum(s, names, "dtype");
}

index_t checked_mul(index_t a, index_t b, std::string_view what) {
  index_t r;
  if (a < 0 || b < 0) throw Error(fmt::format("{}: negative size {} x {}", what, a, b));
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(fmt::format("{} is too large: {} x {} overflows a 64-bit count", what, a, b));
  return r;
}

index_t checked_add(index_t a, index_t b, std::string_view what) {
  index_t r;
  if (a < 0 || b < 0) throw Error(fmt::format("{}: negative size {} + {}", what, a, b));
  if (__builtin_add_overflow(a, b, &r))
    throw Error(fmt::format("{} is too large: {} + {} overflows a 64-bit count", what, a, b));
  return r;
}

std::size_t checked_bytes(index_t rows, index_t ld, std::size_t element_bytes, std::string_view what) {
  return std::size_t(checked_mul(checked_mul(rows, ld, what), index_t(element_bytes), what));
}

std::string TileConfig::str() const {
  if (is_auto()) return "auto";
  return depth ? fmt::format("{}x{}x{}", rows, cols, depth) : fmt::format("{}x{}", rows, cols);
}

}  // namespace tilekit
