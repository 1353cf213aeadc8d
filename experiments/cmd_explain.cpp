// flashio explain: the tiled algorithm step by step for a tiny problem (teaching;
// experiments/README.md). For flash1 and flash2 forward it prints sim::explain's trace: each
// visited tile with its loads and stores, the byte tally beside standard attention's, and the
// online-softmax statistics of one row (--row). Other algorithms and passes (and --schedule)
// get every transfer and compute of one head's thread blocks in program order, with the tally
// checked against the closed form. Both render the same steps, sim::tile_steps (the
// schedule's own transfers, the ones the walk and the L2 model see). Both end with the
// worked example of docs/paper.md (scores 0, log 3; values 2, 10; output 8), and with --explain-wrong what
// happens when only ℓ, not the output, is rescaled (9; averaging gives 6).
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "sim/explain.h"
#include "sim/limits.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/tensor.h"
#include "sim/tile_steps.h"
#include "sim/tiling.h"

namespace flashio::cli {
namespace {


// Prints one kernel's tile steps (sim/tile_steps.h) event by event, in program order, with the
// running io of the head.
void print_steps(std::ostream& out, const sim::Problem& problem,
                 const sim::KernelSteps& kernel) {
  int64_t transfers = 0, io_bytes = 0;
  auto print_move = [&](const sim::TileMove& m) {
    const sim::Transfer& t = m.transfer;
    io_bytes += m.bytes;
    char tile[96];
    std::snprintf(tile, sizeof tile, "%s[%lld:%lld, %lld:%lld]", sim::to_string(t.tensor).c_str(),
                  (long long)t.row0, (long long)(t.row0 + t.rows), (long long)t.col0,
                  (long long)(t.col0 + t.cols));
    char line[256];
    const char* what = t.dir == sim::Dir::read ? "read" : (t.atomic ? "atomic" : "write");
    std::snprintf(line, sizeof line,
                  "  %4lld  %-6s %-22s %3lld×%-3lld %-4s %7lld B   io so far %lld B",
                  (long long)++transfers, what, tile, (long long)t.rows, (long long)t.cols,
                  sim::storage_type_name(t.tensor, problem).c_str(), (long long)m.bytes, (long long)io_bytes);
    out << line << '\n';
  };
  auto print_compute = [&](const sim::Flops& f) {
    char line[160];
    std::snprintf(line, sizeof line, "        compute: %lld tensor FLOPs, %lld exp, %lld other",
                  (long long)f.tensor, (long long)f.exp, (long long)f.other);
    out << line << '\n';
  };
  int64_t block = -1;
  for (const sim::TileStep& step : kernel.steps) {
    if (step.thread_block != block && kernel.schedule.blocks_per_head > 1)
      out << "  thread block " << step.thread_block << ":\n";
    block = step.thread_block;
    for (size_t k = 0; k < step.moves_before_compute; ++k) print_move(step.moves[k]);
    for (const sim::Flops& f : step.computes) print_compute(f);
    for (size_t k = step.moves_before_compute; k < step.moves.size(); ++k) print_move(step.moves[k]);
  }
}

std::string algo_story(sim::Algo algo) {
  switch (algo) {
    case sim::Algo::standard:
      return "standard attention: each step its own kernel, S and P written to HBM and read back";
    case sim::Algo::flash1:
      return "FlashAttention (paper Algorithms 1 and 4): K/V loop outside, the running O, ℓ, m "
             "re-read and re-written in HBM";
    case sim::Algo::flash2:
      return "FlashAttention-2: Q loop outside, O kept on chip and written once with the "
             "log-sum-exp";
    case sim::Algo::blocksparse:
      return "block-sparse FlashAttention: flash2's order over the tiles that meet the block mask's nonzero blocks (of 128 x 128 tokens unless the mask ends in @T)";
  }
  return "";
}

void print_schedule(std::ostream& out, const sim::Config& c) {
  const sim::Problem& p = c.problem;
  const sim::TileGrid g = sim::tile_grid(c);
  out << "flashio explain: " << algo_story(c.algo) << "\n";
  out << "problem: B = " << p.batch << ", H = " << p.heads << ", N = " << p.seqlen
      << ", d = " << p.headdim << ", " << sim::to_string(p.dtype) << ", " << sim::to_string(p.pass)
      << sim::band_label(p) << "\n";
  if (c.algo != sim::Algo::standard) {
    out << "M = " << format_size(c.sram_bytes) << " = " << sim::sram_elements(p, c.sram_bytes)
        << " elements; tiles Br = " << g.br << ", Bc = " << g.bc << " (Tr = " << g.tr
        << " row tiles of Q, Tc = " << g.tc << " tiles of K, V; edge tiles move only their rows)"
        << "\n";
    out << "fit: (2·Br + 2·Bc)·d = " << sim::tile_footprint_elements(p, c.tiling)
        << " elements of SRAM for the Q, K, V, O tiles ≤ M\n";
  }
  const auto closed = sim::closed_form_counts(c);
  const auto kernels = sim::tile_steps(c);
  for (size_t k = 0; k < kernels.size(); ++k) {
    const sim::KernelSchedule& ks = kernels[k].schedule;
    const int64_t read_bytes = kernels[k].read_bytes, write_bytes = kernels[k].write_bytes;
    out << "\nkernel " << sim::to_string(ks.kind) << ": " << ks.blocks_per_head << " thread block"
        << (ks.blocks_per_head == 1 ? "" : "s") << " per head, " << ks.heads
        << " head(s); every head runs the same steps, head 0 shown\n";
    out << "  step  what   tile                     rows×cols type   bytes\n";
    print_steps(out, p, kernels[k]);
    const int64_t heads = ks.heads;
    out << "  one head: read " << read_bytes << " B, write " << write_bytes << " B; all " << heads
        << " head(s): read " << read_bytes * heads << " B, write " << write_bytes * heads
        << " B\n";
    if (k < closed.size() && closed[k].kind == ks.kind) {
      const bool agree = closed[k].counts.io_read_bytes() == read_bytes * heads &&
                         closed[k].counts.io_write_bytes() == write_bytes * heads;
      out << "  closed form: read " << closed[k].counts.io_read_bytes() << " B, write "
          << closed[k].counts.io_write_bytes() << " B"
          << (agree ? " (agrees with the steps above)" : " (DIFFERS from the steps above: a bug)")
          << "\n";
    }
  }
}

// The worked example of docs/paper.md ("Worked examples"): one row, scores (0, log 3),
// values (2, 10), one score per block. With d = 1 the scores are q·k, so q = 1 and
// k = (0, log 3). Its numbers come from sim::explain, the same online softmax the trace above
// runs.
void print_worked_example(std::ostream& out, const sim::Hardware& hw, bool show_wrong) {
  sim::Problem p;
  p.batch = 1;
  p.heads = 1;
  p.seqlen = 2;
  p.headdim = 1;
  p.dtype = sim::DType::fp32;
  const sim::Tiling one_by_one{1, 1};  // one score per block
  const sim::Config c =
      sim::make_config(sim::Algo::flash1, p, hw, sim::tile_footprint_elements(p, one_by_one) * sim::element_bytes(p.dtype),
                       {sim::TilingSource::rule, one_by_one.block_r, one_by_one.block_c});
  sim::HeadTensors in;
  in.q = sim::Matrix::Constant(2, 1, 1.0);
  in.k.resize(2, 1);
  in.k << 0.0, std::log(3.0);
  in.v.resize(2, 1);
  in.v << 2.0, 10.0;
  const sim::ExplainTrace t = sim::explain(c, in, /*tracked_row=*/0);

  char line[240];
  out << "\nA worked example of the paper's online softmax (docs/paper.md): one row, scores (0, log 3), values (2, 10), one score per "
         "block.\n  exact: weights 1 : 3, i.e. 1/4 and 3/4; output (1·2 + 3·10)/4 = 8\n";
  int block = 0;
  for (const sim::ExplainStep& step : t.steps) {
    if (!step.tracked_row_in_tile) continue;
    ++block;
    std::snprintf(line, sizeof line, "  block %d: m = %.4f, ℓ = %.4f, output u/ℓ = %.4f%s", block,
                  step.row.m, step.row.l, step.row.output.at(0),
                  step.max_moved ? "  (max moved 0 → log 3: old ℓ and old output × 1/3)" : "");
    out << line << '\n';
    if (show_wrong) {
      std::snprintf(line, sizeof line, "           only ℓ rescaled: ℓ = %.4f, output = %.4f",
                    step.wrong_row.l, step.wrong_row.output.at(0));
      out << line << '\n';
    }
  }
  std::snprintf(line, sizeof line, "  tiled output %.4f (reference %.4f)\n", t.output.at(0),
                t.reference_output.at(0));
  out << line;
  if (!show_wrong) {
    out << "  (--explain-wrong shows what goes wrong when only ℓ, not the output, is rescaled)\n";
    return;
  }
  std::snprintf(line, sizeof line,
                "wrong: only ℓ rescaled gives %.4f, not 8: block 1's output keeps weight 1 while "
                "ℓ counts it as 1/3\n",
                t.wrong_output.at(0));
  out << line;
  // Each one-score block softmaxed on its own has weight 1, so averaging the blocks gives the
  // mean of the values.
  std::snprintf(line, sizeof line,
                "wrong: softmax each block on its own and average: (2 + 10)/2 = %.4f, not 8\n",
                (in.v(0, 0) + in.v(1, 0)) / 2.0);
  out << line;
}

int run_explain(Invocation& inv) {
  const SweepSpec& s = inv.sweep;
  if (s.size() != 1)
    throw UsageError("explain traces one configuration; give single values, not lists or ranges");
  for (int64_t n : s.seqlens)
    if (n > sim::kExplainMaxSeqlen)
      throw UsageError("--seqlen " + std::to_string(n) + ": explain traces a tiny problem, N <= " +
                       std::to_string(sim::kExplainMaxSeqlen) + "; use simulate for larger ones");
  for (int64_t d : s.headdims)
    if (d > sim::kExplainMaxHeaddim)
      throw UsageError("--headdim " + std::to_string(d) + ": explain traces a tiny problem, d <= " +
                       std::to_string(sim::kExplainMaxHeaddim) + "; use simulate for larger ones");
  const auto& o = inv.options;
  const bool show_wrong = o.count("explain-wrong") && o["explain-wrong"].as<bool>();
  const bool raw_schedule = o.count("schedule") && o["schedule"].as<bool>();
  sim::ExplainOptions options;
  if (o.count("row")) options.tracked_row = o["row"].as<int64_t>();
  if (o.count("seed")) options.seed = read_seed(o);
  std::ostream& out = *inv.out;
  run_sweep(
      s,
      [&](const sim::Config& config) {
        sim::validate(config);
        sim::check_counts(config);  // B·H scales the counts printed (sim/limits.h)
        // sim::explain traces flash1 and flash2 forward with the tracked row's numbers; the
        // other algorithms and passes get the schedule's steps.
        const bool traceable = (config.algo == sim::Algo::flash1 || config.algo == sim::Algo::flash2) &&
                               config.problem.pass == sim::Pass::fwd;
        if (traceable && !raw_schedule)
          out << sim::explain_text(sim::explain(config, options));
        else
          print_schedule(out, config);
      },
      *inv.err, false);
  print_worked_example(out, s.hardware.front(), show_wrong);
  out.flush();
  return kExitOk;
}

SweepDefaults explain_defaults() {
  SweepDefaults d;
  // A head small enough to read where the paper's lesson shows: N = 64, d = 16 and M = 4 KiB
  // give flash1 16 × 32 tiles by the paper's rule (8 steps), and it moves 48.75 % of standard
  // attention's bytes (flash2 30.6 %). Smaller problems show FlashAttention moving more, and
  // the text says why (sim::more_than_standard_note).
  d.algo = "flash1";
  d.batch = "1";
  d.heads = "1";
  d.seqlen = "64";
  d.headdim = "16";
  d.sram = "4KiB";
  return d;
}

const SubcommandRegistration registration({
    .name = "explain",
    .summary = "the tiled algorithm step by step for a tiny problem (N <= 64), and the online "
               "softmax",
    .order = 30,
    .takes_output = false,
    .defaults = explain_defaults(),
    .add_options =
        [](po::options_description& o) {
          o.add_options()
              ("row", po::value<int64_t>(), "the row of Q whose online-softmax statistics are "
                                            "shown [0]")
              ("seed", seed_value(), "seed of the random Q, K, V [1]")
              ("schedule", po::bool_switch(), "print the schedule's transfers per thread block "
                                              "(what standard, blocksparse and backward get)")
              ("explain-wrong", po::bool_switch(),
               "also show what goes wrong when only ℓ, not the output, is rescaled");
        },
    .run = run_explain,
});

}  // namespace
}  // namespace flashio::cli
