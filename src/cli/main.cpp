// The tilekit program: `info`, `run` and `compare` (the side-by-side comparison).
// Exit codes (README, "Exit codes"): 0 success/verified, 1 verification failed, 2 bad usage,
// 3 resources or device (not enough memory, a device runtime failure), 4 internal error.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tilekit/tunings.hpp"

#include "args.hpp"
#include "report.hpp"
#include "runner.hpp"

namespace tilekit::cli {
namespace {

// Every dimension of a problem: at least 1 (the library accepts empty matrices; the program
// times and verifies real work, so `run` and `compare` reject 0 alike), at most what one
// matrix may hold per side.
constexpr index_t kMaxDim = (index_t(1) << 31) - 1;
constexpr index_t kMaxReps = 1000000;

// A numeric option, kept as text until every option is known, then parsed with its range.
struct Num {
  std::string text;
  CLI::Option* opt = nullptr;
  bool given() const { return opt && opt->count() > 0; }
  index_t get(index_t lo, index_t hi) const { return parse_int(opt->get_name(), text, lo, hi); }
};

struct Shape {
  Num size, m, n, k, filter;
};

void add_filter_option(CLI::App& cmd, Num& filter, Num* k_alias) {
  filter.opt = cmd.add_option("--filter,-r", filter.text,
                              fmt::format("conv2d filter size R: odd, 1 to {} (default 5)", kMaxFilter))
                   ->type_name("INT");
  if (k_alias) k_alias->opt->description(k_alias->opt->get_description() + "; for conv2d, an alias of --filter");
}

void add_shape_options(CLI::App& cmd, Shape& s) {
  s.size.opt = cmd.add_option("--size", s.size.text, "Square problem: M = N = K (conv2d: H = W)")->type_name("INT");
  s.m.opt = cmd.add_option("--m", s.m.text, "Rows (gemm M, transpose rows, conv2d H); overrides --size")->type_name("INT");
  s.n.opt = cmd.add_option("--n", s.n.text, "Columns (gemm N, transpose columns, conv2d W); overrides --size")->type_name("INT");
  s.k.opt = cmd.add_option("--k", s.k.text, "gemm K (0 allowed: C = beta * C); overrides --size")->type_name("INT");
  add_filter_option(cmd, s.filter, &s.k);
}

index_t filter_size(const Num& filter, const Num* k_alias) {
  std::optional<index_t> r;
  if (filter.given()) r = filter.get(1, kMaxFilter);
  if (k_alias && k_alias->given()) {
    const index_t k = k_alias->get(1, kMaxFilter);
    if (r && *r != k) throw Error(fmt::format("--filter {} and --k {} disagree (for conv2d --k is an alias of --filter)", *r, k));
    r = k;
  }
  if (r && *r % 2 == 0) throw Error(fmt::format("--filter: conv2d filter size R must be odd, got {}", *r));
  return r ? *r : 5;
}

Problem make_problem(Op op, DType dt, const Shape& s) {
  if (op != Op::conv2d && s.filter.given())
    throw Error(fmt::format("--filter applies to conv2d only, not {}", to_string(op)));
  if (op == Op::transpose && s.k.given()) throw Error("--k does not apply to transpose (it has rows and columns only)");
  // Every value given is checked before asking what is missing.
  auto opt = [](const Num& d) { return d.given() ? std::optional(d.get(1, kMaxDim)) : std::nullopt; };
  const auto size = opt(s.size), m = opt(s.m), n = opt(s.n);
  const index_t r = op == Op::conv2d ? filter_size(s.filter, &s.k) : 0;
  // gemm's K alone may be 0 (the empty sum: C = beta * C, still verified and timed).
  const auto k = op != Op::gemm ? std::optional<index_t>(r)
                 : s.k.given()  ? std::optional(s.k.get(0, kMaxDim))
                                : size;
  Problem p{op, dt, m ? *m : size.value_or(0), n ? *n : size.value_or(0), k ? *k : -1};
  if (p.m == 0 || p.n == 0 || p.k < 0)
    throw Error(fmt::format("{} needs --size, or --m and --n{}", to_string(op), op == Op::gemm ? " and --k" : ""));
  return p;
}

// Checks a problem before anything is drawn or allocated: memory first (both numbers), then
// the shape rules the library applies to matrices.
void check_problem(const Problem& p, const std::vector<Backend*>& backends) {
  check_memory(p, backends);
  validate_problem(p);
}

std::string bytes_str(std::size_t b) {
  if (b >= (std::size_t(1) << 30)) return fmt::format("{:.1f} GiB", double(b) / double(std::size_t(1) << 30));
  if (b >= (1u << 20)) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

int cmd_info(bool roofline) {
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
    if (const std::size_t avail = be->memory_available(); avail != SIZE_MAX)
      fmt::print("  memory free:   {} (the memory guard's limit)\n", bytes_str(avail));
    if (d.l1_bytes) fmt::print("  L1:            {}\n", bytes_str(d.l1_bytes));
    if (d.l2_bytes) fmt::print("  L2:            {}\n", bytes_str(d.l2_bytes));
    if (d.l3_bytes) fmt::print("  L3:            {}\n", bytes_str(d.l3_bytes));
    for (const auto& [k, v] : d.extra) fmt::print("  {:<14} {}\n", k + ":", v);
    fmt::print("  variants:      {}\n", vs);
    if (!be->gemm_peer_name().empty()) fmt::print("  gemm peer:     {}\n", be->gemm_peer_name());
    if (roofline) {
      fmt::print("  roofline ceilings (measured now; `tilekit roofline` prints these alone):\n");
      print_ceilings(ceilings(*be), "    ");
    }
    // How the default-sized problems would launch (tile, occupancy), per variant.
    for (Op op : kAllOps) {
      Problem p{op, DType::f32, 4096, 4096, op == Op::gemm ? 4096 : op == Op::conv2d ? 5 : 0};
      for (Variant v : be->variants()) {
        const Plan pl = plan(*be, v, p);
        fmt::print("  {:<9} {:<9} tile {:<10} {}\n", to_string(op), to_string(v), pl.tile.str(), be->describe_launch(pl));
      }
    }
  }
  return 0;
}

// `tilekit tunings`: every tuning, its backend, values, default, current value and description.
int cmd_tunings(bool json) {
  const auto current = tuning_values();
  if (json) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < tunings().size(); ++i) {
      const Tuning& t = tunings()[i];
      nlohmann::json j = {{"name", t.name}, {"backend", t.backend}, {"env", t.env()},
                          {"default", t.default_value}, {"value", current[i].second}, {"doc", t.doc}};
      if (t.values.empty())
        j["values"] = {{"min", t.min}, {"max", t.max}};
      else
        j["values"] = t.values;
      j["allowed"] = t.allowed();
      j["sweep_values"] = t.sweep_values;
      if (!t.pattern.empty()) j["pattern"] = {{"form", t.pattern}, {"sweep", t.pattern_is_sweep}};
      a.push_back(j);
    }
    fmt::print("{}\n", a.dump(2));
    return 0;
  }
  fmt::print("Tunings: set with --tune NAME=VALUE (run, compare) or the environment variable shown.\n"
             "Every result's JSON records their values. Defaults are the measured best (docs/design/).\n");
  for (std::size_t i = 0; i < tunings().size(); ++i) {
    const Tuning& t = tunings()[i];
    fmt::print("\n{}  [{}]  {}\n  {}\n  values: {}\n  default: {}{}\n", t.name, t.backend, t.env(), t.doc, t.allowed(),
               t.default_value, current[i].second == t.default_value ? "" : fmt::format("  (now: {})", current[i].second));
    std::vector<std::string> sweep = t.sweep_values;
    if (t.pattern_is_sweep) sweep.push_back(t.pattern);
    if (!sweep.empty())
      fmt::print("  sweep builds only{}: {}\n", sweeps_built() ? "" : " (not in this build)", fmt::join(sweep, ", "));
  }
  return 0;
}

void apply_tunings(const std::vector<std::string>& assignments) {
  for (const auto& a : assignments) set_tuning(std::string_view(a));
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
  std::string op, backend, variant = "tiled", dtype = "float", tile;
  std::vector<std::string> tune;
  Shape shape;
  Num reps, seed;
  bool json = false, peer = false, traffic = false;
  CLI::Option *backend_opt = nullptr, *tile_opt = nullptr;
};

TileConfig parse_tile(const std::string& text) {
  std::vector<index_t> v;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    v.push_back(parse_int("--tile", text.substr(start, comma - start), 1, 1 << 16));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() < 2 || v.size() > 3) throw Error(fmt::format("--tile takes ROWS,COLS[,DEPTH], got '{}'", text));
  return TileConfig{int(v[0]), int(v[1]), v.size() == 3 ? int(v[2]) : 0};
}

int cmd_run(const RunArgs& a) {
  apply_tunings(a.tune);
  const Op op = parse_op(a.op);
  const DType dt = parse_dtype(a.dtype);
  const Variant v = parse_variant(a.variant);
  Problem p = make_problem(op, dt, a.shape);
  RunOptions o;
  o.reps = a.reps.given() ? int(a.reps.get(1, kMaxReps)) : 10;
  o.time_budget = 1e30;  // `run` does exactly the repetitions asked for
  const std::uint64_t seed = a.seed.given() ? parse_u64("--seed", a.seed.text) : 42;
  if (a.backend_opt->count() && a.backend.empty()) throw Error("--backend: empty name");
  Backend& be = a.backend.empty() ? best_backend() : backend(a.backend);
  if (a.tile_opt->count()) {
    // One rule for options a variant cannot use: rejected, not ignored.
    if (a.peer) throw Error("--tile does not apply to --peer (the peer chooses its own blocking)");
    if (v == Variant::naive) throw Error("--tile does not apply to the naive variant (it uses no tile)");
    o.tile = parse_tile(a.tile);
  }
  if (a.peer && !has_peer(be, op))
    throw Error(fmt::format("backend '{}' has no peer for {}", be.name(), to_string(op)));
  check_problem(p, {&be});
  // Progress on stderr, as `compare` gives it: drawing the inputs and the double-precision
  // reference of a large problem takes longer than the run itself. A terminal gets one live
  // line; a log gets the stages of long runs only (one line each, not every repetition).
  const bool tty = isatty(fileno(stderr));
  const bool long_run = useful_flops(p) >= 1e10 || operand_bytes(p) >= (std::size_t(256) << 20);
  if (tty || long_run) {
    o.progress = [&, tty](const std::string& what) {
      if (!tty && what.rfind("timing ", 0) == 0 && what.rfind("timing 1/", 0) != 0) return;
      fmt::print(stderr, "{}{} {} {}x{}x{}: {}{}", tty ? "\r\033[K" : "", to_string(op), be.name(), p.m, p.n, p.k,
                 what, tty ? "" : "...\n");
    };
    o.progress("preparing inputs and the double-precision reference");
  }
  const Workload w = Workload::make(p, seed);
  const RunResult r = a.peer ? run_peer(be, w, o) : run_variant(be, v, w, o);
  if (tty) fmt::print(stderr, "\r\033[K");
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
  Num size, filter, k_alias, reps, seed;
  std::string dtype = "float", json_file, csv_file, plot_file;
  std::vector<std::string> tune;
  CLI::Option* json_opt = nullptr;
  bool no_peers = false, no_roofline = false;
};

// Naming an operation or a backend twice is a mistake, not a request to run it twice.
void reject_duplicates(const std::vector<std::string>& names, const char* what) {
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (n.empty()) throw Error(fmt::format("{}: empty name", what));
    if (!seen.insert(n).second) throw Error(fmt::format("{}: '{}' is named twice", what, n));
  }
}

// Default sizes: large enough to leave the caches of a small CPU, small enough that the
// slowest rows (the single-threaded naive ones) keep the whole comparison near a minute.
index_t default_size(Op op) { return op == Op::gemm ? 1024 : op == Op::transpose ? 4096 : 2048; }

int cmd_compare(const CompareArgs& a) {
  apply_tunings(a.tune);
  reject_duplicates(a.ops, "operations");
  reject_duplicates(a.backends, "--backends");
  std::vector<Op> ops;
  for (const auto& s : a.ops) ops.push_back(parse_op(s));
  if (ops.empty()) ops.assign(std::begin(kAllOps), std::end(kAllOps));
  const DType dt = parse_dtype(a.dtype);
  const index_t size = a.size.given() ? a.size.get(1, kMaxDim) : 0;
  const index_t filter = filter_size(a.filter, &a.k_alias);
  const int reps = a.reps.given() ? int(a.reps.get(1, kMaxReps)) : 0;
  const std::uint64_t seed = a.seed.given() ? parse_u64("--seed", a.seed.text) : 42;
  if (a.json_opt->count() && a.json_file.empty()) throw Error("--json: empty file name");
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
  // The output files, opened now (under a temporary name) so that a path that cannot be written
  // fails before minutes of work; each appears whole, renamed, once its content is complete.
  std::optional<OutputFile> json_out, csv_out, plot_out;
  if (!a.json_file.empty()) json_out.emplace("--json", a.json_file);
  if (!a.csv_file.empty()) csv_out.emplace("--csv", a.csv_file);
  if (!a.plot_file.empty()) plot_out.emplace("--plot", a.plot_file);
  // GPU rows first, then CPU rows: the comparison users come for reads top to bottom.
  std::stable_sort(bes.begin(), bes.end(), [](Backend* x, Backend* y) {
    return x->info().kind == DeviceKind::gpu && y->info().kind != DeviceKind::gpu;
  });

  // Every problem is checked (memory, shape) before the first one runs.
  auto problem_of = [&](Op op) {
    Problem p{op, dt, size > 0 ? size : default_size(op), size > 0 ? size : default_size(op), 0};
    p.k = op == Op::gemm ? p.m : op == Op::conv2d ? filter : 0;
    return p;
  };
  for (Op op : ops) check_problem(problem_of(op), bes);
  if (a.no_roofline && !a.plot_file.empty()) throw Error("--plot draws the roofline: it cannot go with --no-roofline");
  if (!a.no_roofline) measure_ceilings(bes);

  std::size_t total = 0, done = 0;
  for (Op op : ops)
    for (Backend* b : bes) total += b->variants().size() + (!a.no_peers && has_peer(*b, op) ? 1 : 0);
  const bool tty = isatty(fileno(stderr));
  std::vector<RunResult> rows;
  bool all_ok = true;
  for (Op op : ops) {
    const Problem p = problem_of(op);
    fmt::print(stderr, "{}: preparing inputs and the double-precision reference ({}x{}x{})...\n", to_string(op), p.m,
               p.n, p.k);
    const Workload w = Workload::make(p, seed);
    for (Backend* b : bes) {
      RunOptions o;
      o.reps = reps > 0 ? reps : (b->info().kind == DeviceKind::gpu ? 20 : 100);
      if (reps <= 0 && b->info().kind != DeviceKind::gpu) {
        // A host clock around a call of a few hundred microseconds on a shared machine: at least
        // five calls, and more while they take under 0.2 s together.
        o.min_reps = 5;
        o.enough = 0.2;
      }
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
  if (!a.no_roofline) remeasure_ceilings(bes);
  const std::vector<Row> table = annotate(rows, !a.no_roofline);
  print_table(table);
  for (const auto& r : rows)
    if (!r.verified)
      fmt::print(stderr, "verification failed: {} {} {}: {}\n", to_string(r.problem.op), r.backend, r.variant, r.check);
  if (json_out) json_out->commit(json_text(table, bes, !a.no_roofline));
  if (csv_out) csv_out->commit(csv_text(table));
  if (plot_out) plot_out->commit(plot_svg(table));
  return all_ok ? 0 : kExitVerifyFailed;
}

}  // namespace
}  // namespace tilekit::cli

// What `--help` says beyond the options: the environment that changes results or timings,
// and where the exit codes are listed.
constexpr const char* kFooter = R"(Environment that changes results or timings:
  OMP_NUM_THREADS        threads of the openmp backend (and of kokkos when built on OpenMP)
  OMP_PROC_BIND, OMP_PLACES   thread placement of the openmp backend
  OPENBLAS_NUM_THREADS   threads of the OpenBLAS peer (openmp's gemm peer)
  KOKKOS_NUM_THREADS     threads of the kokkos backend on OpenMP/Threads (Kokkos' own variable)
  CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES   which GPU the cuda/hip backend uses (device 0 of those listed)
  TILEKIT_PLUGIN_PATH    more directories to look for backend plugins in (':'-separated)
  TILEKIT_<TUNING>       a tuning (kernel choices, timing methods): `tilekit tunings` lists them all
Sizes are integers from 1 to 2147483647 in run and compare alike (gemm's --k may be 0); --tile is rejected where the
variant uses no tile (naive, --peer); naming an operation or backend twice is an error.
Exit codes (README.md, "Exit codes"): 0 ok, 1 verification failed, 2 bad usage, 3 resources or device
(not enough memory, a device runtime failure), 4 internal error.)";

int main(int argc, char** argv) {
  using namespace tilekit::cli;
  CLI::App app{"tilekit: tiled compute kernels on several backends, compared side by side"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tilekit ") + tilekit::kVersion);
  app.footer(kFooter);
  auto* info = app.add_subcommand("info", "Version, compiled backends and each backend's device");
  bool info_roofline = false;
  info->add_flag("--roofline", info_roofline, "Also measure and print each backend's roofline ceilings (seconds per backend)");

  RunArgs ra;
  auto* run = app.add_subcommand("run", "Verify and time one operation on one backend and variant");
  run->add_option("op", ra.op, "gemm, transpose or conv2d")->required();
  ra.backend_opt = run->add_option("--backend", ra.backend, "Backend name (default: the best available)");
  run->add_option("--variant", ra.variant, "naive, tiled or optimized")->capture_default_str();
  run->add_flag("--peer", ra.peer, "Time the backend's peer (cuBLAS, OpenBLAS, memcpy) instead of a variant");
  add_shape_options(*run, ra.shape);
  run->add_option("--dtype", ra.dtype, "float or double")->capture_default_str();
  ra.reps.opt = run->add_option("--reps", ra.reps.text, "Timed repetitions, 1 to 1000000; the median is reported (default 10)")
                    ->type_name("INT");
  ra.tile_opt = run->add_option("--tile", ra.tile,
                                "Explicit tile ROWS,COLS[,DEPTH] (default: chosen from the device; not for naive or --peer)");
  ra.seed.opt = run->add_option("--seed", ra.seed.text, "Seed of the random inputs (default 42)")->type_name("INT");
  run->add_flag("--json", ra.json, "Print exactly one JSON object");
  run->footer("Progress goes to stderr: one live line on a terminal, the stages of long runs otherwise.");
  run->add_option("--tune", ra.tune, "Set a tuning, NAME=VALUE (repeatable; `tilekit tunings` lists them)")
      ->type_name("NAME=VALUE")->allow_extra_args(false)->take_all();
  run->add_flag("--traffic", ra.traffic, "Also print the memory traffic PMPP's model predicts beside the compulsory bytes");

  CompareArgs ca;
  auto* cmp = app.add_subcommand("compare", "Every backend x variant (and peer), verified and timed, in one table");
  cmp->add_option("ops", ca.ops, "Operations (default: all; each at most once)");
  cmp->add_option("--backends", ca.backends, "Comma-separated backends (default: all available; each at most once)")
      ->delimiter(',');
  ca.size.opt = cmp->add_option("--size", ca.size.text, "Problem size N (default: gemm 1024, transpose 4096, conv2d 2048)")->type_name("INT");
  ca.k_alias.opt = cmp->add_option("--k", ca.k_alias.text, "conv2d filter size R, as in `run`")->type_name("INT");
  add_filter_option(*cmp, ca.filter, &ca.k_alias);
  cmp->add_option("--dtype", ca.dtype, "float or double")->capture_default_str();
  ca.reps.opt = cmp->add_option("--reps", ca.reps.text,
                                "Timed repetitions per row, 1 to 1000000 (default: 20 on GPUs; on CPUs 5, up to 100 while they take under 0.2 s; within ~3 s a row)")->type_name("INT");
  cmp->add_flag("--no-peers", ca.no_peers, "Leave out the peer rows");
  cmp->add_flag("--no-roofline", ca.no_roofline,
                "Do not measure the roofline ceilings (seconds per backend): the % roof column stays empty");
  ca.json_opt = cmp->add_option("--json", ca.json_file, "Also write the rows and the run's context as JSON to this file (checked before the run)");
  ca.seed.opt = cmp->add_option("--seed", ca.seed.text, "Seed of the random inputs (default 42)")->type_name("INT");
  cmp->add_option("--csv", ca.csv_file, "Also write every row as CSV (spreadsheets, pandas) to this file");
  cmp->add_option("--tune", ca.tune, "Set a tuning, NAME=VALUE (repeatable; `tilekit tunings` lists them)")
      ->type_name("NAME=VALUE")->allow_extra_args(false)->take_all();
  cmp->add_option("--plot", ca.plot_file, "Also draw the rows on each device's roofline, as SVG, to this file");

  bool tunings_json = false;
  auto* tun = app.add_subcommand("tunings", "List every tuning: name, backend, allowed values, default, description");
  tun->add_flag("--json", tunings_json, "Print a JSON array of objects (name, backend, env, values, default, value, doc)");

  std::vector<std::string> roof_backends;
  auto* roof = app.add_subcommand("roofline", "Measure and print each backend's roofline ceilings (bandwidth, FMA peak)");
  roof->add_option("--backends", roof_backends, "Comma-separated backends (default: all available)")->delimiter(',');

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the reason
    return kExitUsage;
  }
  try {
    // A bad TILEKIT_* variable is a usage error before any work, whatever the command.
    tilekit::load_tunings();
    if (*tun) return cmd_tunings(tunings_json);
    if (*info) return cmd_info(info_roofline);
    if (*run) return cmd_run(ra);
    if (*cmp) return cmd_compare(ca);
    if (*roof) return cmd_roofline(roof_backends);
  } catch (const tilekit::ResourceError& e) {
    fmt::print(stderr, "tilekit: {}\n", e.what());
    return kExitResources;
  } catch (const tilekit::DeviceError& e) {
    fmt::print(stderr, "tilekit: device error: {}\n", e.what());
    return kExitResources;
  } catch (const tilekit::Error& e) {
    fmt::print(stderr, "tilekit: {}\n", e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "tilekit: out of memory (an allocation failed; try a smaller problem)\n");
    return kExitResources;
  } catch (const std::length_error& e) {
    fmt::print(stderr, "tilekit: out of memory (a buffer would be too large: {})\n", e.what());
    return kExitResources;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tilekit: internal error: {}\n", e.what());
    return kExitInternal;
  }
  return kExitUsage;
}
