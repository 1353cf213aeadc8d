// flashio validate: profile the CUDA kernels, predict exactly the tilings that ran, and compare,
// in one command (CUDA builds; needs a GPU). For every configuration of the sweep the Profiler
// measures the kernels (as `flashio profile`), the model predicts the same configuration — the
// same Config, so the same tilings: the built kernels' defaults of each pass under --tiling
// kernel (the default), the rule's or the given one otherwise — by --count (default cache, the
// L2 model), and the rows are joined and reported as `flashio compare` reports them.
#include <string>

#include "experiments/comparison.h"
#include "experiments/profiling.h"
#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "profiler/profile_run.h"
#include "sim/errors.h"
#include "sim/row.h"
#include "sim/simulate.h"

namespace flashio::cli {
namespace {

// Writes rows to a file given by `option` (csv), through a temporary file renamed on success.
void write_rows_file(const std::string& option, const std::string& path, const std::vector<sim::Row>& rows,
                     std::ostream& standard_output) {
  OutputTarget target(path, standard_output, option);
  target.stream() << sim::csv_header() << '\n';
  for (const sim::Row& r : rows) target.stream() << sim::to_csv_line(r) << '\n';
  target.commit();
}

std::string given(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::string>() : std::string();
}

int run_validate(Invocation& inv) {
  const profiler::ProfileOptions options = read_profile_options(inv);
  if (inv.sweep.count == sim::CountMethod::execute)
    throw UsageError("--count execute is for tiny shapes on the CPU; validate predicts by formula, walk or cache");
  const std::string measured_out = given(inv.options, "measured-out");
  const std::string predicted_out = given(inv.options, "predicted-out");
  for (const std::string& path : {measured_out, predicted_out})
    if (!path.empty() && path == inv.output.out_path)
      throw UsageError("--measured-out / --predicted-out '" + path + "' is also --out");
  if (!measured_out.empty() && measured_out == predicted_out)
    throw UsageError("--measured-out and --predicted-out name the same file '" + measured_out + "'");

  const std::unique_ptr<profiler::Profiler> profiler = make_profiler();

  std::vector<sim::Row> measured, predicted;
  run_sweep(
      inv.sweep,
      [&](const sim::Config& c) {
        // The model first: a configuration it refuses is skipped before the GPU runs it.
        const std::vector<sim::Row> model = sim::rows_from_result(sim::simulate(c, inv.sweep.count));
        const std::vector<sim::Row> rows = profile_rows(*profiler, c, options);
        // The tiling the kernels ran is the one the model counted (profiler/kernel_bridge.h).
        if (c.algo != sim::Algo::standard && !rows.empty() &&
            (rows.back().block_r != model.back().block_r || rows.back().block_c != model.back().block_c))
          throw std::logic_error("validate: the kernels ran another tiling than the model predicts");
        measured.insert(measured.end(), rows.begin(), rows.end());
        predicted.insert(predicted.end(), model.begin(), model.end());
      },
      *inv.err, inv.progress, "kernel configurations");

  int unmatched = 0;
  const std::vector<Joined> joined = join_rows(predicted, measured, unmatched);
  if (joined.empty()) throw UsageError("validate: no measured row to compare (nothing ran)");
  if (!measured_out.empty()) write_rows_file("--measured-out", measured_out, measured, *inv.out);
  if (!predicted_out.empty()) write_rows_file("--predicted-out", predicted_out, predicted, *inv.out);
  auto target = inv.open_output();
  write_comparison(inv.output, inv.context(), target->stream(), joined);
  target->commit();
  if (inv.output.format != Format::table) *inv.err << comparison_summary(joined);
  if (unmatched > 0) *inv.err << "flashio validate: " << unmatched << " measured rows had no predicted row\n";
  report_profiler_notes(*profiler, *inv.err, "flashio validate");
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "validate",
    .summary = "profile the CUDA kernels, predict the tilings that ran, compare (needs a GPU)",
    .order = 50,
    .defaults = {.algo = "flash2", .hw = "h200", .count = "cache", .tiling = "kernel"},
    .add_options =
        [](po::options_description& o) {
          add_profile_options(o);
          o.add_options()(
              "measured-out", po::value<std::string>(), "also write the measured rows (csv) to FILE")(
              "predicted-out", po::value<std::string>(), "also write the predicted rows (csv) to FILE");
        },
    .run = run_validate,
});

}  // namespace
}  // namespace flashio::cli
