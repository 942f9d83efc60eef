#include "report.hpp"
#include "args.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "build_info.hpp"
#include "plot.hpp"
#include "tilekit/tunings.hpp"
#include "tilekit/version.hpp"

namespace tilekit::cli {
namespace {

bool finite(double v) { return std::isfinite(v); }
nlohmann::json num(double v) { return finite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string cpuinfo_field(const char* key) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0)
      if (auto pos = line.find(':'); pos != std::string::npos) return line.substr(pos + 2);
  return {};
}

std::string extra(const DeviceInfo& d, const std::string& key) {
  for (const auto& [k, v] : d.extra)
    if (k == key) return v;
  return {};
}

std::string size_str(const Problem& p) {
  return p.op == Op::gemm        ? fmt::format("{}^3", p.m)
         : p.op == Op::transpose ? fmt::format("{}^2", p.m)
                                 : fmt::format("{}^2 r{}", p.m, p.k);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
std::string csv_num(double v) { return finite(v) ? fmt::format("{:.6g}", v) : ""; }

}  // namespace

std::vector<Row> annotate(const std::vector<RunResult>& runs, bool roofline) {
  std::vector<Row> rows;
  for (const auto& r : runs) {
    Row row;
    row.r = r;
    const RunResult *naive = nullptr, *peer = nullptr;
    for (const auto& o : runs)
      if (o.backend == r.backend && o.problem.op == r.problem.op) {
        if (!o.peer && o.variant == "naive") naive = &o;
        if (o.peer) peer = &o;
      }
    if (naive && !r.peer && r.seconds > 0) row.vs_naive = naive->seconds / r.seconds;
    // Same FLOP/s for gemm, same bytes/s for the bandwidth-bound operations.
    if (peer) {
      const bool bw = r.problem.op != Op::gemm;
      const double mine = bw ? r.gbps : r.gflops, theirs = bw ? peer->gbps : peer->gflops;
      if (theirs > 0) row.vs_peer = mine / theirs;
    }
    if (Backend* be = find_backend(r.backend); be && roofline)
      row.roof = roof_point(ceilings(*be), r.problem.dtype, r.flops, r.bytes, r.seconds);
    else
      row.roof.roof_fraction = row.roof.intensity = std::numeric_limits<double>::quiet_NaN();  // not measured
    rows.push_back(row);
  }
  return rows;
}

void measure_ceilings(const std::vector<Backend*>& backends) {
  for (Backend* be : backends) {
    fmt::print(stderr, "{}: measuring the roofline ceilings...\n", be->name());
    for (const auto& w : ceiling_warnings(ceilings(*be))) fmt::print(stderr, "warning: {}: {}\n", be->name(), w);
  }
}

void remeasure_ceilings(const std::vector<Backend*>& backends) {
  for (Backend* be : backends) {
    fmt::print(stderr, "{}: measuring the roofline ceilings again...\n", be->name());
    tilekit::remeasure_ceilings(*be);
  }
}

nlohmann::json ceilings_json(const Ceilings& c) {
  return {{"gbps", num(c.gbps)},
          {"gflops_f32", num(c.gflops_f32)},
          {"gflops_f64", num(c.gflops_f64)},
          {"estimate_gbps", c.est_gbps > 0 ? num(c.est_gbps) : nullptr},
          {"estimate_gflops_f32", c.est_gflops_f32 > 0 ? num(c.est_gflops_f32) : nullptr},
          {"estimate_gflops_f64", c.est_gflops_f64 > 0 ? num(c.est_gflops_f64) : nullptr},
          {"bandwidth_method", c.bandwidth_method},
          {"compute_method", c.compute_method},
          {"estimate_basis", c.estimate_basis},
          {"warnings", ceiling_warnings(c)},
          {"measure_seconds", c.measure_seconds}};
}

nlohmann::json run_context(const std::vector<Backend*>& backends, bool roofline) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char date[64] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  double load[3] = {0, 0, 0};
  const int nload = getloadavg(load, 3);
  const char* omp = std::getenv("OMP_NUM_THREADS");
  nlohmann::json j = {
      {"date", date},
      {"host_name", host},
      {"tilekit_version", kVersion},
      {"tilekit_commit", kBuildCommit},
      {"library_build_type", kBuildType},
      {"compiler", kCompiler},
      {"cpu_model", cpuinfo_field("model name")},
      {"num_cpus", std::thread::hardware_concurrency()},
      {"mhz_per_cpu", std::atof(cpuinfo_field("cpu MHz").c_str())},
      {"load_avg", nload > 0 ? nlohmann::json(std::vector<double>(load, load + nload)) : nlohmann::json::array()},
      {"omp_num_threads", omp ? nlohmann::json(omp) : nlohmann::json(nullptr)},
  };
  nlohmann::json bes = nlohmann::json::array(), gpus = nlohmann::json::array();
  for (Backend* be : backends) {
    const DeviceInfo& d = be->info();
    bes.push_back({{"backend", be->name()},
                   {"device", d.name},
                   {"kind", to_string(d.kind)},
                   {"threads_or_compute_units", d.compute_units},
                   // CPU backends: the CPU (family, model, vector extensions) and the SIMD target
                   // the kernels dispatched to (openmp.simd caps it); null where they do not apply.
                   {"cpu", extra(d, "CPU").empty() ? nlohmann::json(nullptr) : nlohmann::json(extra(d, "CPU"))},
                   {"simd_dispatch", extra(d, "SIMD dispatch").empty() ? nlohmann::json(nullptr)
                                                                       : nlohmann::json(extra(d, "SIMD dispatch"))},
                   {"ceilings", roofline ? ceilings_json(ceilings(*be)) : nlohmann::json(nullptr)}});
    if (d.kind == DeviceKind::gpu)
      gpus.push_back({{"backend", be->name()}, {"name", d.name}, {"driver", extra(d, "runtime")}});
  }
  j["backends"] = bes;
  j["gpus"] = gpus;
  j["tunings"] = tunings_json();
  return j;
}

nlohmann::json row_json(const Row& row) {
  nlohmann::json j = row.r.to_json();
  j["speedup_vs_naive"] = num(row.vs_naive);
  j["peer_fraction"] = num(row.vs_peer);
  j["intensity"] = num(row.roof.intensity);
  j["peak_gflops"] = row.roof.peak_gflops > 0 ? num(row.roof.peak_gflops) : nullptr;
  j["peak_gbps"] = row.roof.peak_gbps > 0 ? num(row.roof.peak_gbps) : nullptr;
  j["roof_fraction"] = num(row.roof.roof_fraction);
  j["roof_level"] = row.roof.level;  // where peak_gbps comes from: memory, or the cache the bytes fit in
  return j;
}



std::string json_text(const std::vector<Row>& rows, const std::vector<Backend*>& backends, bool roofline) {
  nlohmann::json j;
  j["context"] = run_context(backends, roofline);
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows) j["rows"].push_back(row_json(r));
  return j.dump(2) + "\n";
}

std::string csv_text(const std::vector<Row>& rows) {
  static const char* const cols[] = {"op", "backend", "variant", "peer", "device", "dtype", "m", "n", "k", "tile",
                                     "reps", "seconds", "gflops", "gbps", "verified", "rel_error",
                                     "speedup_vs_naive", "peer_fraction", "intensity", "peak_gflops", "peak_gbps",
                                     "roof_fraction", "roof_level", "tunings"};
  // The tunings in effect, one field: NAME=VALUE;... (the JSON context has them as an object).
  std::string tunings;
  for (const auto& [name, value] : tuning_values()) tunings += (tunings.empty() ? "" : ";") + name + "=" + value;
  std::string out;
  for (const char* c : cols) out += std::string(out.empty() ? "" : ",") + c;
  out += "\n";
  for (const auto& row : rows) {
    const RunResult& r = row.r;
    const std::vector<std::string> f = {
        std::string(to_string(r.problem.op)), r.backend, r.variant, r.peer ? "true" : "false", csv_field(r.device),
        std::string(to_string(r.problem.dtype)), std::to_string(r.problem.m), std::to_string(r.problem.n),
        std::to_string(r.problem.k), csv_field(r.tile.str()), std::to_string(r.reps), csv_num(r.seconds),
        csv_num(r.gflops), csv_num(r.gbps), r.verified ? "true" : "false", csv_num(r.rel_error),
        csv_num(row.vs_naive), csv_num(row.vs_peer), csv_num(row.roof.intensity),
        row.roof.peak_gflops > 0 ? csv_num(row.roof.peak_gflops) : "",
        row.roof.peak_gbps > 0 ? csv_num(row.roof.peak_gbps) : "", csv_num(row.roof.roof_fraction), row.roof.level, csv_field(tunings)};
    std::string line;
    for (const auto& v : f) line += (line.empty() ? "" : ",") + v;
    out += line + "\n";
  }
  return out;
}


std::string plot_svg(const std::vector<Row>& rows) {
  std::vector<PlotDevice> devices;
  for (const auto& row : rows) {
    const RunResult& r = row.r;
    auto d = std::find_if(devices.begin(), devices.end(), [&](const PlotDevice& x) { return x.name == r.device; });
    if (d == devices.end()) {
      devices.push_back({r.device, std::string(to_string(r.problem.dtype)), {}, {}});
      d = devices.end() - 1;
    }
    if (std::none_of(d->roofs.begin(), d->roofs.end(), [&](const PlotRoof& x) { return x.backend == r.backend; })) {
      const Ceilings& c = ceilings(*find_backend(r.backend));
      PlotRoof roof{r.backend, c.gflops(r.problem.dtype), c.gbps, {}};
      for (const auto& l : c.caches) roof.caches.emplace_back(l.name, l.gbps);
      d->roofs.push_back(roof);
    }
    d->points.push_back({r.backend, std::string(to_string(r.problem.op)), r.variant, r.peer,
                         r.flops > 0 ? row.roof.intensity : 0, r.gflops, r.gbps, row.roof.roof_fraction});
  }
  return roofline_svg(devices);
}

void print_table(const std::vector<Row>& rows) {
  fmt::print("{:<10} {:<7} {:<10} {:<11} {:>11} {:>10} {:>9} {:>9} {:>8} {:>7}  {}\n", "op", "backend", "variant",
             "size", "time ms", "GFLOP/s", "GB/s", "vs naive", "vs peer", "% roof", "check");
  Op last = rows.empty() ? Op::gemm : rows.front().r.problem.op;
  for (const auto& row : rows) {
    const RunResult& r = row.r;
    if (r.problem.op != last) fmt::print("\n");
    last = r.problem.op;
    fmt::print("{:<10} {:<7} {:<10} {:<11} {:>11.3f} {:>10} {:>9.1f} {:>9} {:>8} {:>7}  {}\n", to_string(r.problem.op),
               r.backend, (r.peer ? "*" : "") + r.variant, size_str(r.problem), r.seconds * 1e3,
               r.flops > 0 ? fmt::format("{:.1f}", r.gflops) : std::string("-"), r.gbps,
               finite(row.vs_naive) ? fmt::format("{:.2f}x", row.vs_naive) : "",
               finite(row.vs_peer) ? fmt::format("{:.0f}%", 100 * row.vs_peer) : "",
               finite(row.roof.roof_fraction) ? fmt::format("{:.0f}%", 100 * row.roof.roof_fraction) : "",
               r.verified ? fmt::format("ok {:.1e}", r.rel_error) : "FAILED");
  }
  fmt::print("\n* peer: the vendor/library routine or device copy of the same bytes, timed in the same run.\n");
  fmt::print("% roof: of min(FMA peak, intensity x bandwidth) measured on the backend's device (`tilekit roofline`);\n"
             "        the bandwidth of memory, or of the cache level the compulsory bytes fit in.\n");
}

void print_ceilings(const Ceilings& c, const std::string& in) {
  auto est = [](double v, const char* unit) {
    return v > 0 ? fmt::format("(estimate {:.1f} {})", v, unit) : std::string("(no estimate)");
  };
  fmt::print("{}bandwidth:     {:.1f} GB/s {}\n", in, c.gbps, est(c.est_gbps, "GB/s"));
  fmt::print("{}fp32 peak:     {:.1f} GFLOP/s {}\n", in, c.gflops_f32, est(c.est_gflops_f32, "GFLOP/s"));
  fmt::print("{}fp64 peak:     {:.1f} GFLOP/s {}\n", in, c.gflops_f64, est(c.est_gflops_f64, "GFLOP/s"));
  if (c.gbps > 0 && c.gflops_f32 > 0)
    fmt::print("{}ridge point:   {:.2f} FLOP/B fp32, {:.2f} FLOP/B fp64\n", in, c.gflops_f32 / c.gbps,
               c.gflops_f64 / c.gbps);
  fmt::print("{}measured by:   {}; {} ({:.2f} s)\n", in, c.bandwidth_method, c.compute_method, c.measure_seconds);
  fmt::print("{}estimate from: {}\n", in, c.estimate_basis.empty() ? "(none)" : c.estimate_basis);
  for (const auto& w : ceiling_warnings(c)) fmt::print("{}WARNING:       {}\n", in, w);
}

namespace {
Traffic traffic_of(const RunResult& r, const Backend& be) {
  // GPUs move DRAM in 32-byte sectors; CPUs in 64-byte cache lines.
  return predicted_traffic(parse_variant(r.variant), r.problem, r.tile, be.info().kind == DeviceKind::gpu ? 32 : 64);
}
}  // namespace

void print_traffic(const RunResult& r, const Backend& be) {
  const Traffic t = traffic_of(r, be);
  fmt::print("traffic: predicted {:.4g} MB ({:.2f}x the compulsory {:.4g} MB), {:.3g} FLOP/B (compute to global memory "
             "access ratio); model: {}\n",
             t.bytes * 1e-6, t.bytes / t.compulsory, t.compulsory * 1e-6, t.flops / t.bytes, t.model);
}

std::string with_traffic(nlohmann::json j, const RunResult& r, const Backend& be) {
  const Traffic t = traffic_of(r, be);
  j["predicted_bytes"] = t.bytes;
  j["compulsory_bytes"] = t.compulsory;
  j["flops"] = t.flops;
  j["traffic_model"] = t.model;
  return j.dump();
}

int cmd_roofline(const std::vector<std::string>& names) {
  std::vector<Backend*> bes;
  for (const auto& n : names.empty() ? compiled_backends() : names) {
    Backend* b = names.empty() ? find_backend(n) : &backend(n);
    if (!b->available()) {
      fmt::print("[{}] unavailable: {}\n", n, b->unavailable_reason());
      continue;
    }
    bes.push_back(b);
  }
  for (Backend* b : bes) {
    fmt::print("[{}] {} ({} {})\n", b->name(), b->info().name, b->info().compute_units,
               b->info().kind == DeviceKind::gpu ? "compute units" : "threads");
    print_ceilings(ceilings(*b), "  ");
  }
  return 0;
}

}  // namespace tilekit::cli
