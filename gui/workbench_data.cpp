#include "gui/workbench_data.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "gui/field_label.h"
#include "sim/bounds.h"
#include "sim/parallel_for.h"
#include "sim/simulate.h"

namespace flashio::gui {
namespace {

struct Job {
  std::vector<PlotRow>* into;
  double x;
  sim::Config config;
  bool with_bounds;
  // Where the same total row with the roofline's time goes, when the rows' time is the time
  // model's (the runtime chart draws both); null for none.
  std::vector<PlotRow>* roofline_into = nullptr;
};

// The total row of a configuration (and its bound rows), tagged with x. Returns the reason
// when the configuration cannot exist (e.g. a tiling that does not fit in M).
std::string run_job(const Job& job) {
  try {
    const sim::SimResult result = sim::simulate(job.config, sim::CountMethod::formula);
    for (auto& row : sim::rows_from_result(result))
      if (row.is_total()) job.into->push_back({job.x, std::move(row)});
    if (job.roofline_into && result.time_method == sim::TimeMethod::model)
      for (auto& row : sim::rows_from_result(sim::simulate(job.config, sim::CountMethod::formula, sim::TimeMethod::roofline)))
        if (row.is_total()) job.roofline_into->push_back({job.x, std::move(row)});
    if (job.with_bounds)
      for (auto& row : sim::bound_rows(job.config)) job.into->push_back({job.x, std::move(row)});
    return {};
  } catch (const std::exception& e) {
    return sim::to_string(job.config.algo) + ": " + error_message(e);
  }
}

std::vector<std::pair<double, double>> io_points(const std::vector<PlotRow>& rows,
                                                 sim::Algo algo) {
  std::vector<std::pair<double, double>> points;
  for (const auto& p : rows)
    if (p.row.source == sim::RowSource::model && p.row.algo == sim::row_algo(algo))
      if (auto io = io_bytes(p.row)) points.emplace_back(p.x, *io);
  return points;
}

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

std::optional<double> io_bytes(const sim::Row& row) {
  if (!row.io_read_bytes || !row.io_write_bytes) return row.io_total_bytes;
  return *row.io_read_bytes + *row.io_write_bytes;
}

std::optional<double> dram_bytes(const sim::Row& row) {
  if (!row.dram_read_bytes || !row.dram_write_bytes) return row.dram_total_bytes;
  return *row.dram_read_bytes + *row.dram_write_bytes;
}

bool scaling_sweeps_keys(const WorkbenchParams& params) {
  return params.problem.keys() != params.problem.seqlen;
}

sim::Problem scaling_problem(const WorkbenchParams& params, int64_t x) {
  sim::Problem p = params.problem;
  if (scaling_sweeps_keys(params)) {
    p.seqlen_k = x;
  } else {
    p.seqlen = x;
    p.seqlen_k = 0;  // square: the keys follow N (an Nk typed equal to N would stay put)
  }
  return p;
}

std::vector<int64_t> scaling_seqlens(const WorkbenchParams& params) {
  std::vector<int64_t> n;
  for (int64_t v = 256; v <= 65536; v *= 2) {
    // sim decides which x can exist (causal with Nk < N cannot), so the axis never ticks a
    // point that no curve reaches.
    try {
      sim::validate(scaling_problem(params, v));
      n.push_back(v);
    } catch (const sim::InvalidInput&) {
    }
  }
  return n;
}

std::vector<int64_t> scaling_sram_bytes(const WorkbenchParams& params) {
  // From the smallest M the rule can tile (4d elements: one row each of Q, K, V, O tiles) to
  // past both N·d (where Theorem 2's range ends, a single pass) and the hardware's M.
  const int64_t e = sim::element_bytes(params.problem.dtype);
  const int64_t d = params.problem.headdim;
  const int64_t lo = next_pow2(4 * d * e);
  // flash2's single pass needs Br >= N, flash1's Bc >= Nk: past the larger of the two.
  const int64_t rows = std::max(params.problem.seqlen, params.problem.keys());
  const int64_t hi = std::max(next_pow2(rows * d * e) * 2, next_pow2(effective_sram_bytes(params)));
  std::vector<int64_t> m;
  for (int64_t v = lo; v <= hi; v *= 2) m.push_back(v);
  return m;
}

bool scaling_shows_splits(const WorkbenchParams& params) {
  return params.shows(sim::Algo::flash2) && sim::has_forward(params.problem.pass) &&
         params.problem.seqlen <= 64 && params.problem.keys() >= 1024;
}

std::vector<int64_t> scaling_splits(const WorkbenchParams& params) {
  std::vector<int64_t> splits;
  if (!scaling_shows_splits(params)) return splits;
  int64_t key_tiles = 0;
  try {
    const sim::Config config = current_config(params, sim::Algo::flash2);
    if (config.tiling.block_c <= 0) return splits;
    key_tiles = (config.problem.keys() + config.tiling.block_c - 1) / config.tiling.block_c;
  } catch (const std::exception&) {
    return splits;
  }
  for (int64_t s = 1; s <= std::min<int64_t>(128, key_tiles); s *= 2) splits.push_back(s);
  return splits;
}

SlopeFit fit_log_slope(const std::vector<std::pair<double, double>>& points, double x_from,
                       double x_to) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  SlopeFit fit;
  fit.x_from = x_from;
  fit.x_to = x_to;
  for (const auto& [x, y] : points) {
    if (x < x_from || x > x_to || x <= 0 || y <= 0) continue;
    const double lx = std::log(x), ly = std::log(y);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly;
    ++fit.points;
  }
  const double n = fit.points;
  const double denom = n * sxx - sx * sx;
  if (fit.points < 2 || denom <= 0) {
    fit.points = 0;
    return fit;
  }
  fit.slope = (n * sxy - sx * sy) / denom;
  return fit;
}

WorkbenchData compute_workbench(const WorkbenchParams& params, const ProgressFn& progress) {
  WorkbenchData data;
  data.params = params;
  const int64_t sram_bytes = effective_sram_bytes(params);
  const int64_t e = sim::element_bytes(params.problem.dtype);
  const int64_t d = params.problem.headdim;
  data.crossover_sram_bytes = static_cast<double>(d * d * e);
  try {
    validate_panel_problem(params);
  } catch (const sim::InvalidInput& invalid) {
    data.problem_error = error_message(invalid);
    data.skipped.push_back(data.problem_error);
    return data;
  }

  std::vector<Job> jobs;
  const auto blocks = sweep_blocks(params);
  for (const sim::Algo algo : params.algos) {
    int64_t limit = 0;
    for (const int64_t block : blocks) {
      // Standard attention ignores the tiling: one configuration, drawn flat across x.
      sim::Config config = current_config(params, algo);
      if (algo != sim::Algo::standard) {
        const sim::Tiling t = sweep_tiling(params, algo, block);
        config = config_of(params, algo, sram_bytes, {sim::TilingSource::rule, t.block_r, t.block_c});
      }
      // Standard attention has no tiles to fit: it stays (flat) when M is smaller than d.
      if (algo != sim::Algo::standard && !sim::tiling_fits(config.problem, config.tiling, config.sram_bytes)) continue;
      limit = block;
      jobs.push_back({&data.block_rows, static_cast<double>(block), config, true, &data.block_roofline_rows});
    }
    data.block_fit_limit.emplace_back(algo, limit);
    for (const int64_t n : scaling_seqlens(params)) {
      WorkbenchParams p = params;
      p.problem = scaling_problem(params, n);
      const sim::Config config = config_of(p, algo, sram_bytes, {});  // the rule's tiling
      jobs.push_back({&data.seqlen_rows, static_cast<double>(n), config, false});
    }
    for (const int64_t m : scaling_sram_bytes(params)) {
      const sim::Config config = config_of(params, algo, m, {});  // the rule's tiling for each M
      jobs.push_back({&data.sram_rows, static_cast<double>(m), config, true});
    }
  }
  for (const int64_t s : scaling_splits(params)) {
    sim::Config config = current_config(params, sim::Algo::flash2);
    config.splits = s;  // S <= Tc: as asked, not resolved
    jobs.push_back({&data.splits_rows, static_cast<double>(s), config, false});
  }
  const int total = static_cast<int>(jobs.size() + params.algos.size());
  int done = 0;
  // The configurations are independent: every core computes some (each into its own rows), then
  // they join in job order, so the rows are the same as one after another.
  std::vector<std::vector<PlotRow>> rows(jobs.size()), roofline_rows(jobs.size());
  std::vector<std::string> why(jobs.size());
  const bool complete = sim::parallel_for(static_cast<int>(jobs.size()), [&](int k) {
    Job job = jobs[static_cast<size_t>(k)];
    job.into = &rows[static_cast<size_t>(k)];
    if (job.roofline_into) job.roofline_into = &roofline_rows[static_cast<size_t>(k)];
    why[static_cast<size_t>(k)] = run_job(job);
  }, progress ? ProgressFn([&](int d, int) { return progress(d, total); }) : ProgressFn{});
  if (!complete) return data;
  for (size_t k = 0; k < jobs.size(); ++k) {
    for (PlotRow& r : rows[k]) jobs[k].into->push_back(std::move(r));
    if (jobs[k].roofline_into)
      for (PlotRow& r : roofline_rows[k]) jobs[k].roofline_into->push_back(std::move(r));
    if (!why[k].empty() && jobs[k].into == &data.block_rows) data.skipped.push_back(why[k]);
  }
  done = static_cast<int>(jobs.size());

  // Breakdown at the panel's current tiling.
  for (const sim::Algo algo : params.algos) {
    if (progress && !progress(done, total)) return data;
    ++done;
    try {
      const sim::SimResult result =
          sim::simulate(current_config(params, algo), sim::CountMethod::formula);
      data.breakdown.push_back({algo, result.total});
      for (auto& row : sim::rows_from_result(result)) data.breakdown_rows.push_back(row);
    } catch (const std::exception& ex) {
      data.skipped.push_back(sim::to_string(algo) + " (breakdown): " + error_message(ex));
    }
  }
  // What packing saves: flash2's Config with the box unticked (the padded layout, the lengths as
  // key padding), counted by sim like every other bar.
  if (packs_sequences(params) && params.shows(sim::Algo::flash2)) {
    WorkbenchParams padded = params;
    padded.varlen = false;
    try {
      const sim::SimResult result = sim::simulate(current_config(padded, sim::Algo::flash2), sim::CountMethod::formula);
      data.breakdown.push_back({sim::Algo::flash2, result.total, true});
      for (auto& row : sim::rows_from_result(result)) data.breakdown_rows.push_back(row);
    } catch (const std::exception& ex) {
      data.skipped.push_back("flash2 padded (breakdown): " + error_message(ex));
    }
  }

  // Theorem 2's slopes: 2 in N (1 in Nk at a fixed N: its Nq·Nk·d²/M) once Tr (or Tc) ≫ 1, so
  // fit the four largest; −1 in M while the re-read term Nq·Nk·d²/M dominates the compulsory
  // (Nq + Nk)·d, so fit M from 4d up to min(Nq, Nk)·d/8 elements.
  const auto seqlens = scaling_seqlens(params);
  const double n_from = seqlens.size() >= 4 ? static_cast<double>(seqlens[seqlens.size() - 4])
                                            : (seqlens.empty() ? 0.0 : static_cast<double>(seqlens.front()));
  const double n_to = seqlens.empty() ? 0.0 : static_cast<double>(seqlens.back());
  const double m_from = static_cast<double>(4 * d * e);
  const double m_to = static_cast<double>(std::min(params.problem.seqlen, params.problem.keys()) * d * e) / 8.0;
  for (const sim::Algo algo : params.algos) {
    SlopeFit n_fit = fit_log_slope(io_points(data.seqlen_rows, algo), n_from, n_to);
    n_fit.algo = algo;
    data.seqlen_fits.push_back(n_fit);
    SlopeFit m_fit = fit_log_slope(io_points(data.sram_rows, algo), m_from, m_to);
    m_fit.algo = algo;
    data.sram_fits.push_back(m_fit);
  }
  if (progress) progress(total, total);
  return data;
}

}  // namespace flashio::gui
