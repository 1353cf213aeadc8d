// explain (sim/explain.h): the forward loop nests of docs/schedules.md stepped tile by tile,
// with the tracked row's online softmax run alongside (sim/online_softmax.h).
#include "sim/explain.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>

#include "sim/errors.h"
#include "sim/online_softmax.h"
#include "sim/simulate.h"

namespace flashio::sim {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

struct Grid {
  int64_t n, d, br, bc, tr, tc;
  bool causal;
  int64_t rows_in(int64_t i) const { return std::min(br, n - i * br); }
  int64_t cols_in(int64_t j) const { return std::min(bc, n - j * bc); }
  // Causal skips a tile whose first key comes after its last query.
  bool visits(int64_t i, int64_t j) const { return !causal || j * bc <= i * br + rows_in(i) - 1; }
};

void check_explainable(const Config& c, int64_t tracked_row) {
  validate(c);
  if (c.algo != Algo::flash1 && c.algo != Algo::flash2)
    throw InvalidInput(Field::algo, "explain traces the tiled algorithms only, not " +
                                        to_string(c.algo) + "; allowed: flash1, flash2");
  if (c.problem.pass != Pass::fwd)
    throw InvalidInput(Field::pass, "explain traces the forward pass only, not " +
                                        to_string(c.problem.pass) + "; allowed: fwd");
  if (c.problem.seqlen > kExplainMaxSeqlen)
    throw InvalidInput(Field::seqlen, "explain is for tiny problems, not N = " +
                                          std::to_string(c.problem.seqlen) + "; allowed: 1 to " +
                                          std::to_string(kExplainMaxSeqlen));
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

// Steps the schedule, tallying bytes, and runs the tracked row's softmax at its tiles.
class Tracer {
 public:
  Tracer(const Config& c, const HeadTensors& in, int64_t row, ExplainTrace& trace)
      : c_(c), in_(in), row_(row), trace_(trace),
        right_(online_softmax_start(1, c.problem.headdim)),
        wrong_(online_softmax_start(1, c.problem.headdim)) {
    g_ = {c.problem.seqlen, c.problem.headdim, c.tiling.block_r, c.tiling.block_c, 0, 0,
          c.problem.causal};
    g_.tr = ceil_div(g_.n, g_.br);
    g_.tc = ceil_div(g_.n, g_.bc);
    scale_ = 1.0 / std::sqrt(static_cast<double>(g_.d));
  }
  const Grid& grid() const { return g_; }

  void move(ExplainStep& step, Tensor t, Dir dir, int64_t tile) {
    const bool by_column = t == Tensor::K || t == Tensor::V;
    const int64_t row0 = tile * (by_column ? g_.bc : g_.br);
    const int64_t rows = by_column ? g_.cols_in(tile) : g_.rows_in(tile);
    const TensorShape shape = tensor_shape(t, c_.problem);
    const TileMove m{t, dir, tile, row0, rows, shape.cols, rows * shape.cols * shape.element_bytes};
    (dir == Dir::read ? read_bytes_ : write_bytes_) += m.bytes;
    step.moves.push_back(m);
  }

  // Closes a step: the tracked row absorbs tile (i, j)'s scores when it lies in row tile i.
  void finish(ExplainStep& step) {
    if (step.block_i == row_ / g_.br) {
      const int64_t j = step.block_j, cj = g_.cols_in(j);
      SoftmaxMatrix scores = scale_ * (in_.q.row(row_) * in_.k.middleRows(j * g_.bc, cj).transpose());
      for (int64_t col = 0; col < cj; ++col)
        if (g_.causal && j * g_.bc + col > row_) scores(0, col) = kMinusInf;
      const SoftmaxMatrix values = in_.v.middleRows(j * g_.bc, cj);
      const double old_m = right_.m(0);
      online_softmax_merge(right_, scores, values, Rescale::both);
      online_softmax_merge(wrong_, scores, values, Rescale::sum_only);
      step.tracked_row_in_tile = true;
      step.max_moved = old_m != kMinusInf && right_.m(0) > old_m;
      if (step.max_moved) ++trace_.max_moves;
    }
    step.row = statistics(right_);
    step.wrong_row = statistics(wrong_);
    step.read_bytes = read_bytes_;
    step.write_bytes = write_bytes_;
    trace_.steps.push_back(std::move(step));
  }

  const OnlineSoftmax& right() const { return right_; }
  const OnlineSoftmax& wrong() const { return wrong_; }

 private:
  static RowStatistics statistics(const OnlineSoftmax& s) {
    return {s.m(0), s.l(0), to_vector(online_softmax_output(s))};
  }
  const Config& c_;
  const HeadTensors& in_;
  int64_t row_;
  ExplainTrace& trace_;
  Grid g_{};
  double scale_ = 1;
  OnlineSoftmax right_, wrong_;
  int64_t read_bytes_ = 0, write_bytes_ = 0;
};

// FlashAttention-2 (docs/schedules.md, flash2_fwd): Q_i read once and kept; K_j, V_j stream
// past; O_i and L_i written once after the row tile's last visited tile.
void trace_flash2(Tracer& t) {
  const Grid& g = t.grid();
  for (int64_t i = 0; i < g.tr; ++i) {
    int64_t last_j = -1;
    for (int64_t j = 0; j < g.tc; ++j)
      if (g.visits(i, j)) last_j = j;
    bool first = true;
    for (int64_t j = 0; j <= last_j; ++j) {
      if (!g.visits(i, j)) continue;
      ExplainStep s;
      s.block_i = i;
      s.block_j = j;
      if (first) t.move(s, Tensor::Q, Dir::read, i);
      first = false;
      t.move(s, Tensor::K, Dir::read, j);
      t.move(s, Tensor::V, Dir::read, j);
      if (j == last_j) {
        t.move(s, Tensor::O, Dir::write, i);
        t.move(s, Tensor::lse, Dir::write, i);
      }
      t.finish(s);
    }
  }
}

// FlashAttention (Algorithm 1; docs/schedules.md, flash1_fwd): K_j, V_j read once per outer
// step; each visited Q_i brings its running output and statistics in and out of HBM.
void trace_flash1(Tracer& t) {
  const Grid& g = t.grid();
  std::vector<int64_t> first_j(g.tr, -1), last_j(g.tr, -1);
  for (int64_t i = 0; i < g.tr; ++i)
    for (int64_t j = 0; j < g.tc; ++j)
      if (g.visits(i, j)) {
        if (first_j[i] < 0) first_j[i] = j;
        last_j[i] = j;
      }
  for (int64_t j = 0; j < g.tc; ++j) {
    bool first = true;
    for (int64_t i = 0; i < g.tr; ++i) {
      if (!g.visits(i, j)) continue;
      ExplainStep s;
      s.block_i = i;
      s.block_j = j;
      if (first) {  // line 6, at the outer loop's start
        t.move(s, Tensor::K, Dir::read, j);
        t.move(s, Tensor::V, Dir::read, j);
      }
      first = false;
      t.move(s, Tensor::Q, Dir::read, i);  // line 8
      if (j != first_j[i]) {
        t.move(s, Tensor::o_accum, Dir::read, i);
        t.move(s, Tensor::stat_l, Dir::read, i);
        t.move(s, Tensor::stat_m, Dir::read, i);
      }
      t.move(s, j == last_j[i] ? Tensor::O : Tensor::o_accum, Dir::write, i);  // line 12
      t.move(s, Tensor::stat_l, Dir::write, i);                                 // line 13
      t.move(s, Tensor::stat_m, Dir::write, i);
      t.finish(s);
    }
  }
}

std::string number(double x) {
  if (x == kMinusInf) return "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string vector_text(const std::vector<double>& v, size_t shown = 4) {
  std::string s = "[";
  for (size_t k = 0; k < v.size() && k < shown; ++k) {
    if (k) s += ", ";
    s += number(v[k]);
  }
  if (v.size() > shown) s += ", ...";
  return s + "]";
}

std::string moves_text(const std::vector<TileMove>& moves) {
  std::ostringstream reads, writes;
  for (const TileMove& m : moves)
    (m.dir == Dir::read ? reads : writes) << ' ' << to_string(m.tensor) << m.tile;
  std::string s;
  if (!reads.str().empty()) s = "read" + reads.str();
  if (!writes.str().empty()) s += (s.empty() ? "write" : "; write") + writes.str();
  return s;
}

std::string percent(int64_t part, int64_t whole) {
  return whole > 0 ? number(100.0 * static_cast<double>(part) / static_cast<double>(whole)) + "%"
                   : "-";
}

}  // namespace

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
  Tracer tracer(config, inputs, tracked_row, trace);
  trace.tiles_r = tracer.grid().tr;
  trace.tiles_c = tracer.grid().tc;
  if (config.algo == Algo::flash1) trace_flash1(tracer);
  else trace_flash2(tracer);
  if (!trace.steps.empty()) {
    trace.read_bytes = trace.steps.back().read_bytes;
    trace.write_bytes = trace.steps.back().write_bytes;
  }

  // Standard attention's forward on the same problem (shared/PAPER.md, Algorithm 0), per head.
  Config standard = config;
  standard.algo = Algo::standard;
  Counts standard_total;
  for (const KernelCounts& k : closed_form_counts(standard)) standard_total += k.counts;
  const int64_t heads = config.problem.batch_heads();
  trace.standard_read_bytes = standard_total.io_read_bytes() / heads;
  trace.standard_write_bytes = standard_total.io_write_bytes() / heads;

  const HeadTensors reference =
      dense_reference(inputs.q, inputs.k, inputs.v, nullptr, config.problem.causal);
  trace.reference_output = to_vector(reference.o.row(tracked_row));
  trace.output = to_vector(online_softmax_output(tracer.right()));
  trace.wrong_output = to_vector(online_softmax_output(tracer.wrong()));
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
      << (p.causal ? ", causal" : "") << "; Br = " << c.tiling.block_r
      << ", Bc = " << c.tiling.block_c << ": Tr = " << t.tiles_r << " row tiles of Q, Tc = "
      << t.tiles_c << " column tiles of K and V.\n";
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
    tile << '(' << s.block_i << ',' << s.block_j << ')';
    std::string stats;
    if (s.tracked_row_in_tile) {
      stats = "m " + number(s.row.m) + ", l " + number(s.row.l) + ", output " +
              vector_text(s.row.output);
      if (s.max_moved)
        stats += "  <- max moved: old l and old output x e^(m_old - m_new); "
                 "l-only rescale would give " + vector_text(s.wrong_row.output);
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
  out << "All " << p.batch_heads() << " heads: " << flash_bytes * p.batch_heads()
      << " B (what `flashio simulate --count walk` reports as io_read_bytes + io_write_bytes).\n";
  out << "Row " << row << ": tiled output " << vector_text(t.output) << ", reference softmax(QK^T/sqrt(d))V "
      << vector_text(t.reference_output) << ", max error " << number(t.output_error) << ".\n";
  out << "Wrong rescale (only l rescaled, not the running output): " << vector_text(t.wrong_output)
      << ", max error " << number(t.wrong_output_error) << ". The row's max moved "
      << t.max_moves << (t.max_moves == 1 ? " time" : " times")
      << (t.max_moves > 0
              ? "; each time the old output had to be scaled by e^(m_old - m_new) too.\n"
              : "; with the max never moving, the mistake stays hidden (try another --row).\n");
  return out.str();
}

}  // namespace flashio::sim
