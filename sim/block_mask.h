// The block mask of block-sparse FlashAttention (docs/paper.md, §3.3 and Proposition 4), defined
// on blocks of T × T tokens of the N × N score matrix (T = 128 unless the spec says, as
// block-sparse FlashAttention defines it), so that a mask means the same attention whatever the
// tiling: query i attends to key j only where the block (⌊i/T⌋, ⌊j/T⌋) is nonzero (and, causal,
// j ≤ i). A tiling visits a Br × Bc tile when it overlaps a nonzero block holding a kept score,
// and masks the scores of zero blocks inside it (docs/schedules.md, "blocksparse").
// Specs (experiments/README.md, "Options"): `banded:W` (|bi − bj| ≤ W, in blocks),
// `random:DENSITY[:SEED]` (each block kept with that probability; the diagonal always kept so
// every query has a key), or a path to a file of ⌈N/T⌉ lines of ⌈N/T⌉ characters 0/1; any of
// them followed by `@T` for blocks of T tokens (`banded:1@16`: small problems, the teaching view).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/problem.h"

namespace flashio::sim {

inline constexpr int64_t kMaskBlockTokens = 128;  // T when the spec gives none

struct BlockMaskSpec {
  std::string text;  // as given; empty means dense (every block)
};

class BlockMask {
 public:
  // The mask of `problem`'s N (its seqlen) and causality. Throws InvalidInput
  // (Field::block_mask) when the spec or file is malformed or the file's shape is not
  // ⌈N/T⌉ × ⌈N/T⌉. Causal: blocks above the diagonal hold no kept score and count as zero
  // (a diagonal block keeps its lower triangle).
  BlockMask(const BlockMaskSpec& spec, const Problem& problem);
  int64_t blocks() const { return blocks_; }  // per side: ⌈N / T⌉
  int64_t block_tokens() const { return block_; }  // T
  bool nonzero(int64_t bi, int64_t bj) const { return bits_[static_cast<size_t>(bi * blocks_ + bj)] != 0; }
  // Whether query `query` attends to key `key` (its block is nonzero, and causal: key ≤ query).
  bool keeps(int64_t query, int64_t key) const {
    return (!causal_ || key <= query) && nonzero(query / block_, key / block_);
  }
  // Whether queries [q0, q1) × keys [k0, k1) hold a kept score, the rectangle's first query at or
  // past its first key when causal (the caller's tile test): a nonzero block overlapping it. O(1).
  bool overlaps_nonzero(int64_t q0, int64_t q1, int64_t k0, int64_t k1) const;
  // Whether blocks [b0, b1) × [c0, c1) hold a nonzero one. O(1).
  bool any_nonzero(int64_t b0, int64_t b1, int64_t c0, int64_t c1) const { return count(b0, b1, c0, c1) > 0; }
  int64_t nonzero_count() const { return count(0, blocks_, 0, blocks_); }
  double density() const;  // s in Proposition 4: nonzero blocks ÷ blocks (causal: ÷ the lower triangle's)
  // Tokens of the query (key) side with at least one kept score: what the attention reads of
  // Q (of K and V) at least once.
  int64_t kept_queries() const;
  int64_t kept_keys() const;
  // The scores the mask keeps as the FLOP convention counts them (convention_flops): the nonzero
  // blocks' tokens, query × key; causal, a diagonal block's t²/2, causal's convention (Nq·Nk −
  // Nq²/2), so that a dense causal mask counts what flash2 does.
  double convention_scores() const;

 private:
  int64_t count(int64_t b0, int64_t b1, int64_t c0, int64_t c1) const;  // nonzero blocks in [b0,b1)×[c0,c1)
  int64_t tokens_in(int64_t block) const;
  int64_t n_, block_, blocks_;
  bool causal_;
  std::vector<unsigned char> bits_;
  std::vector<int32_t> prefix_;  // (blocks + 1)² prefix sums of bits_
};

// Checks the spec's syntax without a sequence length (for the CLI's early validation).
void validate_block_mask_spec(const BlockMaskSpec& spec);
// The spec's T, tokens per block side (kMaskBlockTokens unless it ends in @T). Throws as the
// constructor does on a malformed spec.
int64_t block_mask_tokens(const BlockMaskSpec& spec);

}  // namespace flashio::sim
