#include "sim/l2_partitions.h"

#include <algorithm>
#include <string>
#include <type_traits>

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

PartitionedL2::PartitionedL2(const L2Geometry& whole, int64_t partitions, uint64_t line_limit) {
  const L2Geometry g = part_geometry(whole, partitions);
  parts_.reserve(static_cast<size_t>(partitions));
  for (int64_t p = 0; p < partitions; ++p) parts_.emplace_back(g, line_limit);
  repeats_ = L2Repeats(static_cast<uint64_t>(parts_.front().sets()));
  if (partitions > 1 && (partitions & (partitions - 1)) == 0) home_mask_ = static_cast<uint64_t>(partitions - 1);
}

int64_t PartitionedL2::home_of(uint64_t address) const {
  return home_of_line(address >> parts_.front().line_shift());
}

template <int kParts, Access kKind, typename View>
void PartitionedL2::run_lines(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows,
                              uint64_t stride_bytes) {
  // The partitions' storage in locals (kParts of them, or all when kParts is 0), all with the
  // same layout: the loop's stores into the sets then cannot move them, as far as the compiler
  // knows.
  constexpr size_t kFixed = kParts > 0 ? static_cast<size_t>(kParts) : 1;
  uint8_t* fixed[kFixed];
  std::vector<uint8_t*> dynamic;
  uint8_t** bases = fixed;
  if constexpr (kParts == 0) {
    dynamic.resize(parts_.size());
    bases = dynamic.data();
  }
  View sets_view;
  for (size_t p = 0; p < parts_.size(); ++p) {
    L2Sets& sets = parts_[p].sets_data();
    if constexpr (std::is_same_v<View, L2SetsView<L2Shape::any>>)
      sets_view = sets.view();
    else
      sets_view = sets.template view_as<View::kShape>();
    bases[p] = sets_view.base;
  }
  const View layout = sets_view;  // only its layout is used: blocks come from bases
  const uint64_t parts = parts_.size(), mask_of_home = home_mask_;
  const auto home_of = [&](uint64_t line) -> size_t {
    if constexpr (kParts == 1) return 0;
    const uint64_t h = (line * 0x9E3779B97F4A7C15ull) >> 40;  // home_of_line's hash
    if constexpr (kParts == 2) return static_cast<size_t>(h & 1);
    return static_cast<size_t>(mask_of_home != 0 ? h & mask_of_home : h % parts);
  };
  const size_t near_index = static_cast<size_t>(partition_of_sm(sm));
  uint8_t* const near_base = bases[near_index];
  const L2Cache& first = parts_.front();
  const int line_shift = first.line_shift(), sector_shift = first.sector_shift();
  const uint8_t full = static_cast<uint8_t>((1u << (1 << (line_shift - sector_shift))) - 1);
  L2SetWalker walker(static_cast<uint64_t>(first.sets()));
  L2Cache::LineCounts counts;
  int64_t requested = 0;

  // Remembered runs with a mark in a set this run looks up with another line are forgotten
  // (sim/l2_repeats.h).
  const uint8_t* const marks = repeats_.marks();

  // One line, whose set is `set`, as docs/l2_model.md's partition rules say.
  const auto serve = [&](uint64_t line, uint64_t set, uint8_t mask) {
    if (marks[set] != 0) repeats_.looked_up(set, line);
    const size_t offset = set * layout.set_bytes();
    if constexpr (kKind != Access::read) {
      uint8_t* block = bases[home_of(line)] + offset;  // stores and atomics go home
      L2Cache::access_way<kKind>(layout, block, layout.find(block, line), line, mask, counts);
      return;
    }
    // A read looks in the near partition first (the home one when it is near): where all its
    // sectors are there, it is a hit on that copy. Otherwise a line homed near is read there;
    // one homed on the far side is read at home, and the near partition keeps a clean copy
    // (the partitions share the set index).
    uint8_t* near_block = near_base + offset;
    const int64_t near_way = layout.find(near_block, line);
    uint8_t* read_block = near_block;
    int64_t read_way = near_way;
    bool far = false;
    if (near_way == layout.ways() || (layout.valid(near_block, near_way) & mask) != mask) {
      if (const size_t home_index = home_of(line); home_index != near_index) {
        far = true;
        read_block = bases[home_index] + offset;
        read_way = layout.find(read_block, line);
      }
    }
    L2Cache::access_way<Access::read>(layout, read_block, read_way, line, mask, counts);
    if (far) L2Cache::access_way<Access::copy>(layout, near_block, near_way, line, mask, counts);
  };

  // The sectors of [begin, end) in `line` (for_each_line's masks).
  const auto edge_mask = [&](uint64_t line, uint64_t begin, uint64_t end) {
    const uint64_t line_begin = line << line_shift;
    const uint64_t line_end = line_begin + (uint64_t(1) << line_shift);
    const uint64_t lo = (begin > line_begin ? begin : line_begin) - line_begin;
    const uint64_t hi = (end < line_end ? end : line_end) - line_begin;  // exclusive
    const int s0 = static_cast<int>(lo >> sector_shift);
    const int s1 = static_cast<int>((hi - 1) >> sector_shift);
    return static_cast<uint8_t>(((1u << (s1 + 1)) - 1) & ~((1u << s0) - 1));
  };

  // The stretches of lines in consecutive sets that a contiguous run looks up, for L2Repeats.
  stretch_count_ = 0;
  const auto note = [&](uint64_t line, uint64_t set, uint64_t count) {
    if (rows != 1) return;                            // a strided run is not remembered
    if (stretch_count_ > stretches_.size()) return;  // nor one of more stretches than kept
    if (stretch_count_ > 0) {
      L2Stretch& last = stretches_[stretch_count_ - 1];
      if (last.line + last.count == line && last.set + last.count == set) {
        last.count += count;
        return;
      }
    }
    if (stretch_count_ < stretches_.size()) stretches_[stretch_count_] = L2Stretch{line, set, count};
    ++stretch_count_;  // past the array: more than L2Repeats keeps, so not remembered
  };

  // Rows of whole lines (line-aligned start, length and stride) touch every sector of each.
  const uint64_t line_bytes = uint64_t{1} << line_shift;
  const bool whole_lines = ((address | row_bytes | (rows > 1 ? stride_bytes : 0)) & (line_bytes - 1)) == 0;
  for (uint64_t r = 0; r < rows; ++r) {
    // One row, [begin, end), lines first_line .. last_line, each with the sectors it touches
    // (all of them but in the first and the last line), in straight stretches of consecutive
    // sets.
    const uint64_t begin = address + r * stride_bytes, end = begin + row_bytes;
    const uint64_t first_line = begin >> line_shift, last_line = (end - 1) >> line_shift;
    const uint8_t first_mask = whole_lines ? full : edge_mask(first_line, begin, end);
    const uint8_t last_mask = whole_lines ? full : edge_mask(last_line, begin, end);
    requested += sectors_in(first_mask);
    if (last_line != first_line)
      requested += sectors_in(last_mask) + static_cast<int64_t>(last_line - first_line - 1) * sectors_in(full);
    for (uint64_t line = first_line;;) {
      const uint64_t set = walker.set_of(line);
      const uint64_t n = std::min(walker.straight(), last_line - line + 1);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t l = line + i;
        serve(l, set + i, l == first_line ? first_mask : (l == last_line ? last_mask : full));
      }
      note(line, set, n);
      if (last_line - line < n) break;  // the row's last line served (no overflow past 2^64)
      line += n;
    }
  }
  L2Cache::add_counts(stats_, kKind, requested, counts, first.geometry().sector_bytes);
  requested_ = requested;
}

template <int kParts, typename View>
void PartitionedL2::run_kind(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes,
                             Access kind) {
  switch (kind) {
    case Access::read: return run_lines<kParts, Access::read, View>(sm, address, row_bytes, rows, stride_bytes);
    case Access::write: return run_lines<kParts, Access::write, View>(sm, address, row_bytes, rows, stride_bytes);
    case Access::atomic: return run_lines<kParts, Access::atomic, View>(sm, address, row_bytes, rows, stride_bytes);
    case Access::copy: return run_lines<kParts, Access::copy, View>(sm, address, row_bytes, rows, stride_bytes);
  }
}

void PartitionedL2::run(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes,
                        Access kind) {
  if (row_bytes == 0 || rows == 0) return;
  // A contiguous read, store or atomic whose repeat changes nothing but the counts
  // (sim/l2_repeats.h) is served from them.
  const bool contiguous = rows == 1 && kind != Access::copy;
  const int64_t side = kind == Access::read ? partition_of_sm(sm) : -1;
  if (contiguous) {
    if (const int64_t requested = repeats_.find(address, row_bytes, side); requested >= 0) {
      if (kind != Access::write) stats_.sector_hits += requested;
      if (kind != Access::read) stats_.sector_writes += requested;
      return;
    }
  }
  L2Cache& first = parts_.front();
  first.check_line((address + (rows - 1) * stride_bytes + row_bytes - 1) >> first.line_shift());  // the last line
  // The presets' L2 (two partitions of 16-way sets) gets the loop with everything fixed at
  // compile time; any other geometry the same loop with its figures read at run time.
  if (parts_.size() == 2 && first.geometry().ways == 16 && first.sets_data().narrow_tags())
    run_kind<2, L2SetsView<L2Shape::ways16_narrow>>(sm, address, row_bytes, rows, stride_bytes, kind);
  else if (parts_.size() == 2 && first.geometry().ways == 16)
    run_kind<2, L2SetsView<L2Shape::ways16_wide>>(sm, address, row_bytes, rows, stride_bytes, kind);
  else if (parts_.size() == 1)
    run_kind<1, L2SetsView<L2Shape::any>>(sm, address, row_bytes, rows, stride_bytes, kind);
  else
    run_kind<0, L2SetsView<L2Shape::any>>(sm, address, row_bytes, rows, stride_bytes, kind);
  if (contiguous && stretch_count_ <= stretches_.size())
    repeats_.served(address, row_bytes, side, requested_, stretches_.data(), stretch_count_);
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
  repeats_.clear();  // dirty masks cleared: a store's repeat would write again
  for (auto& p : parts_) p.write_back_all();
}

void PartitionedL2::flush_and_invalidate() {
  repeats_.clear();
  for (auto& p : parts_) p.flush_and_invalidate();
}

L2Stats PartitionedL2::take_stats() {
  L2Stats s = stats_;
  stats_ = L2Stats{};
  for (auto& p : parts_) s += p.take_stats();
  return s;
}

}  // namespace flashio::sim
