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

// One visited tile of flash2's forward: S = QKᵀ and O += PV (2·Br·Bc·d each); exp of the tile
// plus one rescale factor e^(m−m') per row; scale+max, subtract, row sum, convert (4 per
// score), and rescaling the Br × d accumulator.
inline Flops flash2_fwd_tile(int64_t br, int64_t bc, int64_t d) {
  const int64_t scores = checked_mul(br, bc);
  return {checked_mul(4, scores, d), checked_add(scores, br),
          checked_add(checked_mul(4, scores), checked_mul(br, d))};
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
// renormalisation of the stored output (scale old O, add, divide by ℓ_new: 3·Br·d).
inline Flops flash1_fwd_tile(int64_t br, int64_t bc, int64_t d) {
  const int64_t scores = checked_mul(br, bc);
  return {checked_mul(4, scores, d), checked_add(scores, checked_mul(2, br)),
          checked_add(checked_add(checked_mul(4, scores), checked_mul(3, br, d)), checked_mul(4, br))};
}

// One visited tile of the backward (Algorithm 4 / FA2): recompute S, dV += Pᵀ dO, dP = dO Vᵀ,
// dQ += dS K, dK += dSᵀ Q (five 2·Br·Bc·d products); exp of the tile to recompute P;
// P from S and the statistics (2), dS = P∘(dP − D) (2) per score.
inline Flops flash2_bwd_tile(int64_t br, int64_t bc, int64_t d) {
  const int64_t scores = checked_mul(br, bc);
  return {checked_mul(10, scores, d), scores, checked_mul(4, scores)};
}
// flash1 recomputes D_i = rowsum(dO_i ∘ O_i) on every inner step (Algorithm 4 line 19) and
// normalises P by ℓ (one more per score).
inline Flops flash1_bwd_tile(int64_t br, int64_t bc, int64_t d) {
  const int64_t scores = checked_mul(br, bc);
  return {checked_mul(10, scores, d), scores, checked_add(checked_mul(5, scores), checked_mul(2, br, d))};
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
