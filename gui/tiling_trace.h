// TilingTrace: the tiled algorithm as a list of steps for the teaching view, recorded from
// sim's own schedule (build_schedule + a ScheduleSink), so the running byte tally after the
// last step is the walk's count by construction, and flash1 and flash2 show their real orders.
//
// A step is one visited tile (i, j) of the score matrix: the reads that bring its tiles into
// SRAM, its compute, and the writes that follow (paper Algorithm 1 lines 6-13 for flash1).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/schedule.h"

namespace flashio::gui {

struct TraceStep {
  std::string kernel;
  int64_t bh = 0;
  int64_t i = -1, j = -1;  // score tile; -1 when the step touches no row (column) tile
  std::vector<sim::Transfer> transfers;
  sim::Flops flops;
  int64_t bytes = 0;        // this step's transfers
  int64_t tally_bytes = 0;  // all transfers up to and including this step
};

struct TilingTrace {
  sim::Config config;
  sim::TileGrid grid;
  std::vector<TraceStep> steps;
  std::vector<unsigned char> visited;  // tr × tc: whether the schedule visits tile (i, j)
  int64_t total_bytes = 0;             // the tally after the last step

  bool visits(int64_t i, int64_t j) const { return visited[static_cast<size_t>(i * grid.tc + j)] != 0; }
};

// Records every thread block of every kernel of the configuration's pass in launch order.
TilingTrace build_trace(const sim::Config& config);

// Bytes of one transfer, in the tensor's storage type (sim/tensor.h).
int64_t transfer_bytes(const sim::Transfer& t, const sim::Problem& problem);

// The online softmax of one row (docs/paper.md, "Online softmax"), as the trace's steps
// update it: the running max m and sum ℓ after each step that touches the row. Scores are
// q_r·k_c/√d of Q, K drawn from N(0, 1) with the seed; causal masks c > r.
struct RowState {
  double m = 0, l = 0;
  int64_t columns_seen = 0;
};
struct RowStats {
  int64_t row = 0;
  std::vector<std::optional<RowState>> after_step;  // nullopt: the step does not touch the row
  RowState dense;  // the dense softmax's max and sum over the whole row, for comparison
};
RowStats row_stats(const TilingTrace& trace, int64_t row, uint64_t seed = 1);

}  // namespace flashio::gui
