// WorkbenchData: every number the charts draw, computed from WorkbenchParams by sim alone
// (closed form, bounds), as one value so it can be built off the GUI thread (QtConcurrent) and
// handed to the views at once. Rows keep sim's row schema (sim/row.h), so the table behind a
// chart, its CSV export and a loaded results file all have the same columns.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gui/workbench_params.h"
#include "sim/counts.h"
#include "sim/row.h"

namespace flashio::gui {

// A row and the x it is drawn at (block size, N, or M in bytes).
struct PlotRow {
  double x = 0;
  sim::Row row;
};

// Least-squares slope of log(io) against log(x) over [x_from, x_to] (Theorem 2 predicts 2 in
// N and −1 in M once the N²d²/M term dominates).
struct SlopeFit {
  sim::Algo algo = sim::Algo::standard;
  double slope = 0;
  double x_from = 0, x_to = 0;
  int points = 0;  // 0: not enough points to fit
};

struct BreakdownBar {
  sim::Algo algo;
  sim::Counts counts;  // whole problem, all kernels of the pass
  // flash2's bar of the padded layout beside the packed one (packs_sequences: the panel's Config
  // with varlen unticked, sim::Problem::varlen false), so the padding's bytes show.
  bool padded = false;
};

struct WorkbenchData {
  WorkbenchParams params;
  // Block-size view: source=model totals per algorithm and x, and source=bound rows.
  std::vector<PlotRow> block_rows;
  // The same totals with the roofline's time (sim/roofline.h), where block_rows' time is the
  // calibrated time model's: the runtime chart draws the two side by side.
  std::vector<PlotRow> block_roofline_rows;
  // Largest swept block whose tiles fit in M, per algorithm (0: none fits).
  std::vector<std::pair<sim::Algo, int64_t>> block_fit_limit;
  // sim's message (by the panel's labels) when the panel's problem cannot exist (Hkv not
  // dividing H, causal with Nk < N): then nothing else is computed, so no view draws numbers of
  // an earlier problem.
  std::string problem_error;
  // Scaling view: io against N (rule tiling at the current M) and against M (rule tiling).
  // Where Nk ≠ N the first sweeps Nk at the panel's N instead (scaling_sweeps_keys): a decoding
  // problem (N = 1) shows its bytes against the cache length.
  std::vector<PlotRow> seqlen_rows, sram_rows;
  std::vector<SlopeFit> seqlen_fits, sram_fits;
  // Scaling view's split-KV charts (scaling_shows_splits): flash2's total rows (io, and time_ms
  // of sim's default time method) at the panel's Config with Config::splits = x.
  std::vector<PlotRow> splits_rows;
  double crossover_sram_bytes = 0;  // Saha–Ye: M = d² elements, in bytes
  // Breakdown view: per-tensor bytes at the current configuration, and its kernel rows (with
  // packed sequences, flash2's padded layout too: BreakdownBar::padded, rows with varlen 0).
  std::vector<BreakdownBar> breakdown;
  std::vector<sim::Row> breakdown_rows;
  // Configurations left out, and why (a tiling that does not fit, a bad block mask).
  std::vector<std::string> skipped;
};

// Called between configurations; return false to cancel (the result is then incomplete and
// must be discarded). `done` of `total` configurations.
using ProgressFn = std::function<bool(int done, int total)>;

WorkbenchData compute_workbench(const WorkbenchParams& params, const ProgressFn& progress = {});

// The row's bytes as the charts sum them (read + written, or the total where only that is
// known: rows loaded from `flashio compare` output); nullopt when the row leaves them empty.
std::optional<double> io_bytes(const sim::Row& row);
std::optional<double> dram_bytes(const sim::Row& row);

// Whether the scaling view's sequence sweep runs over Nk (the problem's Nk ≠ N) rather than N.
bool scaling_sweeps_keys(const WorkbenchParams& params);
// The problem at x of that sweep: N = x with square keys (Nk following N), or Nk = x at the
// panel's N.
sim::Problem scaling_problem(const WorkbenchParams& params, int64_t x);
// The scaling sweeps' x values: N (or Nk) from 256 to 65,536, doubling, without those sim
// refuses (causal needs Nk >= N); M from 4d elements up.
std::vector<int64_t> scaling_seqlens(const WorkbenchParams& params);
std::vector<int64_t> scaling_sram_bytes(const WorkbenchParams& params);
// Whether the scaling view shows io and time against split-KV's S: flash2 shown, a pass with a
// forward, and a decode-like problem (Nq <= 64 and Nk >= 1024), where splitting the keys is
// what fills the GPU.
bool scaling_shows_splits(const WorkbenchParams& params);
// That chart's x values: S = 1, 2, 4, … up to min(128, Tc), Tc = ⌈Nk / Bc⌉ of the panel's flash2
// tiling; empty where the chart is not shown (or flash2's Config cannot be made).
std::vector<int64_t> scaling_splits(const WorkbenchParams& params);

// Least-squares slope of log y over log x for the points with x in [x_from, x_to] and y > 0.
SlopeFit fit_log_slope(const std::vector<std::pair<double, double>>& points, double x_from,
                       double x_to);

}  // namespace flashio::gui
