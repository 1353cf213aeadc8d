// The L2 model on hand-checked traces (sim/l2_cache.h). Most traces use one set (capacity =
// line × ways), so the cache is fully associative and every line lands in the same set: the
// expected hits, misses and write-backs can be worked out by hand.
#include <catch2/catch.hpp>

#include "sim/errors.h"
#include "sim/l2_cache.h"

using namespace flashio::sim;

namespace {
// One set of 4 ways of 128 B lines with 32 B sectors: 512 B in all.
L2Geometry one_set_of_4() { return L2Geometry{4 * 128, 128, 32, 4}; }
constexpr uint64_t kLine = 128;
}  // namespace

TEST_CASE("a cold read misses every sector it touches, a re-read hits them all", "[l2]") {
  L2Cache c(one_set_of_4());
  c.access(0, 128, Access::read);
  CHECK(c.stats().dram_read_bytes == 128);
  CHECK(c.stats().sector_misses == 4);
  CHECK(c.stats().sector_hits == 0);
  c.access(0, 128, Access::read);
  CHECK(c.stats().dram_read_bytes == 128);
  CHECK(c.stats().sector_hits == 4);
  CHECK(c.stats().line_allocations == 1);
}

TEST_CASE("sectors of one line are fetched one by one: a 32 B read moves 32 B, not the line",
          "[l2]") {
  L2Cache c(one_set_of_4());
  c.access(0, 32, Access::read);
  CHECK(c.stats().dram_read_bytes == 32);
  c.access(32, 32, Access::read);  // same line, next sector: a sector miss in an allocated line
  CHECK(c.stats().dram_read_bytes == 64);
  CHECK(c.stats().line_allocations == 1);
  c.access(0, 64, Access::read);
  CHECK(c.stats().dram_read_bytes == 64);
  CHECK(c.stats().sector_hits == 2);
  CHECK(c.holds(0));
  CHECK(c.holds(32));
  CHECK_FALSE(c.holds(64));
}

TEST_CASE("an unaligned access touches exactly the sectors its bytes fall in", "[l2]") {
  L2Cache c(one_set_of_4());
  // Bytes 120..167: sector 3 of line 0, sectors 0 and 1 of line 1.
  c.access(120, 48, Access::read);
  CHECK(c.stats().dram_read_bytes == 3 * 32);
  CHECK(c.stats().line_allocations == 2);
  CHECK(c.holds(96));
  CHECK_FALSE(c.holds(64));
  CHECK(c.holds(128 + 32));
  CHECK_FALSE(c.holds(128 + 64));
  // One byte reads the whole 32 B sector.
  c.access(1000, 1, Access::read);
  CHECK(c.stats().dram_read_bytes == 4 * 32);
}

TEST_CASE("a store allocates without reading DRAM, and its dirty sectors are written back once",
          "[l2]") {
  L2Cache c(one_set_of_4());
  c.access(0, 64, Access::write);
  CHECK(c.stats().dram_read_bytes == 0);
  CHECK(c.holds_dirty(0));
  CHECK(c.holds_dirty(32));
  CHECK_FALSE(c.holds(64));
  c.access(0, 32, Access::read);  // reads what was just written: a hit
  CHECK(c.stats().sector_hits == 1);
  CHECK(c.stats().dram_read_bytes == 0);
  c.write_back_all();
  CHECK(c.stats().dram_write_bytes == 64);
  CHECK_FALSE(c.holds_dirty(0));
  CHECK(c.holds(0));  // written back, still valid and clean
  c.write_back_all();
  CHECK(c.stats().dram_write_bytes == 64);  // clean lines are not written again
}

TEST_CASE("evicting a dirty line writes its dirty sectors, evicting a clean one writes nothing",
          "[l2]") {
  L2Cache c(one_set_of_4());
  c.access(0, 96, Access::write);  // line 0: 3 dirty sectors
  for (uint64_t line = 1; line <= 3; ++line) c.access(line * kLine, kLine, Access::read);
  CHECK(c.stats().line_evictions == 0);
  c.access(4 * kLine, kLine, Access::read);  // set full: line 0 is least recently used
  CHECK(c.stats().line_evictions == 1);
  CHECK(c.stats().dram_write_bytes == 96);
  CHECK_FALSE(c.holds(0));
  c.access(5 * kLine, kLine, Access::read);  // evicts clean line 1
  CHECK(c.stats().line_evictions == 2);
  CHECK(c.stats().dram_write_bytes == 96);
}

TEST_CASE("LRU evicts the least recently used line, and a hit refreshes a line's place", "[l2]") {
  L2Cache c(one_set_of_4());
  for (uint64_t line = 0; line < 4; ++line) c.access(line * kLine, 32, Access::read);
  c.access(0, 32, Access::read);             // line 0 becomes most recent; line 1 is now LRU
  c.access(4 * kLine, 32, Access::read);     // evicts line 1
  CHECK(c.holds(0));
  CHECK_FALSE(c.holds(1 * kLine));
  CHECK(c.holds(2 * kLine));
  c.access(5 * kLine, 32, Access::read);     // evicts line 2
  CHECK_FALSE(c.holds(2 * kLine));
  CHECK(c.holds(3 * kLine));
  CHECK(c.stats().dram_read_bytes == 6 * 32);
}

TEST_CASE("an atomic reduction reads a missing sector from DRAM, then leaves it dirty", "[l2]") {
  L2Cache c(one_set_of_4());
  c.access(0, 64, Access::atomic);  // cold: read-modify-write fetches two sectors
  CHECK(c.stats().dram_read_bytes == 64);
  CHECK(c.holds_dirty(0));
  c.access(0, 64, Access::atomic);  // present: no DRAM traffic
  CHECK(c.stats().dram_read_bytes == 64);
  c.access(64, 32, Access::write);  // a store then an atomic: the stored sector is not re-read
  c.access(64, 32, Access::atomic);
  CHECK(c.stats().dram_read_bytes == 64);
  c.flush_and_invalidate();
  CHECK(c.stats().dram_write_bytes == 96);
  CHECK_FALSE(c.holds(0));
}

TEST_CASE("flush_and_invalidate leaves a cold cache: the same read misses again", "[l2]") {
  L2Cache c(one_set_of_4());
  c.access(0, 256, Access::read);
  c.flush_and_invalidate();
  CHECK(c.stats().dram_write_bytes == 0);
  const auto before = c.take_stats();
  CHECK(before.dram_read_bytes == 256);
  c.access(0, 256, Access::read);
  CHECK(c.stats().dram_read_bytes == 256);
  CHECK(c.stats().sector_hits == 0);
}

TEST_CASE("access_rows visits only the bytes of each row of a strided tile", "[l2]") {
  L2Cache c(L2Geometry{64 * 128, 128, 32, 64});
  // 3 rows of 40 B, 1000 B apart (an 8-sector-aligned start is not assumed).
  c.access_rows(1000, 40, 3, 1000, Access::read);
  // Row at 1000..1039: sectors 31 (992..1023) and 32 (1024..1055) -> 2 sectors.
  // Row at 2000..2039: sectors 62 (1984..2015) and 63 (2016..2047) -> 2 sectors.
  // Row at 3000..3039: sectors 93 (2976..3007) and 94 (3008..3039) -> 2 sectors.
  CHECK(c.stats().dram_read_bytes == 6 * 32);
  // A tile of whole rows (row_bytes == stride) is one contiguous run.
  L2Cache d(L2Geometry{64 * 128, 128, 32, 64});
  d.access_rows(0, 256, 4, 256, Access::read);
  CHECK(d.stats().dram_read_bytes == 1024);
}

TEST_CASE("a working set of half the capacity is re-read from the L2, twice the capacity "
          "streams through it (LRU thrash)", "[l2]") {
  const L2Geometry g{1 << 20, 128, 32, 16};  // 1 MiB, 512 sets
  L2Cache half(g);
  half.access(0, g.capacity_bytes / 2, Access::read);
  const auto cold = half.take_stats();
  CHECK(cold.dram_read_bytes == g.capacity_bytes / 2);
  half.access(0, g.capacity_bytes / 2, Access::read);
  // Consecutive lines fill the 512 sets evenly: 8 lines in each set of 16 ways, none lost.
  CHECK(half.stats().dram_read_bytes == 0);

  L2Cache twice(g);
  twice.access(0, 2 * g.capacity_bytes, Access::read);
  twice.take_stats();
  twice.access(0, 2 * g.capacity_bytes, Access::read);
  CHECK(twice.stats().dram_read_bytes == 2 * g.capacity_bytes);
}

TEST_CASE("the L2 refuses a geometry it cannot model", "[l2]") {
  CHECK_THROWS_AS(L2Cache(L2Geometry{1000, 128, 32, 16}), InvalidInput);   // not whole sets
  CHECK_THROWS_AS(L2Cache(L2Geometry{4096, 96, 32, 16}), InvalidInput);    // line not 2^k
  CHECK_THROWS_AS(L2Cache(L2Geometry{4096, 512, 32, 2}), InvalidInput);    // 16 sectors/line
  CHECK_THROWS_AS(L2Cache(L2Geometry{4096, 128, 32, 0}), InvalidInput);
  // The H200's 60 MiB with 16 ways: 30,720 sets (not a power of two: the hash takes a modulo).
  CHECK(L2Cache(L2Geometry{62914560, 128, 32, 16}).sets() == 30720);
}
