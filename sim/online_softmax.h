// The online softmax: the merge rule that lets FlashAttention compute softmax(S)V one block of
// keys at a time without ever holding a whole row of S (docs/paper.md, "Online softmax: the
// merge rule"; FlashAttention Algorithm 1 lines 9-12, FlashAttention-2 Algorithm 1).
//
// Per row keep the running max m, the running sum ℓ of e^(s − m) and the running unnormalised
// output u. A new block of scores s' with values V' is merged as
//   m' = max(m, max s'),  ℓ' = e^(m−m')·ℓ + Σ e^(s'−m'),  u' = e^(m−m')·u + Σ e^(s'−m')·V',
// and O = u'/ℓ'. Both ℓ and u must be rescaled by e^(m−m'); Rescale::sum_only is the classic
// mistake (only ℓ rescaled), kept here so tests and `flashio explain` can show what it breaks.
//
// Masked scores are −∞. A row that has seen no unmasked score yet has m = −∞, ℓ = 0, u = 0;
// e^(−∞ − (−∞)) is taken as 0 for scores and 1 for the rescale factor, so such rows stay
// (−∞, 0, 0) instead of turning into NaN, and a row that never sees a score ends with O = 0 and
// log-sum-exp −∞ (the convention of the FlashAttention kernels).
#pragma once
#include <cstdint>

#include <Eigen/Dense>

namespace flashio::sim {

using SoftmaxMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

enum class Rescale {
  both,      // the correct rule: ℓ and u both multiplied by e^(m − m')
  sum_only,  // wrong on purpose: ℓ rescaled, u not
};

// Running statistics of a block of rows (unnormalised: FlashAttention-2 keeps these on chip).
struct OnlineSoftmax {
  Eigen::VectorXd m;  // running row max (−∞ before the first score)
  Eigen::VectorXd l;  // running Σ e^(s − m)
  SoftmaxMatrix u;    // running Σ e^(s − m)·v, rows × d
};

// The state before any block: m = −∞, ℓ = 0, u = 0 (Algorithm 1 line 2).
OnlineSoftmax online_softmax_start(int64_t rows, int64_t d);

// Merges one block: scores (rows × c, −∞ where masked) and its values (c × d).
// With dropout multipliers Z (rows × c: 0 where dropped, 1/(1 − p) where kept; null: none) the
// values are multiplied by P̃ ∘ Z while m and ℓ come from the undropped P̃, as FlashAttention's
// forward with dropout does (paper Algorithm 2, docs/paper.md): O = (P ∘ Z)V.
void online_softmax_merge(OnlineSoftmax& state, const SoftmaxMatrix& scores,
                          const SoftmaxMatrix& values, Rescale rescale = Rescale::both,
                          const SoftmaxMatrix* dropout = nullptr);

// O = u / ℓ (rows with ℓ = 0 give 0).
SoftmaxMatrix online_softmax_output(const OnlineSoftmax& state);
// L = m + log ℓ (−∞ for rows that saw no score).
Eigen::VectorXd online_softmax_lse(const OnlineSoftmax& state);

// FlashAttention (Algorithm 1 lines 9-12) keeps the output normalised between steps: it takes
// the stored (O, ℓ, m) of the row block, the block's own max m̃ and sum ℓ̃ of P̃ = e^(S − m̃), and
// writes O_new = diag(ℓ_new)⁻¹ (diag(ℓ)·e^(m−m_new)·O + e^(m̃−m_new)·P̃V). The same merge rule
// with u = diag(ℓ)·O; updates o, l, m in place. Dropout multipliers as for online_softmax_merge:
// P̃ ∘ Z multiplies V, ℓ̃ is P̃'s (Algorithm 2).
void online_softmax_merge_normalised(SoftmaxMatrix& o, Eigen::VectorXd& l, Eigen::VectorXd& m,
                                     const SoftmaxMatrix& scores, const SoftmaxMatrix& values,
                                     const SoftmaxMatrix* dropout = nullptr);

// e^(a − b) with e^(−∞ − (−∞)) = `when_both_infinite` (see above).
double exp_difference(double a, double b, double when_both_infinite);

}  // namespace flashio::sim
