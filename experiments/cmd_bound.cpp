// flashio bound: Theorem 2 (with the schedule's constant), the lower bounds and the tiling the
// paper's rule derives, for given N, d and M (sim/bounds.h). csv and json carry the
// source=bound rows of sim::bound_rows; the table adds the derived tiling, the model's io for
// comparison and which regime of Saha & Ye the configuration sits in.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "sim/bounds.h"
#include "sim/limits.h"
#include "sim/row.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/tiling.h"

namespace flashio::cli {
namespace {

std::string tiling_line(sim::Algo algo, const sim::Problem& p, int64_t sram_bytes) {
  const sim::Tiling t = sim::rule_tiling(algo, p, sram_bytes);
  const int64_t m = sim::sram_elements(p, sram_bytes);
  // Tc over the keys (Nk), Tr over one head's queries (docs/shapes.md).
  const int64_t tr = sim::ceil_div(p.seqlen, t.block_r), tc = sim::ceil_div(p.keys(), t.block_c);
  char line[320];
  if (algo == sim::Algo::flash1)
    std::snprintf(line, sizeof line,
                  "  flash1 (Algorithm 1): Bc = ⌈M/4d⌉ = %lld, Br = min(Bc, d) = %lld; "
                  "Tr = %lld, Tc = %lld",
                  (long long)t.block_c, (long long)t.block_r, (long long)tr, (long long)tc);
  else
    std::snprintf(line, sizeof line,
                  "  %s (transposed rule): Br = ⌈M/4d⌉ = %lld, Bc = min(Br, d) = %lld; "
                  "Tr = %lld, Tc = %lld",
                  sim::to_string(algo).c_str(), (long long)t.block_r, (long long)t.block_c,
                  (long long)tr, (long long)tc);
  std::string text = line;
  if (!sim::tiling_fits(p, t, sram_bytes))
    text += "  (does not fit: (2·Br + 2·Bc)·d > M = " + std::to_string(m) + " elements)";
  return text;
}

// One configuration as a small report: what Theorem 2 says and how the model compares.
void print_report(std::ostream& out, const sim::Config& c) {
  const sim::Problem& p = c.problem;
  const int64_t m = sim::sram_elements(p, c.sram_bytes);
  out << "N = " << p.seqlen << ", d = " << p.headdim << ", M = " << format_size(c.sram_bytes)
      << " = " << m << " " << sim::to_string(p.dtype) << " elements; B·H = " << p.batch_heads()
      << ", " << sim::to_string(p.pass) << sim::band_label(p) << ", hw " << c.hw.name
      << "\n";
  out << "derived tiling (the paper's rule from M):\n"
      << tiling_line(sim::Algo::flash1, p, c.sram_bytes) << "\n"
      << tiling_line(sim::Algo::flash2, p, c.sram_bytes) << "\n";
  out << "bounds (bytes for all B·H heads, in " << sim::to_string(p.dtype) << "):\n";
  for (const sim::Bound& b : sim::bounds(c)) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-15s %10s  (read %s, write %s)",
                  sim::to_string(b.algo).c_str(),
                  format_bytes(b.total_bytes()).c_str(), format_bytes(b.read_bytes).c_str(),
                  format_bytes(b.write_bytes).c_str());
    out << line << "\n      " << b.formula << "\n";
  }
  // The model's io beside the bounds: flash1's follows Theorem 2's N²d²/M (its constant is the
  // schedule's), standard's Θ(Nd + N²) does not depend on M.
  double theorem2_bytes = 0;
  for (const sim::Bound& b : sim::bounds(c))
    if (b.algo == sim::RowAlgo::theorem2) theorem2_bytes = b.total_bytes();
  out << "model io (closed form, the rule's tiling):";
  for (sim::Algo algo : {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2}) {
    const sim::Config mc = sim::make_config(algo, p, c.hw, c.sram_bytes);  // the rule's tiling
    if (!sim::tiling_fits(p, mc.tiling, c.sram_bytes)) continue;
    try {
      sim::validate(mc);      // an algorithm that does not take the problem (key lengths, varlen) has no io here
      sim::check_counts(mc);  // the rule's tiling of another algorithm may pass 64 bits
    } catch (const sim::InvalidInput&) {
      continue;
    }
    double bytes = 0;
    for (const auto& k : sim::closed_form_counts(mc))
      bytes += static_cast<double>(k.counts.io_read_bytes()) + static_cast<double>(k.counts.io_write_bytes());
    out << "  " << sim::to_string(algo) << " " << format_bytes(bytes);
    if (theorem2_bytes > 0 && algo != sim::Algo::standard) {
      char ratio[48];
      std::snprintf(ratio, sizeof ratio, " (%.2f× Theorem 2)", bytes / theorem2_bytes);
      out << ratio;
    }
  }
  out << "\n";
  const double d2 = static_cast<double>(p.headdim) * static_cast<double>(p.headdim);
  if (static_cast<double>(m) >= d2)
    out << "regime: M = " << m << " ≥ d² = " << static_cast<int64_t>(d2)
        << ": large cache, where FlashAttention's N²d²/M is optimal (Saha & Ye)\n";
  else
    out << "regime: M = " << m << " < d² = " << static_cast<int64_t>(d2)
        << ": small cache, where the optimum is N²d/√M (Saha & Ye), below FlashAttention's\n";
  if (m > sim::saturating_mul(p.seqlen, p.headdim))
    out << "note: M > Nd, outside Theorem 2's range d ≤ M ≤ Nd (a whole head fits on chip)\n";
}

int run_bound(Invocation& inv) {
  auto target = inv.open_output();
  std::ostream& out = target->stream();
  if (inv.output.format == Format::table) {
    bool first = true;
    run_sweep(
        inv.sweep,
        [&](const sim::Config& config) {
          sim::validate(config);
          sim::check_counts(config);  // sim/limits.h: B·H and the counts within 64 bits
          // The report shows every algorithm's tiling already: one per problem and M.
          if (config.algo != inv.sweep.algos.front()) return;
          if (!first) out << "\n";
          first = false;
          print_report(out, config);
        },
        *inv.err, inv.progress);
  } else {
    auto writer = make_row_writer(inv.output, out, inv.context());
    run_sweep(
        inv.sweep,
        [&](const sim::Config& config) {
          sim::validate(config);
          sim::check_counts(config);
          for (const sim::Row& row : sim::bound_rows(config)) writer->write(row);
        },
        *inv.err, inv.progress);
    writer->finish();
  }
  target->commit();
  return kExitOk;
}

SweepDefaults bound_defaults() {
  SweepDefaults d;
  d.algo = "flash1";  // Theorem 2 is stated for Algorithm 1; rows carry its tiling
  return d;
}

const SubcommandRegistration registration({
    .name = "bound",
    .summary = "Theorem 2, the lower bounds and the derived tiling for given N, d, M",
    .order = 20,
    .defaults = bound_defaults(),
    .run = run_bound,
});

}  // namespace
}  // namespace flashio::cli
