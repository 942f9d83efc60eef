// Runs one (backend, variant or peer, operation) on generated inputs: verifies against the
// double-precision reference, then times it the same way for every backend (one warm-up,
// then the median of the timed repetitions, each measured by the backend's own clock).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tilekit/tilekit.hpp"
#include "tilekit/verify.hpp"

namespace tilekit::cli {

// Host inputs and the reference for one problem, built once and shared by every row that
// computes it (the reference of a large gemm costs more than most of the rows).
struct Workload {
  Problem problem;
  std::vector<double> a, b, filter;  // inputs as drawn (double; narrowed per dtype on upload)
  std::shared_ptr<verify::Reference> reference;
  static Workload make(const Problem& p, std::uint64_t seed);
};

struct RunOptions {
  int reps = 10;             // timed repetitions (at least one always runs)
  double time_budget = 3.0;  // stop repeating once this many timed seconds have accumulated
  // With min_reps > 0, `reps` is a ceiling: stop after min_reps once `enough` timed seconds have
  // accumulated (short calls get more samples for their median, long ones no more time).
  int min_reps = 0;
  double enough = 0;
  TileConfig tile;           // auto by default
  std::function<void(const std::string&)> progress;  // told each stage ("verifying", "timing 3/10")
};

// The memory guard: what running `p` on these backends one after another needs (the host's
// inputs, reference and transfer buffers; each backend's operands, counted against the host
// for CPU backends) against what each has. Throws ResourceError with both numbers, before
// anything is allocated.
void check_memory(const Problem& p, const std::vector<Backend*>& backends);

struct RunResult {
  std::string backend, variant, device;  // variant is the peer's name for peer rows
  bool peer = false;
  Problem problem{};
  TileConfig tile;
  std::string launch;
  int reps = 0;
  double seconds = 0, min_seconds = 0, max_seconds = 0;
  double gflops = 0, gbps = 0;
  double flops = 0, bytes = 0;  // useful FLOPs and compulsory bytes of one call (a copy peer: its bytes)
  bool verified = false;
  double rel_error = 0;
  std::string check;
  nlohmann::json to_json() const;
};

// Every tuning's effective value, as the JSON object each result records.
nlohmann::json tunings_json();

RunResult run_variant(Backend& be, Variant v, const Workload& w, const RunOptions& o);
// The backend's peer for this operation: its gemm library, or a device copy of the bytes a
// bandwidth-bound operation must move. Throws when the backend has none.
RunResult run_peer(Backend& be, const Workload& w, const RunOptions& o);
bool has_peer(const Backend& be, Op op);

}  // namespace tilekit::cli
