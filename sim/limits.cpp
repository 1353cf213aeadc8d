#include "sim/limits.h"

#include <bit>
#include <cmath>
#include <string>

#include "sim/block_mask.h"
#include "sim/checked.h"
#include "sim/errors.h"
#include "sim/schedule.h"

namespace flashio::sim {
namespace {

bool tiled(const Config& c) { return c.algo != Algo::standard; }

std::string shape_text(const Config& c) {
  const Problem& p = c.problem;
  std::string text = "B=" + std::to_string(p.batch) + ", H=" + std::to_string(p.heads) +
                     ", N=" + std::to_string(p.seqlen) + ", d=" + std::to_string(p.headdim);
  if (p.kv_heads_count() != p.heads) text += ", Hkv=" + std::to_string(p.kv_heads_count());
  if (p.keys() != p.seqlen) text += ", Nk=" + std::to_string(p.keys());
  if (tiled(c))
    text += ", Br×Bc=" + std::to_string(c.tiling.block_r) + "×" + std::to_string(c.tiling.block_c);
  return text;
}

// The input that contributes the most bits to the counts: they grow as B·H·N²·d, and for the
// tiled algorithms as B·H·(Tr·Br)·(Tc·Bc)·d, whole tiles counted (sim/flops_model.h), so tiles
// larger than N add their excess (Tr·Br / N)·(Tc·Bc / N). Ties go to the first in that order.
Field overflow_field(const Config& c) {
  const Problem& p = c.problem;
  const double n = static_cast<double>(p.seqlen), nk = static_cast<double>(p.keys());
  double excess_r = 0, excess_c = 0;
  if (tiled(c)) {
    const TileGrid g = tile_grid(c);
    excess_r = std::log2(static_cast<double>(g.tr) * static_cast<double>(g.br) / n);
    excess_c = std::log2(static_cast<double>(g.tc) * static_cast<double>(g.bc) / nk);
  }
  // Square problems name N for both factors (Nq·Nk = N²); otherwise each its own.
  const bool square = p.seqlen_k == 0;
  Field tiling_field = Field::sram_bytes;  // the rule derived the tiling from M
  if (c.tiling_source == TilingSource::given) tiling_field = excess_r >= excess_c ? Field::block_r : Field::block_c;
  if (c.tiling_source == TilingSource::kernel || c.tiling_source == TilingSource::best) tiling_field = Field::tiling_source;
  const std::pair<Field, double> bits[] = {
      {Field::batch, std::log2(static_cast<double>(p.batch))},
      {Field::heads, std::log2(static_cast<double>(p.heads))},
      {Field::seqlen, (square ? 2 : 1) * std::log2(n)},
      {Field::seqlen_k, square ? 0.0 : std::log2(nk)},
      {Field::headdim, std::log2(static_cast<double>(p.headdim))},
      {tiling_field, excess_r + excess_c},
  };
  std::pair<Field, double> most = bits[0];
  for (const auto& b : bits)
    if (b.second > most.second) most = b;
  return most.first;
}

// "N = 6000000": the named input as the user gave it.
std::string value_text(const Config& c, Field field) {
  const Problem& p = c.problem;
  switch (field) {
    case Field::batch: return "B = " + std::to_string(p.batch);
    case Field::heads: return "H = " + std::to_string(p.heads);
    case Field::seqlen: return "N = " + std::to_string(p.seqlen);
    case Field::seqlen_k: return "Nk = " + std::to_string(p.keys());
    case Field::headdim: return "d = " + std::to_string(p.headdim);
    case Field::block_r: return "Br = " + std::to_string(c.tiling.block_r);
    case Field::block_c: return "Bc = " + std::to_string(c.tiling.block_c);
    case Field::sram_bytes:
      return "M = " + std::to_string(c.sram_bytes) + " B (the rule's Br×Bc = " +
             std::to_string(c.tiling.block_r) + "×" + std::to_string(c.tiling.block_c) + ")";
    default: return "the tiling";
  }
}

void check_grid(const Config& c) {
  if (!tiled(c)) return;  // standard has no tile grid of the model's (its 128 × 128 GEMM tiles hold no sums)
  const TileGrid g = tile_grid(c, true);  // a group's rows: the larger grid (sim/schedule.h)
  const int64_t rows_and_cols = saturating_add(g.tr, g.tc);
  if (rows_and_cols > kMaxTileRowsAndCols)
    throw InvalidInput(c.tiling_source == TilingSource::given ? Field::tiling : Field::seqlen,
                       std::string(g.group > 1 ? "Tr + Tc = ⌈g·N/Br⌉ + ⌈Nk/Bc⌉ = " : "Tr + Tc = ⌈N/Br⌉ + ⌈N/Bc⌉ = ") +
                           std::to_string(rows_and_cols) + " tiles (" +
                           shape_text(c) + "), more than the model's limit " +
                           limit_text(kMaxTileRowsAndCols) +
                           " (it keeps a sum per row and column tile); allowed: larger tiles or a smaller N");
  if (c.algo == Algo::blocksparse && !c.block_mask.text.empty()) {
    const int64_t t = block_mask_tokens(c.block_mask);
    const int64_t side = ceil_div(c.problem.seqlen, t);
    const int64_t blocks = saturating_mul(side, side);
    if (blocks > kMaxMaskBlocks)
      throw InvalidInput(Field::block_mask,
                         "the block mask has ⌈N/T⌉² = " + std::to_string(side) + " × " + std::to_string(side) +
                             " = " + std::to_string(blocks) + " blocks of " + std::to_string(t) + " × " +
                             std::to_string(t) + " tokens (" + shape_text(c) + "), more than the model's limit " +
                             limit_text(kMaxMaskBlocks) + " (5 bytes per block); allowed: a smaller N or larger blocks (@T)");
  }
}

// Per-sequence key lengths: the time model keeps every block of one head of each run of one length.
void check_run_blocks(const Config& c, const KernelSchedule& s) {
  const auto runs = static_cast<int64_t>(s.head_runs.size());
  if (runs <= 1) return;
  const int64_t blocks = saturating_mul(runs, s.blocks_per_head);
  if (blocks <= kMaxKeyLengthRunBlocks) return;
  const bool given = !c.problem.key_lengths.empty();
  throw InvalidInput(given ? Field::key_lengths : Field::mask,
                     std::string(given ? "the key lengths make " : "the built-in padding lengths make ") +
                         std::to_string(runs) + " runs of sequences of one length, × " +
                         std::to_string(s.blocks_per_head) + " thread blocks per head of " + to_string(s.kind) + " = " +
                         std::to_string(blocks) + " (" + shape_text(c) + "), more than the model's limit " +
                         limit_text(kMaxKeyLengthRunBlocks) +
                         " (the time model keeps each run's blocks); allowed: fewer distinct lengths, a smaller N or "
                         "larger tiles");
}

}  // namespace

std::string limit_text(int64_t limit) {
  const auto u = static_cast<uint64_t>(limit);
  if (limit > 1024 && std::has_single_bit(u))
    return "2^" + std::to_string(std::countr_zero(u)) + " (" + std::to_string(limit) + ")";
  return std::to_string(limit);
}

void check_counts(const Config& c) {
  check_grid(c);
  std::string where = "B·H";
  try {
    (void)c.problem.batch_heads();
    Counts total;
    for (const KernelSchedule& s : build_schedule(c)) {
      check_run_blocks(c, s);
      where = to_string(s.kind) + "'s counts";
      const Counts k = s.all_heads_counts();
      (void)checked_add(k.io_read_bytes(), k.io_write_bytes());  // the roofline's io (sim/roofline.h)
      (void)s.grid_blocks();
      total += k;
    }
    where = "the total over the kernels";
    (void)checked_add(total.io_read_bytes(), total.io_write_bytes());
    where = "the extra memory";
    (void)extra_memory_bytes(c, total);
  } catch (const CountOverflow&) {
    const Field field = overflow_field(c);
    throw InvalidInput(field, value_text(c, field) + " is too large: " + where +
                                  " would pass 2^63 - 1 (" + shape_text(c) +
                                  "); allowed: configurations whose every count (bytes, FLOPs, "
                                  "extra memory) fits in 64 bits, at most " + std::to_string(kMaxCount));
  }
}

void check_limits(const Config& c, CountMethod method) {
  check_counts(c);
  if (method == CountMethod::walk) {
    int64_t transfers = 0;  // the walk visits one head
    for (const KernelSchedule& s : build_schedule(c))
      transfers = saturating_add(transfers, saturating_mul(s.blocks_per_head, s.transfers_per_block));
    if (transfers > kMaxWalkTransfers)
      throw InvalidInput(Field::count_method,
                         "walk visits every thread block of one head: up to " + std::to_string(transfers) +
                             " transfers here (" + shape_text(c) + "), more than its limit " +
                             limit_text(kMaxWalkTransfers) +
                             "; allowed: a smaller N or larger tiles, or count with formula (the same counts)");
  }
  // cache: replay_kernels checks the replay's work and memory before it starts (it knows the
  // occupancy); execute: execute checks its own size.
}

}  // namespace flashio::sim
