// explain (sim/explain.h): the forward kernel's tile steps (sim/tile_steps.h), with the tracked
// row's online softmax run alongside (sim/online_softmax.h).
#include "sim/explain.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>

#include "sim/errors.h"
#include "sim/limits.h"
#include "sim/online_softmax.h"
#include "sim/simulate.h"

namespace flashio::sim {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

void check_explainable(const Config& c, int64_t tracked_row) {
  validate(c);
  if (c.algo != Algo::flash1 && c.algo != Algo::flash2)
    throw InvalidInput(Field::algo, "explain traces the tiled algorithms only, not " +
                                        to_string(c.algo) + "; allowed: flash1, flash2");
  if (c.problem.pass != Pass::fwd)
    throw InvalidInput(Field::pass, "explain traces the forward pass only, not " +
                                        to_string(c.problem.pass) + "; allowed: fwd");
  if (c.problem.keys() != c.problem.seqlen)
    throw InvalidInput(Field::seqlen_k, "explain traces one head of square attention (Nk = Nq), not Nk = " +
                                            std::to_string(c.problem.keys()) + "; allowed: seqlen_k equal to seqlen");
  if (c.problem.kv_heads_count() != c.problem.heads)
    throw InvalidInput(Field::kv_heads, "explain traces one head with its own K and V, not Hkv = " +
                                            std::to_string(c.problem.kv_heads_count()) + "; allowed: kv_heads equal to heads");
  if (c.problem.varlen)
    throw InvalidInput(Field::varlen, "explain traces one head, and the packed sequences of a varlen batch run heads of "
                                      "their own lengths; allowed: varlen = 0");
  if (!c.problem.key_lengths.empty())
    throw InvalidInput(Field::key_lengths, "explain traces one head, and sequences of their own key lengths run "
                                           "different ones; allowed: no key lengths");
  if (pads_keys(c))  // the mask's padding, flash1's and flash2's key lengths (sim/config.h)
    throw InvalidInput(Field::mask, "explain traces one head, and the mask's padded sequences run different ones; "
                                    "allowed: mask = 0");
  if (c.problem.dropout > 0)  // its trace compares the online softmax with standard's, undropped
    throw InvalidInput(Field::dropout, "explain traces the online softmax without dropout, not p = " +
                                           std::to_string(c.problem.dropout) + "; allowed: dropout = 0");
  if (c.splits != 1)
    throw InvalidInput(Field::splits, "explain traces one kernel over whole rows of keys, not " + std::to_string(c.splits) +
                                          " splits and their combine; allowed: splits = 1");
  if (c.problem.seqlen > kExplainMaxSeqlen)
    throw InvalidInput(Field::seqlen, "explain is for tiny problems, not N = " +
                                          std::to_string(c.problem.seqlen) + "; allowed: 1 to " +
                                          std::to_string(kExplainMaxSeqlen));
  if (c.problem.headdim > kExplainMaxHeaddim)
    throw InvalidInput(Field::headdim, "explain is for tiny problems, not d = " +
                                           std::to_string(c.problem.headdim) + "; allowed: 1 to " +
                                           std::to_string(kExplainMaxHeaddim));
  check_counts(c);  // B·H scales the counts explain prints
  if (tracked_row < 0 || tracked_row >= c.problem.seqlen)
    throw InvalidInput(Field::tracked_row, std::to_string(tracked_row) +
                                               " is not a row of Q; allowed: 0 to " +
                                               std::to_string(c.problem.seqlen - 1));
}

std::vector<double> to_vector(const SoftmaxMatrix& row) {
  return std::vector<double>(row.data(), row.data() + row.size());
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0;
  for (size_t k = 0; k < a.size(); ++k) err = std::max(err, std::abs(a[k] - b[k]));
  return err;
}

// The tracked row's online softmax, the correct rule and the ℓ-only one, advanced at every step
// that computes a tile of the row's row tile: the scores q_row·k_c/√d of the tile's columns
// (−∞ where the row's query does not see the key: causal's diagonal, a window's sides) and the
// tile's values.
class TrackedRow {
 public:
  TrackedRow(const Config& c, const HeadTensors& in, int64_t row)
      : in_(in), row_(row), grid_(tile_grid(c)), band_(c.problem.band_of()),
        scale_(1.0 / std::sqrt(static_cast<double>(c.problem.headdim))),
        right_(online_softmax_start(1, c.problem.headdim)),
        wrong_(online_softmax_start(1, c.problem.headdim)) {}

  ExplainStep advance(const TileStep& tile_step) {
    ExplainStep step;
    static_cast<TileStep&>(step) = tile_step;
    if (tile_step.computes_tile() && tile_step.i == row_ / grid_.br) {
      const int64_t j = tile_step.j, c0 = j * grid_.bc, cj = grid_.cols_in(j);
      SoftmaxMatrix scores = scale_ * (in_.q.row(row_) * in_.k.middleRows(c0, cj).transpose());
      for (int64_t col = 0; col < cj; ++col)
        if (!band_.sees(row_, c0 + col, grid_.nk)) scores(0, col) = kMinusInf;
      const SoftmaxMatrix values = in_.v.middleRows(c0, cj);
      const double old_m = right_.m(0);
      online_softmax_merge(right_, scores, values, Rescale::both);
      online_softmax_merge(wrong_, scores, values, Rescale::sum_only);
      step.tracked_row_in_tile = true;
      step.max_moved = old_m != kMinusInf && right_.m(0) > old_m;
    }
    step.row = statistics(right_);
    step.wrong_row = statistics(wrong_);
    return step;
  }

  const OnlineSoftmax& right() const { return right_; }
  const OnlineSoftmax& wrong() const { return wrong_; }

 private:
  static RowStatistics statistics(const OnlineSoftmax& s) {
    return {s.m(0), s.l(0), to_vector(online_softmax_output(s))};
  }
  const HeadTensors& in_;
  int64_t row_;
  TileGrid grid_;
  KeyBand band_;
  double scale_;
  OnlineSoftmax right_, wrong_;
};

std::string moves_text(const std::vector<TileMove>& moves) {
  std::ostringstream reads, writes;
  for (const TileMove& m : moves) {
    const Transfer& t = m.transfer;
    (t.dir == Dir::read ? reads : writes) << ' ' << to_string(t.tensor) << m.tile;
  }
  std::string s;
  if (!reads.str().empty()) s = "read" + reads.str();
  if (!writes.str().empty()) s += (s.empty() ? "write" : "; write") + writes.str();
  return s;
}

std::string percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return explain_number(100.0 * static_cast<double>(part) / static_cast<double>(whole)) + "%";
}

}  // namespace

std::string explain_number(double x) {
  if (x == kMinusInf) return "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string explain_values(const std::vector<double>& v) {
  constexpr size_t shown = 4;
  std::string s = "[";
  for (size_t k = 0; k < v.size() && k < shown; ++k) {
    if (k) s += ", ";
    s += explain_number(v[k]);
  }
  if (v.size() > shown) s += ", ...";
  return s + "]";
}

std::string statistics_text(const RowStatistics& row) {
  return "m " + explain_number(row.m) + ", l " + explain_number(row.l) + ", output " +
         explain_values(row.output);
}

ExplainTrace explain(const Config& config, const HeadTensors& inputs, int64_t tracked_row) {
  check_explainable(config, tracked_row);
  const int64_t n = config.problem.seqlen, d = config.problem.headdim;
  auto shaped = [n, d](const Matrix& m) { return m.rows() == n && m.cols() == d; };
  if (!shaped(inputs.q) || !shaped(inputs.k) || !shaped(inputs.v))
    throw InvalidInput("explain: inputs must be N × d (" + std::to_string(n) + " × " +
                       std::to_string(d) + ")");
  ExplainTrace trace;
  trace.config = config;
  trace.tracked_row = tracked_row;
  trace.grid = tile_grid(config);
  TrackedRow row(config, inputs, tracked_row);
  for (const KernelSteps& kernel : tile_steps(config)) {  // the forward pass: one kernel
    for (const TileStep& tile_step : kernel.steps) {
      trace.steps.push_back(row.advance(tile_step));
      if (trace.steps.back().max_moved) ++trace.max_moves;
    }
    trace.read_bytes += kernel.read_bytes;
    trace.write_bytes += kernel.write_bytes;
  }

  // Standard attention's forward on the same problem (docs/paper.md, Algorithm 0), per head.
  Config standard = config;
  standard.algo = Algo::standard;
  Counts standard_total;
  for (const KernelCounts& k : closed_form_counts(standard)) standard_total += k.counts;
  const int64_t heads = config.problem.batch_heads();
  trace.standard_read_bytes = standard_total.io_read_bytes() / heads;
  trace.standard_write_bytes = standard_total.io_write_bytes() / heads;

  const ScoreMask kept = kept_scores(config, 0);
  const HeadTensors reference = dense_reference(inputs.q, inputs.k, inputs.v, nullptr, &kept, nullptr);
  trace.reference_output = to_vector(reference.o.row(tracked_row));
  trace.output = to_vector(online_softmax_output(row.right()));
  trace.wrong_output = to_vector(online_softmax_output(row.wrong()));
  trace.output_error = max_abs_difference(trace.output, trace.reference_output);
  trace.wrong_output_error = max_abs_difference(trace.wrong_output, trace.reference_output);
  return trace;
}

ExplainTrace explain(const Config& config, const ExplainOptions& options) {
  check_explainable(config, options.tracked_row);  // before drawing inputs
  return explain(config, random_inputs(config.problem, options.seed, 1).front(),
                 options.tracked_row);
}

std::string explain_text(const ExplainTrace& t) {
  const Config& c = t.config;
  const Problem& p = c.problem;
  const int64_t row = t.tracked_row;
  std::ostringstream out;
  const bool flash1 = c.algo == Algo::flash1;
  out << "flashio explain: " << to_string(c.algo)
      << (flash1 ? " (FlashAttention, paper Algorithm 1: K/V tiles outside, Q/O tiles inside)"
                 : " (FlashAttention-2: Q tiles outside, K/V tiles streamed past)")
      << ", forward pass\n";
  out << "N = " << p.seqlen << ", d = " << p.headdim << ", " << to_string(p.dtype)
      << band_label(p) << "; Br = " << c.tiling.block_r
      << ", Bc = " << c.tiling.block_c << ": Tr = " << t.grid.tr << " row tiles of Q, Tc = "
      << t.grid.tc << " column tiles of K and V.\n";
  out << "Bytes are one (batch, head)'s; all B·H = " << p.batch_heads()
      << " heads run the same steps. Statistics (l, m, lse) and flash1's running output "
         "o_accum are fp32.\n";
  out << "Standard attention (S and P written to HBM) moves "
      << t.standard_read_bytes + t.standard_write_bytes << " B for this head ("
      << t.standard_read_bytes << " read, " << t.standard_write_bytes << " written).\n";
  out << "Tracked row " << row << " (row tile " << row / c.tiling.block_r
      << "): m = running max, l = running sum of e^(s-m), output = running u/l.\n\n";

  // One line per step: step, tile, moves, tallies, share of standard's bytes, row statistics.
  auto columns = [&out](const std::string& step, const std::string& tile, const std::string& moves,
                        const std::string& read, const std::string& write,
                        const std::string& share, const std::string& stats) {
    out << std::right << std::setw(5) << step << ' ' << std::left << std::setw(10) << tile << ' '
        << std::setw(46) << moves << ' ' << std::right << std::setw(9) << read << ' '
        << std::setw(9) << write << ' ' << std::setw(8) << share << "  " << stats << '\n';
  };
  columns("step", "tile (i,j)", "moves (tile index after the tensor)", "read B", "write B",
          "of std", "row statistics");
  for (size_t k = 0; k < t.steps.size(); ++k) {
    const ExplainStep& s = t.steps[k];
    std::ostringstream tile;
    tile << '(' << s.i << ',' << s.j << ')';
    std::string stats;
    if (s.tracked_row_in_tile) {
      stats = statistics_text(s.row);
      if (s.max_moved)
        stats += "  <- max moved: old l and old output x e^(m_old - m_new); "
                 "l-only rescale would give " + explain_values(s.wrong_row.output);
    }
    columns(std::to_string(k + 1), tile.str(), moves_text(s.moves), std::to_string(s.read_bytes),
            std::to_string(s.write_bytes),
            percent(s.read_bytes + s.write_bytes, t.standard_read_bytes + t.standard_write_bytes),
            stats);
  }

  const int64_t flash_bytes = t.read_bytes + t.write_bytes;
  const int64_t standard_bytes = t.standard_read_bytes + t.standard_write_bytes;
  out << "\nThis head: " << to_string(c.algo) << " moved " << flash_bytes << " B ("
      << t.read_bytes << " read, " << t.write_bytes << " written), "
      << percent(flash_bytes, standard_bytes) << " of standard attention's " << standard_bytes
      << " B.\n";
  if (const auto note = more_than_standard_note(t)) out << *note << "\n";
  out << "All " << p.batch_heads() << " heads: " << flash_bytes * p.batch_heads()
      << " B (what `flashio simulate --count walk` reports as io_read_bytes + io_write_bytes).\n";
  out << "Row " << row << ": tiled output " << explain_values(t.output) << ", reference softmax(QK^T/sqrt(d))V "
      << explain_values(t.reference_output) << ", max error " << explain_number(t.output_error) << ".\n";
  out << "Wrong rescale (only l rescaled, not the running output): " << explain_values(t.wrong_output)
      << ", max error " << explain_number(t.wrong_output_error) << ". The row's max moved "
      << t.max_moves << (t.max_moves == 1 ? " time" : " times")
      << (t.max_moves > 0
              ? "; each time the old output had to be scaled by e^(m_old - m_new) too.\n"
              : "; with the max never moving, the mistake stays hidden (try another --row).\n");
  return out.str();
}

std::optional<std::string> more_than_standard_note(const ExplainTrace& t) {
  const int64_t flash_bytes = t.read_bytes + t.write_bytes;
  const int64_t standard_bytes = t.standard_read_bytes + t.standard_write_bytes;
  if (flash_bytes <= standard_bytes) return std::nullopt;
  const Problem& p = t.config.problem;
  // Q, K, V read and O written once: what both must move (the compulsory traffic of one head).
  const int64_t once = 4 * p.seqlen * p.headdim * element_bytes(p.dtype);
  const bool flash1 = t.config.algo == Algo::flash1;
  std::ostringstream out;
  out << "Why more than standard: " << to_string(t.config.algo) << " reads "
      << (flash1 ? "Q and its running output again for each of the Tc = " + std::to_string(t.grid.tc) + " key tiles"
                 : "K and V again for each of the Tr = " + std::to_string(t.grid.tr) + " query tiles")
      << ", " << flash_bytes - once << " B beyond reading Q, K, V and writing O once, more than the "
      << standard_bytes - once << " B of standard's N x N scores and probabilities at N = " << p.seqlen
      << "; re-reads grow with N*d per tile, the N x N matrices with N^2, so FlashAttention wins once N is "
         "large against the tiles and the tiles are not small against d = "
      << p.headdim << " (Theorem 2: N^2 d^2 / M against N d + N^2).";
  return out.str();
}

}  // namespace flashio::sim
