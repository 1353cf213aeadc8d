// L2Cache: a model of the GPU's L2 between the SMs and HBM (docs/l2_model.md; docs/gpu.md,
// "Which counter sees the paper's HBM accesses"). It turns the byte ranges the thread blocks load
// and store (the paper's "HBM accesses", io_*) into the bytes that really reach DRAM (dram_*).
//
// What is modelled (docs/l2_model.md says why each choice):
// - sectored: 128 B lines of four 32 B sectors; a line's tag is allocated as a whole, but
//   sectors are fetched, kept valid and written back one by one (NVIDIA's L2 works in sectors:
//   `dram__bytes_*` move in 32 B units);
// - set-associative with true LRU inside a set; consecutive lines in consecutive sets, each
//   span of `sets` lines rotated by a hash of its index (NVIDIA hashes addresses over the L2
//   slices; a plain modulo would let tensors at aligned bases collide);
// - write-back, write-allocate without fetch: a store marks its sectors valid and dirty and
//   reads nothing from DRAM (the kernels store whole sectors); a dirty sector costs one 32 B
//   DRAM write when its line is evicted or flushed;
// - atomic reductions (flash2's dQ accumulator) are read-modify-write in the L2: a sector not
//   present is first read from DRAM, then it is dirty.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/l2_sets.h"

namespace flashio::sim {

struct L2Geometry {
  int64_t capacity_bytes = 0;
  int64_t line_bytes = 128;
  int64_t sector_bytes = 32;
  int64_t ways = 16;
};

// copy: a clean copy of sectors arriving from another L2 partition (PartitionedL2): they become
// valid, nothing is read from DRAM, and no hit or miss is counted (the home partition counted it).
enum class Access { read, write, atomic, copy };

// Sector-level statistics; DRAM bytes are sectors × sector_bytes.
struct L2Stats {
  int64_t dram_read_bytes = 0;   // sectors fetched from DRAM (read misses, atomic misses)
  int64_t dram_write_bytes = 0;  // dirty sectors written back (evictions and flushes)
  int64_t sector_hits = 0;       // requested sectors already valid
  int64_t sector_misses = 0;     // requested sectors not valid (reads and atomics only)
  int64_t sector_writes = 0;     // sectors written (stores and atomics)
  int64_t line_allocations = 0;  // tags allocated
  int64_t line_evictions = 0;    // valid lines pushed out by LRU
  L2Stats& operator+=(const L2Stats& o);
};

// Calls f(line, sector_mask) for every line that [address, address + bytes) touches, with the
// mask of the sectors it touches in that line.
template <typename F>
void for_each_line(uint64_t address, uint64_t bytes, int line_shift, int sector_shift, F&& f) {
  if (bytes == 0) return;
  const uint64_t end = address + bytes;  // exclusive
  const uint64_t first = address >> line_shift;
  const uint64_t last = (end - 1) >> line_shift;
  const int sectors = 1 << (line_shift - sector_shift);
  const uint8_t full = static_cast<uint8_t>((1u << sectors) - 1);
  for (uint64_t line = first; line <= last; ++line) {
    uint8_t mask = full;
    if (line == first || line == last) {
      const uint64_t line_begin = line << line_shift;
      const uint64_t lo = (address > line_begin ? address : line_begin) - line_begin;
      const uint64_t line_end = line_begin + (uint64_t(1) << line_shift);
      const uint64_t hi = (end < line_end ? end : line_end) - line_begin;  // exclusive
      const int s0 = static_cast<int>(lo >> sector_shift);
      const int s1 = static_cast<int>((hi - 1) >> sector_shift);
      mask = static_cast<uint8_t>(((1u << (s1 + 1)) - 1) & ~((1u << s0) - 1));
    }
    f(line, mask);
  }
}

// Sectors set in a mask of at most 8 (a table: a baseline x86-64 build turns std::popcount
// into a library call).
inline constexpr auto kSectorsIn = [] {
  std::array<uint8_t, 256> t{};
  for (unsigned m = 0; m < 256; ++m)
    for (unsigned x = m; x != 0; x &= x - 1) ++t[m];
  return t;
}();
inline int sectors_in(uint8_t mask) { return kSectorsIn[mask]; }

// The set a line maps to (docs/l2_model.md, "set index"): consecutive lines go to consecutive
// sets, and each span of `sets` lines is rotated by a hash of its index, so that tensors whose
// bases or row strides are multiples of the set span do not all land in the same sets (NVIDIA
// hashes addresses over its L2 slices; the hash is unpublished). The sum wraps at 2^64.
inline uint64_t l2_set_of(uint64_t line, uint64_t sets) {
  uint64_t chunk = line / sets;
  chunk *= 0x9E3779B97F4A7C15ull;
  chunk ^= chunk >> 31;
  return (line + chunk) % sets;
}

// l2_set_of for the lines of a run, one after another, without dividing at every line: from a
// line to a later one in the same span of `sets` lines the sum above grows by their distance
// (less than `sets`), so the set grows by it modulo `sets`, unless the 64-bit sum wraps. Any
// other step starts again from the division.
class L2SetWalker {
 public:
  explicit L2SetWalker(uint64_t sets) : sets_(sets) {}
  uint64_t set_of(uint64_t line) {
    if (started_ && line >= line_ && line - line_ < sets_ - offset_) {
      const uint64_t delta = line - line_;
      const uint64_t sum = sum_ + delta;
      if (sum < sum_) {
        set_ = sum % sets_;  // the sum wrapped at 2^64
      } else {
        set_ += delta;  // both below sets_
        if (set_ >= sets_) set_ -= sets_;
      }
      line_ = line;
      offset_ += delta;
      sum_ = sum;
      return set_;
    }
    start(line);
    return set_;
  }
  // How many lines from the last one asked (it included) have the sets set, set + 1, ...: up
  // to the end of the set range, of the span of `sets` lines, of the 64-bit sum, or of the
  // line addresses.
  uint64_t straight() const {
    const uint64_t to_sum_end = sum_ == 0 ? ~uint64_t{0} : 0 - sum_;
    const uint64_t to_line_end = line_ == 0 ? ~uint64_t{0} : 0 - line_;
    return std::min({sets_ - set_, sets_ - offset_, to_sum_end, to_line_end});
  }

 private:
  // set_of by division (a line in another span of sets, or behind the last one).
  [[gnu::noinline]] void start(uint64_t line) {
    started_ = true;
    line_ = line;
    const uint64_t chunk = line / sets_;
    offset_ = line - chunk * sets_;
    uint64_t h = chunk * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    sum_ = line + h;
    set_ = sum_ % sets_;
  }

  uint64_t sets_;
  bool started_ = false;
  uint64_t line_ = 0, offset_ = 0, sum_ = 0, set_ = 0;
};

class L2Cache {
 public:
  // Throws InvalidInput unless line_bytes is a multiple of sector_bytes with at most 8 sectors,
  // both powers of two, and capacity a positive multiple of line_bytes × ways. line_limit: the
  // caller's promise that every line address it passes is below it; at 2^32 or less the sets
  // keep addresses in 32 bits (sim/l2_sets.h), and a line at or beyond it throws
  // std::logic_error (a broken promise is a bug).
  explicit L2Cache(const L2Geometry& geometry, uint64_t line_limit = kNoLineLimit);
  static constexpr uint64_t kNoLineLimit = ~uint64_t{0};
  static constexpr uint64_t kNarrowLineLimit = uint64_t{1} << 32;

  // One access of `bytes` contiguous bytes at byte address `address`: every line it touches is
  // looked up once with the mask of the sectors it touches.
  void access(uint64_t address, uint64_t bytes, Access kind);
  // `rows` runs of `row_bytes` bytes, `stride_bytes` apart (a tile of a row-major tensor).
  // A tile of whole rows (row_bytes == stride_bytes) is one contiguous run.
  void access_rows(uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes,
                   Access kind);

  // One line (line address = byte address / line_bytes) with the mask of the sectors touched.
  void access_line(uint64_t line, uint8_t sector_mask, Access kind);
  // The sectors of `line` that are valid (0 when the line is absent); does not touch the LRU.
  uint8_t valid_sectors(uint64_t line) const;
  int line_shift() const { return line_shift_; }
  int sector_shift() const { return sector_shift_; }

  // Writes every dirty sector back (counted in dram_write_bytes) and keeps the lines valid
  // and clean.
  void write_back_all();
  // write_back_all, then empties the cache (a cold start for the next kernel).
  void flush_and_invalidate();

  const L2Stats& stats() const { return stats_; }
  // Returns the statistics since the last take and zeroes them.
  L2Stats take_stats();

  const L2Geometry& geometry() const { return geometry_; }
  int64_t sets() const { return sets_; }
  // Whether the sector holding `address` is present, and whether it is dirty (for tests).
  bool holds(uint64_t address) const;
  bool holds_dirty(uint64_t address) const;

  // The way-level steps of access_line, for PartitionedL2's loop: it computes a line's set once
  // for all its partitions (they have the same geometry), finds the line's way
  // (L2SetsView::find; ways when absent) and calls access_way, which does access_line's work
  // there and counts what follows from the line's state (LineCounts); the loop turns the counts
  // of a whole run into statistics (add_counts). The sets, for the loop (it writes through them).
  L2Sets& sets_data() { return sets_data_; }
  // Calls f(view) with the sets' view: a fixed 16-way one when there are 16 ways.
  template <typename F>
  decltype(auto) with_view(F&& f) const {
    if (sets_data_.ways() == 16 && sets_data_.narrow_tags()) return f(sets_data_.view_as<L2Shape::ways16_narrow>());
    if (sets_data_.ways() == 16) return f(sets_data_.view_as<L2Shape::ways16_wide>());
    return f(sets_data_.view());
  }
  // Throws std::logic_error for a line at or beyond the promised limit.
  void check_line(uint64_t line) const;
  // What access_way counts line by line; the rest of L2Stats follows from the sectors
  // requested (add_counts).
  struct LineCounts {
    int64_t misses = 0;         // requested sectors not valid (reads and atomics)
    int64_t allocations = 0;    // tags allocated
    int64_t evictions = 0;      // valid lines pushed out
    int64_t evicted_dirty = 0;  // dirty sectors of those lines (written back)
  };
  template <Access kKind, typename View>
  static void access_way(const View& sets, uint8_t* block, int64_t way, uint64_t line, uint8_t mask,
                         LineCounts& counts) {
    uint8_t v = 0, d = 0;
    if (way == sets.ways()) {
      ++counts.allocations;
      way = sets.victim(block);  // a free way while there is one, else the LRU line
      // A free way's dirty mask is 0, so only a valid line's sectors are written back.
      counts.evictions += sets.valid(block, way) != 0;
      counts.evicted_dirty += sectors_in(sets.dirty(block, way));
      if (mask == 0) {
        // A tag allocated with no sector holds nothing: its way is free, and stays ranked last.
        sets.set_masks(block, way, 0, 0);
        return;
      }
      sets.set_line(block, way, line);
      sets.touch_last(block);  // the victim is the way ranked last
    } else {
      v = sets.valid(block, way);
      d = sets.dirty(block, way);
      sets.touch(block, way);
    }
    if constexpr (kKind == Access::copy) {
      v |= mask;  // clean; the home partition counted the hit or the DRAM read
    } else if constexpr (kKind == Access::write) {
      // Write-allocate without fetch: whole sectors are overwritten, nothing is read.
      v |= mask;
      d |= mask;
    } else {
      counts.misses += sectors_in(static_cast<uint8_t>(mask & ~v));
      v |= mask;
      if constexpr (kKind == Access::atomic) d |= mask;  // read-modify-write in the L2's atomic units
    }
    sets.set_masks(block, way, v, d);
  }
  // Adds to `stats` what accesses of kind `kind` that requested `requested` sectors in all and
  // counted `counts` did: hits are the requested sectors that did not miss (reads, atomics),
  // stores and atomics write every sector they request, misses read DRAM, evicted dirty
  // sectors write it.
  static void add_counts(L2Stats& stats, Access kind, int64_t requested, const LineCounts& counts,
                         int64_t sector_bytes) {
    if (kind == Access::read || kind == Access::atomic) {
      stats.sector_misses += counts.misses;
      stats.sector_hits += requested - counts.misses;
      stats.dram_read_bytes += counts.misses * sector_bytes;
    }
    if (kind == Access::write || kind == Access::atomic) stats.sector_writes += requested;
    stats.line_allocations += counts.allocations;
    stats.line_evictions += counts.evictions;
    stats.dram_write_bytes += counts.evicted_dirty * sector_bytes;
  }
  // access_way for a kind known only at run time.
  template <typename View>
  static void access_way(const View& sets, uint8_t* block, int64_t way, uint64_t line, uint8_t mask, Access kind,
                         LineCounts& counts) {
    switch (kind) {
      case Access::read: return access_way<Access::read>(sets, block, way, line, mask, counts);
      case Access::write: return access_way<Access::write>(sets, block, way, line, mask, counts);
      case Access::atomic: return access_way<Access::atomic>(sets, block, way, line, mask, counts);
      case Access::copy: return access_way<Access::copy>(sets, block, way, line, mask, counts);
    }
  }
 private:
  L2Geometry geometry_;
  int64_t sets_ = 0;
  int line_shift_ = 0, sector_shift_ = 0, sectors_per_line_ = 0;
  uint64_t line_limit_ = kNoLineLimit;
  L2Sets sets_data_;  // the ways, in LRU order (sim/l2_sets.h)
  L2Stats stats_;
};

}  // namespace flashio::sim
