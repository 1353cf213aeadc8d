#include "sim/l2_partitions.h"

#include <string>

#include "sim/checked.h"
#include "sim/errors.h"

namespace flashio::sim {

namespace {
L2Geometry part_geometry(L2Geometry g, int64_t partitions) {
  if (partitions < 1)
    throw InvalidInput(Field::hardware, "l2_partitions must be at least 1 (got " +
                                            std::to_string(partitions) + ")");
  const int64_t set_bytes = saturating_mul(g.line_bytes, g.ways);  // sim/checked.h
  if (g.capacity_bytes / partitions < set_bytes)
    throw InvalidInput(Field::hardware,
                       "l2_bytes / l2_partitions must hold at least one set of l2_ways × "
                       "l2_line_bytes (" + (set_bytes == kMaxCount ? std::string("over 2^63") : std::to_string(set_bytes)) +
                           " B; got " +
                           std::to_string(g.capacity_bytes) + " B over " +
                           std::to_string(partitions) + " partitions)");
  g.capacity_bytes /= partitions;
  // Equal sets in every partition: round down to whole sets.
  if (set_bytes > 0 && g.capacity_bytes >= set_bytes) g.capacity_bytes -= g.capacity_bytes % set_bytes;
  return g;
}
}  // namespace

PartitionedL2::PartitionedL2(const L2Geometry& whole, int64_t partitions) {
  const L2Geometry g = part_geometry(whole, partitions);
  parts_.reserve(static_cast<size_t>(partitions));
  for (int64_t p = 0; p < partitions; ++p) parts_.emplace_back(g);
}

int64_t PartitionedL2::home_of_line(uint64_t line) const {
  if (parts_.size() == 1) return 0;
  // A multiplicative hash of the line address: consecutive lines alternate irregularly, so a
  // tile's lines are spread over the partitions evenly.
  const uint64_t h = line * 0x9E3779B97F4A7C15ull;
  return static_cast<int64_t>((h >> 40) % parts_.size());
}

int64_t PartitionedL2::home_of(uint64_t address) const {
  return home_of_line(address >> parts_.front().line_shift());
}

void PartitionedL2::access(int64_t sm, uint64_t address, uint64_t bytes, Access kind) {
  if (parts_.size() == 1) {
    parts_.front().access(address, bytes, kind);
    return;
  }
  L2Cache& near = parts_[static_cast<size_t>(partition_of_sm(sm))];
  for_each_line(address, bytes, near.line_shift(), near.sector_shift(), [&](uint64_t line, uint8_t mask) {
    L2Cache& home = parts_[static_cast<size_t>(home_of_line(line))];
    if (kind != Access::read || &home == &near) {
      home.access_line(line, mask, kind);
    } else if ((near.valid_sectors(line) & mask) == mask) {
      near.access_line(line, mask, Access::read);  // a hit on the near copy
    } else {
      home.access_line(line, mask, Access::read);
      near.access_line(line, mask, Access::copy);
    }
  });
}

void PartitionedL2::access_rows(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows,
                                uint64_t stride_bytes, Access kind) {
  if (row_bytes == stride_bytes) {
    access(sm, address, row_bytes * rows, kind);  // a tile of whole rows is one contiguous run
    return;
  }
  for (uint64_t r = 0; r < rows; ++r) access(sm, address + r * stride_bytes, row_bytes, kind);
}

void PartitionedL2::write_back_all() {
  for (auto& p : parts_) p.write_back_all();
}

void PartitionedL2::flush_and_invalidate() {
  for (auto& p : parts_) p.flush_and_invalidate();
}

L2Stats PartitionedL2::take_stats() {
  L2Stats s;
  for (auto& p : parts_) s += p.take_stats();
  return s;
}

}  // namespace flashio::sim
