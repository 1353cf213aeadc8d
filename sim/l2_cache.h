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

class L2Cache {
 public:
  // Throws InvalidInput unless line_bytes is a multiple of sector_bytes with at most 8 sectors,
  // both powers of two, and capacity a positive multiple of line_bytes × ways.
  explicit L2Cache(const L2Geometry& geometry);

  // One access of `bytes` contiguous bytes at byte address `address`: every line it touches is
  // looked up once with the mask of the sectors it touches.
  void access(uint64_t address, uint64_t bytes, Access kind);
  // `rows` runs of `row_bytes` bytes, `stride_bytes` apart (a tile of a row-major tensor).
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

 private:
  struct Way {
    uint64_t line = 0;    // line address (byte address / line_bytes)
    uint32_t stamp = 0;   // last use; larger is more recent
    uint8_t valid = 0;    // sector mask; 0 means the way is free
    uint8_t dirty = 0;    // sector mask, a subset of valid
  };
  uint64_t set_of(uint64_t line) const;
  const Way* find(uint64_t line) const;
  void renumber_stamps();

  L2Geometry geometry_;
  int64_t sets_ = 0;
  int line_shift_ = 0, sector_shift_ = 0, sectors_per_line_ = 0;
  uint32_t clock_ = 0;
  std::vector<Way> ways_;  // sets_ × ways, set-major
  L2Stats stats_;
};

}  // namespace flashio::sim
