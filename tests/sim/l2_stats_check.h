// Every statistic of two L2 models' runs equal, each its own CHECK (so a failure names the field).
#pragma once
#include <catch2/catch.hpp>

#include "sim/l2_cache.h"

namespace flashio::sim::test {

inline void check_equal(const L2Stats& a, const L2Stats& b) {
  CHECK(a.dram_read_bytes == b.dram_read_bytes);
  CHECK(a.dram_write_bytes == b.dram_write_bytes);
  CHECK(a.sector_hits == b.sector_hits);
  CHECK(a.sector_misses == b.sector_misses);
  CHECK(a.sector_writes == b.sector_writes);
  CHECK(a.line_allocations == b.line_allocations);
  CHECK(a.line_evictions == b.line_evictions);
}

}  // namespace flashio::sim::test
