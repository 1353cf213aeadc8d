#include "reference.h"

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <sstream>

namespace flashio::test {

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void ErrorStats::add(float got, double want) {
  ++count;
  if (std::isnan(got)) {
    ++nan_count;
    return;
  }
  const double e = std::abs(static_cast<double>(got) - want);
  max_abs = std::max(max_abs, e);
  sum_abs += e;
  sum_sq_err += e * e;
  sum_sq_ref += want * want;
}

std::string describe(const ErrorStats& e) {
  std::ostringstream s;
  s << "max " << e.max_abs << " mean " << e.mean_abs() << " rel " << e.relative() << " nan " << e.nan_count << "/"
    << e.count;
  return s.str();
}

namespace {

Mat head(const std::vector<float>& t, int64_t bh, int64_t n, int64_t d) {
  Mat m(n, d);
  const float* p = t.data() + bh * n * d;
  for (int64_t i = 0; i < n * d; ++i) m.data()[i] = p[i];
  return m;
}

void accumulate(ErrorStats& e, const std::vector<float>& got, int64_t offset, const Mat& want) {
  if (got.empty()) return;
  for (int64_t i = 0; i < want.size(); ++i) e.add(got[offset + i], want.data()[i]);
}

}  // namespace

std::vector<AttentionErrors> compare_with_reference(const kernels::AttentionConfig& c, const kernels::HostInputs& in,
                                                    const std::vector<kernels::HostOutputs>& outs) {
  std::vector<AttentionErrors> all(outs.size());
  bool backward = false;
  for (const kernels::HostOutputs& out : outs) backward = backward || !out.dq.empty();
  const int64_t n = c.seqlen, d = c.headdim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t bh = 0; bh < c.batch * c.heads; ++bh) {
    const Mat q = head(in.q, bh, n, d), k = head(in.k, bh, n, d), v = head(in.v, bh, n, d);
    Mat s = scale * q * k.transpose();
    const int64_t b = bh / c.heads;
    const int64_t key_len = c.mask ? n - b * n / (2 * c.batch) : n;  // attention.h's key padding
    Eigen::VectorXd lse(n);
    Mat p(n, n);
    for (int64_t i = 0; i < n; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < n; ++j) {
        if ((c.causal && j > i) || j >= key_len) s(i, j) = -std::numeric_limits<double>::infinity();
        mx = std::max(mx, s(i, j));
      }
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) sum += (p(i, j) = std::exp(s(i, j) - mx));
      p.row(i) /= sum;
      lse(i) = mx + std::log(sum);
    }
    const Mat o = p * v;
    for (size_t x = 0; x < outs.size(); ++x) {
      accumulate(all[x].o, outs[x].o, bh * n * d, o);
      if (!outs[x].lse.empty())
        for (int64_t i = 0; i < n; ++i) all[x].lse.add(outs[x].lse[bh * n + i], lse(i));
    }
    if (!backward) continue;
    const Mat dout = head(in.dout, bh, n, d);
    const Mat dv = p.transpose() * dout;
    const Mat dp = dout * v.transpose();
    const Eigen::VectorXd delta = (dout.array() * o.array()).rowwise().sum();
    Mat ds = p.array() * (dp.colwise() - delta).array();
    const Mat dq = scale * ds * k;
    const Mat dk = scale * ds.transpose() * q;
    for (size_t x = 0; x < outs.size(); ++x) {
      accumulate(all[x].dq, outs[x].dq, bh * n * d, dq);
      accumulate(all[x].dk, outs[x].dk, bh * n * d, dk);
      accumulate(all[x].dv, outs[x].dv, bh * n * d, dv);
    }
  }
  return all;
}

}  // namespace flashio::test
