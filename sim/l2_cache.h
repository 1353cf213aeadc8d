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
#include <cstddef>
#include <cstdint>
#include <vector>

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

// Sectors set in a mask of at most 8 (a popcount without the library call a baseline x86-64
// build makes of std::popcount).
inline int sectors_in(uint8_t mask) {
  unsigned x = mask;
  x = x - ((x >> 1) & 0x55u);
  x = (x & 0x33u) + ((x >> 2) & 0x33u);
  return static_cast<int>((x + (x >> 4)) & 0x0Fu);
}

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

// l2_set_of for the lines of a run, one after another, without two divisions per line: from a
// line to the next one in the same span of `sets` lines the sum above grows by one, so the set
// grows by one modulo `sets` (or becomes 0 where the 64-bit sum wraps). Any other step starts
// again from l2_set_of.
class L2SetWalker {
 public:
  explicit L2SetWalker(uint64_t sets) : sets_(sets) {}
  uint64_t set_of(uint64_t line) {
    if (started_ && line == line_ + 1 && line != 0 && offset_ + 1 < sets_) {
      line_ = line;
      ++offset_;
      ++sum_;
      set_ = sum_ == 0 ? 0 : (set_ + 1 == sets_ ? 0 : set_ + 1);
    } else if (!started_ || line != line_) {
      started_ = true;
      line_ = line;
      const uint64_t chunk = line / sets_;
      offset_ = line - chunk * sets_;
      uint64_t h = chunk * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
      sum_ = line + h;
      set_ = sum_ % sets_;
    }
    return set_;
  }

 private:
  uint64_t sets_;
  bool started_ = false;
  uint64_t line_ = 0, offset_ = 0, sum_ = 0, set_ = 0;
};

class L2Cache {
 public:
  // Throws InvalidInput unless line_bytes is a multiple of sector_bytes with at most 8 sectors,
  // both powers of two, and capacity a positive multiple of line_bytes × ways.
  explicit L2Cache(const L2Geometry& geometry);

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

  // The way-level steps of access_line with the set computed by the caller (PartitionedL2
  // computes a line's set once for both of its partitions, which have the same geometry):
  // find_slot gives the line's place in its set's recency list (0 = most recent), or ways
  // when it is absent; access_slot then performs access_line's work at that place.
  int64_t find_slot(uint64_t set, uint64_t line) const {
    const uint64_t* tags = tags_of(set);
    const uint8_t* valid = valid_of(set);
    for (int64_t w = 0; w < ways_; ++w)
      if (tags[w] == line) return valid[w] != 0 ? w : ways_;  // free ways only follow valid ones
    return ways_;
  }
  uint8_t valid_at(uint64_t set, int64_t slot) const { return slot < ways_ ? valid_of(set)[slot] : 0; }
  void access_slot(uint64_t set, int64_t slot, uint64_t line, uint8_t mask, Access kind);
  // Asks the CPU to bring a set's ways into its caches ahead of their use.
  void prefetch_set(uint64_t set) const {
    const char* p = reinterpret_cast<const char*>(tags_of(set));
    for (size_t b = 0; b < prefetch_bytes_; b += 64) __builtin_prefetch(p + b, 1, 3);
  }

 private:
  // Each set is one block of set_words_ 64-bit words: `ways` line addresses, then `ways` valid
  // sector masks, then `ways` dirty masks (a subset of valid), in recency order: way 0 is the
  // most recently used, and the ways that hold a line come before the free ones (valid 0).
  // This is true LRU as the model defines it (docs/l2_model.md): a hit moves the line to the
  // front, a miss takes a free way or else evicts the last, least recently used, line.
  uint64_t* tags_of(uint64_t set) { return ways_data_.data() + set * set_words_; }
  const uint64_t* tags_of(uint64_t set) const { return ways_data_.data() + set * set_words_; }
  uint8_t* valid_of(uint64_t set) { return reinterpret_cast<uint8_t*>(tags_of(set) + ways_); }
  const uint8_t* valid_of(uint64_t set) const { return reinterpret_cast<const uint8_t*>(tags_of(set) + ways_); }

  L2Geometry geometry_;
  int64_t sets_ = 0;
  int64_t ways_ = 0;
  int line_shift_ = 0, sector_shift_ = 0, sectors_per_line_ = 0;
  size_t set_words_ = 0;
  size_t prefetch_bytes_ = 0;
  std::vector<uint64_t> ways_data_;  // sets_ × set_words_
  L2Stats stats_;
};

}  // namespace flashio::sim
