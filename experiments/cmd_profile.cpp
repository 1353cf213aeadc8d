// flashio profile: run our CUDA kernels on the GPU and read their counters through CUPTI
// (profiler/profile_run.h): source=measured rows, one per kernel and a total per configuration,
// in the model's row schema, so `flashio compare` can join them with `flashio simulate`.
#include <string>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "profiler/profile_run.h"
#include "profiler/profiler_error.h"
#include "sim/errors.h"
#include "sim/row.h"

namespace flashio::cli {
namespace {

TableNotes profile_notes(const std::vector<std::string>& profiler_notes) {
  TableNotes notes;
  notes.lines = {
      "io: l1tex__m_xbar2l1tex_read_bytes / l1tex__m_l1tex2xbar_write_bytes, bytes between the "
      "SMs and the memory system counted per SM (cp.async loads, stores and dQ's reductions "
      "included), each kernel launched alone after an L2 flush (docs/profiler.md).",
      "dram: dram__bytes_read / dram__bytes_write; writes include what the kernel left dirty in "
      "the L2, written back while a following flush evicts it.",
      "tensor FLOPs: sm__inst_executed_pipe_tensor_op_hmma × 4096 (mma.sync m16n8k16); exp and "
      "other: XU and FMA pipe warp instructions × 32 (upper bounds).",
      "time: per kernel, the median of --repeats CUDA-event timings each after an L2 flush; "
      "total, the whole pass timed the same way (profiler::time_pass). FLOPs and TFLOP/s: the "
      "field's convention 4·B·H·N²·d forward, 2.5× backward, halved when causal.",
  };
  for (const auto& n : profiler_notes) notes.lines.push_back(n);
  return notes;
}

int run_profile(Invocation& inv) {
  const int repeats = inv.options["repeats"].as<int>();
  const int warmup = inv.options["warmup"].as<int>();
  if (repeats != 0 && repeats < 10)
    throw UsageError("--repeats must be 0 (counters only) or at least 10 (got " +
                     std::to_string(repeats) + ")");
  if (warmup < 0) throw UsageError("--warmup must be >= 0 (got " + std::to_string(warmup) + ")");
  for (sim::Algo a : inv.sweep.algos)
    if (a == sim::Algo::blocksparse)
      throw UsageError("--algo blocksparse has no CUDA kernel; profile runs standard, flash1, flash2");

  profiler::ProfileOptions options;
  options.repeats = repeats;
  options.warmup = warmup;
  options.seed = inv.options["seed"].as<uint64_t>();
  options.explicit_tiling = !inv.sweep.block_rs.empty() || !inv.sweep.block_cs.empty();

  // The profiler is set up before any output exists: no GPU, missing privileges or a CUPTI
  // client already attached end the run with one line and no file.
  std::unique_ptr<profiler::Profiler> profiler;
  try {
    profiler = std::make_unique<profiler::Profiler>();
  } catch (const profiler::ProfilerError& e) {
    if (e.is_usage()) throw UsageError(e.what());
    throw;
  }

  auto target = inv.open_output();
  auto writer = make_row_writer(inv.output, target->stream(), inv.context(),
                                profile_notes(profiler->notes()));
  run_sweep(
      inv.sweep,
      [&](const sim::Config& c) {
        try {
          for (const sim::Row& row : profiler->profile(c, options)) writer->write(row);
        } catch (const profiler::ProfilerError& e) {
          if (e.is_usage()) throw UsageError(e.what());
          throw;
        }
      },
      *inv.err, inv.progress, "kernel configurations");
  writer->finish();
  target->commit();
  for (const auto& note : profiler->notes())
    if (note.find("launches for") != std::string::npos || note.find("not available") != std::string::npos ||
        note.find("back to back") != std::string::npos ||
        note.rfind("occupancy", 0) == 0)
      *inv.err << "flashio profile: " << note << '\n';
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "profile",
    .summary = "run the CUDA kernels and measure io, dram, FLOPs and time with CUPTI (needs a GPU)",
    .order = 45,
    .defaults = {.algo = "flash2", .hw = "h200"},
    .add_options =
        [](po::options_description& o) {
          o.add_options()("repeats", po::value<int>()->default_value(10),
                          "timed runs per kernel and per pass (median; >= 10, or 0 for counters only)")(
              "warmup", po::value<int>()->default_value(3), "untimed runs before timing")(
              "seed", po::value<uint64_t>()->default_value(1), "seed of the random inputs");
        },
    .run = run_profile,
});

}  // namespace
}  // namespace flashio::cli
