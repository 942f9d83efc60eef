// The tilekit program: `info`, `run` and `compare` (the side-by-side comparison).
// Exit codes: 0 success/verified, 1 verification failed, 2 bad usage, 3 device failure.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "report.hpp"
#include "runner.hpp"

namespace tilekit::cli {
namespace {

constexpr int kExitVerifyFailed = 1, kExitUsage = 2, kExitDevice = 3;

struct Shape {
  index_t size = -1, m = -1, n = -1, k = -1;
};

void add_shape_options(CLI::App& cmd, Shape& s) {
  cmd.add_option("--size", s.size, "Square problem: M = N = K (conv2d: H = W; R from --k, default 5)");
  cmd.add_option("--m", s.m, "Rows (gemm M, transpose rows, conv2d H)");
  cmd.add_option("--n", s.n, "Columns (gemm N, transpose columns, conv2d W)");
  cmd.add_option("--k", s.k, "gemm K, conv2d filter size R");
}

Problem make_problem(Op op, DType dt, const Shape& s) {
  Problem p{op, dt, s.m, s.n, s.k};
  if (s.size >= 0) {
    p.m = p.m >= 0 ? p.m : s.size;
    p.n = p.n >= 0 ? p.n : s.size;
    p.k = p.k >= 0 ? p.k : (op == Op::conv2d ? 5 : s.size);
  }
  if (op == Op::transpose) p.k = 0;
  if (op == Op::conv2d && p.k < 0) p.k = 5;
  if (p.m < 0 || p.n < 0 || (op == Op::gemm && p.k < 0)) {
    if (s.m < -1 || s.n < -1 || s.k < -1 || s.size < -1)
      throw Error(fmt::format("sizes must be non-negative (got m={}, n={}, k={}, size={})", s.m, s.n, s.k, s.size));
    throw Error(fmt::format("{} needs --size, or --m and --n{}", to_string(op), op == Op::gemm ? " and --k" : ""));
  }
  if (op == Op::conv2d && (p.k % 2 == 0 || p.k < 1 || p.k > kMaxFilter))
    throw Error(fmt::format("conv2d filter size R (--k) must be odd, from 1 to {}, got {}", kMaxFilter, p.k));
  return p;
}

std::string bytes_str(std::size_t b) {
  if (b >= (1u << 20)) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

int cmd_info() {
  fmt::print("tilekit {}\n", kVersion);
  fmt::print("compiled backends: {}\n", fmt::join(compiled_backends(), ", "));
  for (const auto& name : compiled_backends()) {
    Backend* be = find_backend(name);
    fmt::print("\n[{}]", name);
    if (!be->available()) {
      fmt::print(" unavailable: {}\n", be->unavailable_reason());
      continue;
    }
    const DeviceInfo& d = be->info();
    std::string vs;
    for (auto v : be->variants()) vs += (vs.empty() ? "" : ", ") + std::string(to_string(v));
    fmt::print(" {}\n  device:        {} ({})\n  compute units: {}\n  simd width:    {}\n", to_string(d.kind), d.name,
               to_string(d.kind), d.compute_units, d.simd_width);
    fmt::print("  scratch/tile:  {}\n", bytes_str(d.scratch_bytes));
    if (d.l1_bytes) fmt::print("  L1:            {}\n", bytes_str(d.l1_bytes));
    if (d.l2_bytes) fmt::print("  L2:            {}\n", bytes_str(d.l2_bytes));
    if (d.l3_bytes) fmt::print("  L3:            {}\n", bytes_str(d.l3_bytes));
    for (const auto& [k, v] : d.extra) fmt::print("  {:<14} {}\n", k + ":", v);
    fmt::print("  variants:      {}\n", vs);
    if (!be->gemm_peer_name().empty()) fmt::print("  gemm peer:     {}\n", be->gemm_peer_name());
    fmt::print("  roofline ceilings (measured now; `tilekit roofline` prints these alone):\n");
    print_ceilings(ceilings(*be), "    ");
    // How the default-sized problems would launch (tile, occupancy), per variant.
    for (Op op : kAllOps) {
      Problem p{op, DType::f32, 4096, 4096, op == Op::gemm ? 4096 : op == Op::conv2d ? 5 : 0};
      for (Variant v : be->variants()) {
        const TileConfig t = resolve_tile(*be, v, p, {});
        fmt::print("  {:<9} {:<9} tile {:<10} {}\n", to_string(op), to_string(v), t.str(), be->describe_launch(v, p, t));
      }
    }
  }
  return 0;
}

void print_human(const RunResult& r) {
  fmt::print("{} {} {} {} m={} n={} k={}: {:.4f} ms (median of {}), {:.1f} GFLOP/s, {:.1f} GB/s, {} (rel error {:.2e})"
             " tile {}{}{}\n",
             to_string(r.problem.op), r.backend, r.variant, to_string(r.problem.dtype), r.problem.m, r.problem.n,
             r.problem.k, r.seconds * 1e3, r.reps, r.gflops, r.gbps, r.verified ? "verified" : "NOT VERIFIED",
             r.rel_error, r.tile.str(), r.launch.empty() ? "" : "; ", r.launch);
  if (!r.verified) fmt::print(stderr, "verification failed: {}\n", r.check);
}

struct RunArgs {
  std::string op, backend, variant = "tiled", dtype = "float";
  Shape shape;
  int reps = 10;
  bool json = false, peer = false, traffic = false;
  std::vector<int> tile;
  std::uint64_t seed = 42;
};

int cmd_run(const RunArgs& a) {
  const Op op = parse_op(a.op);
  const DType dt = parse_dtype(a.dtype);
  const Problem p = make_problem(op, dt, a.shape);
  if (a.reps < 1) throw Error(fmt::format("--reps must be at least 1, got {}", a.reps));
  Backend& be = a.backend.empty() ? best_backend() : backend(a.backend);
  RunOptions o;
  o.reps = a.reps;
  o.time_budget = 1e30;  // `run` does exactly the repetitions asked for
  if (!a.tile.empty()) {
    if (a.tile.size() < 2 || a.tile.size() > 3) throw Error("--tile takes ROWS,COLS[,DEPTH]");
    o.tile = TileConfig{a.tile[0], a.tile[1], a.tile.size() == 3 ? a.tile[2] : 0};
  }
  const Workload w = Workload::make(p, a.seed);
  const RunResult r = a.peer ? run_peer(be, w, o) : run_variant(be, parse_variant(a.variant), w, o);
  if (a.json) {
    fmt::print("{}\n", a.traffic && !r.peer ? with_traffic(r.to_json(), r, be) : r.to_json().dump());
    if (!r.verified) fmt::print(stderr, "verification failed: {}\n", r.check);
  } else {
    print_human(r);
    if (a.traffic && !r.peer) print_traffic(r, be);
  }
  return r.verified ? 0 : kExitVerifyFailed;
}

struct CompareArgs {
  std::vector<std::string> ops, backends;
  index_t size = -1;
  int filter = 5, reps = 0;
  std::string dtype = "float", json_file, csv_file, plot_file;
  bool no_peers = false;
  std::uint64_t seed = 42;
};

// Default sizes: large enough to leave the caches of a small CPU, small enough that the
// slowest rows (the single-threaded naive ones) keep the whole comparison near a minute.
index_t default_size(Op op) { return op == Op::gemm ? 1024 : op == Op::transpose ? 4096 : 2048; }

int cmd_compare(const CompareArgs& a) {
  std::vector<Op> ops;
  for (const auto& s : a.ops) ops.push_back(parse_op(s));
  if (ops.empty()) ops.assign(std::begin(kAllOps), std::end(kAllOps));
  const DType dt = parse_dtype(a.dtype);
  if (a.size < -1 || a.size == 0) throw Error(fmt::format("--size must be positive, got {}", a.size));
  std::vector<Backend*> bes;
  for (const auto& n : a.backends.empty() ? compiled_backends() : a.backends) {
    if (a.backends.empty()) {  // all compiled: skip (visibly) what this machine cannot run
      Backend* b = find_backend(n);
      if (!b->available()) {
        fmt::print(stderr, "skipping backend '{}': {}\n", n, b->unavailable_reason());
        continue;
      }
      bes.push_back(b);
    } else {
      bes.push_back(&backend(n));  // named explicitly: unknown or unavailable is an error
    }
  }
  for (auto [file, option] : {std::pair{&a.json_file, "--json"}, {&a.csv_file, "--csv"}, {&a.plot_file, "--plot"}})
    if (!file->empty()) check_writable(*file, option);
  // GPU rows first, then CPU rows: the comparison users come for reads top to bottom.
  std::stable_sort(bes.begin(), bes.end(), [](Backend* x, Backend* y) {
    return x->info().kind == DeviceKind::gpu && y->info().kind != DeviceKind::gpu;
  });

  measure_ceilings(bes);

  std::size_t total = 0, done = 0;
  for (Op op : ops)
    for (Backend* b : bes) total += b->variants().size() + (!a.no_peers && has_peer(*b, op) ? 1 : 0);
  const bool tty = isatty(fileno(stderr));
  std::vector<RunResult> rows;
  bool all_ok = true;
  for (Op op : ops) {
    Shape s;
    s.size = a.size > 0 ? a.size : default_size(op);
    if (op == Op::conv2d) s.k = a.filter;
    const Problem p = make_problem(op, dt, s);
    fmt::print(stderr, "{}: preparing inputs and the double-precision reference ({}x{}x{})...\n", to_string(op), p.m,
               p.n, p.k);
    const Workload w = Workload::make(p, a.seed);
    for (Backend* b : bes) {
      RunOptions o;
      o.reps = a.reps > 0 ? a.reps : (b->info().kind == DeviceKind::gpu ? 20 : 5);
      auto progress = [&](const std::string& what) {
        fmt::print(stderr, "{}[{}/{}] {} {} {}{}", tty ? "\r\033[K" : "", ++done, total, to_string(op), b->name(),
                   what, tty ? "" : "\n");
      };
      for (Variant v : b->variants()) {
        progress(std::string(to_string(v)));
        rows.push_back(run_variant(*b, v, w, o));
        all_ok &= rows.back().verified;
      }
      if (!a.no_peers && has_peer(*b, op)) {
        progress("peer");
        rows.push_back(run_peer(*b, w, o));
        all_ok &= rows.back().verified;
      }
    }
  }
  if (tty) fmt::print(stderr, "\r\033[K");

  // The table, the files: each row against the backend's naive row, its peer and its roof.
  remeasure_ceilings(bes);
  const std::vector<Row> table = annotate(rows);
  print_table(table);
  for (const auto& r : rows)
    if (!r.verified)
      fmt::print(stderr, "verification failed: {} {} {}: {}\n", to_string(r.problem.op), r.backend, r.variant, r.check);
  if (!a.json_file.empty()) write_json(a.json_file, table, bes);
  if (!a.csv_file.empty()) write_csv(a.csv_file, table);
  if (!a.plot_file.empty()) write_plot(a.plot_file, table);
  return all_ok ? 0 : kExitVerifyFailed;
}

}  // namespace
}  // namespace tilekit::cli

int main(int argc, char** argv) {
  using namespace tilekit::cli;
  CLI::App app{"tilekit: tiled compute kernels on several backends, compared side by side"};
  app.require_subcommand(1);
  auto* info = app.add_subcommand("info", "Version, compiled backends and each backend's device");

  RunArgs ra;
  auto* run = app.add_subcommand("run", "Verify and time one operation on one backend and variant");
  run->add_option("op", ra.op, "gemm, transpose or conv2d")->required();
  run->add_option("--backend", ra.backend, "Backend name (default: the best available)");
  run->add_option("--variant", ra.variant, "naive, tiled or optimized")->capture_default_str();
  run->add_flag("--peer", ra.peer, "Time the backend's peer (cuBLAS, OpenBLAS, memcpy) instead of a variant");
  add_shape_options(*run, ra.shape);
  run->add_option("--dtype", ra.dtype, "float or double")->capture_default_str();
  run->add_option("--reps", ra.reps, "Timed repetitions; the median is reported")->capture_default_str();
  run->add_option("--tile", ra.tile, "Explicit tile ROWS,COLS[,DEPTH] (default: chosen from the device)")->delimiter(',');
  run->add_option("--seed", ra.seed, "Seed of the random inputs")->capture_default_str();
  run->add_flag("--json", ra.json, "Print exactly one JSON object");
  run->add_flag("--traffic", ra.traffic, "Also print the memory traffic PMPP's model predicts beside the compulsory bytes");

  CompareArgs ca;
  auto* cmp = app.add_subcommand("compare", "Every backend x variant (and peer), verified and timed, in one table");
  cmp->add_option("ops", ca.ops, "Operations (default: all)");
  cmp->add_option("--backends", ca.backends, "Comma-separated backends (default: all available)")->delimiter(',');
  cmp->add_option("--size", ca.size, "Problem size N (default: gemm 1024, transpose 4096, conv2d 2048)");
  cmp->add_option("--filter", ca.filter, "conv2d filter size R")->capture_default_str();
  cmp->add_option("--dtype", ca.dtype, "float or double")->capture_default_str();
  cmp->add_option("--reps", ca.reps, "Timed repetitions per row (default: 20 on GPUs, 5 on CPUs, within ~3 s a row)");
  cmp->add_flag("--no-peers", ca.no_peers, "Leave out the peer rows");
  cmp->add_option("--json", ca.json_file, "Also write the rows and the run's context as JSON to this file");
  cmp->add_option("--seed", ca.seed, "Seed of the random inputs")->capture_default_str();
  cmp->add_option("--csv", ca.csv_file, "Also write every row as CSV (spreadsheets, pandas) to this file");
  cmp->add_option("--plot", ca.plot_file, "Also draw the rows on each device's roofline, as SVG, to this file");

  std::vector<std::string> roof_backends;
  auto* roof = app.add_subcommand("roofline", "Measure and print each backend's roofline ceilings (bandwidth, FMA peak)");
  roof->add_option("--backends", roof_backends, "Comma-separated backends (default: all available)")->delimiter(',');

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the reason
    return kExitUsage;
  }
  try {
    if (*info) return cmd_info();
    if (*run) return cmd_run(ra);
    if (*cmp) return cmd_compare(ca);
    if (*roof) return cmd_roofline(roof_backends);
  } catch (const tilekit::DeviceError& e) {
    fmt::print(stderr, "tilekit: device error: {}\n", e.what());
    return kExitDevice;
  } catch (const tilekit::Error& e) {
    fmt::print(stderr, "tilekit: {}\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}
