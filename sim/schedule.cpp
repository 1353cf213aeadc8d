#include "sim/schedule.h"

#include <stdexcept>

#include "sim/kernel_catalog.h"

namespace flashio::sim {

TileGrid tile_grid(const Config& c, bool group_rows) {
  const Problem& p = c.problem;
  TileGrid g;
  g.group = p.group();
  g.group_rows = group_rows;
  // A varlen batch's grid spans its longest sequence, n_max queries and keys (its sequences' own
  // grids: with_keys); otherwise Nq and Nk.
  g.nq = p.varlen ? p.longest_sequence() : p.seqlen;
  g.nk = p.varlen ? p.longest_sequence() : p.keys();
  g.n = group_rows ? checked_mul(g.group, g.nq) : g.nq;
  const KeyBand band = p.band_of();
  g.offset = band.offset;
  g.left = band.left;
  g.right = band.right;
  g.br = c.tiling.block_r;
  g.bc = c.tiling.block_c;
  g.tr = ceil_div(g.n, g.br);
  g.tc = ceil_div(g.nk, g.bc);
  return g;
}

int64_t grid_heads(const Problem& p, bool group_rows) { return group_rows ? p.batch_kv_heads() : p.batch_heads(); }
int64_t grid_heads_per_batch(const Problem& p, bool group_rows) { return group_rows ? p.kv_heads_count() : p.heads; }

GemmKeyTiles gemm_key_tiles(int64_t seqlen) { return {seqlen, standard_gemm_main_keys(seqlen)}; }

TileFilter::TileFilter(const Config& c, bool group_rows) : grid_(tile_grid(c, group_rows)) {
  if (c.algo == Algo::blocksparse && !c.block_mask.text.empty())
    mask_ = std::make_shared<const BlockMask>(c.block_mask, c.problem);
}

TileVisits tile_visits(const Config& c, bool group_rows) {
  const TileGrid g = tile_grid(c, group_rows);
  TileVisits v;
  v.per_row.resize(g.tr);
  v.kv_rows.resize(g.tr);
  v.per_col.resize(g.tc);
  v.q_rows.resize(g.tc);
  const bool masked = c.algo == Algo::blocksparse && !c.block_mask.text.empty();
  if (!masked) {
    // Row tile i visits column tiles first_i … last_i (the band's, or all): O(Tr + Tc) with
    // difference arrays for the columns, since the closed form is evaluated for every
    // configuration, and at the tile-grid limit these are millions of terms.
    std::vector<int64_t> count_diff(static_cast<size_t>(g.tc + 1), 0), rows_diff(static_cast<size_t>(g.tc + 1), 0);
    for (int64_t i = 0; i < g.tr; ++i) {
      const int64_t first = g.first_col(i), last = g.last_col(i);
      v.per_row[i] = last - first + 1;
      // min(Nk, (last + 1)·Bc) − first·Bc without forming (last + 1)·Bc, which can pass 2^63 for a huge Bc.
      v.kv_rows[i] = (last - first) * g.bc + std::min(g.bc, g.nk - last * g.bc);
      count_diff[first] += 1, count_diff[last + 1] -= 1;
      rows_diff[first] += g.rows_in(i), rows_diff[last + 1] -= g.rows_in(i);
    }
    int64_t count = 0, rows = 0;
    for (int64_t j = 0; j < g.tc; ++j) {
      count += count_diff[j], rows += rows_diff[j];
      v.per_col[j] = count;
      v.q_rows[j] = rows;
    }
    return v;
  }
  // A block mask is data: count its tiles, a row tile at a time. Row tile i meets the mask's
  // block rows bi0..bi1; each of their nonzero block columns covers the column tiles whose keys
  // meet its T keys, a range of j; the row tile visits the union of those ranges (up to the
  // causal frontier), the same tiles as TileFilter::visits (tests/sim compare them), in O(Tr ·
  // ⌈N/T⌉) steps instead of O(Tr · Tc): the GUI sweeps small tiles at long N.
  const TileFilter f(c, group_rows);
  const BlockMask& mask = *f.mask();
  const int64_t blocks = mask.blocks();
  std::vector<int64_t> count_diff(static_cast<size_t>(g.tc + 1), 0), rows_diff(static_cast<size_t>(g.tc + 1), 0);
  const int64_t t = mask.block_tokens();
  for (int64_t i = 0; i < g.tr; ++i) {
    const int64_t q0 = i * g.br, q1 = q0 + g.rows_in(i);
    const int64_t last_j = g.last_col(i);  // a block mask comes without a window (validate)
    const int64_t bi0 = q0 / t, bi1 = (q1 - 1) / t + 1;
    int64_t next = 0;  // the first column tile not yet counted for this row tile
    for (int64_t bj = 0; bj < blocks && next <= last_j; ++bj) {
      if (!mask.any_nonzero(bi0, bi1, bj, bj + 1)) continue;
      const int64_t k0 = bj * t, k1 = std::min(g.nk, k0 + t);
      const int64_t from = std::max(next, k0 / g.bc), to = std::min(last_j, (k1 - 1) / g.bc);
      if (from > to) continue;
      v.per_row[i] += to - from + 1;
      v.kv_rows[i] += to * g.bc + std::min(g.bc, g.nk - to * g.bc) - from * g.bc;  // Σ c_j over from..to
      count_diff[from] += 1, count_diff[to + 1] -= 1;
      rows_diff[from] += g.rows_in(i), rows_diff[to + 1] -= g.rows_in(i);
      next = to + 1;
    }
  }
  int64_t count = 0, rows = 0;
  for (int64_t j = 0; j < g.tc; ++j) {
    count += count_diff[j], rows += rows_diff[j];
    v.per_col[j] = count;
    v.q_rows[j] = rows;
  }
  return v;
}

int64_t TileVisits::tiles() const {
  int64_t s = 0;
  for (auto x : per_row) s = checked_add(s, x);
  return s;
}

int64_t TileVisits::weighted_rows(const TileGrid& g, int64_t minus) const {
  int64_t s = 0;
  for (int64_t i = 0; i < g.tr; ++i) s = checked_add(s, checked_mul(per_row[i] - minus, g.rows_in(i)));
  return s;
}

bool TileFilter::visits(int64_t i, int64_t j) const {
  if (grid_.banded() && grid_.outside_band(i, j)) return false;
  // The tile's queries and keys overlap a nonzero block (the mask's blocks are T tokens,
  // not tiles: the same attention at every tiling).
  if (mask_ && !mask_->overlaps_nonzero(i * grid_.br, i * grid_.br + grid_.rows_in(i), j * grid_.bc,
                                        j * grid_.bc + grid_.cols_in(j)))
    return false;
  return true;
}

std::vector<KernelSchedule> build_schedule(const Config& c) {
  if (c.bwd_tiling && c.problem.pass == Pass::fwdbwd) {  // each pass with its own tiling
    std::vector<KernelSchedule> kernels = build_schedule(pass_config(c, Pass::fwd));
    for (KernelSchedule& k : build_schedule(pass_config(c, Pass::bwd))) kernels.push_back(std::move(k));
    return kernels;
  }
  if (c.bwd_tiling && c.problem.pass == Pass::bwd) return build_schedule(pass_config(c, Pass::bwd));
  switch (c.algo) {
    case Algo::standard: return standard_schedule(c);
    case Algo::flash1: return flash1_schedule(c);
    case Algo::flash2:
    case Algo::blocksparse: return flash2_schedule(c);
  }
  throw std::logic_error("build_schedule: Algo out of range");
}

Counts KernelSchedule::all_heads_counts() const {
  Counts total;
  for (const HeadRun& run : runs()) total += head_counts(run.first).scaled(run.count);
  return total;
}

}  // namespace flashio::sim
