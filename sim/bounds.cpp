#include "sim/bounds.h"

#include <algorithm>
#include <cmath>

#include "sim/block_mask.h"
#include "sim/row.h"

namespace flashio::sim {
namespace {

struct Split {
  double read = 0, write = 0;  // elements per head
};

}  // namespace

std::vector<Bound> bounds(const Config& c) {
  const Problem& p = c.problem;
  const double d = static_cast<double>(p.headdim);
  const double m = static_cast<double>(sram_elements(p, c.sram_bytes));  // M in elements
  // Per query head; the K/V tensors count Hkv/H of a head's (docs/shapes.md).
  const double scale = static_cast<double>(p.batch_heads() * element_bytes(p.dtype));
  const double kv_share = static_cast<double>(p.kv_heads_count()) / static_cast<double>(p.heads);
  // Per-sequence key lengths: every bound is linear in a sequence's keys, so a query head's
  // bound at their mean is the batch's mean (docs/shapes.md, "Per-sequence key lengths").
  // (sim/config.h, key_length_runs: given, or the mask's padding in flash1 and flash2).
  const std::vector<KeyLengthRun> runs = key_length_runs(c);
  double mean_keys = static_cast<double>(p.keys());
  // A varlen batch (docs/shapes.md, "Variable-length batches"): sequence b has n_b queries as well
  // as keys, so a query head's queries are the mean length too, and its scores the mean of n_b²
  // (the packed sizes: nothing of the padding to N).
  double n = static_cast<double>(p.seqlen), mean_squares = 0;
  if (!runs.empty()) {
    double total = 0;
    for (const KeyLengthRun& r : runs) {
      const double count = static_cast<double>(r.count), keys = static_cast<double>(r.keys);
      total += count * keys;
      mean_squares += count * keys * keys / static_cast<double>(p.batch);
    }
    mean_keys = total / static_cast<double>(p.batch);
    if (p.varlen) n = mean_keys;
  }
  const bool shaped = p.kv_heads_count() != p.heads || p.keys() != p.seqlen || !runs.empty();
  const bool fwd = has_forward(p.pass), bwd = has_backward(p.pass);
  std::vector<Bound> out;
  auto add = [&](RowAlgo algo, std::string formula, Split s) {
    out.push_back({algo, std::move(formula), s.read * scale, s.write * scale});
  };

  // blocksparse with a mask (sim/block_mask.h): the attention reads only the queries (Nq) and
  // keys (Nk) with a kept score, and its Theorem 2 term scales by the mask's density s
  // (Proposition 4: Θ(Nd + N²d²M⁻¹s)). Dense: Nq = Nk = N, s = 1.
  double nq = n, nk = mean_keys, s = 1;
  std::string sparse_note;
  if (c.algo == Algo::blocksparse && !c.block_mask.text.empty()) {
    const BlockMask mask(c.block_mask, p);
    nq = static_cast<double>(mask.kept_queries());
    nk = static_cast<double>(mask.kept_keys());
    s = mask.density();
    sparse_note = " (blocksparse: Nq = " + std::to_string(mask.kept_queries()) + " queries and Nk = " +
                  std::to_string(mask.kept_keys()) + " keys with a kept score; s = " + std::to_string(s) +
                  ", the mask's nonzero blocks of " + std::to_string(mask.block_tokens()) + " tokens)";
  }

  // A window (sim/key_band.h) keeps a band of the scores: its density plays Proposition 4's s,
  // and only the keys some query sees are needed (with Nq < Nk a left side hides the first ones).
  if (p.windowed()) {
    const KeyBand band = p.band_of();
    const int64_t nkeys = p.keys();
    s = band.visible_scores(p.seqlen, nkeys) / (n * static_cast<double>(nkeys));
    nk = static_cast<double>(band.last_key(p.seqlen - 1, nkeys) - band.first_key(0) + 1);
    sparse_note = " (window: Nk = " + std::to_string(static_cast<int64_t>(nk)) +
                  " keys some query sees; s = " + std::to_string(s) + ", the share of scores the window keeps)";
  }

  // Compulsory traffic: every input the attention needs read once, every output written once.
  Split comp;
  if (fwd) { comp.read += (nq + 2 * nk * kv_share) * d; comp.write += n * d; }
  const double nk_written = mean_keys;  // dK, dV of every key, kept or not
  if (bwd) { comp.read += (3 * nq + 2 * nk * kv_share) * d; comp.write += (n + 2 * nk_written * kv_share) * d; }
  std::string comp_formula = "inputs read once, outputs written once: fwd 3Nd r + Nd w, bwd 5Nd r + 3Nd w";
  if (!sparse_note.empty())
    comp_formula = "inputs read once, outputs written once: fwd (Nq + 2Nk)d r + Nd w, bwd (3Nq + 2Nk)d r + 3Nd w" + sparse_note;
  else if (shaped)
    comp_formula = "inputs read once, outputs written once, per query head (K, V, dK, dV × Hkv/H): "
                   "fwd (Nq + 2Nk·Hkv/H)d r + Nq·d w, bwd (3Nq + 2Nk·Hkv/H)d r + (Nq + 2Nk·Hkv/H)d w";
  if (p.varlen) comp_formula += " (varlen: Nq = Nk, the sequences' mean length)";
  else if (!runs.empty()) comp_formula += " (Nk: the sequences' mean key length)";
  add(RowAlgo::compulsory, comp_formula, comp);

  // Theorem 2 with Algorithm 1's constant: Bc = M/4d gives Tc = 4Nd/M passes, each reading
  // Q_i and O_i and writing O_i (Nd each): 8N²d²/M read, 4N²d²/M written. Algorithm 4's
  // passes read Q, O, dO, dQ and write dQ: 16N²d²/M read, 4N²d²/M written.
  // Nq·Nk in place of N² for Nq ≠ Nk (each query head's passes over its keys).
  const double keys = mean_keys;
  const double scores = p.varlen ? mean_squares : n * keys;  // Nq·Nk per query head (varlen: the mean n_b²)
  const double t2 = scores * d * d / m * s;
  Split th;
  if (fwd) { th.read += 8 * t2; th.write += 4 * t2; }
  if (bwd) { th.read += 16 * t2; th.write += 4 * t2; }
  add(RowAlgo::theorem2,
      std::string(shaped ? "Theorem 2 with Algorithm 1/4's constants, per query head: fwd 8NqNk·d²/M r + 4NqNk·d²/M w, "
                           "bwd 16NqNk·d²/M r + 4NqNk·d²/M w (M in elements)"
                         : "Theorem 2 with Algorithm 1/4's constants: fwd 8N²d²/M r + 4N²d²/M w, "
                           "bwd 16N²d²/M r + 4N²d²/M w (M in elements)") +
          (sparse_note.empty() ? "" : ", × s (Proposition 4)" + sparse_note),
      th);

  // Saha & Ye: Θ(min(N²d²/M, N²d/√M)); the branches cross at M = d². A shape (constant 1),
  // carried as a total in the read column.
  const double passes = (fwd ? 1.0 : 0.0) + (bwd ? 1.0 : 0.0);
  add(RowAlgo::saha_ye,
      shaped ? "lower-bound shape min(NqNk·d²/M, NqNk·d/sqrt(M)) per pass and query head, total (constant 1)"
             : "lower-bound shape min(N²d²/M, N²d/sqrt(M)) per pass, total (constant 1)",
      {passes * std::min(t2, scores * d / std::sqrt(m)), 0});

  // Standard attention, Θ(Nd + N²) (the paper's Algorithms 0 and 3).
  Split st;
  const double kv = keys * kv_share * d, nn = scores;
  if (fwd) { st.read += n * d + 2 * kv + 2 * nn; st.write += n * d + 2 * nn; }
  if (bwd) { st.read += 3 * n * d + 2 * kv + 5 * nn; st.write += n * d + 2 * kv + 2 * nn; }
  add(RowAlgo::standard_theta,
      shaped ? "Algorithms 0/3 per query head (K, V, dK, dV × Hkv/H): fwd Nq·d+2Nk·d+2NqNk r, Nq·d+2NqNk w; "
               "bwd 3Nq·d+2Nk·d+5NqNk r, Nq·d+2Nk·d+2NqNk w"
             : "Algorithms 0/3: fwd 3Nd+2N² r, Nd+2N² w; bwd 5Nd+5N² r, 3Nd+2N² w",
      st);
  return out;
}

std::vector<Row> bound_rows(const Config& c) {
  std::vector<Row> rows;
  for (const Bound& b : bounds(c)) {
    Row r = config_row(c, RowSource::bound);
    r.algo = b.algo;
    r.kernel_impl.reset();  // a bound runs no kernel
    r.io_read_bytes = b.read_bytes;
    r.io_write_bytes = b.write_bytes;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace flashio::sim
