// Block-sparse FlashAttention's kernels (flash2 over a block mask; docs/kernels.md, "Block-sparse
// kernels"): which tiles they visit. The mask is given on blocks of T × T tokens (as sim's
// BlockMask, sim/block_mask.h, defines it: one meaning at every tiling); the kernels take tilings
// whose Br and Bc divide T, so that each tile lies inside one mask block and is visited whole
// or not at all (no zero block's scores to mask inside a visited tile), and read per row tile
// (forward) or per column tile (backward) the list of tiles it visits. The rule is the model's
// (sim/schedule.h, TileFilter::visits: the tile overlaps a nonzero block, and causal, the tile
// is not wholly above the diagonal); tests/profiler checks that the lists below are the model's
// visits tile for tile. Pure C++, no CUDA.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace flashio::kernels {

// A block mask over an N × N score matrix: blocks × blocks bits (row-major: query block, key
// block), blocks = ⌈N / block_tokens⌉. Empty bits: dense attention (no mask).
struct TokenBlockMask {
  int64_t block_tokens = 0;
  int64_t blocks = 0;
  std::vector<uint8_t> bits;
  bool empty() const { return bits.empty(); }
  bool nonzero(int64_t bi, int64_t bj) const { return bits[static_cast<size_t>(bi * blocks + bj)] != 0; }
};

// Compressed lists of visited tiles: tile list of outer tile t is tiles[offsets[t] ..
// offsets[t + 1]), ascending (the order the kernels stream them in, as the model's schedule).
struct SparseTileLists {
  std::vector<int32_t> offsets;  // outer tiles + 1
  std::vector<int32_t> tiles;
  int64_t visits() const { return static_cast<int64_t>(tiles.size()); }
};

// Why `mask` cannot run at tiling Br × Bc over N tokens (its shape does not match N, or T is
// not a multiple of Br and of Bc), or empty when it can. One line, naming what is allowed, headed
// by `field` (the kernels' "block_mask", the command line's "--block-mask").
std::string block_mask_tiling_problem(const TokenBlockMask& mask, int64_t seqlen, int64_t block_r, int64_t block_c,
                                      const std::string& field = "block_mask");

// The forward's lists: per row tile i (of ⌈N / Br⌉), the column tiles j it visits. The
// backward's: per column tile j (of ⌈N / Bc⌉), the row tiles i that visit it. Both need
// block_mask_tiling_problem(...) empty (std::invalid_argument otherwise).
SparseTileLists row_tile_lists(const TokenBlockMask& mask, int64_t seqlen, bool causal, int64_t block_r,
                               int64_t block_c);
SparseTileLists col_tile_lists(const TokenBlockMask& mask, int64_t seqlen, bool causal, int64_t block_r,
                               int64_t block_c);

}  // namespace flashio::kernels
