#include "sim/problem.h"

#include "sim/errors.h"

#include <algorithm>
#include <tuple>

namespace flashio::sim {

void validate(const Problem& p) {
  auto positive = [](int64_t v, Field field) {
    if (v <= 0)
      throw InvalidInput(field, "must be a positive integer (got " + std::to_string(v) + ")");
  };
  positive(p.batch, Field::batch);
  positive(p.heads, Field::heads);
  positive(p.seqlen, Field::seqlen);
  positive(p.headdim, Field::headdim);
  if (p.kv_heads < 0)
    throw InvalidInput(Field::kv_heads, "must be a positive integer dividing heads (got " + std::to_string(p.kv_heads) + ")");
  if (p.heads % p.kv_heads_count() != 0)
    throw InvalidInput(Field::kv_heads, "must divide heads = " + std::to_string(p.heads) + " (got " +
                                            std::to_string(p.kv_heads_count()) + "); 1 is multi-query attention");
  if (p.seqlen_k < 0)
    throw InvalidInput(Field::seqlen_k, "must be a positive integer (got " + std::to_string(p.seqlen_k) + ")");
  if (p.causal && p.keys() < p.seqlen)
    throw InvalidInput(Field::seqlen_k, "causal aligns the last query with the last key, so with Nk = " +
                                            std::to_string(p.keys()) + " < Nq = " + std::to_string(p.seqlen) +
                                            " the first queries see no key; allowed with causal: seqlen_k >= seqlen");
  for (const auto& [side, field, option] : {std::tuple{p.window_left, Field::window_left, "left"},
                                             std::tuple{p.window_right, Field::window_right, "right"}})
    if (side < 0 && side != kNoWindow)
      throw InvalidInput(field, std::string("the window's ") + option + " side must be a number of keys >= 0, or none (got " +
                                    std::to_string(side) + ")");
  if (p.causal && p.window_right != kNoWindow)
    throw InvalidInput(Field::window_right, "causal is a window whose right side is 0, so give causal or window_right, "
                                            "not both (got causal with window_right = " + std::to_string(p.window_right) + ")");
  const bool windowed = p.windowed();
  if (windowed && p.keys() < p.seqlen)
    throw InvalidInput(Field::seqlen_k, "a window is aligned bottom-right (the last query at the last key), so with Nk = " +
                                            std::to_string(p.keys()) + " < Nq = " + std::to_string(p.seqlen) +
                                            " the first queries see no key; allowed with a window: seqlen_k >= seqlen");
  // A varlen batch (docs/shapes.md, "Variable-length batches"): its sequences' own lengths, packed;
  // what the kernels build it with (kernels/attention_run.cu refuses the rest).
  if (p.varlen) {
    if (p.key_lengths.empty())
      throw InvalidInput(Field::varlen, "packs the sequences of key_lengths without padding (sequence b has n_b queries "
                                        "and keys), so it needs them, one length per sequence; allowed: varlen with "
                                        "key_lengths");
    if (p.keys() != p.seqlen)
      throw InvalidInput(Field::varlen, "each packed sequence has as many keys as queries (n_b of each, at most N), not "
                                        "Nk = " + std::to_string(p.keys()) + " with N = " + std::to_string(p.seqlen) +
                                            "; allowed with varlen: seqlen_k = seqlen");
    if (p.mask)
      throw InvalidInput(Field::varlen, "packs the sequences of key_lengths, which are then their only lengths, not the "
                                        "mask's built-in padding; allowed with varlen: mask = 0");
    if (p.dropout > 0)
      throw InvalidInput(Field::varlen, "fused dropout over packed sequences is not built; allowed with varlen: "
                                        "dropout = 0");
    if (windowed)
      throw InvalidInput(Field::varlen, "a sliding window over packed sequences is not built; allowed with varlen: no "
                                        "window (causal is allowed)");
  }
  if (!p.key_lengths.empty()) {
    const auto& lengths = *p.key_lengths.values;
    if (static_cast<int64_t>(lengths.size()) != p.batch)
      throw InvalidInput(Field::key_lengths, "needs one key length per sequence, B = " + std::to_string(p.batch) +
                                                 " of them (got " + std::to_string(lengths.size()) + ")");
    for (size_t b = 0; b < lengths.size(); ++b) {
      if (lengths[b] < 1 || lengths[b] > p.keys())
        throw InvalidInput(Field::key_lengths,
                           p.varlen ? "sequence " + std::to_string(b) + "'s length must be 1 to N = " +
                                          std::to_string(p.seqlen) + " (varlen: its queries and keys; got " +
                                          std::to_string(lengths[b]) + ")"
                                    : "sequence " + std::to_string(b) + "'s key length must be 1 to Nk = " +
                                          std::to_string(p.keys()) + ", the cache's keys (got " +
                                          std::to_string(lengths[b]) + ")");
      // A packed sequence is square: causal is its own diagonal, whatever its length.
      if (!p.varlen && (p.causal || windowed) && lengths[b] < p.seqlen)
        throw InvalidInput(Field::key_lengths, "causal aligns each sequence's last query with its last key, so "
                                               "sequence " + std::to_string(b) + "'s key length " +
                                                   std::to_string(lengths[b]) + " < Nq = " + std::to_string(p.seqlen) +
                                                   " leaves its first queries no key; allowed with causal or a window: lengths >= seqlen");
    }
  }
  if (!(p.dropout >= 0.0 && p.dropout < 1.0))
    throw InvalidInput(Field::dropout, "must be a probability in [0, 1) (got " +
                                           std::to_string(p.dropout) + ")");
}

std::string band_label(const Problem& p) {
  if (!p.windowed()) return p.causal ? ", causal" : "";
  auto side = [](int64_t v) { return v == kNoWindow ? std::string("none") : std::to_string(v); };
  return std::string(p.causal ? ", causal" : "") + ", window left " + side(p.window_left) + ", right " +
         side(p.causal ? 0 : p.window_right);
}

int64_t KeyLengths::longest() const {
  int64_t most = 0;
  if (values)
    for (const int64_t v : *values) most = std::max(most, v);
  return most;
}

int64_t key_padding_length(int64_t batch_index, int64_t batch, int64_t keys) {
  // b·Nk in 128 bits: both may be large (the model takes B and Nk past 2^32).
  const auto q = static_cast<__int128>(batch_index) * keys / (static_cast<__int128>(2) * batch);
  return keys - static_cast<int64_t>(q);
}

double convention_flops(const Problem& p) {
  std::vector<KeyLengthRun> runs;
  if (!p.key_lengths.empty())
    for (int64_t b = 0; b < p.batch; ++b) runs.push_back({b, 1, p.keys_of(b)});
  return convention_flops(p, runs);
}

double convention_flops(const Problem& p, const std::vector<KeyLengthRun>& runs) {
  double factor = 0.0;
  if (has_forward(p.pass)) factor += 1.0;
  if (has_backward(p.pass)) factor += 2.5;  // five N²d GEMMs, the recomputation of S included
  // A sequence's scores (its own keys and band), times the sequences that share them.
  const auto of_sequences = [&](int64_t keys, double sequences) {
    const double nk = static_cast<double>(keys);
    const double nq = static_cast<double>(p.varlen ? keys : p.seqlen);  // a packed sequence: n_b queries
    const double scores = p.windowed() ? p.band_with_keys(keys).visible_scores(p.seqlen, keys)
                                       : nq * nk * (p.causal ? 1.0 - nq / (2.0 * nk) : 1.0);
    return 4.0 * sequences * static_cast<double>(p.heads) * scores * static_cast<double>(p.headdim) * factor;
  };
  if (runs.empty()) return of_sequences(p.keys(), static_cast<double>(p.batch));
  double flops = 0;
  for (const KeyLengthRun& r : runs) flops += of_sequences(r.keys, static_cast<double>(r.count));
  return flops;
}

}  // namespace flashio::sim
