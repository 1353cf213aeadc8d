#include "sim/schedule.h"

namespace flashio::sim {

TileGrid tile_grid(const Config& c) {
  TileGrid g;
  g.n = c.problem.seqlen;
  g.br = c.tiling.block_r;
  g.bc = c.tiling.block_c;
  g.tr = ceil_div(g.n, g.br);
  g.tc = ceil_div(g.n, g.bc);
  return g;
}

TileFilter::TileFilter(const Config& c) : grid_(tile_grid(c)), causal_(c.problem.causal) {
  if (c.algo == Algo::blocksparse && !c.block_mask.text.empty()) {
    BlockMask m(c.block_mask, grid_.tr, grid_.tc);
    mask_.resize(static_cast<size_t>(grid_.tr * grid_.tc));
    for (int64_t i = 0; i < grid_.tr; ++i)
      for (int64_t j = 0; j < grid_.tc; ++j) mask_[i * grid_.tc + j] = m.nonzero(i, j);
  }
}

bool TileFilter::visits(int64_t i, int64_t j) const {
  if (causal_ && grid_.above_diagonal(i, j)) return false;
  if (!mask_.empty() && !mask_[i * grid_.tc + j]) return false;
  return true;
}

std::vector<KernelSchedule> build_schedule(const Config& c) {
  switch (c.algo) {
    case Algo::standard: return standard_schedule(c);
    case Algo::flash1: return flash1_schedule(c);
    case Algo::flash2:
    case Algo::blocksparse: return flash2_schedule(c);
  }
  return {};
}

}  // namespace flashio::sim
