// Problem: one attention call (docs/architecture.md, "Vocabulary"). Layout (B, H, N, d) contiguous.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/checked.h"
#include "sim/key_band.h"
#include "sim/types.h"

namespace flashio::sim {

// Per-sequence key lengths (docs/shapes.md, "Per-sequence key lengths"): sequence b of the batch
// attends to the first values[b] of its cache's Nk keys (Nk is the cache's capacity, the K/V
// layout's rows), as a KV cache whose sequences differ in length. Shared, since a Problem is
// copied often; null: every sequence has Nk keys. `source` is where they came from (the
// `--lengths` file as given), which rows carry as their `lengths` key column.
struct KeyLengths {
  std::shared_ptr<const std::vector<int64_t>> values;
  std::string source;
  bool empty() const { return values == nullptr; }
  // The longest of them (0 when empty): a varlen batch's n_max, which its kernels' grids span.
  int64_t longest() const;
};

// Consecutive sequences [first, first + count) of the batch with one key length `keys`: the unit
// the model runs per-sequence key lengths in (a run's heads run alike; sim/config.h,
// key_length_runs).
struct KeyLengthRun {
  int64_t first = 0, count = 0, keys = 0;
  bool operator==(const KeyLengthRun&) const = default;
};

// The key-padding mask's built-in lengths (Problem::mask): sequence b of B keeps its first
// len_b = Nk − ⌊b·Nk / (2B)⌋ keys (the kernels' rule, kernels/attention_run.cu; always more than
// Nk/2 of them, so no row is wholly masked).
int64_t key_padding_length(int64_t batch_index, int64_t batch, int64_t keys);

struct Problem {
  int64_t batch = 64;     // B
  int64_t heads = 16;     // H: query heads
  int64_t seqlen = 1024;  // N (Nq): queries per head
  // Shapes people serve (docs/shapes.md): K/V heads (Hkv, dividing H; 1 = multi-query) and keys
  // per head (Nk). 0 means "the same as heads / seqlen", so a problem that sets only those
  // stays square; read them through kv_heads_count() and keys().
  int64_t kv_heads = 0;
  int64_t seqlen_k = 0;
  int64_t headdim = 64;   // d
  DType dtype = DType::fp16;
  bool causal = false;
  // A sliding window (sim/key_band.h; docs/shapes.md, "Causal and sliding windows"): query q sees
  // keys q + o − window_left … q + o + window_right; kNoWindow: that side unbounded (the default).
  // Causal is window_right = 0 and cannot be given with a window_right of its own.
  int64_t window_left = kNoWindow, window_right = kNoWindow;
  // Key padding with the built-in lengths key_padding_length(b, B, Nk): standard's separate mask
  // pass over S; flash1 and flash2 run them as per-sequence key lengths (sim/config.h,
  // key_length_runs; docs/shapes.md, "Per-sequence key lengths"), without causal.
  bool mask = false;
  // Dropout on P when > 0 (the rule: kernels/dropout_keep.h): a separate pass of standard's,
  // fused into flash1's and flash2's tiles (docs/schedules.md, "Fused dropout").
  double dropout = 0.0;
  Pass pass = Pass::fwd;
  KeyLengths key_lengths;  // empty: every sequence has Nk keys
  // Variable-length batches (docs/shapes.md, "Variable-length batches"): the sequences of
  // key_lengths packed without padding, as FlashAttention-2's varlen API (cumulative offsets):
  // sequence b has n_b = key_lengths[b] queries and keys (each 1 … N), and its (H, n_b, d) block of
  // Q, O, dO, dQ (and (Hkv, n_b, d) of K, V, dK, dV) follows sequence b − 1's. false: the padded
  // layout (B, H, N, d), where key_lengths are the key-padding mask's lengths. flash2 only.
  bool varlen = false;

  // B·H; throws CountOverflow (sim/checked.h) when it does not fit in 64 bits.
  int64_t batch_heads() const { return checked_mul(batch, heads); }
  int64_t kv_heads_count() const { return kv_heads > 0 ? kv_heads : heads; }  // Hkv
  int64_t keys() const { return seqlen_k > 0 ? seqlen_k : seqlen; }             // Nk
  // Query heads sharing one K/V head (H / Hkv; 1 without grouping).
  int64_t group() const { return heads / kv_heads_count(); }
  // B·Hkv.
  int64_t batch_kv_heads() const { return checked_mul(batch, kv_heads_count()); }
  // Causal with Nq ≠ Nk is aligned bottom-right, as FlashAttention does: query i sees the keys
  // j ≤ i + causal_offset(), the last query the last key (docs/shapes.md).
  int64_t causal_offset() const { return keys() - seqlen; }
  // A varlen batch's longest sequence n_max (Problem::varlen with lengths; the rows and keys its
  // kernels' grids span, docs/shapes.md), else N.
  int64_t longest_sequence() const { return varlen && !key_lengths.empty() ? key_lengths.longest() : seqlen; }
  // Sequence b's queries: its length n_b in a varlen batch, else N.
  int64_t queries_of(int64_t b) const { return varlen && !key_lengths.empty() ? keys_of(b) : seqlen; }
  // Sequence b's keys: its key length (Problem::key_lengths), or Nk; and its causal offset
  // (bottom-right in its own keys). A configuration's, the mask's padding for flash1 and flash2
  // included: sequence_keys (sim/config.h).
  int64_t keys_of(int64_t b) const { return key_lengths.empty() ? keys() : (*key_lengths.values)[static_cast<size_t>(b)]; }
  // A packed sequence of a varlen batch is square: offset 0.
  int64_t causal_offset_of(int64_t b) const { return varlen ? 0 : keys_of(b) - seqlen; }
  // The keys sequence b's queries see by position: causal and the window in one rule.
  KeyBand band_of(int64_t b = 0) const { return band_with_keys(keys_of(b)); }
  // The same for a sequence of `keys` keys (in a varlen batch, of as many queries).
  KeyBand band_with_keys(int64_t keys) const {
    return KeyBand{varlen ? 0 : keys - seqlen, window_left, causal ? 0 : window_right};
  }
  // Some key is hidden by position (causal or a window side bounded).
  bool banded() const { return band_of().bounded(); }
  // A window side is given (beyond causal's own right side).
  bool windowed() const { return window_left != kNoWindow || window_right != kNoWindow; }
};

// ", causal", ", window left L, right R" (a side `none` when unbounded), or "" without a band: for
// the front ends' headings.
std::string band_label(const Problem& problem);

// Throws InvalidInput naming the field and what is allowed when the problem cannot exist.
void validate(const Problem& problem);

// The field's FLOP convention (docs/paper.md, "FLOP convention"): 4·B·H·Nq·Nk·d forward, 2.5×
// that backward, 3.5× for fwdbwd; causal keeps Nq·Nk − Nq²/2 of the Nq·Nk scores (half when
// Nq = Nk; bottom-right aligned, docs/shapes.md). What TFLOP/s is computed from, for every algorithm.
// With per-sequence key lengths, the sum over the sequences of their own Nk; in a varlen batch of
// their own 4·H·n_b²·d (n_b queries and keys, causal halved per sequence). A window counts the
// scores it keeps exactly (KeyBand::visible_scores), so `--window-right 0` counts Nq/2 more per
// head than causal's convention (the diagonal's other half).
double convention_flops(const Problem& problem);
// The same with the sequences' key lengths given in runs (empty: every sequence Nk keys) in place
// of Problem::key_lengths: a configuration's (sim/config.h, convention_flops of a Config).
double convention_flops(const Problem& problem, const std::vector<KeyLengthRun>& runs);

}  // namespace flashio::sim
