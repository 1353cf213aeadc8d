// flashio bench: time our CUDA kernels on the GPU (no CUPTI, so it can run under ncu) and write
// source=measured rows: CUDA events, warm-up, median of >= 10 runs, the L2 flushed before each
// run (profiler::time_pass, the one timer; docs/profiler.md). FLOPs by the field's convention
// (sim::convention_flops).
#include <cstdio>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "kernels/attention.h"
#include "profiler/kernel_bridge.h"
#include "profiler/l2_flush.h"
#include "profiler/pass_timer.h"
#include "sim/errors.h"
#include "sim/kernel_choice.h"
#include "sim/problem.h"
#include "sim/row.h"

namespace flashio::cli {
namespace {

int run_bench(Invocation& inv) {
  const int repeats = inv.options["repeats"].as<int>();
  const int warmup = inv.options["warmup"].as<int>();
  if (repeats < 10) throw UsageError("--repeats must be at least 10 (got " + std::to_string(repeats) + ")");
  if (warmup < 0) throw UsageError("--warmup must be >= 0");
  if (!kernels::gpu_available())
    throw UsageError("no usable CUDA GPU found; flashio bench needs one (run it on the GPU machine)");
  const uint64_t seed = read_seed(inv.options);

  auto target = inv.open_output();
  TableNotes notes;
  notes.lines = {
      "time: median of --repeats CUDA-event timings after --warmup runs, each run after an L2 "
      "flush (a read of 4x the L2: cold L2, no dirty lines); bwd times the backward alone.",
      "FLOPs: the field's convention 4·B·H·Nq·Nk·d forward, 2.5x backward; causal keeps Nq·Nk − Nq²/2 of the scores (half at Nq = Nk), a window or a block mask the scores it keeps; "
      "TFLOP/s = FLOPs / time."};
  auto writer = make_row_writer(inv.output, target->stream(), inv.context(), notes);
  profiler::L2Flush flush;
  run_sweep(
      inv.sweep,
      [&](const sim::Config& c) {
        // A family the forward lacks is sim's to refuse, naming --kernel, as simulate does.
        sim::validate_kernel_impl(c);
        try {
          const kernels::AttentionConfig k = profiler::kernel_config(c);
          kernels::AttentionRun run(k);
          run.fill_inputs(seed);
          const kernels::Pass pass = profiler::to_kernels(c.problem.pass);
          profiler::PassTimingOptions opt;
          opt.warmup = warmup;
          opt.repeats = repeats;
          const profiler::Timing t = profiler::time_pass(run, pass, flush, opt);
          sim::Row r = profiler::measured_row(c, pass == kernels::Pass::bwd ? run.backward_entry() : run.forward_entry());
          r.flops = sim::convention_flops(c);
          r.time_ms = t.time_ms;
          r.tflops = *r.flops / (t.time_ms * 1e-3) / 1e12;
          writer->write(r);
        } catch (const std::invalid_argument& ex) {
          // An unsupported kernel configuration is a configuration that cannot exist here.
          throw sim::InvalidInput(ex.what());
        }
      },
      *inv.err, inv.progress, "kernel configurations");
  writer->finish();
  target->commit();
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "bench",
    .summary = "time the CUDA kernels on the GPU (CUDA events, median, cold L2; no CUPTI)",
    .order = 40,
    .defaults = {.algo = "flash2", .hw = "h200", .tiling = "kernel"},
    .add_options =
        [](po::options_description& o) {
          o.add_options()("repeats", po::value<int>()->default_value(20),
                          "timed runs per configuration (median reported; >= 10)")(
              "warmup", po::value<int>()->default_value(3), "untimed runs first")(
              "seed", seed_value()->default_value(1), "seed of the random inputs");
        },
    .run = run_bench,
});

}  // namespace
}  // namespace flashio::cli
