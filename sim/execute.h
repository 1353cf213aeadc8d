// execute: run the tiled algorithm numerically on the CPU (Eigen, double precision) for small
// shapes, tile by tile with the online softmax, counting every tile it loads and stores. Its
// outputs must equal the dense reference softmax(QKᵀ/√d)V (and its gradients) to rounding, and
// its counts must equal the walk's (docs/architecture.md, "Ways to count", 3).
//
// execute is a second, independent implementation of the loop nests of docs/schedules.md: it
// does not call build_schedule or the closed form. Each head's "HBM" is a set of plain
// matrices, and every tile is read from or written to them through one accessor that also
// counts its bytes (rows · cols · bytes of the tensor's storage type), so a tile cannot be used
// without being counted. FLOPs come from sim/flops_model.h at the same steps as the schedule.
//
// Numbers are doubles throughout; "fp32" tensors (ℓ, m, LSE, D, o_accum, dq_accum) are counted
// at 4 bytes but hold doubles. What each algorithm keeps between steps is what its kernels
// keep: flash1 stores its normalised running output (o_accum), ℓ and m in HBM between steps;
// flash2 keeps u, ℓ, m on chip and writes O and L once; both backwards recompute P from S and
// the saved statistics. A pass `bwd` first runs the forward uncounted (its outputs are the
// backward's inputs, as when a training step calls the two separately).
//
// Conventions: causal keeps score (r, c) when c ≤ r + Nk − Nq (bottom-right aligned, docs/shapes.md);
// scores are scaled by 1/√d; a row with no kept score has O = 0, LSE = −∞ and zero gradients.
// standard stores no log-sum-exp (its HeadTensors::lse is empty). With grouped-query attention
// the g query heads of a group share one K/V head: its K and V are the group's first query
// head's inputs, and every head of the group returns the group's K, V, dK and dV (dK and dV
// summed over the group's query heads).
#pragma once
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "sim/config.h"
#include "sim/simulate.h"

namespace flashio::sim {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Which scores take part (Nq × Nk, true = kept): causal, key padding, zero blocks.
using ScoreMask = Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One query head's inputs and outputs (Q, dO, O, dQ: Nq × d; K, V, dK, dV: Nk × d; lse Nq × 1).
struct HeadTensors {
  Matrix q, k, v, d_o;      // inputs (d_o only for backward)
  Matrix o, lse;            // forward outputs
  Matrix dq, dk, dv;        // backward outputs
};

// Largest problem execute accepts: B·H·N²·d ≤ this (the walk covers larger ones).
constexpr double kExecuteMaxWork = 4.0e9;
// Memory execute may hold (docs/architecture.md, "Limits"): every head's tensors at once, as
// doubles: per head 1 KiB of bookkeeping plus 8 bytes for each element of the tensors the
// schedule touches (N × N ones included), its inputs and its outputs.
constexpr int64_t kExecuteMaxMemoryBytes = int64_t{1} << 31;
// The bytes that estimate gives for the configuration (saturating at 2^63 − 1).
int64_t execute_memory_bytes(const Config& config);

struct ExecuteResult {
  std::vector<KernelCounts> kernels;  // counts as recorded while computing (all heads)
  std::vector<HeadTensors> heads;     // per (b, h): inputs drawn from the seed, outputs computed
};

// Inputs drawn from N(0, 1) with the given seed. Throws InvalidInput beyond kExecuteMaxWork or
// kExecuteMaxMemoryBytes, and past the model's limits (sim/limits.h).
// The seed is also dropout's (dropout_multipliers below), as given: standard's pass and flash1's
// and flash2's fused tiles keep the elements dropout_multipliers(problem, bh, seed) keeps.
ExecuteResult execute(const Config& config, uint64_t seed = 1);

// The inputs execute(config, seed) uses: per (b, h) in bh order, Q, K, V and dO drawn from
// N(0, 1) by one generator seeded with `seed` (Q, K, V, dO of head 0, then head 1, ...); with
// grouped-query attention a head whose group's first head is another takes that head's K and V
// (its own draws are discarded, so Q and dO do not depend on Hkv). `heads` < B·H draws only the
// first ones (they are the same as in the full draw).
std::vector<HeadTensors> random_inputs(const Problem& problem, uint64_t seed, int64_t heads);

// The same on given inputs: one HeadTensors per (b, h) in bh order with q, k, v (and d_o for a
// backward pass) filled; K and V of a group are read from its first query head's; the outputs
// are ignored and recomputed. Throws InvalidInput for a wrong count or shape.
ExecuteResult execute(const Config& config, const std::vector<HeadTensors>& inputs,
                      uint64_t seed = 1);

// Dense double-precision reference for one query head: O, LSE and (given dO) dQ, and this head's
// part of dK, dV; applies causal (bottom-right aligned) when asked. (Standard attention without
// the tiles.)
HeadTensors dense_reference(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix* d_o,
                            bool causal);

// The same with any set of kept scores (null: all kept) and dropout multipliers on P (null:
// none; else Nq × Nk, 0 where dropped and the keep scale where kept, dropout_multipliers):
// O = (P ∘ Z)V, dV = (P ∘ Z)ᵀdO, dS = P ∘ (dP ∘ Z − D) with D = rowsum(dO ∘ O).
HeadTensors dense_reference(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix* d_o,
                            const ScoreMask* keep, const Matrix* dropout_multipliers);

// Dropout's multipliers Z (Nq × Nk) for query head bh = b·H + h under `seed`, by the one keep rule
// every dropping kernel uses (kernels/dropout_keep.h; standard's pass, flash1's and flash2's fused
// tiles): element (r, c) is kept iff keeps(pair_draw(row_key(seed, bh, r), c), c, threshold_of(p)),
// a pure function of (seed, bh, r, c), so the backward regenerates Z instead of storing it
// (docs/schedules.md) and no tiling changes it. p is rounded to a multiple of 2^-16 (threshold_of:
// round(p·2^16)); Z is keep_scale(p) = 1 / (1 − that) where kept, 0 where dropped.
Matrix dropout_multipliers(const Problem& problem, int64_t bh, uint64_t seed);

// The scores the configuration keeps for head bh: per-sequence key lengths (keys beyond the
// sequence's own: sequence_keys, sim/config.h, so --mask's padding for flash1 and flash2 too),
// causal (bottom-right in the sequence's keys), standard's key padding (its mask pass, by the same
// lengths: key_padding_length, sim/problem.h), and, for blocksparse, the nonzero blocks of its
// block mask.
ScoreMask kept_scores(const Config& config, int64_t bh);

}  // namespace flashio::sim
