// Tunings: every run-time setting that changes which kernel runs or how it is timed, declared
// once (src/tunings.cpp), listed by `tilekit tunings`, and recorded with every result.
//
// A tuning has a dotted name (`cuda.sgemm.kernel`), the backend it belongs to, its allowed
// values (a list of names, or an integer range), a default and a one-line description. Its value
// comes, in increasing precedence, from the default, from the environment variable named after it
// (TILEKIT_ + the name in upper case with dots as underscores: TILEKIT_CUDA_SGEMM_KERNEL), and
// from set_tuning() (the program's `--tune NAME=VALUE`). The environment is read once per process,
// at the first use of any tuning.
//
// Unknown names and values outside a tuning's allowed values are errors (tilekit::Error naming the
// tuning and what it accepts) whatever backend the program uses: a cuda tuning set on a machine
// without CUDA is still checked. So is a TILEKIT_* environment variable that names no tuning
// (apart from the few non-tuning variables, such as TILEKIT_PLUGIN_PATH).
//
// Most tunings choose among measured alternatives to a default kernel (docs/design/ says which won
// and by how much). Those alternatives are sweep values: a default build compiles and accepts only
// the defaults, a sweep build (-DTILEKIT_BUILD_SWEEPS=ON, for the bench) all of them. The few
// tunings a user may want to change (huge pages, the CPU's SIMD cap, how kokkos is timed) have no
// sweep values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilekit {

struct Tuning {
  std::string name;                 // e.g. "cuda.sgemm.kernel"
  std::string backend;              // the backend it changes ("cuda", "openmp", ...; "host" for every CPU backend)
  std::vector<std::string> values;  // the allowed values; empty for an integer range
  std::int64_t min = 0, max = 0;    // the integer range, when `values` is empty
  std::string default_value;        // as text ("auto": the backend decides from the device)
  std::string doc;                  // one line
  // Values beyond the list that a pattern accepts ("RxC"; "" when none), and whether they are
  // sweep values.
  std::string pattern;
  bool pattern_is_sweep = false;
  // The measured alternatives, offered (and their kernels compiled) only in a sweep build
  // (-DTILEKIT_BUILD_SWEEPS=ON); choosing one in another build is an error that says so.
  std::vector<std::string> sweep_values;
  std::string env() const;          // TILEKIT_<NAME>
  std::string allowed() const;      // "a, b or c" / "an integer from LO to HI"
};

// Every tuning, sorted by name.
const std::vector<Tuning>& tunings();
// The tuning called `name` (throws tilekit::Error listing the known names when there is none).
const Tuning& find_tuning(std::string_view name);

// The effective value of a tuning (reads the environment on first use).
std::string tuning(std::string_view name);
// The effective value of an integer tuning.
std::int64_t tuning_int(std::string_view name);
// Sets a tuning for the rest of the process (checked; throws tilekit::Error on an unknown name or
// a value it does not allow). Takes effect for the calls that start after it.
void set_tuning(std::string_view name, std::string_view value);
// "NAME=VALUE", as `--tune` takes it.
void set_tuning(std::string_view assignment);
// Every tuning's effective value, sorted by name: what a result records.
std::vector<std::pair<std::string, std::string>> tuning_values();
// Reads and checks the environment now (it is otherwise read at the first use of a tuning), so a
// program can report a bad TILEKIT_* variable before doing any work.
void load_tunings();
// Whether this build compiled the sweep kernels (-DTILEKIT_BUILD_SWEEPS=ON).
bool sweeps_built();

[[noreturn]] void throw_unmapped_tuning(std::string_view name, std::string_view value);

// The effective value of tuning `name` as the caller's type: `options` maps the tuning's values
// (those the caller acts on) to values of T, e.g. {{"events", Timer::events}, {"host",
// Timer::host}}. Every backend reads its choices this one way. A value the registry allows but
// `options` does not map is a tilekit::Error naming both (the table and the code out of step).
template <class T>
T tuning_choice(std::string_view name, std::initializer_list<std::pair<std::string_view, T>> options) {
  const std::string v = tuning(name);
  for (const auto& o : options)
    if (o.first == v) return o.second;
  throw_unmapped_tuning(name, v);
}

}  // namespace tilekit
