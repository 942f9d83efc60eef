#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "tilekit/tunings.hpp"

namespace tilekit::cli {
namespace {

template <class T>
std::vector<T> narrow(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// Everything one timed call needs on the backend, plus how to run it.
template <class T>
struct Staged {
  Matrix<T> x, y, z;  // gemm: A, B, C; transpose: in, out; conv2d: in, filter, out
};

template <class T>
Staged<T> stage(Backend& be, const Workload& w) {
  const Problem& p = w.problem;
  Staged<T> s;
  switch (p.op) {
    case Op::gemm:
      s.x = Matrix<T>(be, p.m, p.k);
      s.y = Matrix<T>(be, p.k, p.n);
      s.z = Matrix<T>(be, p.m, p.n);
      break;
    case Op::transpose:
      s.x = Matrix<T>(be, p.m, p.n);
      s.z = Matrix<T>(be, p.n, p.m);
      break;
    case Op::conv2d:
      s.x = Matrix<T>(be, p.m, p.n);
      s.y = Matrix<T>(be, p.k, p.k);
      s.z = Matrix<T>(be, p.m, p.n);
      break;
  }
  s.x.upload(narrow<T>(w.a));
  if (p.op == Op::gemm) s.y.upload(narrow<T>(w.b));
  if (p.op == Op::conv2d) s.y.upload(narrow<T>(w.filter));
  // Poison: NaN everywhere, so an element the kernel never writes fails verification.
  s.z.upload(std::vector<T>(std::size_t(s.z.storage_elements()), std::numeric_limits<T>::quiet_NaN()));
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One warm-up call whose output is verified, then timed repetitions.
template <class T, class Fn>
void measure(Backend& be, const Workload& w, Staged<T>& s, Fn&& call, bool compare_to_reference,
             const RunOptions& o, RunResult& r) {
  if (o.progress) o.progress("verifying");
  call();
  be.synchronize();
  const std::vector<T> out = s.z.download();
  if (compare_to_reference) {
    const verify::Check c = verify::compare<T>(*w.reference, out, s.z.ld());
    r.verified = c.ok;
    r.rel_error = c.rel_error;
    r.check = c.message;
  } else {  // a copy peer: the destination must hold exactly the source's bytes
    const std::vector<T> in = s.x.download();
    const std::size_t n = std::min(in.size(), out.size());
    r.verified = std::memcmp(in.data(), out.data(), n * sizeof(T)) == 0;
    r.check = r.verified ? "" : "device copy did not reproduce its source";
  }
  std::vector<double> times;
  double total = 0;
  for (int i = 0; i < std::max(1, o.reps); ++i) {
    if (o.progress) o.progress(fmt::format("timing {}/{}", i + 1, std::max(1, o.reps)));
    times.push_back(be.time_seconds(call));
    total += times.back();
    if (total > o.time_budget || (o.min_reps > 0 && i + 1 >= o.min_reps && total >= o.enough)) break;
  }
  r.reps = int(times.size());
  r.seconds = median(times);
  r.min_seconds = *std::min_element(times.begin(), times.end());
  r.max_seconds = *std::max_element(times.begin(), times.end());
}

void finish_rates(RunResult& r, double flops, double bytes) {
  r.flops = flops;
  r.bytes = bytes;
  r.gflops = r.seconds > 0 ? flops / r.seconds * 1e-9 : 0;
  r.gbps = r.seconds > 0 ? bytes / r.seconds * 1e-9 : 0;
}

template <class T>
RunResult run_variant_t(Backend& be, Variant v, const Workload& w, const RunOptions& o) {
  const Problem& p = w.problem;
  RunResult r;
  r.backend = be.name();
  r.variant = std::string(to_string(v));
  r.device = be.info().name;
  r.problem = p;
  // One plan for the row: what it reports is what every timed call runs.
  const Plan pl = plan(be, v, p, o.tile);
  r.tile = pl.tile;
  r.launch = be.describe_launch(pl);
  Staged<T> s = stage<T>(be, w);
  auto call = [&] {
    switch (p.op) {
      case Op::gemm: gemm<T>(pl, T(1), s.x, s.y, T(0), s.z); break;
      case Op::transpose: transpose<T>(pl, s.x, s.z); break;
      case Op::conv2d: conv2d<T>(pl, s.x, s.y, s.z); break;
    }
  };
  measure<T>(be, w, s, call, true, o, r);
  finish_rates(r, useful_flops(p), compulsory_bytes(p));
  return r;
}

template <class T>
RunResult run_peer_t(Backend& be, const Workload& w, const RunOptions& o) {
  const Problem& p = w.problem;
  RunResult r;
  r.backend = be.name();
  r.peer = true;
  r.device = be.info().name;
  r.problem = p;
  Staged<T> s = stage<T>(be, w);
  if (p.op == Op::gemm) {
    r.variant = be.gemm_peer_name();
    GemmArgs<T> g{p.m, p.n, p.k, T(1), s.x.data(), s.x.ld(), s.y.data(), s.y.ld(), T(0), s.z.data(), s.z.ld()};
    measure<T>(be, w, s, [&] { be.gemm_peer(g); }, true, o, r);
    finish_rates(r, useful_flops(p), compulsory_bytes(p));
  } else {
    // The bytes the operation must move, moved by the backend's plainest copy.
    r.variant = be.copy_peer_name();
    const std::size_t bytes = std::size_t(p.m * p.n) * sizeof(T);
    measure<T>(be, w, s, [&] { be.device_copy(s.z.data(), s.x.data(), bytes); }, false, o, r);
    finish_rates(r, 0, 2.0 * double(bytes));
  }
  return r;
}

// Past ~2^34 multiply-adds the full double-precision product would take minutes on the
// host: check an evenly spaced sample of rows against values, and every element for NaN.
index_t reference_sample_rows(const Problem& p) {
  return double(p.m) * p.n * p.k > 0x1p34 ? std::max<index_t>(64, index_t(0x1p33 / (double(p.n) * p.k))) : 0;
}

}  // namespace

void check_memory(const Problem& p, const std::vector<Backend*>& backends) {
  const std::string what = "the memory this problem needs";
  const index_t e = index_t(size_of(p.dtype));
  index_t in = 0, out = checked_mul(p.m, p.n, what);
  switch (p.op) {
    case Op::gemm: in = checked_add(checked_mul(p.m, p.k, what), checked_mul(p.k, p.n, what), what); break;
    case Op::transpose: in = out; break;
    case Op::conv2d: in = checked_add(out, checked_mul(p.k, p.k, what), what); break;
  }
  const index_t sample = reference_sample_rows(p);
  const index_t ref_out = sample > 0 && p.op == Op::gemm ? checked_mul(std::min(p.m, sample + 1), p.n, what) : out;
  // Inputs drawn in double, the reference's values and bounds, the inputs narrowed to T while
  // the reference is computed, and per row the poison and the downloaded output (a copy peer
  // also downloads its input).
  index_t host = checked_add(checked_mul(in, 8 + e, what), checked_mul(ref_out, 16, what), what);
  host = checked_add(host, checked_mul(checked_add(out, in, what), e, what), what);
  const std::size_t host_avail = host_memory_available();
  const std::size_t operands = operand_bytes(p);
  for (Backend* be : backends) {
    const bool on_host = be->info().kind == DeviceKind::cpu;
    const std::size_t host_need = std::size_t(host) + (on_host ? operands : 0);
    if (host_need > host_avail)
      throw ResourceError(fmt::format(
          "not enough memory: {} {}x{}x{} ({}) on backend '{}' needs {} bytes of host memory ({} for inputs, reference "
          "and transfers{}), but {} bytes are available (MemAvailable)",
          to_string(p.op), p.m, p.n, p.k, to_string(p.dtype), be->name(), host_need, host,
          on_host ? fmt::format(", {} for the operands", operands) : "", host_avail));
    if (!on_host) {
      const std::size_t dev_avail = be->memory_available();
      if (operands > dev_avail)
        throw ResourceError(fmt::format("not enough device memory: {} {}x{}x{} ({}) needs {} bytes on backend '{}', "
                                        "but its device has {} bytes free",
                                        to_string(p.op), p.m, p.n, p.k, to_string(p.dtype), operands, be->name(),
                                        dev_avail));
    }
  }
}

Workload Workload::make(const Problem& p, std::uint64_t seed) {
  Workload w;
  w.problem = p;
  auto draw = [&](index_t count, std::uint64_t salt) {
    // Drawn in the problem's dtype, so the reference sees exactly the values the kernels see.
    if (p.dtype == DType::f32) {
      auto f = verify::random_values<float>(std::size_t(count), seed + salt);
      return std::vector<double>(f.begin(), f.end());
    }
    return verify::random_values<double>(std::size_t(count), seed + salt);
  };
  auto ref = std::make_shared<verify::Reference>();
  auto build = [&](auto zero) {
    using T = decltype(zero);
    switch (p.op) {
      case Op::gemm:
        w.a = draw(p.m * p.k, 1);
        w.b = draw(p.k * p.n, 2);
        // Past ~2^34 multiply-adds the full double-precision product would take minutes on the
        // host: check an evenly spaced sample of rows against values, and every element for NaN.
        *ref = verify::gemm<T>(p.m, p.n, p.k, T(1), narrow<T>(w.a), p.k, narrow<T>(w.b), p.n, T(0), {}, p.n,
                               reference_sample_rows(p));
        break;
      case Op::transpose:
        w.a = draw(p.m * p.n, 1);
        *ref = verify::transpose<T>(p.m, p.n, narrow<T>(w.a), p.n);
        break;
      case Op::conv2d:
        w.a = draw(p.m * p.n, 1);
        w.filter = draw(p.k * p.k, 3);
        *ref = verify::conv2d<T>(p.m, p.n, narrow<T>(w.a), p.n, narrow<T>(w.filter), int(p.k));
        break;
    }
  };
  if (p.dtype == DType::f32) build(0.0f); else build(0.0);
  w.reference = ref;
  return w;
}

RunResult run_variant(Backend& be, Variant v, const Workload& w, const RunOptions& o) {
  return w.problem.dtype == DType::f32 ? run_variant_t<float>(be, v, w, o) : run_variant_t<double>(be, v, w, o);
}

bool has_peer(const Backend& be, Op op) {
  return op == Op::gemm ? !be.gemm_peer_name().empty() : !be.copy_peer_name().empty();
}

RunResult run_peer(Backend& be, const Workload& w, const RunOptions& o) {
  if (!has_peer(be, w.problem.op))
    throw Error(fmt::format("backend '{}' has no peer for {}", be.name(), to_string(w.problem.op)));
  return w.problem.dtype == DType::f32 ? run_peer_t<float>(be, w, o) : run_peer_t<double>(be, w, o);
}

nlohmann::json RunResult::to_json() const {
  return {{"op", to_string(problem.op)}, {"backend", backend}, {"variant", variant}, {"peer", peer},
          {"device", device}, {"dtype", to_string(problem.dtype)}, {"m", problem.m}, {"n", problem.n},
          {"k", problem.k}, {"tile", tile.str()}, {"launch", launch}, {"reps", reps}, {"seconds", seconds},
          {"min_seconds", min_seconds}, {"max_seconds", max_seconds}, {"gflops", gflops}, {"gbps", gbps},
          {"verified", verified}, {"rel_error", rel_error}, {"check", check}, {"tunings", tunings_json()}};
}

nlohmann::json tunings_json() {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : tuning_values()) j[name] = value;
  return j;
}

}  // namespace tilekit::cli
