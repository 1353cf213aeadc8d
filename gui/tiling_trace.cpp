#include "gui/tiling_trace.h"

#include <cmath>
#include <limits>
#include <random>

#include "sim/tensor.h"

namespace flashio::gui {
namespace {

bool row_tiled(sim::Tensor t) {
  using sim::Tensor;
  switch (t) {
    case Tensor::Q: case Tensor::O: case Tensor::dO: case Tensor::dQ: case Tensor::stat_l:
    case Tensor::stat_m: case Tensor::lse: case Tensor::delta: case Tensor::o_accum:
    case Tensor::dq_accum:
      return true;
    default: return false;
  }
}

bool column_tiled(sim::Tensor t) {
  using sim::Tensor;
  return t == Tensor::K || t == Tensor::V || t == Tensor::dK || t == Tensor::dV;
}

// Groups one thread block's events into steps: a read after the step's compute, or a compute
// after a write that followed it, opens the next step; writes after a compute close it.
class StepSink : public sim::ScheduleSink {
 public:
  StepSink(TilingTrace& trace, std::string kernel, int64_t bh)
      : trace_(trace), kernel_(std::move(kernel)), bh_(bh) {}

  void transfer(const sim::Transfer& t) override {
    if (t.dir == sim::Dir::read && computed_) open();
    if (t.dir == sim::Dir::write && computed_) wrote_after_compute_ = true;
    current().transfers.push_back(t);
    const int64_t b = transfer_bytes(t, trace_.config.problem);
    current().bytes += b;
    trace_.total_bytes += b;
    current().tally_bytes = trace_.total_bytes;
    if (row_tiled(t.tensor)) current().i = t.row0 / trace_.grid.br;
    if (column_tiled(t.tensor)) current().j = t.row0 / trace_.grid.bc;
  }
  void compute(const sim::Flops& f) override {
    if (wrote_after_compute_) open();
    current().flops += f;
    computed_ = true;
  }

 private:
  TraceStep& current() {
    if (!has_step_) {
      TraceStep s;
      s.kernel = kernel_;
      s.bh = bh_;
      // Carry the tile over: flash1's inner steps keep j, flash2's keep i.
      if (!trace_.steps.empty() && trace_.steps.back().kernel == kernel_ &&
          trace_.steps.back().bh == bh_) {
        s.i = trace_.steps.back().i;
        s.j = trace_.steps.back().j;
      }
      s.tally_bytes = trace_.total_bytes;
      trace_.steps.push_back(std::move(s));
      has_step_ = true;
    }
    return trace_.steps.back();
  }
  void open() {
    has_step_ = false;
    computed_ = false;
    wrote_after_compute_ = false;
  }

  TilingTrace& trace_;
  std::string kernel_;
  int64_t bh_;
  bool has_step_ = false, computed_ = false, wrote_after_compute_ = false;
};

}  // namespace

int64_t transfer_bytes(const sim::Transfer& t, const sim::Problem& problem) {
  return t.rows * t.cols * sim::tensor_shape(t.tensor, problem).element_bytes;
}

TilingTrace build_trace(const sim::Config& config) {
  TilingTrace trace;
  trace.config = config;
  const sim::TileFilter filter(config);
  trace.grid = filter.grid();
  trace.visited.resize(static_cast<size_t>(trace.grid.tr * trace.grid.tc));
  for (int64_t i = 0; i < trace.grid.tr; ++i)
    for (int64_t j = 0; j < trace.grid.tc; ++j)
      trace.visited[static_cast<size_t>(i * trace.grid.tc + j)] = filter.visits(i, j);
  for (const sim::KernelSchedule& kernel : sim::build_schedule(config))
    for (int64_t bh = 0; bh < kernel.heads; ++bh)
      for (int64_t block = 0; block < kernel.blocks_per_head; ++block) {
        StepSink sink(trace, sim::to_string(kernel.kind), bh);
        kernel.emit_block(bh, block, sink);
      }
  return trace;
}

RowStats row_stats(const TilingTrace& trace, int64_t row, uint64_t seed) {
  const auto& p = trace.config.problem;
  const int64_t n = p.seqlen, d = p.headdim;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> q(static_cast<size_t>(n * d)), k(static_cast<size_t>(n * d));
  for (auto& v : q) v = normal(rng);
  for (auto& v : k) v = normal(rng);
  std::vector<double> scores(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) {
    double s = 0;
    for (int64_t x = 0; x < d; ++x) s += q[static_cast<size_t>(row * d + x)] * k[static_cast<size_t>(c * d + x)];
    scores[static_cast<size_t>(c)] = s / std::sqrt(static_cast<double>(d));
  }
  const int64_t last_col = p.causal ? row : n - 1;

  RowStats stats;
  stats.row = row;
  stats.dense.m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c <= last_col; ++c) stats.dense.m = std::max(stats.dense.m, scores[static_cast<size_t>(c)]);
  for (int64_t c = 0; c <= last_col; ++c) stats.dense.l += std::exp(scores[static_cast<size_t>(c)] - stats.dense.m);
  stats.dense.columns_seen = last_col + 1;

  // The merge rule: m' = max(m, max s'), ℓ' = e^(m−m')ℓ + Σ e^(s'−m').
  RowState state{-std::numeric_limits<double>::infinity(), 0.0, 0};
  const int64_t row_tile = row / trace.grid.br;
  for (const TraceStep& step : trace.steps) {
    const bool touches = step.i == row_tile && step.j >= 0 && step.flops.tensor > 0 &&
                         step.kernel.find("_fwd") != std::string::npos;
    if (!touches) {
      stats.after_step.push_back(std::nullopt);
      continue;
    }
    const int64_t c0 = step.j * trace.grid.bc;
    const int64_t c1 = std::min(c0 + trace.grid.cols_in(step.j), last_col + 1);
    double block_max = -std::numeric_limits<double>::infinity();
    for (int64_t c = c0; c < c1; ++c) block_max = std::max(block_max, scores[static_cast<size_t>(c)]);
    if (c1 > c0) {
      const double m_new = std::max(state.m, block_max);
      double sum = 0;
      for (int64_t c = c0; c < c1; ++c) sum += std::exp(scores[static_cast<size_t>(c)] - m_new);
      state.l = (state.columns_seen > 0 ? std::exp(state.m - m_new) * state.l : 0.0) + sum;
      state.m = m_new;
      state.columns_seen += c1 - c0;
    }
    stats.after_step.push_back(state);
  }
  return stats;
}

}  // namespace flashio::gui
