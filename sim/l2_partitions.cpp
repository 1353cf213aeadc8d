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
  if (partitions > 1 && (partitions & (partitions - 1)) == 0) home_mask_ = static_cast<uint64_t>(partitions - 1);
}

int64_t PartitionedL2::home_of(uint64_t address) const {
  return home_of_line(address >> parts_.front().line_shift());
}

namespace {

// The lines of `rows` runs of `row_bytes`, `stride_bytes` apart, in order, each with the mask
// of the sectors its run touches in it (for_each_line's masks, run after run).
class RunLines {
 public:
  RunLines(uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes, int line_shift,
           int sector_shift)
      : next_row_(address), row_bytes_(row_bytes), rows_left_(row_bytes == 0 ? 0 : rows), stride_(stride_bytes),
        line_shift_(line_shift), sector_shift_(sector_shift),
        full_(static_cast<uint8_t>((1u << (1 << (line_shift - sector_shift))) - 1)) {}

  bool next(uint64_t& line, uint8_t& mask) {
    if (left_ == 0) {
      if (rows_left_ == 0) return false;
      start_row();
    }
    line = line_;
    mask = full_;
    if (line_ == first_ || left_ == 1) mask = edge_mask(line_);
    ++line_;
    --left_;
    return true;
  }

 private:
  void start_row() {
    begin_ = next_row_;
    end_ = begin_ + row_bytes_;
    next_row_ += stride_;
    --rows_left_;
    first_ = begin_ >> line_shift_;
    line_ = first_;
    left_ = ((end_ - 1) >> line_shift_) - first_ + 1;
  }
  // The sectors [begin_, end_) touches in `line` (for_each_line's arithmetic).
  uint8_t edge_mask(uint64_t line) const {
    const uint64_t line_begin = line << line_shift_;
    const uint64_t line_end = line_begin + (uint64_t(1) << line_shift_);
    const uint64_t lo = (begin_ > line_begin ? begin_ : line_begin) - line_begin;
    const uint64_t hi = (end_ < line_end ? end_ : line_end) - line_begin;  // exclusive
    const int s0 = static_cast<int>(lo >> sector_shift_);
    const int s1 = static_cast<int>((hi - 1) >> sector_shift_);
    return static_cast<uint8_t>(((1u << (s1 + 1)) - 1) & ~((1u << s0) - 1));
  }
  uint64_t next_row_, row_bytes_, rows_left_, stride_;
  int line_shift_, sector_shift_;
  uint8_t full_;
  uint64_t begin_ = 0, end_ = 0, first_ = 0, line_ = 0, left_ = 0;
};

}  // namespace

void PartitionedL2::run(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes,
                        Access kind) {
  const size_t near_index = static_cast<size_t>(partition_of_sm(sm));
  L2Cache& near = parts_[near_index];
  RunLines lines(address, row_bytes, rows, stride_bytes, near.line_shift(), near.sector_shift());
  L2SetWalker walker(static_cast<uint64_t>(near.sets()));
  // Lines are looked up kAhead behind the one whose sets are prefetched: the ways of the next
  // lines arrive from memory while this one is served (the sets span megabytes).
  constexpr unsigned kAhead = 16, kRing = 32;
  struct Pending {
    uint64_t line, set;
    uint8_t mask;
    uint32_t home;
  };
  Pending ring[kRing];
  unsigned produced = 0, consumed = 0;
  const auto produce = [&] {
    uint64_t line;
    uint8_t mask;
    if (!lines.next(line, mask)) return false;
    Pending& p = ring[produced++ % kRing];
    p.line = line;
    p.mask = mask;
    p.set = walker.set_of(line);
    p.home = static_cast<uint32_t>(home_of_line(line));
    parts_[p.home].prefetch_set(p.set);
    if (kind == Access::read && p.home != near_index) near.prefetch_set(p.set);
    return true;
  };
  while (produced < kAhead && produce()) {
  }
  while (consumed != produced) {
    const Pending p = ring[consumed++ % kRing];
    produce();
    L2Cache& home = parts_[p.home];
    if (kind != Access::read || p.home == near_index) {
      home.access_slot(p.set, home.find_slot(p.set, p.line), p.line, p.mask, kind);
      continue;
    }
    // A read from the far side: the near copy first; on a miss the home partition serves it
    // and the near one keeps a clean copy. The two partitions share the set index.
    const int64_t slot = near.find_slot(p.set, p.line);
    if ((near.valid_at(p.set, slot) & p.mask) == p.mask) {
      near.access_slot(p.set, slot, p.line, p.mask, Access::read);  // a hit on the near copy
    } else {
      home.access_slot(p.set, home.find_slot(p.set, p.line), p.line, p.mask, Access::read);
      near.access_slot(p.set, slot, p.line, p.mask, Access::copy);
    }
  }
}

void PartitionedL2::access(int64_t sm, uint64_t address, uint64_t bytes, Access kind) {
  run(sm, address, bytes, 1, bytes, kind);
}

void PartitionedL2::access_rows(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows,
                                uint64_t stride_bytes, Access kind) {
  if (row_bytes == stride_bytes) {
    run(sm, address, row_bytes * rows, 1, row_bytes * rows, kind);  // a tile of whole rows is one contiguous run
    return;
  }
  run(sm, address, row_bytes, rows, stride_bytes, kind);
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
