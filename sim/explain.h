// explain: a step-by-step trace of tiled FlashAttention's forward pass for a tiny problem, for
// teaching why it is fast (Theorem 2) and why it is exact (the online softmax). Each step is one
// visited tile (i, j) of the score matrix, in the order the algorithm computes it (flash1: K/V
// outside, paper Algorithm 1; flash2: Q outside, FlashAttention-2): the schedule's own steps
// (sim/tile_steps.h) with the tiles of Q, K, V, O (and flash1's running output and statistics)
// they load and store, the bytes moved so far beside standard attention's, and the
// online-softmax statistics of one chosen row, advanced by the merge rule of
// sim/online_softmax.h. A second run of that row rescales only ℓ, not the output, and shows the
// wrong answer it gives whenever the row's max moves (the merge rule of Dao et al. 2022,
// FlashAttention, Section 3.1: both ℓ and the output are rescaled by e^(m − m')).
//
// One (batch, head) is traced: every head runs the same schedule, so the whole problem moves
// B·H times the bytes shown. `flashio explain` prints explain_text(); the GUI's tiling view
// (gui/tiling_view.h) draws an ExplainTrace step by step and prints statistics_text(), so both
// show the same inputs, statistics and byte tallies for the same seed.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/counts.h"
#include "sim/execute.h"
#include "sim/schedule.h"
#include "sim/tile_steps.h"

namespace flashio::sim {

constexpr int64_t kExplainMaxSeqlen = 64;
// d for the same reason (its traces print rows of d values): the built kernels' largest d is 128.
constexpr int64_t kExplainMaxHeaddim = 256;

struct ExplainOptions {
  int64_t tracked_row = 0;  // the row whose statistics are shown (0 ≤ row < N)
  uint64_t seed = 1;        // inputs: head 0 of random_inputs(problem, seed, ·), as execute
};

// The online-softmax state of the tracked row.
struct RowStatistics {
  double m = 0;                // running max (−∞ before the first score)
  double l = 0;                // running Σ e^(s − m)
  std::vector<double> output;  // running output u/ℓ (d values; what flash1 stores in o_accum,
                               // what flash2 would write if it stopped here)
};

// A step of the forward kernel's schedule (sim/tile_steps.h: its tile (i, j), moves and the
// one head's read_bytes and write_bytes so far), with the tracked row after it.
struct ExplainStep : TileStep {
  bool tracked_row_in_tile = false;  // the tracked row's statistics changed in this step
  bool max_moved = false;            // ... and its max rose over an earlier block's
  RowStatistics row;                 // the tracked row after this step
  RowStatistics wrong_row;           // the same with only ℓ rescaled (Rescale::sum_only)
};

struct ExplainTrace {
  Config config;
  int64_t tracked_row = 0;
  TileGrid grid;  // N, Br, Bc, Tr, Tc
  std::vector<ExplainStep> steps;
  // One head's totals (the last step's tallies); the walk's counts are B·H times these.
  int64_t read_bytes = 0, write_bytes = 0;
  // Standard attention's forward for the same problem (no mask, no dropout), one head.
  int64_t standard_read_bytes = 0, standard_write_bytes = 0;
  // The tracked row's output: dense softmax(QKᵀ/√d)V, the tiled result, and the ℓ-only one.
  std::vector<double> reference_output;
  std::vector<double> output;
  double output_error = 0;  // max |output − reference|
  std::vector<double> wrong_output;
  double wrong_output_error = 0;
  int64_t max_moves = 0;  // steps in which the tracked row's max rose
};

// Throws InvalidInput for an invalid config, an algorithm other than flash1 or flash2
// (Field::algo), a pass other than fwd (Field::pass), dropout (Field::dropout: the traced row
// has none), N > kExplainMaxSeqlen (Field::seqlen), d > kExplainMaxHeaddim (Field::headdim),
// counts past 64 bits (sim/limits.h), or a row outside [0, N) (Field::tracked_row).
ExplainTrace explain(const Config& config, const ExplainOptions& options = {});
// The same on given inputs for the traced head (q, k, v of N × d): for the worked examples.
ExplainTrace explain(const Config& config, const HeadTensors& inputs, int64_t tracked_row);

// The readable teaching text: a header, one line per step, a summary.
std::string explain_text(const ExplainTrace& trace);

// When the traced FlashAttention moves more bytes than standard attention (small N against the
// tiles, tiles small against d), one line saying why: the bytes its re-reads cost beyond reading
// Q, K, V and writing O once (flash1 re-reads Q and its running output for every key tile,
// flash2 K and V for every query tile) against standard's N × N scores and probabilities.
// nullopt when it moves no more than standard.
std::optional<std::string> more_than_standard_note(const ExplainTrace& trace);

// Pieces of that text, for the GUI to print the same numbers the same way: a number (4
// significant digits, −∞ as -inf), the first four values of a vector ("[0.1, -2, ...]"), and a
// row's statistics ("m 0.8, l 1.9, output [...]").
std::string explain_number(double x);
std::string explain_values(const std::vector<double>& values);
std::string statistics_text(const RowStatistics& row);

}  // namespace flashio::sim
