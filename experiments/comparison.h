// The join of predicted and measured rows, and its report: shared by `flashio compare` (two
// files) and `flashio validate` (profile, predict and compare in one run). Rows join on every key
// column but `source`; each joined row gets the relative error (predicted − measured) / measured
// of io (read + write), dram (read + write), the executed tensor FLOPs and the time. The targets
// (docs/profiler.md, "flashio compare"), on kernel=total rows of flash1/flash2: io ±2 %, dram
// ±5 %, flops_tensor ±1 %; standard: dram ±5 %.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/output.h"
#include "sim/row.h"

namespace flashio::cli {

struct Joined {
  sim::Row predicted, measured;
  std::vector<std::optional<double>> p, m, err;  // per quantity: predicted, measured, relative error
};

// Joins every measured (or peer) row with the first predicted (model or cache) row of its key.
// `unmatched` counts the measured rows without one.
std::vector<Joined> join_rows(const std::vector<sim::Row>& predicted, const std::vector<sim::Row>& measured,
                              int& unmatched);

// The summary lines: per quantity the rows compared, the median and largest |error|, and, where a
// target is set, how many total rows meet it.
std::string comparison_summary(const std::vector<Joined>& rows);

// The joined rows as csv (cells quoted as RFC 4180 where needed), json (the run's context block,
// numbers as numbers, unknown as null) or a table (totals only unless options.all_kernels).
void write_comparison(const OutputOptions& options, const RunContext& context, std::ostream& out,
                      const std::vector<Joined>& rows);

}  // namespace flashio::cli
