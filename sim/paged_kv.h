// A paged KV cache (docs/shapes.md, "Paged KV cache"): K and V stored in pages of P tokens,
// each sequence's pages found through a block table, as inference servers keep their caches
// (vLLM's PagedAttention, FlashAttention's `page_table`). Config::page_size holds P (0 = the
// contiguous (B, Hkv, Nk, d) layout); this file holds the arithmetic the schedules, the
// numeric execution, the L2 model's addresses and the kernels' host code share.
//
// Layout: physical pages of shape (Hkv, P, d), so one (page, K/V head) is P·d contiguous
// elements; K is (pages, Hkv, P, d), V the same. Sequence b's page p (keys p·P … p·P + P − 1)
// is physical page block_table[b][p]; the table is int32, (B, ⌈Nk / P⌉), row-major.
//
// Header-only: the kernels' host code (kernels/attention_run.cu) builds the same table.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace flashio::sim {

// Page sizes are whole multiples of this many tokens (FlashAttention's paged kernels ask the same,
// so that a page's rows are whole 16-row MMA fragments).
inline constexpr int64_t kPageSizeMultiple = 16;

// ⌈keys / P⌉: a sequence's pages, the block table's row length.
inline int64_t pages_per_sequence(int64_t keys, int64_t page_size) {
  return page_size > 0 ? (keys + page_size - 1) / page_size : 0;
}

// The block-table entries a K/V tile of `keys` keys starting at key `first_key` reads: the pages
// it touches (several when P < Bc; one when a page holds the whole tile). 0 for an empty tile.
inline int64_t pages_touched(int64_t first_key, int64_t keys, int64_t page_size) {
  if (keys <= 0 || page_size <= 0) return 0;
  return (first_key + keys - 1) / page_size - first_key / page_size + 1;
}

// The block table flashio runs with (bench, profile, the GPU tests, execute, and the L2 model's
// addresses): logical page L = b·pages_per_sequence + p is physical page (L·m) mod T, T = B·
// pages_per_sequence, with m the least integer ≥ ⌊0.618·T⌋ (at least 1) coprime with T — a fixed
// permutation that scatters a sequence's consecutive pages across the cache, as pages allocated
// over a server's lifetime are, rather than the identity a contiguous cache would be.
struct PageTable {
  int64_t page_size = 0;           // P; 0: not paged
  int64_t pages_per_sequence = 0;  // ⌈Nk / P⌉
  int64_t pages = 0;               // T = B · pages_per_sequence
  int64_t multiplier = 1;          // m
  int64_t physical(int64_t batch_index, int64_t page) const {
    if (pages <= 1) return 0;
    const int64_t logical = batch_index * pages_per_sequence + page;
    return logical * multiplier % pages;  // L, m < T < 2^31 (Config's check): no overflow
  }
};
// The table's entries, sequence after sequence (row-major (B, ⌈Nk / P⌉)), as the kernels and
// execute hold it.
inline std::vector<int64_t> block_table_entries(const PageTable& t) {
  std::vector<int64_t> entries(static_cast<size_t>(t.pages));
  for (int64_t l = 0; l < t.pages; ++l) entries[static_cast<size_t>(l)] = t.physical(l / t.pages_per_sequence, l % t.pages_per_sequence);
  return entries;
}
inline PageTable page_table(int64_t batch, int64_t keys, int64_t page_size) {
  PageTable t;
  if (page_size <= 0) return t;
  t.page_size = page_size;
  t.pages_per_sequence = pages_per_sequence(keys, page_size);
  t.pages = t.pages_per_sequence * batch;
  t.multiplier = std::max<int64_t>(1, t.pages * 618 / 1000);
  while (t.pages > 1 && std::gcd(t.multiplier, t.pages) != 1) ++t.multiplier;
  return t;
}

}  // namespace flashio::sim
