// The block mask of block-sparse FlashAttention (docs/paper.md, §3.3 and Proposition 4): which
// (i, j) tiles of the Tr × Tc score grid are computed. Specs (experiments/README.md, "Options"):
// `banded:W` (|i - j| <= W, in tiles), `random:DENSITY[:SEED]` (each tile kept with that
// probability; the diagonal always kept so every row has a block), or a path to a file of Tr lines
// of Tc characters 0/1.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace flashio::sim {

struct BlockMaskSpec {
  std::string text;  // as given; empty means dense (every tile)
};

class BlockMask {
 public:
  // Throws InvalidInput (Field::block_mask) when the spec or file is malformed or the file's
  // shape is not Tr × Tc.
  BlockMask(const BlockMaskSpec& spec, int64_t tiles_r, int64_t tiles_c);
  bool nonzero(int64_t i, int64_t j) const { return bits_[i * tiles_c_ + j] != 0; }
  int64_t tiles_r() const { return tiles_r_; }
  int64_t tiles_c() const { return tiles_c_; }
  int64_t nonzero_count() const;
  double density() const;  // s in Proposition 4

 private:
  int64_t tiles_r_, tiles_c_;
  std::vector<unsigned char> bits_;
};

// Checks the spec's syntax without a grid (for the CLI's early validation).
void validate_block_mask_spec(const BlockMaskSpec& spec);

}  // namespace flashio::sim
