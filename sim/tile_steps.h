// Tile steps: a configuration's schedule (sim/schedule.h) grouped into the steps a reader
// follows, one per visited tile (i, j) of the score matrix S: the transfers that bring the
// step's tiles into SRAM, its compute, and the writes that follow it (paper Algorithm 1 lines
// 6-13 for flash1; every kernel's order is in docs/schedules.md). The steps hold the schedule's
// own transfers, so a kernel's bytes after its last step are one head of the walk's count by
// construction, and flash1 and flash2 show their real loop orders.
//
// `flashio explain` (sim/explain.h, which runs the tracked row's online softmax along these
// steps), `flashio explain --schedule` and the GUI's tiling view (through sim::explain) all
// render these steps; sim/execute.cpp steps the algorithm on its own on purpose, as an
// independent count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/config.h"
#include "sim/counts.h"
#include "sim/schedule.h"

namespace flashio::sim {

// One transfer of a step, with the tile it moves and its bytes.
struct TileMove {
  Transfer transfer;   // as the schedule emits it
  int64_t tile = -1;   // row tile i (Q, O, dO, dQ, ℓ, m, lse, D, o_accum, dq_accum) or column
                       // tile j (K, V, dK, dV); −1 for standard attention's kernels, which
                       // are not tiled by (Br, Bc)
  int64_t bytes = 0;   // rows · cols · bytes of the tensor's storage type (sim/tensor.h)
};

// How a thread block's events become steps: a read after the step's compute opens the next
// step, and so does a compute after the writes that followed the step's compute; everything
// else joins the open step. So a step is its reads (and any writes before its compute), its
// compute events (flash2's final normalisation joins the last tile's step), and its writes.
struct TileStep {
  int64_t thread_block = 0;  // block_in_head in the kernel's grid (sim/schedule.h)
  // The row tile and column tile the thread block holds at the step's compute (at its end
  // when it computes nothing): the latest row-tiled and column-tiled transfers of the block.
  // −1 when the block has moved none (or for standard attention).
  int64_t i = -1, j = -1;
  std::vector<TileMove> moves;      // in program order
  size_t moves_before_compute = 0;  // moves[0, k) come before the compute events, the rest after
  std::vector<Flops> computes;      // the compute events, in program order
  // One head's bytes read and written by this kernel so far, this step included.
  int64_t read_bytes = 0;
  int64_t write_bytes = 0;

  Flops flops() const;
  // Whether this step computes tile (i, j) of S (tensor-core work on a held Q and K tile).
  bool computes_tile() const { return i >= 0 && j >= 0 && flops().tensor > 0; }
};

struct KernelSteps {
  KernelSchedule schedule;      // the kernel (its name is for display only)
  std::vector<TileStep> steps;  // head 0's thread blocks in launch order; every head is alike
  // One head's totals (the last step's tallies); the walk's counts are heads times these.
  int64_t read_bytes = 0, write_bytes = 0;
};

// The kernels of the configuration's pass in launch order, each with its steps for one head.
// Throws InvalidInput for an invalid config (sim::validate).
std::vector<KernelSteps> tile_steps(const Config& config);

}  // namespace flashio::sim
