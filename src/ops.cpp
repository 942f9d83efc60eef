// Front end of every operation: validate, plan the call once, then hand the plan to the backend.
// Nothing reaches a kernel (so no output is written) until every check has passed.
#include <cstdint>
#include <mutex>

#include <fmt/format.h>

#include "tilekit/ops.hpp"

namespace tilekit {
namespace {

template <class T>
void check_owner(Backend& be, const Matrix<T>& m, const char* what) {
  if (m.backend() != &be)
    throw Error(fmt::format("matrix {} belongs to backend '{}', not '{}'", what,
                            m.backend() ? m.backend()->name() : std::string("(none)"), be.name()));
}

void check_variant(Backend& be, Variant v) {
  if (!be.supports(v)) {
    std::string list;
    for (auto s : be.variants()) list += (list.empty() ? "" : ", ") + std::string(to_string(s));
    throw Error(fmt::format("backend '{}' has no '{}' variant (it offers: {})", be.name(), to_string(v), list));
  }
}

// Kernels that index with 32-bit integers (GPU kernels) address fewer than 2^31 elements; host
// kernels index with 64 bits. Each backend says what its kernels address.
void check_addressable(const Backend& be, index_t elements, const char* what) {
  const index_t limit = be.max_matrix_elements();
  if (elements > limit) {
    if (limit == (index_t(1) << 31) - 1)
      throw Error(fmt::format("matrix {} has {} elements; backend '{}' supports fewer than 2^31 per matrix", what,
                              elements, be.name()));
    throw Error(fmt::format("matrix {} has {} elements; backend '{}' supports at most {} per matrix", what, elements,
                            be.name(), limit));
  }
}

// Whether two matrices share an element. Views of one array (the blocks of a BLAS caller's
// workspace) interleave their rows without sharing any: with one leading dimension, the test is
// exact; otherwise the spans from first to last element are compared.
template <class T>
bool overlaps(const Matrix<T>& x, const Matrix<T>& y) {
  if (x.empty() || y.empty()) return false;
  using U = std::uintptr_t;
  const U e = sizeof(T), px = reinterpret_cast<U>(x.data()), py = reinterpret_cast<U>(y.data());
  const U span_x = (U(x.rows() - 1) * U(x.ld()) + U(x.cols())) * e, span_y = (U(y.rows() - 1) * U(y.ld()) + U(y.cols())) * e;
  if (px >= py + span_y || py >= px + span_x) return false;
  if (x.ld() != y.ld() || (px > py ? px - py : py - px) % e != 0) return true;
  // Call the one that starts first f, the other g: g starts d = q * ld + r elements (0 <= r < ld)
  // after f, so g's row i begins at f's row q + i, column r. Its columns [r, r + cols_g) meet f's
  // row q + i where r < cols_f, and spill into f's row q + i + 1 (columns [0, r + cols_g - ld))
  // where r + cols_g > ld: row 0 of g is the first to meet each.
  const Matrix<T>& f = px <= py ? x : y;
  const Matrix<T>& g = px <= py ? y : x;
  const index_t ld = x.ld(), d = index_t((px <= py ? py - px : px - py) / e), q = d / ld, r = d % ld;
  return (q < f.rows() && r < f.cols()) || (r + g.cols() > ld && q + 1 < f.rows());
}

// An output that shares storage with an input would be read after being written (the
// in-place transpose got 25 of 64 elements wrong): refused, whatever the backend.
template <class T>
void check_no_alias(const Matrix<T>& out, const char* out_name, const Matrix<T>& in, const char* in_name) {
  if (!out.data() || !in.data()) return;
  if (overlaps(out, in))
    throw Error(fmt::format("output {} overlaps input {} (tilekit operations are out-of-place: give {} its own matrix)",
                            out_name, in_name, out_name));
}

template <class T>
Backend& common_backend(const Matrix<T>& out, const char* name) {
  if (!out.backend()) throw Error(fmt::format("output matrix {} was never allocated", name));
  return *out.backend();
}

}  // namespace

Plan plan(Backend& be, Variant v, const Problem& p, const TileConfig& t) {
  check_variant(be, v);
  if (t.rows < 0 || t.cols < 0 || t.depth < 0)
    throw Error(fmt::format("tile sizes must be non-negative, got {}x{}x{}", t.rows, t.cols, t.depth));
  if (!t.is_auto() && (t.rows == 0 || t.cols == 0 || (p.op == Op::gemm && t.depth == 0)))
    throw Error(fmt::format("an explicit {} tile needs rows, cols{} all positive, got {}x{}x{}", to_string(p.op),
                            p.op == Op::gemm ? " and depth" : "", t.rows, t.cols, t.depth));
  Plan pl = be.plan(v, p, t);
  pl.backend = &be;
  pl.variant = v;
  pl.problem = p;
  return pl;
}

TileConfig resolve_tile(Backend& be, Variant v, const Problem& p, const TileConfig& t) { return plan(be, v, p, t).tile; }

namespace {

std::string problem_str(const Problem& p) {
  return fmt::format("{} {}x{}x{} ({})", to_string(p.op), p.m, p.n, p.k, to_string(p.dtype));
}

// A plan handed to an operation must be one made for this very call's problem on its backend.
void check_plan(const Plan& pl, Backend& be, const Problem& p) {
  const Problem& q = pl.problem;
  if (pl.backend != &be || q.op != p.op || q.dtype != p.dtype || q.m != p.m || q.n != p.n || q.k != p.k)
    throw Error(fmt::format("the plan was made for {} on backend '{}', not for this call's {} on '{}'", problem_str(q),
                            pl.backend ? pl.backend->name() : std::string("(none)"), problem_str(p), be.name()));
}

// The checks of each operation, up to its plan: the backend, and the call's problem.
template <class T>
std::pair<Backend*, Problem> check_gemm(Variant v, const Matrix<T>& a, const Matrix<T>& b, const Matrix<T>& c) {
  Backend& be = common_backend(c, "C");
  check_owner(be, a, "A");
  check_owner(be, b, "B");
  check_variant(be, v);
  if (a.cols() != b.rows() || a.rows() != c.rows() || b.cols() != c.cols())
    throw Error(fmt::format("gemm shapes do not match: A is {}x{}, B is {}x{}, C is {}x{} (need A: m x k, B: k x n, C: m x n)",
                            a.rows(), a.cols(), b.rows(), b.cols(), c.rows(), c.cols()));
  for (auto [m, name] : {std::pair{&a, "A"}, std::pair{&b, "B"}, std::pair{(const Matrix<T>*)&c, "C"}})
    check_addressable(be, m->storage_elements(), name);
  check_no_alias(c, "C", a, "A");
  check_no_alias(c, "C", b, "B");
  return {&be, Problem{Op::gemm, dtype_of<T>(), c.rows(), c.cols(), a.cols()}};
}

template <class T>
std::pair<Backend*, Problem> check_transpose(Variant v, const Matrix<T>& in, const Matrix<T>& out) {
  Backend& be = common_backend(out, "out");
  check_owner(be, in, "in");
  check_variant(be, v);
  if (out.rows() != in.cols() || out.cols() != in.rows())
    throw Error(fmt::format("transpose shapes do not match: in is {}x{}, out is {}x{} (need {}x{})", in.rows(),
                            in.cols(), out.rows(), out.cols(), in.cols(), in.rows()));
  check_addressable(be, in.storage_elements(), "in");
  check_addressable(be, out.storage_elements(), "out");
  check_no_alias(out, "out", in, "in");
  return {&be, Problem{Op::transpose, dtype_of<T>(), in.rows(), in.cols(), 0}};
}

template <class T>
std::pair<Backend*, Problem> check_conv2d(Variant v, const Matrix<T>& in, const Matrix<T>& filter, const Matrix<T>& out) {
  Backend& be = common_backend(out, "out");
  check_owner(be, in, "in");
  check_owner(be, filter, "filter");
  check_variant(be, v);
  const index_t r = filter.rows();
  if (filter.cols() != r || r % 2 == 0 || r < 1 || r > kMaxFilter)
    throw Error(fmt::format("conv2d filter must be square with an odd size from 1 to {}, got {}x{}", kMaxFilter,
                            filter.rows(), filter.cols()));
  if (filter.ld() != r)
    throw Error(fmt::format("conv2d filter must be densely stored (ld {} != {})", filter.ld(), r));
  if (out.rows() != in.rows() || out.cols() != in.cols())
    throw Error(fmt::format("conv2d output must match the input: in is {}x{}, out is {}x{}", in.rows(), in.cols(),
                            out.rows(), out.cols()));
  check_addressable(be, in.storage_elements(), "in");
  check_addressable(be, out.storage_elements(), "out");
  check_no_alias(out, "out", in, "in");
  check_no_alias(out, "out", filter, "filter");
  return {&be, Problem{Op::conv2d, dtype_of<T>(), in.rows(), in.cols(), r}};
}

// The kernel calls, once everything (the plan included) has been checked.
template <class T>
void run_gemm(Backend& be, const Plan& pl, T alpha, const Matrix<T>& a, const Matrix<T>& b, T beta, Matrix<T>& c) {
  if (c.empty()) return;
  // alpha == 0 must not read A or B (NaN or Inf there must not reach C), as in reference BLAS:
  // with k = 0 every backend computes C = beta * C and never touches A or B.
  const index_t k = alpha == T(0) ? 0 : pl.problem.k;
  std::lock_guard<std::recursive_mutex> lock(be.call_mutex());
  be.gemm(pl, GemmArgs<T>{c.rows(), c.cols(), k, alpha, a.data(), a.ld(), b.data(), b.ld(), beta, c.data(), c.ld()});
}

template <class T>
void run_transpose(Backend& be, const Plan& pl, const Matrix<T>& in, Matrix<T>& out) {
  if (in.empty()) return;
  std::lock_guard<std::recursive_mutex> lock(be.call_mutex());
  be.transpose(pl, TransposeArgs<T>{in.rows(), in.cols(), in.data(), in.ld(), out.data(), out.ld()});
}

template <class T>
void run_conv2d(Backend& be, const Plan& pl, const Matrix<T>& in, const Matrix<T>& filter, Matrix<T>& out) {
  if (in.empty()) return;
  std::lock_guard<std::recursive_mutex> lock(be.call_mutex());
  be.conv2d(pl, Conv2dArgs<T>{in.rows(), in.cols(), in.data(), in.ld(), filter.data(), int(filter.rows()), out.data(),
                              out.ld()});
}

}  // namespace

template <class T>
void gemm(Variant v, T alpha, const Matrix<T>& a, const Matrix<T>& b, T beta, Matrix<T>& c, const TileConfig& tile) {
  const auto [be, p] = check_gemm(v, a, b, c);
  run_gemm(*be, plan(*be, v, p, tile), alpha, a, b, beta, c);
}

template <class T>
void gemm(const Plan& pl, T alpha, const Matrix<T>& a, const Matrix<T>& b, T beta, Matrix<T>& c) {
  const auto [be, p] = check_gemm(pl.variant, a, b, c);
  check_plan(pl, *be, p);
  run_gemm(*be, pl, alpha, a, b, beta, c);
}

template <class T>
void transpose(Variant v, const Matrix<T>& in, Matrix<T>& out, const TileConfig& tile) {
  const auto [be, p] = check_transpose(v, in, out);
  run_transpose(*be, plan(*be, v, p, tile), in, out);
}

template <class T>
void transpose(const Plan& pl, const Matrix<T>& in, Matrix<T>& out) {
  const auto [be, p] = check_transpose(pl.variant, in, out);
  check_plan(pl, *be, p);
  run_transpose(*be, pl, in, out);
}

template <class T>
void conv2d(Variant v, const Matrix<T>& in, const Matrix<T>& filter, Matrix<T>& out, const TileConfig& tile) {
  const auto [be, p] = check_conv2d(v, in, filter, out);
  run_conv2d(*be, plan(*be, v, p, tile), in, filter, out);
}

template <class T>
void conv2d(const Plan& pl, const Matrix<T>& in, const Matrix<T>& filter, Matrix<T>& out) {
  const auto [be, p] = check_conv2d(pl.variant, in, filter, out);
  check_plan(pl, *be, p);
  run_conv2d(*be, pl, in, filter, out);
}

void validate_problem(const Problem& p, const Backend* be) {
  if (p.m < 0 || p.n < 0 || p.k < 0)
    throw Error(fmt::format("{} sizes must be non-negative, got m={} n={} k={}", to_string(p.op), p.m, p.n, p.k));
  auto elements = [&](index_t r, index_t c, const char* what) {
    const index_t count = checked_mul(r, c, fmt::format("{} {}", to_string(p.op), what));
    if (be)
      check_addressable(*be, count, what);
    else if (count >= (index_t(1) << 31))
      throw Error(fmt::format("matrix {} has {} elements; tilekit supports fewer than 2^31 per matrix on every backend",
                              what, count));
  };
  switch (p.op) {
    case Op::gemm:
      elements(p.m, p.k, "A");
      elements(p.k, p.n, "B");
      elements(p.m, p.n, "C");
      break;
    case Op::transpose:
      elements(p.m, p.n, "in");
      break;
    case Op::conv2d:
      if (p.k % 2 == 0 || p.k < 1 || p.k > kMaxFilter)
        throw Error(fmt::format("conv2d filter must be square with an odd size from 1 to {}, got {}x{}", kMaxFilter,
                                p.k, p.k));
      elements(p.m, p.n, "in");
      break;
  }
}

std::size_t operand_bytes(const Problem& p) {
  const index_t e = index_t(size_of(p.dtype));
  const std::string what = fmt::format("the operands of {} {}x{}x{}", to_string(p.op), p.m, p.n, p.k);
  index_t elements = 0;
  switch (p.op) {
    case Op::gemm:
      elements = checked_add(checked_add(checked_mul(p.m, p.k, what), checked_mul(p.k, p.n, what), what),
                             checked_mul(p.m, p.n, what), what);
      break;
    case Op::transpose: elements = checked_mul(checked_mul(p.m, p.n, what), 2, what); break;
    case Op::conv2d:
      elements = checked_add(checked_mul(checked_mul(p.m, p.n, what), 2, what), checked_mul(p.k, p.k, what), what);
      break;
  }
  return std::size_t(checked_mul(elements, e, what));
}

double useful_flops(const Problem& p, bool beta_nonzero) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  switch (p.op) {
    case Op::gemm: return 2.0 * m * n * k + (beta_nonzero ? 3.0 : 1.0) * m * n;
    case Op::transpose: return 0;
    case Op::conv2d: return 2.0 * m * n * k * k;
  }
  return 0;
}

double compulsory_bytes(const Problem& p, bool beta_nonzero) {
  const double e = double(size_of(p.dtype)), m = double(p.m), n = double(p.n), k = double(p.k);
  switch (p.op) {
    case Op::gemm: return e * (m * k + k * n + (beta_nonzero ? 2.0 : 1.0) * m * n);
    case Op::transpose: return e * 2.0 * m * n;
    case Op::conv2d: return e * (2.0 * m * n + k * k);
  }
  return 0;
}

std::size_t tile_scratch_bytes(const Problem& p, const TileConfig& t) {
  const std::size_t e = size_of(p.dtype), r = std::size_t(t.rows), c = std::size_t(t.cols), d = std::size_t(t.depth);
  switch (p.op) {
    case Op::gemm: return e * (r * d + d * c);                  // an A tile and a B tile
    case Op::transpose: return e * r * c;                        // one input tile
    case Op::conv2d: {
      const std::size_t halo = std::size_t(p.k > 0 ? p.k - 1 : 0);
      return e * (r + halo) * (c + halo);                        // output tile plus halo
    }
  }
  return 0;
}

void check_tile_fits(const Problem& p, const TileConfig& t, std::size_t available, const std::string& where) {
  const std::size_t need = tile_scratch_bytes(p, t);
  if (need > available)
    throw Error(fmt::format("{} tile {} ({}) needs {} bytes of scratch, but {} offers {} bytes", to_string(p.op),
                            t.str(), to_string(p.dtype), need, where, available));
}

#define TILEKIT_INSTANTIATE(T)                                                                         \
  template void gemm<T>(Variant, T, const Matrix<T>&, const Matrix<T>&, T, Matrix<T>&, const TileConfig&); \
  template void transpose<T>(Variant, const Matrix<T>&, Matrix<T>&, const TileConfig&);                    \
  template void conv2d<T>(Variant, const Matrix<T>&, const Matrix<T>&, Matrix<T>&, const TileConfig&);     \
  template void gemm<T>(const Plan&, T, const Matrix<T>&, const Matrix<T>&, T, Matrix<T>&);                 \
  template void transpose<T>(const Plan&, const Matrix<T>&, Matrix<T>&);                                    \
  template void conv2d<T>(const Plan&, const Matrix<T>&, const Matrix<T>&, Matrix<T>&);
TILEKIT_INSTANTIATE(float)
TILEKIT_INSTANTIATE(double)
#undef TILEKIT_INSTANTIATE

}  // namespace tilekit
