// flashio tune: the tiling advisor (sim/tiling_advisor.h). For every configuration of the sweep
// and each pass it runs, the tilings ranked by the calibrated time model's prediction, fastest
// first, marking the built ones and the pipe that bounds each; `--tiling best` runs the fastest
// built one. --block-r / --block-c restrict the candidates (default 16 to 256, and the built).
#include <cstdio>
#include <sstream>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "sim/row.h"
#include "sim/tiling_advisor.h"

namespace flashio::cli {
namespace {

// The key columns of a tune row (the configuration), then the ranking's own.
const std::vector<std::string>& tune_columns() {
  static const std::vector<std::string> c = {"algo",  "pass",   "batch",   "heads",    "seqlen",
                                             "headdim", "dtype", "causal", "sram_bytes", "hw",
                                             "block_mask", "kernel_impl", "rank", "block_r", "block_c", "time_ms",
                                             "built", "bound_by"};
  return c;
}

std::vector<std::string> tune_cells(const sim::Config& c, size_t rank, const sim::RankedTiling& t) {
  char time[40];
  std::snprintf(time, sizeof time, "%.6g", t.time_ms);
  return {sim::to_string(c.algo),
          sim::to_string(c.problem.pass),
          std::to_string(c.problem.batch),
          std::to_string(c.problem.heads),
          std::to_string(c.problem.seqlen),
          std::to_string(c.problem.headdim),
          sim::to_string(c.problem.dtype),
          c.problem.causal ? "1" : "0",
          std::to_string(c.sram_bytes),
          c.hw.name,
          c.block_mask.text,
          c.kernel_impl ? sim::to_string(*c.kernel_impl) : "",  // the family asked (--kernel), or empty
          std::to_string(rank),
          std::to_string(t.tiling.block_r),
          std::to_string(t.tiling.block_c),
          time,
          t.built ? "1" : "0",
          sim::to_string(t.bound_by)};
}

int run_tune(Invocation& inv) {
  if (inv.output.all_kernels) throw UsageError("--kernels does not apply to tune (it ranks whole passes)");
  for (sim::Algo a : inv.sweep.algos)
    if (a == sim::Algo::standard)
      throw UsageError("--algo standard has no tiles to choose (its GEMMs are cuBLAS's); allowed: flash1, flash2, "
                       "blocksparse");
  if (!inv.sweep.time) {
    // The advisor is the time model's: say so at once rather than skipping every configuration.
    for (const sim::Hardware& hw : inv.sweep.hardware) sim::require_calibration(hw);
  } else if (*inv.sweep.time == sim::TimeMethod::roofline) {
    throw UsageError("--time roofline cannot rank tilings (it gives every tiling with the same Br the same "
                     "time); tune uses the time model");
  }
  // The sweep without its tiling lists: the candidates are the advisor's.
  SweepSpec sweep = inv.sweep;
  const std::vector<int64_t> block_rs = sweep.block_rs, block_cs = sweep.block_cs;
  sweep.block_rs.clear();
  sweep.block_cs.clear();
  sweep.tiling = sim::TilingSource::rule;

  auto target = inv.open_output();
  std::ostream& out = target->stream();
  const Format format = inv.output.format;
  nlohmann::json json_rows = nlohmann::json::array();
  if (format == Format::csv) {
    for (size_t i = 0; i < tune_columns().size(); ++i) out << (i ? "," : "") << tune_columns()[i];
    out << '\n';
  }
  run_sweep(
      sweep,
      [&](const sim::Config& config) {
        std::vector<sim::Pass> passes;
        if (sim::has_forward(config.problem.pass)) passes.push_back(sim::Pass::fwd);
        if (sim::has_backward(config.problem.pass)) passes.push_back(sim::Pass::bwd);
        for (sim::Pass pass : passes) {
          const sim::Config c = sim::pass_config(config, pass);
          const std::vector<sim::RankedTiling> ranked = sim::rank_tilings(c, sweep.count, block_rs, block_cs);
          if (ranked.empty()) {
            if (pass == sim::Pass::fwd && c.kernel_impl)  // the family left no candidate (rank_tilings)
              throw sim::InvalidInput(sim::Field::kernel_impl,
                                      "no " + sim::to_string(c.algo) + " fwd kernel on " + sim::to_string(*c.kernel_impl) +
                                          " is built at a tiling that fits M = " + std::to_string(c.sram_bytes) +
                                          " B (built: " + sim::built_tilings_text(sim::built_algo(c.algo), pass) + ")");
            throw sim::InvalidInput(sim::Field::tiling, "no candidate tiling fits M = " + std::to_string(c.sram_bytes) + " B");
          }
          if (format == Format::csv) {
            for (size_t r = 0; r < ranked.size(); ++r) {
              const auto cells = tune_cells(c, r + 1, ranked[r]);
              for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << sim::csv_field(cells[i]);
              out << '\n';
            }
            check_written(out);
          } else if (format == Format::json) {
            for (size_t r = 0; r < ranked.size(); ++r) {
              nlohmann::json o;
              const auto cells = tune_cells(c, r + 1, ranked[r]);
              for (size_t i = 0; i < cells.size(); ++i) o[tune_columns()[i]] = cells[i];
              for (const char* number : {"batch", "heads", "seqlen", "headdim", "causal", "sram_bytes", "rank",
                                         "block_r", "block_c", "built"})
                o[number] = std::stoll(o[number].get<std::string>());
              o["time_ms"] = ranked[r].time_ms;
              json_rows.push_back(o);
            }
          } else {
            char line[240];
            const std::string family =
                pass == sim::Pass::fwd && c.kernel_impl ? ", kernel " + sim::to_string(*c.kernel_impl) : "";
            std::snprintf(line, sizeof line, "\n%s %s  B=%lld H=%lld N=%lld d=%lld %s%s%s on %s (M = %lld B)\n",
                          sim::to_string(c.algo).c_str(), sim::to_string(pass).c_str(),
                          static_cast<long long>(c.problem.batch), static_cast<long long>(c.problem.heads),
                          static_cast<long long>(c.problem.seqlen), static_cast<long long>(c.problem.headdim),
                          sim::to_string(c.problem.dtype).c_str(), c.problem.causal ? " causal" : "", family.c_str(),
                          c.hw.name.c_str(), static_cast<long long>(c.sram_bytes));
            out << line;
            std::snprintf(line, sizeof line, "  %4s  %5s %5s  %12s  %-5s  %s\n", "rank", "Br", "Bc", "time_ms", "built",
                          "bound by");
            out << line;
            const sim::RankedTiling* best_built = nullptr;
            for (size_t r = 0; r < ranked.size(); ++r) {
              const sim::RankedTiling& t = ranked[r];
              if (t.built && !best_built) best_built = &t;
              std::snprintf(line, sizeof line, "  %4zu  %5lld %5lld  %12.6g  %-5s  %s\n", r + 1,
                            static_cast<long long>(t.tiling.block_r), static_cast<long long>(t.tiling.block_c),
                            t.time_ms, t.built ? "yes" : "", sim::to_string(t.bound_by).c_str());
              out << line;
            }
            if (best_built) {
              std::snprintf(line, sizeof line, "  best built: %lld x %lld, bound by %s (--tiling best runs it)\n",
                            static_cast<long long>(best_built->tiling.block_r),
                            static_cast<long long>(best_built->tiling.block_c), sim::to_string(best_built->bound_by).c_str());
              out << line;
            }
            check_written(out);
          }
        }
      },
      *inv.err, inv.progress);
  if (format == Format::json)
    out << nlohmann::json{{"context", context_json(inv.context())}, {"rows", json_rows}}.dump(
               1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  if (format == Format::table)
    out << "\ntime: the time model (docs/time_model.md) on the hardware's calibration; built: a CUDA kernel "
           "of this tiling exists (sim/kernel_catalog.h); bound by: the pipe or cost with the largest term in "
           "the pass's longest kernel.\n";
  target->commit();
  return kExitOk;
}

SweepDefaults tune_defaults() {
  SweepDefaults d;
  d.algo = "flash2";
  return d;
}

const SubcommandRegistration registration({
    .name = "tune",
    .summary = "rank the tilings of each configuration by the calibrated time model (the tiling advisor)",
    .order = 35,
    .defaults = tune_defaults(),
    .run = run_tune,
});

}  // namespace
}  // namespace flashio::cli
