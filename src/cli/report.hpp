// What `tilekit compare` reports beyond the raw runs: each row against the same backend's naive
// row, its peer and its device's roof; the run's context (as Google Benchmark's JSON has it);
// the JSON, CSV and table outputs; and the ceilings that `info` and `roofline` print.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner.hpp"
#include "tilekit/roofline.hpp"

namespace tilekit::cli {

struct Row {
  RunResult r;
  double vs_naive = std::numeric_limits<double>::quiet_NaN();  // speedup over the backend's naive row
  double vs_peer = std::numeric_limits<double>::quiet_NaN();   // fraction of the backend's peer
  RoofPoint roof;
};

// Every row with its speedup, peer fraction and roof (the ceilings of the row's backend).
// roofline = false: no ceilings are measured and the roof fields stay empty.
std::vector<Row> annotate(const std::vector<RunResult>& runs, bool roofline = true);

// Measures each backend's ceilings (once per process), saying so on stderr, with any
// estimate warnings.
void measure_ceilings(const std::vector<Backend*>& backends);
// After the rows: a second sample of each backend's ceilings, the higher figure kept.
void remeasure_ceilings(const std::vector<Backend*>& backends);

// Host, CPU, GPUs and drivers, compiler, build, threads, date: what makes a result reproducible.
nlohmann::json run_context(const std::vector<Backend*>& backends, bool roofline = true);
nlohmann::json ceilings_json(const Ceilings& c);
nlohmann::json row_json(const Row& row);

// Throws tilekit::Error when `file` cannot be written (checked before a long run starts).
std::string json_text(const std::vector<Row>& rows, const std::vector<Backend*>& backends, bool roofline = true);
std::string csv_text(const std::vector<Row>& rows);

// One roofline per device (plot.hpp), the rows as its points.
std::string plot_svg(const std::vector<Row>& rows);

void print_table(const std::vector<Row>& rows);
// The measured ceilings, their estimates and warnings, one per line, each line led by `indent`.
void print_ceilings(const Ceilings& c, const std::string& indent);
// `run --traffic`: the predicted memory traffic (PMPP's model) beside the compulsory bytes.
void print_traffic(const RunResult& r, const Backend& be);
std::string with_traffic(nlohmann::json j, const RunResult& r, const Backend& be);

// `tilekit roofline`: every (named or available) backend's ceilings alone.
int cmd_roofline(const std::vector<std::string>& backends);

}  // namespace tilekit::cli
