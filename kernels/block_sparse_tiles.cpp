#include "kernels/block_sparse_tiles.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace flashio::kernels {

std::string block_mask_tiling_problem(const TokenBlockMask& m, int64_t seqlen, int64_t br, int64_t bc,
                                      const std::string& field) {
  if (m.block_tokens < 1 || m.blocks != (seqlen + m.block_tokens - 1) / m.block_tokens ||
      static_cast<int64_t>(m.bits.size()) != m.blocks * m.blocks)
    return field + ": " + std::to_string(m.blocks) + " x " + std::to_string(m.blocks) + " blocks of " +
           std::to_string(m.block_tokens) + " tokens do not cover N = " + std::to_string(seqlen) +
           " (allowed: ceil(N / T) blocks per side)";
  if (br < 1 || bc < 1 || m.block_tokens % br != 0 || m.block_tokens % bc != 0)
    return field + ": the kernels visit whole tiles inside one mask block, so its T = " +
           std::to_string(m.block_tokens) + " tokens must be a multiple of the tiling's Br and Bc (" +
           std::to_string(br) + "x" + std::to_string(bc) + "); allowed: T = 128 (the default) or another " +
           "multiple of both, or a tiling that divides T";
  return {};
}

namespace {

// Tile (i, j) is visited: its block is nonzero (the tile lies inside one, T being a multiple of
// Br and Bc), and causal, its first key is at most its last query (the model's
// TileGrid::outside_band with right = 0 and Nk = Nq).
bool visits(const TokenBlockMask& m, int64_t n, bool causal, int64_t br, int64_t bc, int64_t i, int64_t j) {
  if (causal && j * bc > std::min(n, (i + 1) * br) - 1) return false;
  return m.nonzero(i * br / m.block_tokens, j * bc / m.block_tokens);
}

void check(const TokenBlockMask& m, int64_t n, int64_t br, int64_t bc) {
  const std::string problem = block_mask_tiling_problem(m, n, br, bc);
  if (!problem.empty()) throw std::invalid_argument(problem);
}

// by_rows: per row tile its column tiles (the forward's lists); else per column tile its row
// tiles. A tile lies in one mask block, so an outer tile's candidates are the inner tiles of its
// block row's (column's) nonzero blocks: O(outer tiles · blocks + visits), not O(Tr · Tc).
SparseTileLists tile_lists(const TokenBlockMask& m, int64_t n, bool causal, int64_t br, int64_t bc, bool by_rows) {
  check(m, n, br, bc);
  const int64_t tr = (n + br - 1) / br, tc = (n + bc - 1) / bc;
  const int64_t outer = by_rows ? tr : tc, inner = by_rows ? tc : tr;
  const int64_t outer_size = by_rows ? br : bc, inner_size = by_rows ? bc : br;
  const int64_t per_block = m.block_tokens / inner_size;  // inner tiles per mask block
  SparseTileLists out;
  out.offsets.push_back(0);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t block = o * outer_size / m.block_tokens;
    for (int64_t other = 0; other < m.blocks; ++other) {
      if (!(by_rows ? m.nonzero(block, other) : m.nonzero(other, block))) continue;
      for (int64_t x = other * per_block; x < std::min(inner, (other + 1) * per_block); ++x)
        if (visits(m, n, causal, br, bc, by_rows ? o : x, by_rows ? x : o)) out.tiles.push_back(static_cast<int32_t>(x));
    }
    // The kernels index the lists with int32 offsets.
    if (out.tiles.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      throw std::invalid_argument("block_mask: more than 2^31 - 1 visited tiles in one pass (N = " + std::to_string(n) +
                                  " at " + std::to_string(br) + "x" + std::to_string(bc) +
                                  "); allowed: a sparser mask, larger tiles or a shorter N");
    out.offsets.push_back(static_cast<int32_t>(out.tiles.size()));
  }
  return out;
}

}  // namespace

SparseTileLists row_tile_lists(const TokenBlockMask& m, int64_t n, bool causal, int64_t br, int64_t bc) {
  return tile_lists(m, n, causal, br, bc, true);
}

SparseTileLists col_tile_lists(const TokenBlockMask& m, int64_t n, bool causal, int64_t br, int64_t bc) {
  return tile_lists(m, n, causal, br, bc, false);
}

}  // namespace flashio::kernels
