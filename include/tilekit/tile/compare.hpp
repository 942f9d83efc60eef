// Comparing a user's tile kernel across backends: "shared memory vs cache blocking on my kernel"
// in one call. For every backend this program can launch on (and every tile size asked for),
// compare() prepares the inputs through the user's setup function, runs the kernel once to
// warm up, times `reps` runs with the backend's own clock (device events on GPUs) and takes the
// median, checks the output against the user's reference, and times a device copy of the same
// number of bytes on that backend: the same table `tilekit compare` prints.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "tilekit/backend.hpp"

namespace tilekit::tile {

// What setup(backend, tile) returns for one row: `run` enqueues one run of the kernel on that
// backend (inputs already uploaded; it must not synchronize); `output` waits for the backend and
// returns the result as doubles, for the check.
struct Trial {
  std::function<void()> run;
  std::function<std::vector<double>()> output;
};

struct Study {
  std::string name;                   // what one run computes, e.g. "jacobi 2048x2048 float"
  double bytes = 0;                   // compulsory bytes of one run (inputs read once, outputs written once)
  double flops = 0;                   // useful floating-point operations of one run (0: none)
  std::vector<double> reference;      // the expected output
  double tolerance = 1e-5;            // largest accepted ||output - reference|| / ||reference||
  int reps = 10;                      // timed runs after one warm-up
  std::vector<int> tiles = {0};       // tile sizes passed to setup (0: the kernel's own choice)
  std::vector<std::string> backends;  // empty: every compiled, available backend
};

struct Row {
  std::string backend;
  int tile = 0;
  double seconds = 0, gbps = 0, gflops = 0;
  double copy_gbps = 0;      // a device copy of `bytes` bytes on the same backend, same run
  double rel_error = 0;      // ||output - reference|| / ||reference||
  bool verified = false;
  std::string skipped;       // why the row did not run ("" when it did)
};

using Setup = std::function<Trial(Backend& be, int tile)>;

// Runs the study on every backend in study.backends (default: all compiled into tilekit) that is
// available and in `launchable` (the backends the caller's translation unit can launch its
// kernel on: tile.hpp's launchable_backends()), and lists the others with the reason.
std::vector<Row> compare(const Study& study, const Setup& setup, const std::vector<std::string>& launchable);

// Prints rows as `tilekit compare` does: time, GB/s, GFLOP/s, fraction of the device's copy
// bandwidth, check. Returns false when any row that ran failed its check.
bool print(const Study& study, const std::vector<Row>& rows, std::FILE* out = stdout);

}  // namespace tilekit::tile
