// FLOPs per step, in one place: the schedules, the closed forms and execute all call these, so
// the three counters agree by construction on FLOPs and differ only where they should not.
// Tensor FLOPs count whole tiles (Br × Bc × d): the tensor cores run full tiles even at ragged
// edges and on causal diagonal tiles. exp counts exponentials (and logs) on the SFU; other
// counts the remaining CUDA-core work of the online softmax (paper Algorithm 1 lines 10-13).
// Products and sums are checked (sim/checked.h): a tile too large for 64-bit counts throws.
#pragma once
#include <cstdint>

#include "sim/counts.h"

namespace flashio::sim::flops_model {

// Fused dropout (flash1 and flash2 with Problem::dropout > 0; docs/schedules.md, "Fused
// dropout"): the CUDA-core FLOPs the kernels add per score of a visited tile (whole tiles, as the
// tensor FLOPs), counted as `other` by the tile functions below when their `dropout` is set.
// Forward (kernels/flash_fwd_tile.cuh, kDropout): the select that zeroes a dropped P̃, 1 per
// score (the 1/(1 − p) of the kept ones is applied once to O before the epilogue, Br·d per row
// tile, not counted). Backward (kernels/flash_bwd_tile.cuh): a select and a multiply by
// 1/(1 − p) per score, dP ∘ Z / (1 − p) for dS, 2 per score (dV's 1/(1 − p) once, when written,
// not counted). The keep decisions themselves are integer instructions, not FLOPs:
// dropout_*_tile_integer_ops.
inline constexpr int64_t kDropoutFwdFlopsPerScore = 1;
inline constexpr int64_t kDropoutBwdFlopsPerScore = 2;

// The integer instructions of a visited tile's keep decisions (the rule of kernels/dropout_keep.h),
// which the time model puts on the fp32 pipe beside the other FLOPs (sim/time_model.cpp). A draw is
// the add of its pair's offset to the row key and lowbias32 (3 shifts, 3 xors, 2 multiplies): 9.
// A key's test takes its 16 bits of the draw (an and for an even key's low half; an odd key's high
// half is compared with the threshold shifted up, nothing) and compares: 2 for an even key, 1 for
// an odd one. The forward draws once per pair of adjacent keys of a row (a thread holds both, the
// mma accumulator layout), 6 per score; the backward once per pair too, but a pair's two keys
// lie in two lanes (lane and lane ^ 4, Sᵀ's layout), so each lane draws for one of its pairs and
// takes the other's draw by a shuffle, then selects which of the two each score reads: per pair
// a draw, a shuffle and two selects, 7.5 per score. (Row keys, Br per block or per step, not counted.)
inline constexpr int64_t kDropoutDrawIntegerOps = 9;
// The tests of a row of Bc keys from an even one: a compare each, an and for each even key.
inline int64_t dropout_key_test_integer_ops(int64_t bc) { return checked_add(bc, ceil_div(bc, 2)); }
inline int64_t dropout_fwd_tile_integer_ops(int64_t br, int64_t bc) {
  const int64_t draws = ceil_div(bc, 2);  // per row
  return checked_mul(br, checked_add(checked_mul(kDropoutDrawIntegerOps, draws), dropout_key_test_integer_ops(bc)));
}
inline int64_t dropout_bwd_tile_integer_ops(int64_t br, int64_t bc) {
  const int64_t draws = ceil_div(bc, 2);  // per row, each with its shuffle
  return checked_mul(br, checked_add(checked_mul(kDropoutDrawIntegerOps + 1, draws),
                                     checked_add(bc, dropout_key_test_integer_ops(bc))));
}

// One visited tile of flash2's forward: S = QKᵀ and O += PV (2·Br·Bc·d each); exp of the tile
// plus one rescale factor e^(m−m') per row; scale+max, subtract, row sum, convert (4 per
// score), and rescaling the Br × d accumulator; with fused dropout its select per score.
inline Flops flash2_fwd_tile(int64_t br, int64_t bc, int64_t d, bool dropout) {
  const int64_t scores = checked_mul(br, bc);
  const int64_t per_score = 4 + (dropout ? kDropoutFwdFlopsPerScore : 0);
  return {checked_mul(4, scores, d), checked_add(scores, br),
          checked_add(checked_mul(per_score, scores), checked_mul(br, d))};
}
// End of a flash2 row tile: O = u/ℓ (Br·d) and L = m + log ℓ (one log, one add per row).
inline Flops flash2_fwd_finish(int64_t br, int64_t d) { return {0, br, checked_add(checked_mul(br, d), br)}; }
// Split-KV's combine over `rows` rows of S splits (docs/shapes.md, "Split-KV"): per row the max
// of the S partial lse (S), S exponentials and one log, their sum (S), and O = Σ_s w_s·O_s
// (S·d multiply-adds).
inline Flops flash2_fwd_combine_rows(int64_t rows, int64_t splits, int64_t d) {
  return {0, checked_mul(rows, checked_add(splits, 1)),
          checked_mul(rows, checked_add(checked_mul(2, splits), checked_mul(2, splits, d)))};
}

// One visited tile of flash1's forward (Algorithm 1 lines 9-12): the same products and tile
// exps, two rescale exps per row (e^(m_i−m_new), e^(m̃−m_new)), the statistic updates, and the
// renormalisation of the stored output (scale old O, add, divide by ℓ_new: 3·Br·d); with fused
// dropout its select per score.
inline Flops flash1_fwd_tile(int64_t br, int64_t bc, int64_t d, bool dropout) {
  const int64_t scores = checked_mul(br, bc);
  const int64_t per_score = 4 + (dropout ? kDropoutFwdFlopsPerScore : 0);
  return {checked_mul(4, scores, d), checked_add(scores, checked_mul(2, br)),
          checked_add(checked_add(checked_mul(per_score, scores), checked_mul(3, br, d)), checked_mul(4, br))};
}

// One visited tile of the backward (Algorithm 4 / FA2): recompute S, dV += Pᵀ dO, dP = dO Vᵀ,
// dQ += dS K, dK += dSᵀ Q (five 2·Br·Bc·d products); exp of the tile to recompute P;
// P from S and the statistics (2), dS = P∘(dP − D) (2) per score; with fused dropout its select
// and multiply per score.
inline Flops flash2_bwd_tile(int64_t br, int64_t bc, int64_t d, bool dropout) {
  const int64_t scores = checked_mul(br, bc);
  const int64_t per_score = 4 + (dropout ? kDropoutBwdFlopsPerScore : 0);
  return {checked_mul(10, scores, d), scores, checked_mul(per_score, scores)};
}
// flash1 recomputes D_i = rowsum(dO_i ∘ O_i) on every inner step (Algorithm 4 line 19) and
// normalises P by ℓ (one more per score).
inline Flops flash1_bwd_tile(int64_t br, int64_t bc, int64_t d, bool dropout) {
  const int64_t scores = checked_mul(br, bc);
  const int64_t per_score = 5 + (dropout ? kDropoutBwdFlopsPerScore : 0);
  return {checked_mul(10, scores, d), scores, checked_add(checked_mul(per_score, scores), checked_mul(2, br, d))};
}
// flash2's backward preprocess: D = rowsum(dO ∘ O), a multiply and an add per element.
inline Flops rowsum_rows(int64_t rows, int64_t d) { return {0, 0, checked_mul(2, rows, d)}; }

// Standard attention's kernels, per row of the N × N matrix (n columns).
inline Flops gemm(int64_t m, int64_t n, int64_t k) { return {checked_mul(2, m, n, k), 0, 0}; }
inline Flops mask_row(int64_t n) { return {0, 0, n}; }
inline Flops softmax_row(int64_t n) { return {0, n, checked_mul(3, n)}; }  // max, subtract, sum+divide
inline Flops dropout_row(int64_t n) { return {0, 0, n}; }
inline Flops softmax_bwd_row(int64_t n) { return {0, 0, checked_mul(2, n)}; }  // dP − D, times P

}  // namespace flashio::sim::flops_model
