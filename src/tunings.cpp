// The tuning registry: the one table of every run-time setting that changes a kernel choice or a
// timing method (include/tilekit/tunings.hpp says how values are found and checked).
//
// It lives in libtilekit's registry part (with src/backend.cpp), not in the core objects a
// plugin carries, so a process has one table: a plugin resolves these functions from the
// libtilekit or the program that loaded it, as it does the Backend class.
#include "tilekit/tunings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>

#include <fmt/format.h>

#include "tilekit/config.hpp"
#include "tilekit/types.hpp"

extern char** environ;

namespace tilekit {
namespace {

// Shorthands for the table below. `sweep`: the measured alternatives (every value but the
// default, for a tuning that only chooses among them).
Tuning choice(std::string name, std::string backend, std::vector<std::string> values, std::string def,
              std::string doc, std::vector<std::string> sweep = {}) {
  Tuning t;
  t.name = std::move(name);
  t.backend = std::move(backend);
  t.values = std::move(values);
  t.default_value = std::move(def);
  t.doc = std::move(doc);
  t.sweep_values = std::move(sweep);
  return t;
}
Tuning integer(std::string name, std::string backend, std::int64_t lo, std::int64_t hi, std::int64_t def,
               std::string doc) {
  Tuning t;
  t.name = std::move(name);
  t.backend = std::move(backend);
  t.min = lo;
  t.max = hi;
  t.default_value = std::to_string(def);
  t.doc = std::move(doc);
  return t;
}
// A tuning whose every value but the default is a measured alternative.
Tuning alternatives(std::string name, std::string backend, std::vector<std::string> values, std::string def,
                    std::string doc) {
  std::vector<std::string> sweep;
  for (const auto& v : values)
    if (v != def) sweep.push_back(v);
  return choice(std::move(name), std::move(backend), std::move(values), std::move(def), std::move(doc), std::move(sweep));
}

// The table. The measured reasons behind each default are in docs/design/; a sweep value exists
// only in -DTILEKIT_BUILD_SWEEPS=ON builds, for re-measuring what lost.
std::vector<Tuning> make_table() {
  std::vector<Tuning> t = {
      // ---- every CPU backend's host memory (docs/design/host-huge-pages.md)
      choice("host.huge_pages", "host", {"on", "off"}, "on",
             "host matrices of 4 MiB and more on transparent huge pages (2 MiB aligned, madvised), or left to the OS"),
      alternatives("host.conv2d.stream", "host", {"auto", "off", "on"}, "auto",
                   "optimized conv2d on a host (openmp, kokkos): outputs streamed past the caches by the size rule (auto), never, or always"),
      alternatives("host.conv2d.read", "host", {"in_place", "copy"}, "in_place",
                   "optimized conv2d on a host (openmp, kokkos), strips (R = 3, 5, 7): each tile's interior read from the image in place and only the frame whose windows reach outside it copied, or the whole tile copied with its halo"),
      alternatives("host.conv2d.schedule", "host", {"dynamic", "static"}, "dynamic",
                   "optimized conv2d on a host (openmp, kokkos): tiles handed out to the threads one at a time, or split statically, each thread's consecutive and the next one's rows fetched into the L2 meanwhile"),
      // ---- openmp (docs/design/simd-highway.md, openmp-gemm-*.md)
      choice("openmp.simd", "openmp",
             {"auto", "avx3_spr", "avx3_zen4", "avx3_dl", "avx3", "avx2", "sse4", "ssse3", "sse2", "sve2", "sve", "neon",
              "emu128", "scalar"},
             "auto", "caps the SIMD target the host kernels dispatch to, process-wide: openmp's, and kokkos' on a host space (auto: the widest this CPU runs; avx2 forces the AVX2+FMA path on an AVX-512 CPU; scalar: the fallback without vectors, EMU128 where the compiler built that one; `tilekit info` names the compiled ones and the one dispatched)"),
      alternatives("openmp.gemm.pack_a", "openmp", {"vector", "scalar"}, "vector",
                   "optimized gemm: A panels packed by in-register transposes, or element by element"),
      alternatives("openmp.gemm.prefetch_a", "openmp", {"off", "on"}, "off",
                   "optimized gemm: software prefetch of the next A micro-panel"),
      alternatives("openmp.gemm.profile", "openmp", {"off", "on"}, "off",
                   "optimized gemm: print each thread's packing, waiting and computing time to stderr, per call"),
      // ---- kokkos (docs/design/kokkos-*.md)
      choice("kokkos.timer", "kokkos", {"events", "host"}, "events",
             "GPU timing: device events on Kokkos' stream, or the host clock around launch and fence"),
      alternatives("kokkos.align", "kokkos", {"256", "4096", "kokkos"}, "256",
                   "start of every matrix: a 256- or 4096-byte boundary, or where kokkos_malloc puts it"),
      alternatives("kokkos.barrier", "kokkos", {"block", "team"}, "block",
                   "barrier of teams that are whole GPU blocks: the bar.sync instruction, or Kokkos' team_barrier()"),
      alternatives("kokkos.naive.launch", "kokkos", {"auto", "mdrange", "team"}, "auto",
                   "naive kernels on GPUs: MDRangePolicy, or cuda-shaped teams (auto: teams for gemm, and for conv2d on CUDA; MDRange otherwise)"),
      alternatives("kokkos.naive.loop", "kokkos", {"plain", "batch4"}, "plain",
                   "naive gemm: the textbook loop, or four taps' loads before their FMAs"),
      alternatives("kokkos.gemm.block", "kokkos", {"auto", "patch", "strip", "vstore"}, "auto",
                   "optimized gemm's GPU block: thread mapping and B stores (auto: vstore in float, patch in double)"),
      choice("kokkos.dgemm.kernel", "kokkos", {"mma", "block"}, "mma",
             "optimized double gemm on CUDA sm_80+: the cuda DMMA block body in a team, or the generic block (also the step-down elsewhere)"),
      alternatives("kokkos.sgemm.kernel", "kokkos", {"sm90", "cub", "block", "sm90z", "sm90s1"}, "sm90",
                   "optimized float gemm on sm_90: the cuda block body where it fills the GPU, that body at every size, "
                   "the generic block, the body with its FFMAs in 4 x 4 zigzags instead of one serpentine over the rows (sm90z), "
                   "or that with its copies one per K index instead of in groups (sm90s1)"),
      alternatives("kokkos.transpose.kernel", "kokkos", {"block", "lanes"}, "block",
                   "optimized transpose: cuda's block kernel for its compiled tiles, or team threads x vector lanes"),
      alternatives("kokkos.conv2d.kernel", "kokkos", {"block", "strips"}, "block",
                   "optimized conv2d: cuda's block kernel for its compiled filters, or vertical strips per thread"),
      alternatives("kokkos.conv2d.load", "kokkos", {"auto", "regs", "async"}, "auto",
                   "optimized conv2d on CUDA, vector-padded windows: copies through registers or cp.async (auto: async from R = 5)"),
      alternatives("kokkos.conv2d.filter", "kokkos", {"auto", "regs", "constant"}, "auto",
                   "optimized conv2d on CUDA, vector-padded windows: filter in registers or constant memory (auto: constant from R = 5)"),
      alternatives("kokkos.conv2d.window", "kokkos", {"lines", "aligned", "vector"}, "lines",
                   "optimized conv2d on CUDA, R = 3 and 5: window rows sector-aligned and copied by lines, sector-aligned, "
                   "or vector-padded"),
      alternatives("kokkos.conv2d.bounds", "kokkos", {"none", "occ"}, "none",
                   "optimized conv2d on CUDA: launch bounds as cuda's kernel, or registers capped for occupancy"),
      alternatives("kokkos.conv2d.tiled", "kokkos", {"block", "fit", "reserve"}, "block",
                   "tiled conv2d on CUDA: cuda's tile and rows per lane in a team of a cuda block's shared memory "
                   "(Kokkos' team-reduction space reused), the tile trimmed to that size beside Kokkos' space, or "
                   "cuda's tile beside it"),
      // ---- every GPU backend's gemm arithmetic (docs/design/gpu-sgemm-tf32x3.md)
      choice("gemm.precision", "cuda, kokkos", {"fp32", "tf32x3"}, "fp32",
             "optimized float gemm: FP32 FMA, or tf32x3 (FP32-accurate, three TF32 tensor-core products; NVIDIA "
             "sm_80+, an error on other GPUs; CPU backends compute FP32 FMA, never less accurate)"),
      // ---- cuda and hip (one GPU source: docs/design/gpu-*.md)
      alternatives("cuda.sgemm.kernel", "cuda",
                   {"auto", "dual3efs4r", "cub3efzs", "big3ef", "ddual3", "sm80", "dual3efzs4", "dual3efzs", "dual3efz",
                    "cub3efz", "cub3efzb"},
                   "auto",
                   "optimized float gemm on sm_90: the kernel, at every size (auto: dual3efs4r, gemm.cuh's 64x64 where it "
                   "cannot fill the GPU)"),
      choice("cuda.tf32x3.kernel", "cuda", {"auto", "mma", "wgmma"}, "auto",
             "optimized float gemm under gemm.precision=tf32x3: mma.sync (sm_80+), or wgmma (compute capability 9.0 "
             "only: split pre-pass, warpgroup MMA from shared memory; 128x128x32) (auto: wgmma on compute capability 9.0 "
             "where the build compiles it, else mma)"),
      alternatives("cuda.dgemm.mma", "cuda", {"auto", "m16n8k16", "m8n8k4", "off"}, "auto",
                   "optimized double gemm: the FP64 tensor-core shape, or off for FFMA (auto: m16n8k16 on sm_90, m8n8k4 on sm_80)"),
      alternatives("cuda.dgemm.wide", "cuda", {"auto", "stages3"}, "auto",
                   "optimized double gemm on the FP64 tensor cores, 128x128 blocks: four shared stages, or three"),
      alternatives("gpu.conv2d.optimized", "cuda, hip", {"auto", "tile", "aligned-lines", "aligned", "aligned-occ"}, "auto",
                   "optimized conv2d window (auto: aligned-lines where cp.async is, else tile): rows vector-padded, "
                   "sector-aligned and copied by lines, sector-aligned, registers capped, or a pattern"),
  };
  for (auto& x : t) {
    if (x.name == "gpu.conv2d.optimized") {
      x.pattern = "aligned[<N>][-lines][-split][-tma][-pf] (N a multiple of 8)";
      x.pattern_is_sweep = true;
    }
  }
  t.push_back(alternatives("openmp.gemm.grid", "openmp", {"auto"}, "auto",
                           "optimized gemm: the team's grid over C, RxC with R*C threads (auto: the cost model's)"));
  t.back().pattern = "RxC";
  t.back().pattern_is_sweep = true;
  // ---- libtilekit_blas (docs/blas.md): the drop-in BLAS's own settings
  t.push_back(choice("blas.backend", "blas", {"auto", "serial", "openmp", "kokkos", "cuda", "hip"}, "auto",
                     "the backend sgemm_/dgemm_/cblas_?gemm run on (auto: the available one of highest priority)"));
  t.push_back(integer("blas.verbose", "blas", 0, 2, 0,
                      "0 silent; 1 one summary line at exit (tilekit-blas: N calls ... on BACKEND); 2 also a line per call"));
  t.push_back(integer("blas.gpu_min", "blas", 0, (std::int64_t(1) << 31) - 1, 1024,
                      "a call runs on a GPU backend only when m, n and k are all at least this; below, on the best CPU backend"));
  t.push_back(choice("blas.stage", "blas", {"auto", "always"}, "auto",
                     "copy the operands into backend matrices only where backend memory is not host memory, or always"));
  t.push_back(choice("blas.devices", "blas", {"all"}, "all",
                     "the GPUs one host-memory call is spread over: all (every device the runtime shows) or a list of ordinals"));
  t.back().pattern = "a comma-separated list of device ordinals (0,1)";
  t.push_back(integer("blas.gpu_tile", "blas", 0, (std::int64_t(1) << 31) - 1, 0,
                      "the edge of the C tiles a GPU call from host memory is computed in (0: chosen from the sizes)"));
  t.push_back(choice("blas.system", "blas", {"default"}, "default",
                     "the BLAS library the routines tilekit does not implement come from (default: OpenBLAS, then the reference BLAS)"));
  t.back().pattern = "a library file name or path";
  // ---- ScaLAPACK on tilekit (docs/scalapack.md): read by libtilekit_pblas_panel.so, preloaded
  // after libtilekit_blas, which answers PBLAS's PILAENV with it
  t.push_back(choice("pblas.panel", "blas", {"max"}, "max",
                     "the PBLAS panel width (PILAENV) libtilekit_pblas_panel.so gives ScaLAPACK's P?GEMM: wider panels, "
                     "fewer and larger GEMM calls (max: as wide as K; either way capped below ScaLAPACK's 32-bit workspace sizes)"));
  t.back().pattern = "a whole number >= 1";
  std::sort(t.begin(), t.end(), [](const Tuning& a, const Tuning& b) { return a.name < b.name; });
  return t;
}

// Values some tunings accept beyond their list: a pattern, checked here.
bool accepts_pattern(const Tuning& t, const std::string& v) {
  if (t.name == "blas.system") return !v.empty();
  if (t.name == "blas.devices") {  // 0 or 0,1,...: digits separated by single commas
    if (v.empty() || v.front() == ',' || v.back() == ',' || v.find(",,") != std::string::npos) return false;
    return v.find_first_not_of("0123456789,") == std::string::npos && v.size() < 200;
  }
  if (t.name == "openmp.gemm.grid") {
    int r = 0, c = 0;
    char tail = 0;
    return std::sscanf(v.c_str(), "%dx%d%c", &r, &c, &tail) == 2 && r > 0 && c > 0;
  }
  if (t.name == "gpu.conv2d.optimized") {
    if (v.rfind("aligned", 0) != 0) return false;
    std::string rest = v.substr(7);
    for (const char* suffix : {"-pf", "-tma", "-split", "-lines"}) {
      const std::string s(suffix);
      if (rest.size() >= s.size() && rest.compare(rest.size() - s.size(), s.size(), s) == 0) rest.resize(rest.size() - s.size());
    }
    if (rest.empty()) return true;
    if (rest.find_first_not_of("0123456789") != std::string::npos || rest.size() > 3) return false;
    const int n = std::atoi(rest.c_str());
    return n > 0 && n % 8 == 0;
  }
  if (t.name == "pblas.panel") {
    if (v.empty() || v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    const long long n = std::stoll(v);
    return n >= 1 && n <= (1ll << 31) - 1;
  }
  return false;
}

// TILEKIT_* variables that are not tunings: where plugins are, and the test programs' own.
bool non_tuning_variable(const std::string& var) {
  return var == "TILEKIT_PLUGIN_PATH" || var == "TILEKIT_TILE_CHECK_SEED" || var == "TILEKIT_PROGRAM" || var.rfind("TILEKIT_TEST_", 0) == 0 ||
         var.rfind("TILEKIT_FAKE_", 0) == 0;
}

struct Registry {
  std::vector<Tuning> table = make_table();
  std::vector<std::string> values;  // effective values, index-aligned with `table`
  std::shared_mutex mutex;
  std::once_flag env_once;
  std::string env_error;  // a bad environment, reported at every use until the process ends

  Registry() {
    for (const auto& t : table) values.push_back(t.default_value);
  }
  std::size_t index(std::string_view name) const {
    auto it = std::lower_bound(table.begin(), table.end(), name,
                               [](const Tuning& t, std::string_view n) { return t.name < n; });
    if (it == table.end() || it->name != name) {
      std::string names;
      for (const auto& t : table) names += (names.empty() ? "" : ", ") + t.name;
      throw Error(fmt::format("unknown tuning '{}' (`tilekit tunings` lists them: {})", name, names));
    }
    return std::size_t(it - table.begin());
  }
  // Throws unless `v` is one of t's values (or its pattern) and compiled into this build.
  static void check(const Tuning& t, const std::string& v, std::string_view source) {
    bool ok, sweep = false;
    if (t.values.empty()) {
      std::size_t used = 0;
      long long n = 0;
      try {
        n = std::stoll(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      ok = used == v.size() && !v.empty() && n >= t.min && n <= t.max;
    } else {
      const bool listed = std::find(t.values.begin(), t.values.end(), v) != t.values.end();
      ok = listed || accepts_pattern(t, v);
      sweep = listed ? std::find(t.sweep_values.begin(), t.sweep_values.end(), v) != t.sweep_values.end()
                     : t.pattern_is_sweep;
    }
    if (!ok) throw Error(fmt::format("{}: '{}' is not a value of tuning {}: expected {}", source, v, t.name, t.allowed()));
    if (sweep && !sweeps_built())
      throw Error(fmt::format("{}: {}={} selects a kernel compiled only in sweep builds; configure with "
                              "-DTILEKIT_BUILD_SWEEPS=ON to measure it",
                              source, t.name, v));
  }
  void read_environment() {
    std::call_once(env_once, [this] {
      std::vector<std::string> errors;
      for (char** e = environ; e && *e; ++e) {
        const std::string kv(*e);
        if (kv.rfind("TILEKIT_", 0) != 0) continue;
        const std::size_t eq = kv.find('=');
        const std::string var = kv.substr(0, eq), val = eq == std::string::npos ? "" : kv.substr(eq + 1);
        if (non_tuning_variable(var)) continue;
        auto it = std::find_if(table.begin(), table.end(), [&](const Tuning& t) { return t.env() == var; });
        try {
          if (it == table.end())
            throw Error(fmt::format("environment variable {} names no tuning (`tilekit tunings` lists them; "
                                    "a tuning's variable is TILEKIT_ and its name in upper case, dots as underscores)",
                                    var));
          if (val.empty()) continue;  // set but empty: the default, as for any unset variable
          check(*it, val, var);
          values[std::size_t(it - table.begin())] = val;
        } catch (const Error& err) {
          errors.emplace_back(err.what());
        }
      }
      std::sort(errors.begin(), errors.end());
      for (const auto& m : errors) env_error += (env_error.empty() ? "" : "; ") + m;
    });
    if (!env_error.empty()) throw Error(env_error);
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::string Tuning::env() const {
  std::string e = "TILEKIT_";
  for (char c : name) e += c == '.' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
  return e;
}

std::string Tuning::allowed() const {
  if (values.empty()) return fmt::format("an integer from {} to {}", min, max);
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i)
    s += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
  if (!pattern.empty()) s = (values.size() == 1 ? s : s.replace(s.rfind(" or "), 4, ", ")) + " or " + pattern;
  return s;
}

const std::vector<Tuning>& tunings() { return registry().table; }

const Tuning& find_tuning(std::string_view name) {
  Registry& r = registry();
  return r.table[r.index(name)];
}

void load_tunings() { registry().read_environment(); }

std::string tuning(std::string_view name) {
  Registry& r = registry();
  r.read_environment();
  const std::size_t i = r.index(name);
  std::shared_lock lock(r.mutex);
  return r.values[i];
}

std::int64_t tuning_int(std::string_view name) {
  const Tuning& t = find_tuning(name);
  if (!t.values.empty()) throw Error(fmt::format("tuning {} is not an integer tuning", t.name));
  return std::stoll(tuning(name));
}

void set_tuning(std::string_view name, std::string_view value) {
  Registry& r = registry();
  r.read_environment();
  const std::size_t i = r.index(name);
  const std::string v(value);
  Registry::check(r.table[i], v, fmt::format("--tune {}", name));
  std::unique_lock lock(r.mutex);
  r.values[i] = v;
}

void set_tuning(std::string_view assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw Error(fmt::format("--tune: '{}' is not NAME=VALUE (`tilekit tunings` lists the names)", assignment));
  set_tuning(assignment.substr(0, eq), assignment.substr(eq + 1));
}

std::vector<std::pair<std::string, std::string>> tuning_values() {
  Registry& r = registry();
  r.read_environment();
  std::shared_lock lock(r.mutex);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < r.table.size(); ++i) out.emplace_back(r.table[i].name, r.values[i]);
  return out;
}

void throw_unmapped_tuning(std::string_view name, std::string_view value) {
  throw Error(fmt::format("tuning {}={} is allowed by the registry but not handled by the code that reads it", name, value));
}

bool sweeps_built() {
#ifdef TILEKIT_HAS_SWEEPS
  return true;
#else
  return false;
#endif
}

}  // namespace tilekit
