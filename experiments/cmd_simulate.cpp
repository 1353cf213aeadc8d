// flashio simulate: the model's counts for every configuration of the sweep, as source=model
// rows (sim::rows_from_result: one per kernel and a kernel=total row per configuration).
#include <algorithm>
#include <cstdio>
#include <set>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "sim/row.h"
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

// How each number in the table is computed (STYLE.md: every number says how it was computed).
TableNotes simulate_notes(const SweepSpec& sweep) {
  TableNotes notes;
  notes.lines = {
      "FLOPs: the field's convention 4·B·H·N²·d forward, 2.5× that backward, halved when causal; "
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
    char line[320];
    std::snprintf(line, sizeof line,
                  "time (%s): roofline per kernel, max(%s / %.2f TB/s, tensor FLOPs / %.0f "
                  "TFLOP/s, exp and other FLOPs on SFU and CUDA cores), summed over kernels%s",
                  hw.name.c_str(), cache ? "dram" : "io", hw.hbm_bytes_per_s / 1e12,
                  hw.tensor_flops_per_s / 1e12,
                  cache ? "." : "; every access assumed to reach HBM (no L2).");
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

int run_simulate(Invocation& inv) {
  auto target = inv.open_output();
  auto writer = make_row_writer(inv.output, target->stream(), inv.context(),
                                simulate_notes(inv.sweep));
  const sim::CountMethod method = inv.sweep.count;
  run_sweep(
      inv.sweep,
      [&](const sim::Config& config) {
        for (const sim::Row& row : sim::rows_from_result(sim::simulate(config, method)))
          writer->write(row);
      },
      *inv.err, inv.progress);
  writer->finish();
  target->commit();
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "simulate",
    .summary = "predict bytes, FLOPs, extra memory and time for one or many configurations",
    .order = 10,
    .run = run_simulate,
});

}  // namespace
}  // namespace flashio::cli
