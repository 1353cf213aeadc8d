// flashio compare: join predicted rows (simulate: source=model or cache) with measured rows
// (profile: source=measured) on the key columns other than `source`, and report per row and in a
// summary the relative error (predicted − measured) / measured of io (read + write), dram (read
// + write), the executed tensor FLOPs and the time. The validation targets (docs/profiler.md,
// "flashio compare"), on kernel=total rows of flash1/flash2: io ±2 %, dram ±5 %, flops_tensor ±1 %;
// standard: dram ±5 %.
#include <fstream>
#include <sstream>

#include "experiments/comparison.h"
#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "sim/errors.h"
#include "sim/row.h"
#include "sim/text_file.h"

namespace flashio::cli {
namespace {

std::vector<sim::Row> read_rows(const std::string& option, const std::string& path) {
  const sim::TextFile file = sim::read_text_file(path, sim::kMaxRowsFileBytes);
  if (!file.problem.empty())
    throw UsageError("--" + option + " '" + path + "' " + file.problem + "; expected a csv file of rows");
  std::istringstream in(file.text);
  return sim::read_rows_csv(in, "--" + option + " " + path);
}

int run_compare(Invocation& inv) {
  if (!inv.options.count("predicted") || !inv.options.count("measured"))
    throw UsageError("needs two CSV files: PREDICTED (rows of flashio simulate) and MEASURED (rows "
                     "of flashio profile), as arguments or as --predicted and --measured");
  const std::string pred_path = inv.options["predicted"].as<std::string>();
  const std::string meas_path = inv.options["measured"].as<std::string>();
  const std::vector<sim::Row> predicted = read_rows("predicted", pred_path);
  const std::vector<sim::Row> measured = read_rows("measured", meas_path);

  int unmatched = 0;
  const std::vector<Joined> joined = join_rows(predicted, measured, unmatched);
  if (joined.empty())
    throw UsageError("no row of --measured " + meas_path + " matches a row of --predicted " +
                     pred_path + " on the key columns (algo, pass, kernel, shape, dtype, causal, "
                     "sram_bytes, block_r, block_c, hw, ...); profile runs the built kernels' tilings: simulate "
                     "with --tiling kernel (or the --block-r/--block-c profile ran), or use flashio validate");

  auto target = inv.open_output();
  write_comparison(inv.output, inv.context(), target->stream(), joined);
  target->commit();
  if (inv.output.format != Format::table) *inv.err << comparison_summary(joined);
  if (unmatched > 0)
    *inv.err << "flashio compare: " << unmatched << " measured rows had no predicted row\n";
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "compare",
    .summary = "join predicted and measured rows; relative error of io, dram, tensor FLOPs, time",
    .order = 60,
    .takes_sweep = false,
    .add_options =
        [](po::options_description& o) {
          o.add_options()("predicted", po::value<std::string>(),
                          "CSV rows of flashio simulate (source=model or cache)")(
              "measured", po::value<std::string>(), "CSV rows of flashio profile (source=measured)");
        },
    .run = run_compare,
    .positional = {"predicted", "measured"},
});

}  // namespace
}  // namespace flashio::cli
