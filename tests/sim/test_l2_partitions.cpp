// The partitioned L2 (sim/l2_partitions.h) on hand-checked traces: where a read from each side
// is served, what a far read leaves in the near partition, where writes live, and the capacity
// that data read from both sides gets.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/errors.h"
#include "sim/l2_partitions.h"

using namespace flashio::sim;

namespace {
// Two partitions of one set of 4 ways each (128 B lines, 32 B sectors): 1 KiB in all.
L2Geometry two_sets_of_4() { return L2Geometry{2 * 4 * 128, 128, 32, 4}; }
constexpr uint64_t kLine = 128;

// The first line address (from `from`) whose home is partition p.
uint64_t line_homed_in(const PartitionedL2& l2, int64_t p, uint64_t from = 0) {
  for (uint64_t a = from;; a += kLine)
    if (l2.home_of(a) == p) return a;
}
}  // namespace

TEST_CASE("a read from the far side is served by the home partition and leaves a clean copy "
          "near: the next read from that side hits near, and DRAM was read once",
          "[l2][partitions]") {
  PartitionedL2 l2(two_sets_of_4(), 2);
  REQUIRE(l2.partition_of_sm(0) == 0);
  REQUIRE(l2.partition_of_sm(1) == 1);
  const uint64_t a = line_homed_in(l2, 1);  // home: partition 1; SM 0 reads through partition 0
  l2.access(0, a, kLine, Access::read);
  CHECK(l2.holds(1, a));  // the home partition read it from DRAM
  CHECK(l2.holds(0, a));  // and the near one keeps a copy
  L2Stats s = l2.take_stats();
  CHECK(s.dram_read_bytes == 128);
  CHECK(s.sector_misses == 4);  // counted once, at home
  l2.access(0, a, kLine, Access::read);
  l2.access(1, a, kLine, Access::read);  // the home side hits at home
  s = l2.take_stats();
  CHECK(s.dram_read_bytes == 0);
  CHECK(s.sector_hits == 8);
  // The copy is clean: flushing writes nothing back.
  l2.flush_and_invalidate();
  CHECK(l2.take_stats().dram_write_bytes == 0);
}

TEST_CASE("writes and atomics go to the line's home partition from either side, and are written "
          "back once", "[l2][partitions]") {
  PartitionedL2 l2(two_sets_of_4(), 2);
  const uint64_t a = line_homed_in(l2, 1);
  l2.access(0, a, kLine, Access::write);  // from the far side
  CHECK(l2.holds(1, a));
  CHECK_FALSE(l2.holds(0, a));
  const uint64_t b = line_homed_in(l2, 0);
  l2.access(1, b, 32, Access::atomic);  // a missing sector: read from DRAM at home, then dirty
  CHECK(l2.holds(0, b));
  CHECK_FALSE(l2.holds(1, b));
  L2Stats s = l2.take_stats();
  CHECK(s.dram_read_bytes == 32);
  l2.flush_and_invalidate();
  s = l2.take_stats();
  CHECK(s.dram_write_bytes == 128 + 32);
}

TEST_CASE("data read from both sides is held twice: it gets half the L2, while data read from "
          "one side only gets all of it", "[l2][partitions]") {
  // 8 lines, homed 4 and 4 would fit the 8 ways of the two partitions once; read from both
  // sides each partition must hold all 8 (4 of its own and 4 copies) in its 4 ways.
  PartitionedL2 l2(two_sets_of_4(), 2);
  std::vector<uint64_t> lines;
  for (int64_t p : {0, 1})
    for (uint64_t a = 0; lines.size() < (p == 0 ? 4u : 8u); a += kLine)
      if (l2.home_of(a) == p) lines.push_back(a);
  auto sweep = [&](std::initializer_list<int64_t> sms) {
    for (int64_t sm : sms)
      for (uint64_t a : lines) l2.access(sm, a, kLine, Access::read);
  };
  // Each line read from its home side only: every partition holds its own 4 lines, and the
  // second sweep reads nothing from DRAM.
  for (uint64_t a : lines) l2.access(l2.home_of(a), a, kLine, Access::read);
  l2.take_stats();
  for (uint64_t a : lines) l2.access(l2.home_of(a), a, kLine, Access::read);
  CHECK(l2.take_stats().dram_read_bytes == 0);
  // Both sides, in turn: every partition needs 8 lines in 4 ways, and LRU over a sweep of 8
  // keeps none: the second round misses again.
  l2.flush_and_invalidate();
  l2.take_stats();
  sweep({0, 1});
  l2.take_stats();
  sweep({0, 1});
  CHECK(l2.take_stats().dram_read_bytes > 0);
  // The same with one partition of the whole size (one set of 8 ways): no misses the second time.
  PartitionedL2 one(L2Geometry{8 * 128, 128, 32, 8}, 1);
  for (int round = 0; round < 2; ++round) {
    one.take_stats();
    for (int64_t sm : {0, 1})
      for (uint64_t a : lines) one.access(sm, a, kLine, Access::read);
  }
  CHECK(one.take_stats().dram_read_bytes == 0);
}

TEST_CASE("one partition is exactly one L2Cache of the whole size", "[l2][partitions]") {
  PartitionedL2 l2(L2Geometry{4 * 128, 128, 32, 4}, 1);
  L2Cache c(L2Geometry{4 * 128, 128, 32, 4});
  for (uint64_t a : {0u, 640u, 1280u, 1920u, 2560u, 0u, 100u, 3000u}) {
    l2.access(static_cast<int64_t>(a % 3), a, 200, Access::read);
    c.access(a, 200, Access::read);
  }
  l2.access(5, 4096, 64, Access::write);
  c.access(4096, 64, Access::write);
  l2.flush_and_invalidate();
  c.flush_and_invalidate();
  const L2Stats a = l2.take_stats(), b = c.take_stats();
  CHECK(a.dram_read_bytes == b.dram_read_bytes);
  CHECK(a.dram_write_bytes == b.dram_write_bytes);
  CHECK(a.sector_hits == b.sector_hits);
  CHECK(a.line_evictions == b.line_evictions);
}

TEST_CASE("the partitioned L2 refuses fewer than one partition, or partitions too small for a set",
          "[l2][partitions]") {
  CHECK_THROWS_AS(PartitionedL2(two_sets_of_4(), 0), InvalidInput);
  CHECK_THROWS_WITH(PartitionedL2(two_sets_of_4(), 4),  // 256 B: less than one set of 4 ways
                    Catch::Contains("l2_partitions must hold at least one set"));
}
