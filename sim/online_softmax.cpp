#include "sim/online_softmax.h"

#include <cmath>
#include <limits>

namespace flashio::sim {
namespace {
constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

// Row max of a block of scores (−∞ for a wholly masked row).
Eigen::VectorXd row_max(const SoftmaxMatrix& scores) {
  Eigen::VectorXd m = Eigen::VectorXd::Constant(scores.rows(), kMinusInf);
  if (scores.cols() > 0) m = scores.rowwise().maxCoeff();
  return m;
}

// P = e^(S − m) row by row; masked scores (−∞) give 0 even when m is −∞ too.
SoftmaxMatrix exp_shifted(const SoftmaxMatrix& scores, const Eigen::VectorXd& m) {
  SoftmaxMatrix p(scores.rows(), scores.cols());
  for (Eigen::Index r = 0; r < scores.rows(); ++r)
    for (Eigen::Index c = 0; c < scores.cols(); ++c)
      p(r, c) = exp_difference(scores(r, c), m(r), 0.0);
  return p;
}
}  // namespace

double exp_difference(double a, double b, double when_both_infinite) {
  if (a == kMinusInf && b == kMinusInf) return when_both_infinite;
  return std::exp(a - b);
}

OnlineSoftmax online_softmax_start(int64_t rows, int64_t d) {
  return {Eigen::VectorXd::Constant(rows, kMinusInf), Eigen::VectorXd::Zero(rows),
          SoftmaxMatrix::Zero(rows, d)};
}

void online_softmax_merge(OnlineSoftmax& s, const SoftmaxMatrix& scores,
                          const SoftmaxMatrix& values, Rescale rescale, const SoftmaxMatrix* dropout) {
  const Eigen::VectorXd m_new = s.m.cwiseMax(row_max(scores));
  const SoftmaxMatrix p = exp_shifted(scores, m_new);
  for (Eigen::Index r = 0; r < scores.rows(); ++r) {
    // e^(m − m'): 1 while the row has seen nothing (its u and ℓ are 0 anyway).
    const double alpha = exp_difference(s.m(r), m_new(r), 1.0);
    s.l(r) = alpha * s.l(r);
    if (rescale == Rescale::both) s.u.row(r) *= alpha;
  }
  s.l += p.rowwise().sum();
  if (dropout) s.u.noalias() += p.cwiseProduct(*dropout) * values;
  else s.u.noalias() += p * values;
  s.m = m_new;
}

SoftmaxMatrix online_softmax_output(const OnlineSoftmax& s) {
  SoftmaxMatrix o = s.u;
  for (Eigen::Index r = 0; r < o.rows(); ++r) {
    if (s.l(r) > 0) o.row(r) /= s.l(r);
    else o.row(r).setZero();
  }
  return o;
}

Eigen::VectorXd online_softmax_lse(const OnlineSoftmax& s) {
  Eigen::VectorXd lse(s.m.size());
  for (Eigen::Index r = 0; r < lse.size(); ++r)
    lse(r) = s.l(r) > 0 ? s.m(r) + std::log(s.l(r)) : kMinusInf;
  return lse;
}

void online_softmax_merge_normalised(SoftmaxMatrix& o, Eigen::VectorXd& l, Eigen::VectorXd& m,
                                     const SoftmaxMatrix& scores, const SoftmaxMatrix& values,
                                     const SoftmaxMatrix* dropout) {
  const Eigen::VectorXd m_block = row_max(scores);          // m̃ (line 10)
  const SoftmaxMatrix p_block = exp_shifted(scores, m_block);  // P̃ = e^(S − m̃)
  const Eigen::VectorXd l_block = p_block.rowwise().sum();   // ℓ̃
  const SoftmaxMatrix pv = dropout ? SoftmaxMatrix(p_block.cwiseProduct(*dropout) * values)  // P̃ ∘ Z (Algorithm 2)
                                   : SoftmaxMatrix(p_block * values);
  for (Eigen::Index r = 0; r < o.rows(); ++r) {
    const double m_new = std::max(m(r), m_block(r));  // line 11
    const double old_scale = exp_difference(m(r), m_new, 1.0);
    const double block_scale = exp_difference(m_block(r), m_new, 1.0);
    const double l_new = old_scale * l(r) + block_scale * l_block(r);
    if (l_new > 0)  // line 12; a row with nothing seen yet keeps O = 0
      o.row(r) = (l(r) * old_scale * o.row(r) + block_scale * pv.row(r)) / l_new;
    l(r) = l_new;  // line 13
    m(r) = m_new;
  }
}

}  // namespace flashio::sim
