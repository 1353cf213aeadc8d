// flashio simulate: the model's counts for every configuration of the sweep, as source=model
// rows (source=cache with --count cache; sim::rows_from_result: one per kernel and a
// kernel=total row per configuration).
#include <algorithm>
#include <cstdio>
#include <set>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "sim/row.h"
#include "sim/schedule.h"
#include "sim/simulate.h"

namespace flashio::cli {
namespace {

std::string method_text(sim::CountMethod method) {
  switch (method) {
    case sim::CountMethod::formula: return "by closed-form formulas (equal to walking the schedule)";
    case sim::CountMethod::walk: return "by walking every thread block's schedule";
    case sim::CountMethod::execute:
      return "while running the tiled algorithm numerically on the CPU (equal to the walk)";
    case sim::CountMethod::cache:
      return "by walking the schedule; dram: the bytes that reach HBM when the concurrently "
             "running thread blocks' schedules are replayed through the L2 model (cold L2 per "
             "kernel)";
  }
  return "";
}

// How each number in the table is computed (docs/architecture.md, "Conventions").
TableNotes simulate_notes(const SweepSpec& sweep) {
  TableNotes notes;
  notes.lines = {
      "FLOPs: the field's convention 4·B·H·Nq·Nk·d forward, 2.5× that backward; causal keeps Nq·Nk − Nq²/2 of the scores (half at Nq = Nk); "
      "TFLOP/s = FLOPs / time.",
      "tensor FLOPs: the matrix products the schedule executes (whole tiles; backward's "
      "recomputation of S included).",
      "io: bytes moved between on-chip SRAM and HBM (the paper's HBM accesses, Theorem 2) by each "
      "kernel's tiled schedule (docs/schedules.md), counted " + method_text(sweep.count) + ".",
      "extra memory: HBM needed beyond the inputs and outputs (Theorem 1): standard's N×N "
      "matrices, FlashAttention's O(N) statistics and fp32 accumulators.",
  };
  const bool cache = sweep.count == sim::CountMethod::cache;
  for (const sim::Hardware& hw : sweep.hardware) {
    const bool calibrated = sim::missing_calibration(hw).empty();
    const bool model = sweep.time ? *sweep.time == sim::TimeMethod::model : calibrated;
    char line[480];
    if (model)
      std::snprintf(line, sizeof line,
                    "time (%s): the time model (docs/time_model.md): each kernel's thread blocks' "
                    "tile steps on the rates calibrated on %s, overlapped as the kernel overlaps them, "
                    "over its waves, plus launch costs; memory from %s.",
                    hw.name.c_str(), hw.calibration.calibrated.empty() ? "this hardware" : hw.calibration.calibrated.c_str(),
                    cache ? "the L2 model's dram bytes" : "each touched tensor read and written once (no L2 model)");
    else
      std::snprintf(line, sizeof line,
                    "time (%s): roofline per kernel, max(%s / %.2f TB/s, tensor FLOPs / %.0f "
                    "TFLOP/s, exp and other FLOPs on SFU and CUDA cores), summed over kernels%s%s",
                    hw.name.c_str(), cache ? "dram" : "io", hw.hbm_bytes_per_s / 1e12,
                    hw.tensor_flops_per_s / 1e12,
                    cache ? "." : "; every access assumed to reach HBM (no L2).",
                    sweep.time ? "" : " (no calibration for this hardware: the time model needs one, docs/calibration.md)");
    notes.lines.push_back(line);
  }
  const bool compared = sweep.algos.size() > 1 &&
                        std::count(sweep.algos.begin(), sweep.algos.end(), sim::Algo::standard) > 0;
  if (compared)
    notes.lines.push_back(
        "io ÷ std, speedup: standard attention's io and predicted time over this row's (same "
        "problem).");
  notes.lines.push_back("Every kernel's row, and the exp and other FLOPs: --kernels, or "
                        "--format csv or json.");
  return notes;
}

// --tensors: the bytes of each tensor, read and written, in the type it is stored in (the
// counts behind io_read_bytes and io_write_bytes), one block per configuration.
constexpr int64_t kMaxTensorBlocks = 64;

void print_tensor_breakdown(std::ostream& out, const sim::SimResult& r) {
  const sim::Config& c = r.config;
  out << "\n" << sim::to_string(c.algo) << " " << sim::to_string(c.problem.pass) << "  N="
      << c.problem.seqlen << " d=" << c.problem.headdim << " causal=" << c.problem.causal
      << (c.problem.windowed() ? sim::band_label(c.problem) : "");
  if (c.algo != sim::Algo::standard)
    out << "  Br×Bc=" << c.tiling.block_r << "×" << c.tiling.block_c;
  out << ": bytes per tensor\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-11s %-5s %14s %14s\n", "tensor", "type", "read", "written");
  out << line;
  for (int t = 0; t < sim::kTensorCount; ++t) {
    const auto tensor = static_cast<sim::Tensor>(t);
    const auto& b = r.total.of(tensor);
    if (b.read_bytes == 0 && b.write_bytes == 0) continue;
    const std::string type = sim::storage_type_name(tensor, c.problem);
    std::snprintf(line, sizeof line, "  %-11s %-5s %14s %14s\n", sim::to_string(tensor).c_str(),
                  type.c_str(), format_bytes(static_cast<double>(b.read_bytes)).c_str(),
                  format_bytes(static_cast<double>(b.write_bytes)).c_str());
    out << line;
  }
}

// The rows one configuration adds to the table: its total, and with --kernels every kernel of
// the longest schedule the sweep's algorithms, passes and standard's variants have.
int64_t table_rows_per_config(const SweepSpec& sweep, bool all_kernels) {
  if (!all_kernels) return 1;
  size_t kernels = 0;
  for (sim::Algo algo : sweep.algos)
    for (sim::Pass pass : sweep.passes) {
      sim::Problem p;  // the kernels of a pass depend on these, not on the sizes
      p.batch = p.heads = p.seqlen = p.headdim = 1;
      p.pass = pass;
      p.mask = std::count(sweep.masks.begin(), sweep.masks.end(), 1) > 0;
      p.dropout = std::any_of(sweep.dropouts.begin(), sweep.dropouts.end(), [](double x) { return x > 0; }) ? 0.5 : 0;
      kernels = std::max(kernels, sim::build_schedule(sim::make_config(algo, p, sweep.hardware.front())).size());
    }
  return static_cast<int64_t>(kernels) + 1;
}

int run_simulate(Invocation& inv) {
  const bool tensors = inv.options.count("tensors") > 0;
  if (tensors && inv.output.format != Format::table)
    throw UsageError("--tensors prints a table; allowed only with --format table");
  if (tensors && inv.sweep.size() > kMaxTensorBlocks)
    throw UsageError("--tensors prints one block per configuration; allowed for at most " +
                     std::to_string(kMaxTensorBlocks) + " configurations (this sweep has " +
                     std::to_string(inv.sweep.size()) + ")");
  check_table_size(inv.output, sim::saturating_mul(inv.sweep.size(), table_rows_per_config(inv.sweep, inv.output.all_kernels)));
  auto target = inv.open_output();
  auto writer = make_row_writer(inv.output, target->stream(), inv.context(),
                                simulate_notes(inv.sweep));
  const sim::CountMethod method = inv.sweep.count;
  std::vector<sim::SimResult> kept;  // --tensors only
  run_sweep(
      inv.sweep,
      [&](const sim::Config& config) {
        sim::SimResult result = sim::simulate(config, method, inv.sweep.time);
        for (const sim::Row& row : sim::rows_from_result(result)) writer->write(row);
        if (tensors) kept.push_back(std::move(result));
      },
      *inv.err, inv.progress);
  writer->finish();
  for (const auto& r : kept) print_tensor_breakdown(target->stream(), r);
  target->commit();
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "simulate",
    .summary = "predict bytes, FLOPs, extra memory and time for one or many configurations",
    .order = 10,
    .add_options =
        [](po::options_description& o) {
          o.add_options()("tensors", "also print the bytes read and written per tensor (Q, K, "
                                     "V, O, S, P, statistics, ...) for each configuration");
        },
    .run = run_simulate,
});

}  // namespace
}  // namespace flashio::cli
