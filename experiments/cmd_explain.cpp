// flashio explain: the tiled algorithm step by step for a tiny problem (teaching;
// experiments/README.md). For flash1 and flash2 forward it prints sim::explain's trace: each
// visited tile with its loads and stores, the byte tally beside standard attention's, and the
// online-softmax statistics of one row (--row). Other algorithms and passes (and --schedule) get
// every transfer of one head's thread blocks as the schedule emits them (sim::build_schedule, the
// steps the walk and the L2 model see), with the tally checked against the closed form. Both
// end with the worked example of docs/paper.md (scores 0, log 3; values 2, 10; output 8), and with
// --explain-wrong what happens when only ℓ, not the output, is rescaled (9; averaging gives 6).
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "sim/explain.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/tensor.h"
#include "sim/tiling.h"

namespace flashio::cli {
namespace {

std::string type_name(const sim::Problem& p, const sim::TensorShape& s) {
  return s.element_bytes == sim::element_bytes(p.dtype) ? sim::to_string(p.dtype) : "fp32";
}

// Prints each step of one thread block and keeps the tally.
class TraceSink : public sim::ScheduleSink {
 public:
  TraceSink(std::ostream& out, const sim::Problem& problem) : out_(out), problem_(problem) {}

  void transfer(const sim::Transfer& t) override {
    const sim::TensorShape shape = sim::tensor_shape(t.tensor, problem_);
    const int64_t bytes = t.rows * t.cols * shape.element_bytes;
    (t.dir == sim::Dir::read ? read_bytes_ : write_bytes_) += bytes;
    char tile[96];
    std::snprintf(tile, sizeof tile, "%s[%lld:%lld, %lld:%lld]", sim::to_string(t.tensor).c_str(),
                  (long long)t.row0, (long long)(t.row0 + t.rows), (long long)t.col0,
                  (long long)(t.col0 + t.cols));
    char line[256];
    std::snprintf(line, sizeof line, "  %4lld  %-6s %-22s %3lld×%-3lld %-4s %7lld B   io so far %lld B",
                  (long long)++steps_, t.dir == sim::Dir::read ? "read" : (t.atomic ? "atomic" : "write"),
                  tile, (long long)t.rows, (long long)t.cols, type_name(problem_, shape).c_str(),
                  (long long)bytes, (long long)(read_bytes_ + write_bytes_));
    out_ << line << '\n';
  }

  void compute(const sim::Flops& f) override {
    flops_ += f;
    char line[160];
    std::snprintf(line, sizeof line, "        compute: %lld tensor FLOPs, %lld exp, %lld other",
                  (long long)f.tensor, (long long)f.exp, (long long)f.other);
    out_ << line << '\n';
  }

  int64_t read_bytes() const { return read_bytes_; }
  int64_t write_bytes() const { return write_bytes_; }
  const sim::Flops& flops() const { return flops_; }

 private:
  std::ostream& out_;
  const sim::Problem& problem_;
  int64_t steps_ = 0, read_bytes_ = 0, write_bytes_ = 0;
  sim::Flops flops_;
};

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
      return "block-sparse FlashAttention: flash2's order over the nonzero tiles of the block mask";
  }
  return "";
}

void print_schedule(std::ostream& out, const sim::Config& c) {
  const sim::Problem& p = c.problem;
  const sim::TileGrid g = sim::tile_grid(c);
  out << "flashio explain: " << algo_story(c.algo) << "\n";
  out << "problem: B = " << p.batch << ", H = " << p.heads << ", N = " << p.seqlen
      << ", d = " << p.headdim << ", " << sim::to_string(p.dtype) << ", " << sim::to_string(p.pass)
      << (p.causal ? ", causal" : "") << "\n";
  if (c.algo != sim::Algo::standard) {
    out << "M = " << format_size(c.sram_bytes) << " = " << sim::sram_elements(p, c.sram_bytes)
        << " elements; tiles Br = " << g.br << ", Bc = " << g.bc << " (Tr = " << g.tr
        << " row tiles of Q, Tc = " << g.tc << " tiles of K, V; edge tiles move only their rows)"
        << "\n";
    out << "fit: (2·Br + 2·Bc)·d = " << sim::tile_footprint_elements(p, c.tiling)
        << " elements of SRAM for the Q, K, V, O tiles ≤ M\n";
  }
  const auto closed = sim::closed_form_counts(c);
  const auto kernels = sim::build_schedule(c);
  for (size_t k = 0; k < kernels.size(); ++k) {
    const sim::KernelSchedule& ks = kernels[k];
    out << "\nkernel " << ks.name << ": " << ks.blocks_per_head << " thread block"
        << (ks.blocks_per_head == 1 ? "" : "s") << " per head, " << ks.heads
        << " head(s); every head runs the same steps, head 0 shown\n";
    out << "  step  what   tile                     rows×cols type   bytes\n";
    TraceSink sink(out, p);
    for (int64_t block = 0; block < ks.blocks_per_head; ++block) {
      if (ks.blocks_per_head > 1) out << "  thread block " << block << ":\n";
      ks.emit_block(0, block, sink);
    }
    const int64_t heads = ks.heads;
    out << "  one head: read " << sink.read_bytes() << " B, write " << sink.write_bytes()
        << " B; all " << heads << " head(s): read " << sink.read_bytes() * heads << " B, write "
        << sink.write_bytes() * heads << " B\n";
    if (k < closed.size() && closed[k].name == ks.name) {
      const bool agree = closed[k].counts.io_read_bytes() == sink.read_bytes() * heads &&
                         closed[k].counts.io_write_bytes() == sink.write_bytes() * heads;
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
  sim::Config c = sim::make_config(sim::Algo::flash1, p, hw);
  c.tiling = {1, 1};
  c.sram_bytes = sim::tile_footprint_elements(p, c.tiling) * sim::element_bytes(p.dtype);
  sim::HeadTensors in;
  in.q = sim::Matrix::Constant(2, 1, 1.0);
  in.k.resize(2, 1);
  in.k << 0.0, std::log(3.0);
  in.v.resize(2, 1);
  in.v << 2.0, 10.0;
  const sim::ExplainTrace t = sim::explain(c, in, /*tracked_row=*/0);

  char line[240];
  out << "\nThe paper's worked example: one row, scores (0, log 3), values (2, 10), one score per "
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
  const auto& o = inv.options;
  const bool show_wrong = o.count("explain-wrong") && o["explain-wrong"].as<bool>();
  const bool raw_schedule = o.count("schedule") && o["schedule"].as<bool>();
  sim::ExplainOptions options;
  if (o.count("row")) options.tracked_row = o["row"].as<int64_t>();
  if (o.count("seed")) options.seed = o["seed"].as<uint64_t>();
  std::ostream& out = *inv.out;
  run_sweep(
      s,
      [&](const sim::Config& config) {
        sim::validate(config);
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
  // A head small enough to read: N = 10 is not a multiple of the 4 × 4 tiles that M = 64
  // fp16 elements gives by the paper's rule, so the edge tiles show.
  d.algo = "flash1";
  d.batch = "1";
  d.heads = "1";
  d.seqlen = "10";
  d.headdim = "4";
  d.sram = "128B";
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
              ("seed", po::value<uint64_t>(), "seed of the random Q, K, V [1]")
              ("schedule", po::bool_switch(), "print the schedule's transfers per thread block "
                                              "(what standard, blocksparse and backward get)")
              ("explain-wrong", po::bool_switch(),
               "also show what goes wrong when only ℓ, not the output, is rescaled");
        },
    .run = run_explain,
});

}  // namespace
}  // namespace flashio::cli
