// flashio profile: run our CUDA kernels on the GPU and read their counters through CUPTI
// (profiler/profile_run.h): source=measured rows, one per kernel and a total per configuration,
// in the model's row schema, so `flashio compare` can join them with `flashio simulate`.
#include <algorithm>
#include <string>
#include <tuple>

#include "experiments/profiling.h"

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "profiler/profile_run.h"
#include "profiler/profiler_error.h"
#include "sim/errors.h"
#include "sim/kernel_choice.h"
#include "sim/row.h"

namespace flashio::cli {
namespace {

}  // namespace

TableNotes profile_notes(const std::vector<profiler::Profiler::Note>& profiler_notes) {
  TableNotes notes;
  notes.lines = {
      "io: l1tex__m_xbar2l1tex_read_bytes / l1tex__m_l1tex2xbar_write_bytes, bytes between the "
      "SMs and the memory system counted per SM (cp.async loads, stores and dQ's reductions "
      "included), each kernel launched alone after an L2 flush (docs/profiler.md).",
      "dram: dram__bytes_read / dram__bytes_write; writes include what the kernel left dirty in "
      "the L2, written back while a following flush evicts it.",
      "tensor FLOPs: sm__ops_path_tensor_src_fp16 + _src_bf16_dst_fp32 + _src_tf32_dst_fp32 "
      "(two per multiply-add; where none answers, sm__inst_executed_pipe_tensor_op_hmma × 4096, "
      "mma.sync m16n8k16, for a kernel without wgmma); exp and other: XU and FMA pipe warp "
      "instructions × 32 (upper bounds).",
      "time: per kernel, the median of --repeats CUDA-event timings each after an L2 flush; "
      "total, the whole pass timed the same way (profiler::time_pass). FLOPs and TFLOP/s: the "
      "field's convention 4·B·H·Nq·Nk·d forward, 2.5× backward; causal keeps Nq·Nk − Nq²/2 of the scores (half at Nq = Nk).",
  };
  for (const auto& n : profiler_notes) notes.lines.push_back(n.text);
  return notes;
}

void report_profiler_notes(const profiler::Profiler& p, std::ostream& err, const std::string& who) {
  for (const auto& note : p.notes())
    if (note.kind != profiler::Profiler::Note::Kind::setup) err << who << ": " << note.text << '\n';
}

void write_occupancy(const profiler::Profiler& p, const std::string& path, std::ostream& standard_output) {
  std::vector<sim::MeasuredOccupancy> rows = p.occupancy();
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(a.hw, a.kernel, a.headdim, a.dtype, a.tiling.block_r, a.tiling.block_c) <
           std::tie(b.hw, b.kernel, b.headdim, b.dtype, b.tiling.block_r, b.tiling.block_c);
  });
  OutputTarget target(path, standard_output, "--occupancy-out");
  std::ostream& out = target.stream();
  out << "# blocks per SM of each kernel, from the driver's occupancy calculator on the captured "
         "launches (flashio profile --occupancy-out)\n"
      << sim::occupancy_csv_header() << '\n';
  for (const auto& o : rows)
    out << o.hw << ',' << o.kernel << ',' << o.headdim << ',' << sim::to_string(o.dtype) << ','
        << o.tiling.block_r << ',' << o.tiling.block_c << ',' << o.blocks_per_sm << '\n';
  target.commit();
}

void add_profile_options(po::options_description& o) {
  o.add_options()("repeats", po::value<int>()->default_value(10),
                  "timed runs per kernel and per pass (median; >= 10, or 0 for counters only)")(
      "warmup", po::value<int>()->default_value(3), "untimed runs before timing")(
      "seed", seed_value()->default_value(1), "seed of the random inputs");
}

profiler::ProfileOptions read_profile_options(const Invocation& inv) {
  profiler::ProfileOptions options;
  options.repeats = inv.options["repeats"].as<int>();
  options.warmup = inv.options["warmup"].as<int>();
  options.seed = read_seed(inv.options);
  if (options.repeats != 0 && options.repeats < 10)
    throw UsageError("--repeats must be 0 (counters only) or at least 10 (got " + std::to_string(options.repeats) + ")");
  if (options.warmup < 0) throw UsageError("--warmup must be >= 0 (got " + std::to_string(options.warmup) + ")");
  return options;
}

std::unique_ptr<profiler::Profiler> make_profiler() {
  try {
    return std::make_unique<profiler::Profiler>();
  } catch (const profiler::ProfilerError& e) {
    if (e.is_usage()) throw UsageError(e.what());
    throw;
  }
}

std::vector<sim::Row> profile_rows(profiler::Profiler& p, const sim::Config& c, const profiler::ProfileOptions& options) {
  // A family the forward lacks is sim's to refuse, naming --kernel, as simulate does.
  sim::validate_kernel_impl(c);
  try {
    return p.profile(c, options);
  } catch (const profiler::ProfilerError& e) {
    if (e.is_usage()) throw UsageError(e.what());
    throw;
  }
}

namespace {

int run_profile(Invocation& inv) {
  const profiler::ProfileOptions options = read_profile_options(inv);
  const std::string occupancy_out =
      inv.options.count("occupancy-out") ? inv.options["occupancy-out"].as<std::string>() : "";
  if (!occupancy_out.empty() && occupancy_out == inv.output.out_path)
    throw UsageError("--occupancy-out and --out name the same file '" + occupancy_out + "'");
  const std::unique_ptr<profiler::Profiler> profiler = make_profiler();

  auto target = inv.open_output();
  auto writer = make_row_writer(inv.output, target->stream(), inv.context(),
                                profile_notes(profiler->notes()));
  run_sweep(
      inv.sweep,
      [&](const sim::Config& c) {
        for (const sim::Row& row : profile_rows(*profiler, c, options)) writer->write(row);
      },
      *inv.err, inv.progress, "kernel configurations");
  writer->finish();
  if (!occupancy_out.empty()) write_occupancy(*profiler, occupancy_out, *inv.out);
  target->commit();
  report_profiler_notes(*profiler, *inv.err, "flashio profile");
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "profile",
    .summary = "run the CUDA kernels and measure io, dram, FLOPs and time with CUPTI (needs a GPU)",
    .order = 45,
    .defaults = {.algo = "flash2", .hw = "h200", .tiling = "kernel"},
    .add_options =
        [](po::options_description& o) {
          add_profile_options(o);
          o.add_options()(
              "occupancy-out", po::value<std::string>(),
              "also write the blocks per SM of every kernel profiled to FILE, in the format of the "
              "model's occupancy data (sim/data/h200_occupancy.csv, which the L2 model reads)");
        },
    .run = run_profile,
});

}  // namespace
}  // namespace flashio::cli
