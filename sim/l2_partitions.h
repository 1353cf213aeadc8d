// PartitionedL2: the L2 as the GPU builds it, partitions of one L2Cache each. From the A100 on,
// NVIDIA's L2 "is divided into two partitions ... Each L2 partition localizes and caches data
// for memory accesses from SMs in the GPCs directly connected to the partition" (A100 and H100
// whitepapers). So data read by SMs on both sides can be held twice, and the capacity it gets
// is smaller than the L2's size (docs/l2_model.md, "Partitions").
//
// What is modelled:
// - `partitions` caches of l2_bytes / partitions each; every line has a home partition (a hash
//   of its address: the address interleaving is unpublished);
// - an SM belongs to partition sm % partitions (which SMs sit by which partition is unpublished);
// - a read from the home side, and every write and atomic, goes to the home partition (where
//   DRAM is read and dirty lines live);
// - a read from another side looks in the near partition first; on a miss it is served by the
//   home partition (a hit there, or a DRAM read) and a clean copy is kept in the near one.
// With one partition it is exactly one L2Cache.
//
// How it is computed (the same counts, line for line, as looking every line up through
// L2Cache::access_line; tests/sim/test_l2_reference.cpp checks it against a plain reference): a
// run's lines are walked in stretches of consecutive sets (L2SetWalker), each line's set is
// computed once for all partitions, the loop is compiled for the access kind and for the
// presets' two 16-way partitions, it counts only what depends on the sets' state (misses,
// allocations, evictions) and derives hits and writes from the sectors requested, and a
// contiguous run repeated while no other line touched its sets is served from its counts
// (sim/l2_repeats.h says why that is exact).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/l2_cache.h"
#include "sim/l2_repeats.h"

namespace flashio::sim {

class PartitionedL2 {
 public:
  // Throws InvalidInput for a geometry L2Cache refuses once divided, or partitions < 1.
  // line_limit: as L2Cache's (every line address passed is below it).
  PartitionedL2(const L2Geometry& whole, int64_t partitions, uint64_t line_limit = L2Cache::kNoLineLimit);

  int64_t partitions() const { return static_cast<int64_t>(parts_.size()); }
  // The partition an SM reads through.
  int64_t partition_of_sm(int64_t sm) const { return sm % partitions(); }
  // The partition that holds `address`'s line as its home.
  int64_t home_of(uint64_t address) const;

  void access(int64_t sm, uint64_t address, uint64_t bytes, Access kind);
  void access_rows(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows,
                   uint64_t stride_bytes, Access kind);

  void write_back_all();
  void flush_and_invalidate();
  // The partitions' statistics added up since the last take, and zeroed.
  L2Stats take_stats();
  // Whether partition p holds the sector of `address` (for tests).
  bool holds(int64_t p, uint64_t address) const { return parts_.at(static_cast<size_t>(p)).holds(address); }

 private:
  int64_t home_of_line(uint64_t line) const {
    if (parts_.size() == 1) return 0;
    // A multiplicative hash of the line address: consecutive lines alternate irregularly, so a
    // tile's lines are spread over the partitions evenly.
    const uint64_t h = (line * 0x9E3779B97F4A7C15ull) >> 40;
    return static_cast<int64_t>(home_mask_ != 0 ? h & home_mask_ : h % parts_.size());
  }
  // `rows` runs of `row_bytes`, `stride_bytes` apart, line by line in order, each line served
  // as docs/l2_model.md's partition rules say.
  void run(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes, Access kind);
  template <int kParts, typename View>  // kParts: 1, 2, or 0 for any number
  void run_kind(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes, Access kind);
  template <int kParts, Access kKind, typename View>
  void run_lines(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride_bytes);
  std::vector<L2Cache> parts_;
  L2Stats stats_;  // what the replay's loop counted (its partitions' own: write-backs at flushes)
  uint64_t home_mask_ = 0;
  L2Repeats repeats_{0};              // runs whose repeat is served from counts (sim/l2_repeats.h)
  // The last contiguous run's stretches of consecutive sets, up to one more than L2Repeats keeps
  // (a run of more is not remembered).
  std::array<L2Stretch, L2Repeats::kStretches + 1> stretches_{};
  size_t stretch_count_ = 0;
  int64_t requested_ = 0;             // the sectors the last run requested  // partitions − 1 when a power of two above 1 (h % p == h & (p − 1))
};

}  // namespace flashio::sim
