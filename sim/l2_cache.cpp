#include "sim/l2_cache.h"

#include <algorithm>
#include <bit>
#include <string>

#include "sim/checked.h"
#include "sim/errors.h"

namespace flashio::sim {

L2Stats& L2Stats::operator+=(const L2Stats& o) {
  dram_read_bytes += o.dram_read_bytes;
  dram_write_bytes += o.dram_write_bytes;
  sector_hits += o.sector_hits;
  sector_misses += o.sector_misses;
  sector_writes += o.sector_writes;
  line_allocations += o.line_allocations;
  line_evictions += o.line_evictions;
  return *this;
}

namespace {
bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
}  // namespace

L2Cache::L2Cache(const L2Geometry& g) : geometry_(g) {
  if (!power_of_two(g.line_bytes) || !power_of_two(g.sector_bytes) ||
      g.line_bytes < g.sector_bytes || g.line_bytes / g.sector_bytes > 8)
    throw InvalidInput(Field::hardware,
                       "l2_line_bytes and l2_sector_bytes must be powers of two with at most "
                       "8 sectors per line (got " + std::to_string(g.line_bytes) + " and " +
                           std::to_string(g.sector_bytes) + ")");
  // line_bytes × ways saturates (sim/checked.h): a set beyond 64 bits divides no capacity.
  const int64_t set_bytes = g.ways > 0 ? saturating_mul(g.line_bytes, g.ways) : 0;
  if (g.ways <= 0 || g.capacity_bytes <= 0 || g.capacity_bytes % set_bytes != 0)
    throw InvalidInput(Field::hardware,
                       "l2_bytes must be a positive multiple of l2_line_bytes × l2_ways (got " +
                           std::to_string(g.capacity_bytes) + " B, " + std::to_string(g.ways) +
                           " ways)");
  sets_ = g.capacity_bytes / set_bytes;
  ways_ = g.ways;
  line_shift_ = std::countr_zero(static_cast<uint64_t>(g.line_bytes));
  sector_shift_ = std::countr_zero(static_cast<uint64_t>(g.sector_bytes));
  sectors_per_line_ = static_cast<int>(g.line_bytes / g.sector_bytes);
  // 8 bytes of line address and two bytes of masks per way, rounded up to whole words.
  const auto ways = static_cast<size_t>(g.ways);
  set_words_ = ways + (2 * ways + 7) / 8;
  prefetch_bytes_ = std::min<size_t>(set_words_ * 8, 256);
  ways_data_.assign(static_cast<size_t>(sets_) * set_words_, 0);
}

void L2Cache::access_slot(uint64_t set, int64_t slot, uint64_t line, uint8_t mask, Access kind) {
  uint64_t* tags = tags_of(set);
  uint8_t* valid = valid_of(set);
  uint8_t* dirty = valid + ways_;
  uint8_t v = 0, d = 0;
  if (slot < ways_) {
    v = valid[slot];
    d = dirty[slot];
  } else {
    ++stats_.line_allocations;
    slot = ways_ - 1;  // a free way if there is one (free ways are last), else the LRU line
    if (valid[slot] != 0) {
      stats_.dram_write_bytes += sectors_in(dirty[slot]) * geometry_.sector_bytes;
      ++stats_.line_evictions;
    }
    if (mask == 0) {
      // A tag allocated with no sector holds nothing: its way stays (or becomes) free, last.
      valid[slot] = 0;
      dirty[slot] = 0;
      return;
    }
  }
  // Move the ways before `slot` one place back and put the line in front (most recent).
  for (int64_t w = slot; w > 0; --w) {
    tags[w] = tags[w - 1];
    valid[w] = valid[w - 1];
    dirty[w] = dirty[w - 1];
  }
  const int requested = sectors_in(mask);
  if (kind == Access::copy) {
    v |= mask;  // clean; the home partition counted the hit or the DRAM read
  } else if (kind == Access::write) {
    // Write-allocate without fetch: whole sectors are overwritten, nothing is read.
    stats_.sector_writes += requested;
    v |= mask;
    d |= mask;
  } else {
    const int misses = sectors_in(static_cast<uint8_t>(mask & ~v));
    stats_.sector_misses += misses;
    stats_.sector_hits += requested - misses;
    stats_.dram_read_bytes += misses * geometry_.sector_bytes;
    v |= mask;
    if (kind == Access::atomic) {  // read-modify-write in the L2's atomic units
      stats_.sector_writes += requested;
      d |= mask;
    }
  }
  tags[0] = line;
  valid[0] = v;
  dirty[0] = d;
}

void L2Cache::access_line(uint64_t line, uint8_t mask, Access kind) {
  const uint64_t set = l2_set_of(line, static_cast<uint64_t>(sets_));
  access_slot(set, find_slot(set, line), line, mask, kind);
}

void L2Cache::access(uint64_t address, uint64_t bytes, Access kind) {
  L2SetWalker walker(static_cast<uint64_t>(sets_));
  for_each_line(address, bytes, line_shift_, sector_shift_, [&](uint64_t line, uint8_t mask) {
    const uint64_t set = walker.set_of(line);
    access_slot(set, find_slot(set, line), line, mask, kind);
  });
}

void L2Cache::access_rows(uint64_t address, uint64_t row_bytes, uint64_t rows,
                          uint64_t stride_bytes, Access kind) {
  if (row_bytes == stride_bytes) {
    access(address, row_bytes * rows, kind);  // a tile of whole rows is one contiguous run
    return;
  }
  for (uint64_t r = 0; r < rows; ++r) access(address + r * stride_bytes, row_bytes, kind);
}

void L2Cache::write_back_all() {
  for (int64_t s = 0; s < sets_; ++s) {
    uint8_t* dirty = valid_of(static_cast<uint64_t>(s)) + ways_;
    for (int64_t w = 0; w < ways_; ++w) {
      stats_.dram_write_bytes += sectors_in(dirty[w]) * geometry_.sector_bytes;
      dirty[w] = 0;
    }
  }
}

void L2Cache::flush_and_invalidate() {
  write_back_all();
  std::fill(ways_data_.begin(), ways_data_.end(), 0);
}

L2Stats L2Cache::take_stats() {
  const L2Stats s = stats_;
  stats_ = L2Stats{};
  return s;
}

uint8_t L2Cache::valid_sectors(uint64_t line) const {
  const uint64_t set = l2_set_of(line, static_cast<uint64_t>(sets_));
  return valid_at(set, find_slot(set, line));
}

bool L2Cache::holds(uint64_t address) const {
  const int sector = static_cast<int>((address >> sector_shift_) & (sectors_per_line_ - 1));
  return (valid_sectors(address >> line_shift_) >> sector & 1) != 0;
}

bool L2Cache::holds_dirty(uint64_t address) const {
  const uint64_t line = address >> line_shift_;
  const uint64_t set = l2_set_of(line, static_cast<uint64_t>(sets_));
  const int64_t slot = find_slot(set, line);
  const int sector = static_cast<int>((address >> sector_shift_) & (sectors_per_line_ - 1));
  return slot < ways_ && (valid_of(set)[ways_ + slot] >> sector & 1) != 0;
}

}  // namespace flashio::sim
