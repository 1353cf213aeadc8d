#include "compare.h"

#include <sstream>
#include <stdexcept>

#include "sim/config.h"
#include "sim/execute.h"

namespace flashio::test {

void ErrorStats::add(float got, double want) {
  ++count;
  if (std::isnan(got)) {
    ++nan_count;
    return;
  }
  // A row with no kept score has lse = −inf in the reference: the kernel's −inf there is exact
  // (and adds nothing to the norms).
  if (std::isinf(want) && static_cast<double>(got) == want) return;
  const double e = std::abs(static_cast<double>(got) - want);
  max_abs = std::max(max_abs, e);
  max_scaled = std::max(max_scaled, e / std::max(1.0, std::abs(want)));
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

sim::Matrix head(const std::vector<float>& t, int64_t bh, int64_t n, int64_t d) {
  sim::Matrix m(n, d);
  const float* p = t.data() + bh * n * d;
  for (int64_t i = 0; i < n * d; ++i) m.data()[i] = p[i];
  return m;
}

void accumulate(ErrorStats& e, const std::vector<float>& got, int64_t offset, const sim::Matrix& want) {
  if (got.empty()) return;
  for (int64_t i = 0; i < want.size(); ++i) e.add(got[offset + i], want.data()[i]);
}

// The model's configuration with the scores the kernels keep: the same algorithm (the key
// padding is standard's only), shape, causal and mask.
sim::Config model_config(const kernels::AttentionConfig& c) {
  sim::Config m;
  const auto algo = sim::parse_algo(kernels::to_string(c.algo));
  if (!algo) throw std::invalid_argument("no model algorithm named " + kernels::to_string(c.algo));
  m.algo = *algo;
  m.problem.batch = c.batch;
  m.problem.heads = c.heads;
  m.problem.seqlen = c.seqlen;
  m.problem.kv_heads = kernels::kv_heads_of(c);
  m.problem.seqlen_k = kernels::keys_of(c);
  m.problem.headdim = c.headdim;
  m.problem.causal = c.causal;
  m.problem.window_left = c.window_left;  // the kernels' −1 is sim::kNoWindow
  m.problem.window_right = c.window_right;
  m.problem.mask = c.mask;
  m.problem.dropout = c.dropout;
  std::vector<int64_t> lengths = c.key_lengths;
  if (c.mask && c.algo != kernels::Algo::standard) {  // flash's --mask: the built-in lengths as key lengths
    m.problem.mask = false;
    for (int64_t b = 0; b < c.batch; ++b) lengths.push_back(sim::key_padding_length(b, c.batch, m.problem.keys()));
  }
  if (!lengths.empty())
    m.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(lengths), "kernel test"};
  return m;
}

}  // namespace

std::vector<AttentionErrors> compare_with_reference(const kernels::AttentionConfig& c, const kernels::HostInputs& in,
                                                    const std::vector<kernels::HostOutputs>& outs,
                                                    uint64_t dropout_seed) {
  std::vector<AttentionErrors> all(outs.size());
  bool backward = false;
  for (const kernels::HostOutputs& out : outs) backward = backward || !out.dq.empty();
  const int64_t n = c.seqlen, nk = kernels::keys_of(c), d = c.headdim;
  const int64_t hkv = kernels::kv_heads_of(c), group = c.heads / hkv;
  const sim::Config model = model_config(c);
  const bool all_kept = !c.causal && !c.mask && c.key_lengths.empty() &&
                        c.window_left < 0 && c.window_right < 0 && c.block_mask.empty();
  // A block mask (kernels/block_sparse_tiles.h): query i keeps key j only where the block
  // (⌊i/T⌋, ⌊j/T⌋) is nonzero (sim/block_mask.h, BlockMask::keeps), whatever the kernels' tiles.
  auto apply_block_mask = [&](sim::ScoreMask& keep) {
    if (c.block_mask.empty()) return;
    const int64_t t = c.block_mask.block_tokens;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < nk; ++j) keep(i, j) = keep(i, j) && c.block_mask.nonzero(i / t, j / t);
  };
  // Query head bh reads K/V head (b, h / g); dK and dV of a K/V head are its group's sums.
  for (int64_t bkv = 0; bkv < c.batch * hkv; ++bkv) {
    const sim::Matrix k = head(in.k, bkv, nk, d), v = head(in.v, bkv, nk, d);
    sim::Matrix dk = sim::Matrix::Zero(nk, d), dv = sim::Matrix::Zero(nk, d);
    for (int64_t member = 0; member < group; ++member) {
      const int64_t bh = (bkv / hkv) * c.heads + (bkv % hkv) * group + member;
      const sim::Matrix q = head(in.q, bh, n, d);
      const sim::Matrix dout = backward ? head(in.dout, bh, n, d) : sim::Matrix();
      sim::ScoreMask keep = all_kept ? sim::ScoreMask() : sim::kept_scores(model, bh);
      if (!all_kept) apply_block_mask(keep);
      const sim::Matrix z = c.dropout > 0.0 ? sim::dropout_multipliers(model.problem, bh, dropout_seed) : sim::Matrix();
      const sim::HeadTensors ref = sim::dense_reference(q, k, v, backward ? &dout : nullptr, all_kept ? nullptr : &keep,
                                                        c.dropout > 0.0 ? &z : nullptr);
      for (size_t x = 0; x < outs.size(); ++x) {
        accumulate(all[x].o, outs[x].o, bh * n * d, ref.o);
        if (!outs[x].lse.empty())
          for (int64_t i = 0; i < n; ++i) all[x].lse.add(outs[x].lse[bh * n + i], ref.lse(i, 0));
        if (backward) accumulate(all[x].dq, outs[x].dq, bh * n * d, ref.dq);
      }
      if (backward) {
        dk += ref.dk;
        dv += ref.dv;
      }
    }
    if (!backward) continue;
    for (size_t x = 0; x < outs.size(); ++x) {
      accumulate(all[x].dk, outs[x].dk, bkv * nk * d, dk);
      accumulate(all[x].dv, outs[x].dv, bkv * nk * d, dv);
    }
  }
  return all;
}

}  // namespace flashio::test
