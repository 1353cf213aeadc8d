#include "sim/l2_cache.h"

#include <algorithm>
#include <bit>
#include <limits>
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
  line_shift_ = std::countr_zero(static_cast<uint64_t>(g.line_bytes));
  sector_shift_ = std::countr_zero(static_cast<uint64_t>(g.sector_bytes));
  sectors_per_line_ = static_cast<int>(g.line_bytes / g.sector_bytes);
  ways_.assign(static_cast<size_t>(sets_ * g.ways), Way{});
}

uint64_t L2Cache::set_of(uint64_t line) const {
  // Consecutive lines go to consecutive sets (a contiguous range spreads evenly, as on the
  // hardware), and each run of `sets` lines is rotated by a hash of its index, so that tensors
  // whose bases or row strides are multiples of the set span do not all land in the same sets.
  // (NVIDIA hashes addresses over its L2 slices; the hash is unpublished.)
  const uint64_t sets = static_cast<uint64_t>(sets_);
  uint64_t chunk = line / sets;
  chunk *= 0x9E3779B97F4A7C15ull;
  chunk ^= chunk >> 31;
  return (line + chunk) % sets;
}

void L2Cache::access_line(uint64_t line, uint8_t mask, Access kind) {
  Way* set = &ways_[set_of(line) * static_cast<uint64_t>(geometry_.ways)];
  const int ways = static_cast<int>(geometry_.ways);
  Way* way = nullptr;
  for (int w = 0; w < ways; ++w) {
    if (set[w].valid != 0 && set[w].line == line) {
      way = &set[w];
      break;
    }
  }
  if (way == nullptr) {
    // Victim: a free way if there is one, else the least recently used.
    Way* victim = &set[0];
    for (int w = 0; w < ways; ++w) {
      if (set[w].valid == 0) {
        victim = &set[w];
        break;
      }
      if (set[w].stamp < victim->stamp) victim = &set[w];
    }
    if (victim->valid != 0) {
      stats_.dram_write_bytes += std::popcount(victim->dirty) * geometry_.sector_bytes;
      ++stats_.line_evictions;
    }
    *victim = Way{line, 0, 0, 0};
    ++stats_.line_allocations;
    way = victim;
  }
  const int requested = std::popcount(mask);
  if (kind == Access::copy) {
    way->valid |= mask;  // clean; the home partition counted the hit or the DRAM read
  } else if (kind == Access::write) {
    // Write-allocate without fetch: whole sectors are overwritten, nothing is read.
    stats_.sector_writes += requested;
    way->valid |= mask;
    way->dirty |= mask;
  } else {
    const uint8_t missing = static_cast<uint8_t>(mask & ~way->valid);
    const int misses = std::popcount(missing);
    stats_.sector_misses += misses;
    stats_.sector_hits += requested - misses;
    stats_.dram_read_bytes += misses * geometry_.sector_bytes;
    way->valid |= mask;
    if (kind == Access::atomic) {  // read-modify-write in the L2's atomic units
      stats_.sector_writes += requested;
      way->dirty |= mask;
    }
  }
  if (clock_ == std::numeric_limits<uint32_t>::max()) renumber_stamps();
  way->stamp = ++clock_;
}

void L2Cache::renumber_stamps() {
  // Keeps the LRU order inside every set while restarting the clock (after 4·10⁹ accesses).
  const auto ways = static_cast<size_t>(geometry_.ways);
  std::vector<Way*> order(ways);
  for (int64_t s = 0; s < sets_; ++s) {
    Way* set = &ways_[static_cast<size_t>(s) * ways];
    for (size_t w = 0; w < ways; ++w) order[w] = &set[w];
    std::sort(order.begin(), order.end(), [](const Way* a, const Way* b) { return a->stamp < b->stamp; });
    for (size_t w = 0; w < ways; ++w) order[w]->stamp = static_cast<uint32_t>(w + 1);
  }
  clock_ = static_cast<uint32_t>(ways + 1);
}

void L2Cache::access(uint64_t address, uint64_t bytes, Access kind) {
  for_each_line(address, bytes, line_shift_, sector_shift_,
                [&](uint64_t line, uint8_t mask) { access_line(line, mask, kind); });
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
  for (auto& w : ways_) {
    stats_.dram_write_bytes += std::popcount(w.dirty) * geometry_.sector_bytes;
    w.dirty = 0;
  }
}

void L2Cache::flush_and_invalidate() {
  write_back_all();
  std::fill(ways_.begin(), ways_.end(), Way{});
  clock_ = 0;
}

L2Stats L2Cache::take_stats() {
  const L2Stats s = stats_;
  stats_ = L2Stats{};
  return s;
}

const L2Cache::Way* L2Cache::find(uint64_t line) const {
  const Way* set = &ways_[set_of(line) * static_cast<uint64_t>(geometry_.ways)];
  for (int64_t w = 0; w < geometry_.ways; ++w)
    if (set[w].valid != 0 && set[w].line == line) return &set[w];
  return nullptr;
}

uint8_t L2Cache::valid_sectors(uint64_t line) const {
  const Way* w = find(line);
  return w != nullptr ? w->valid : 0;
}

bool L2Cache::holds(uint64_t address) const {
  const Way* w = find(address >> line_shift_);
  const int sector = static_cast<int>((address >> sector_shift_) & (sectors_per_line_ - 1));
  return w != nullptr && (w->valid >> sector & 1) != 0;
}

bool L2Cache::holds_dirty(uint64_t address) const {
  const Way* w = find(address >> line_shift_);
  const int sector = static_cast<int>((address >> sector_shift_) & (sectors_per_line_ - 1));
  return w != nullptr && (w->dirty >> sector & 1) != 0;
}

}  // namespace flashio::sim
