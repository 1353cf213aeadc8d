#include "sim/l2_cache.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
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

// The number of sets, after checking the geometry (the constructor's contract).
int64_t checked_sets(const L2Geometry& g) {
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
  return g.capacity_bytes / set_bytes;
}
}  // namespace

L2Cache::L2Cache(const L2Geometry& g, uint64_t line_limit)
    : geometry_(g), sets_(checked_sets(g)), line_limit_(line_limit),
      sets_data_(sets_, g.ways, line_limit <= kNarrowLineLimit) {
  line_shift_ = std::countr_zero(static_cast<uint64_t>(g.line_bytes));
  sector_shift_ = std::countr_zero(static_cast<uint64_t>(g.sector_bytes));
  sectors_per_line_ = static_cast<int>(g.line_bytes / g.sector_bytes);
}

void L2Cache::check_line(uint64_t line) const {
  if (line >= line_limit_)
    throw std::logic_error("L2 model: line address " + std::to_string(line) + " at or beyond the promised limit " +
                           std::to_string(line_limit_));
}

void L2Cache::access_line(uint64_t line, uint8_t mask, Access kind) {
  check_line(line);
  const uint64_t set = l2_set_of(line, static_cast<uint64_t>(sets_));
  LineCounts counts;
  with_view([&](const auto& v) {
    uint8_t* b = v.block(set);
    access_way(v, b, v.find(b, line), line, mask, kind, counts);
  });
  add_counts(stats_, kind, sectors_in(mask), counts, geometry_.sector_bytes);
}

void L2Cache::access(uint64_t address, uint64_t bytes, Access kind) {
  if (bytes == 0) return;
  check_line((address + bytes - 1) >> line_shift_);  // the last line is the largest
  L2SetWalker walker(static_cast<uint64_t>(sets_));
  LineCounts counts;
  int64_t requested = 0;
  with_view([&](const auto& v) {
    for_each_line(address, bytes, line_shift_, sector_shift_, [&](uint64_t line, uint8_t mask) {
      uint8_t* b = v.block(walker.set_of(line));
      access_way(v, b, v.find(b, line), line, mask, kind, counts);
      requested += sectors_in(mask);
    });
  });
  add_counts(stats_, kind, requested, counts, geometry_.sector_bytes);
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
  int64_t sectors = 0;
  sets_data_.take_dirty([&](uint8_t dirty) { sectors += sectors_in(dirty); });
  stats_.dram_write_bytes += sectors * geometry_.sector_bytes;
}

void L2Cache::flush_and_invalidate() {
  write_back_all();
  sets_data_.clear();
}

L2Stats L2Cache::take_stats() {
  const L2Stats s = stats_;
  stats_ = L2Stats{};
  return s;
}

uint8_t L2Cache::valid_sectors(uint64_t line) const {
  const uint64_t set = l2_set_of(line, static_cast<uint64_t>(sets_));
  return with_view([&](const auto& v) -> uint8_t {
    const uint8_t* b = v.block(set);
    const int64_t way = v.find(b, line);
    return way < v.ways() ? v.valid(b, way) : 0;
  });
}

bool L2Cache::holds(uint64_t address) const {
  const int sector = static_cast<int>((address >> sector_shift_) & (sectors_per_line_ - 1));
  return (valid_sectors(address >> line_shift_) >> sector & 1) != 0;
}

bool L2Cache::holds_dirty(uint64_t address) const {
  const uint64_t line = address >> line_shift_;
  const uint64_t set = l2_set_of(line, static_cast<uint64_t>(sets_));
  const int sector = static_cast<int>((address >> sector_shift_) & (sectors_per_line_ - 1));
  return with_view([&](const auto& v) {
    const uint8_t* b = v.block(set);
    const int64_t way = v.find(b, line);
    return way < v.ways() && (v.dirty(b, way) >> sector & 1) != 0;
  });
}

}  // namespace flashio::sim
