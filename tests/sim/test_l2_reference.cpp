// The L2 model (sim/l2_cache.h, sim/l2_partitions.h) against a plain reference written from
// docs/l2_model.md's rules: per set a list of lines in recency order (front = most recent), the
// set hash and the home hash spelled out again, every access looked up line by line. The fast
// model keeps its sets in a packed, prefetched layout and walks the sets of a run without
// dividing; these tests check that it gives the same statistics and the same contents as the
// reference on random access streams, for awkward geometries (1 way, 3 ways, 5 sets, 1 sector
// per line, 8 sectors per line, 3 partitions) as well as round ones.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "l2_stats_check.h"
#include "sim/l2_cache.h"
#include "sim/l2_partitions.h"

using namespace flashio::sim;

namespace {

// One partition: LRU sets of (line, valid mask, dirty mask), most recent first.
class ReferenceCache {
 public:
  explicit ReferenceCache(const L2Geometry& g)
      : g_(g), sets_(static_cast<uint64_t>(g.capacity_bytes / (g.line_bytes * g.ways))),
        lists_(sets_) {}

  uint64_t set_of(uint64_t line) const {
    // docs/l2_model.md, "set index": consecutive lines in consecutive sets, each span of
    // `sets` lines rotated by a hash of the span's index (64-bit wrapping arithmetic).
    uint64_t h = (line / sets_) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    return (line + h) % sets_;
  }

  struct Entry {
    uint64_t line;
    uint8_t valid, dirty;
  };

  // Index of `line` in its set's list, or -1.
  int64_t find(uint64_t line) const {
    const auto& l = lists_[set_of(line)];
    for (size_t i = 0; i < l.size(); ++i)
      if (l[i].line == line) return static_cast<int64_t>(i);
    return -1;
  }
  uint8_t valid_sectors(uint64_t line) const {
    const int64_t i = find(line);
    return i < 0 ? 0 : lists_[set_of(line)][static_cast<size_t>(i)].valid;
  }

  void access_line(uint64_t line, uint8_t mask, Access kind) {
    auto& l = lists_[set_of(line)];
    const int64_t i = find(line);
    Entry e{line, 0, 0};
    if (i >= 0) {
      e = l[static_cast<size_t>(i)];
      l.erase(l.begin() + i);
    } else {
      ++stats.line_allocations;
      if (static_cast<int64_t>(l.size()) == g_.ways) {
        stats.dram_write_bytes += sectors(l.back().dirty) * g_.sector_bytes;
        ++stats.line_evictions;
        l.pop_back();
      }
    }
    const int64_t requested = sectors(mask);
    if (kind == Access::copy) {
      e.valid |= mask;
    } else if (kind == Access::write) {
      stats.sector_writes += requested;
      e.valid |= mask;
      e.dirty |= mask;
    } else {
      const int64_t misses = sectors(static_cast<uint8_t>(mask & ~e.valid));
      stats.sector_misses += misses;
      stats.sector_hits += requested - misses;
      stats.dram_read_bytes += misses * g_.sector_bytes;
      e.valid |= mask;
      if (kind == Access::atomic) {
        stats.sector_writes += requested;
        e.dirty |= mask;
      }
    }
    // A line that holds no sector takes no way (an access of no sectors allocates nothing
    // that stays: the way it took counts as free).
    if (e.valid != 0) l.insert(l.begin(), e);
  }

  void write_back_all() {
    for (auto& l : lists_)
      for (auto& e : l) {
        stats.dram_write_bytes += sectors(e.dirty) * g_.sector_bytes;
        e.dirty = 0;
      }
  }
  void flush_and_invalidate() {
    write_back_all();
    for (auto& l : lists_) l.clear();
  }
  bool holds(uint64_t address, bool dirty) const {
    const uint64_t line = address / static_cast<uint64_t>(g_.line_bytes);
    const int64_t i = find(line);
    if (i < 0) return false;
    const Entry& e = lists_[set_of(line)][static_cast<size_t>(i)];
    const int s = static_cast<int>((address % static_cast<uint64_t>(g_.line_bytes)) /
                                   static_cast<uint64_t>(g_.sector_bytes));
    return ((dirty ? e.dirty : e.valid) >> s & 1) != 0;
  }

  L2Stats stats;

 private:
  static int64_t sectors(uint8_t m) {
    int64_t n = 0;
    for (; m != 0; m &= static_cast<uint8_t>(m - 1)) ++n;
    return n;
  }
  L2Geometry g_;
  uint64_t sets_;
  std::vector<std::vector<Entry>> lists_;
};

// Every line's (line, mask) pair of [address, address + bytes), one by one.
template <typename F>
void lines_of(const L2Geometry& g, uint64_t address, uint64_t bytes, F&& f) {
  const uint64_t lb = static_cast<uint64_t>(g.line_bytes), sb = static_cast<uint64_t>(g.sector_bytes);
  for (uint64_t a = address; a < address + bytes;) {
    const uint64_t line = a / lb;
    const uint64_t end = std::min(address + bytes, (line + 1) * lb);
    uint8_t mask = 0;
    for (uint64_t s = (a % lb) / sb; s <= ((end - 1) % lb) / sb; ++s) mask |= static_cast<uint8_t>(1u << s);
    f(line, mask);
    a = end;
  }
}

// The partitioned L2 of docs/l2_model.md, "Partitions", over ReferenceCaches.
class ReferencePartitions {
 public:
  ReferencePartitions(const L2Geometry& whole, int64_t partitions) : g_(whole) {
    const int64_t set_bytes = whole.line_bytes * whole.ways;
    g_.capacity_bytes = whole.capacity_bytes / partitions / set_bytes * set_bytes;
    for (int64_t p = 0; p < partitions; ++p) parts.emplace_back(g_);
  }
  size_t home(uint64_t line) const {
    return parts.size() == 1 ? 0 : static_cast<size_t>(((line * 0x9E3779B97F4A7C15ull) >> 40) % parts.size());
  }
  void access(int64_t sm, uint64_t address, uint64_t bytes, Access kind) {
    const size_t n = static_cast<size_t>(sm) % parts.size();
    lines_of(g_, address, bytes, [&](uint64_t line, uint8_t mask) {
      const size_t h = home(line);
      if (kind != Access::read || h == n) {
        parts[h].access_line(line, mask, kind);
      } else if ((parts[n].valid_sectors(line) & mask) == mask) {
        parts[n].access_line(line, mask, Access::read);
      } else {
        parts[h].access_line(line, mask, Access::read);
        parts[n].access_line(line, mask, Access::copy);
      }
    });
  }
  void access_rows(int64_t sm, uint64_t address, uint64_t row_bytes, uint64_t rows, uint64_t stride,
                   Access kind) {
    if (stride == row_bytes) return access(sm, address, rows * row_bytes, kind);  // one contiguous run
    for (uint64_t r = 0; r < rows; ++r) access(sm, address + r * stride, row_bytes, kind);
  }
  // The whole L2's write-back and flush, as PartitionedL2's: every partition's.
  void write_back_all() {
    for (auto& p : parts) p.write_back_all();
  }
  void flush_and_invalidate() {
    for (auto& p : parts) p.flush_and_invalidate();
  }
  L2Stats take_stats() {
    L2Stats s;
    for (auto& p : parts) {
      s += p.stats;
      p.stats = L2Stats{};
    }
    return s;
  }
  std::vector<ReferenceCache> parts;

 private:
  L2Geometry g_;
};

using test::check_equal;

Access random_kind(std::mt19937_64& rng) {
  const unsigned k = static_cast<unsigned>(rng() % 8);
  return k < 5 ? Access::read : (k < 7 ? Access::write : Access::atomic);
}

// The geometries the streams run on: {capacity, line, sector, ways} of the whole L2.
const std::vector<L2Geometry> kGeometries = {
    {4 * 128, 128, 32, 4},           // one set of 4 ways: fully associative
    {5 * 3 * 128, 128, 32, 3},       // 5 sets of 3 ways
    {7 * 1 * 64, 64, 16, 1},         // direct-mapped, 7 sets, 4 sectors of 16 B
    {97 * 16 * 128, 128, 32, 16},    // 97 sets of the H200's 16 ways
    {11 * 5 * 256, 256, 32, 5},      // 8 sectors per line
    {13 * 2 * 32, 32, 32, 2},        // one sector per line
    {64 * 16 * 128, 128, 32, 16},    // a power-of-two set count
};

}  // namespace

TEST_CASE("L2Cache gives the reference LRU's statistics and contents on random streams of "
          "unaligned ranges, strided tiles, flushes and write-backs, for awkward geometries",
          "[l2][reference]") {
  std::mt19937_64 rng(20261201);
  for (const L2Geometry& g : kGeometries)
  for (uint64_t line_limit : {L2Cache::kNoLineLimit, L2Cache::kNarrowLineLimit}) {
    INFO("capacity " << g.capacity_bytes << " line " << g.line_bytes << " sector " << g.sector_bytes
                     << " ways " << g.ways << " line limit " << line_limit);
    L2Cache fast(g, line_limit);
    ReferenceCache ref(g);
    // Addresses over 3 times the capacity (so lines are evicted), from a base that is not
    // aligned to anything.
    const uint64_t span = static_cast<uint64_t>(3 * g.capacity_bytes);
    const uint64_t base = 12345 * static_cast<uint64_t>(g.sector_bytes) + 7;
    for (int op = 0; op < 20000; ++op) {
      const Access kind = random_kind(rng);
      const uint64_t address = base + rng() % span;
      const unsigned what = static_cast<unsigned>(rng() % 100);
      if (what < 60) {
        const uint64_t bytes = 1 + rng() % static_cast<uint64_t>(4 * g.line_bytes);
        fast.access(address, bytes, kind);
        lines_of(g, address, bytes, [&](uint64_t l, uint8_t m) { ref.access_line(l, m, kind); });
      } else if (what < 85) {  // a strided tile: rows shorter than, equal to or longer than the stride
        const uint64_t row_bytes = 1 + rng() % static_cast<uint64_t>(2 * g.line_bytes);
        const uint64_t rows = 1 + rng() % 9;
        const uint64_t stride = rng() % 3 == 0 ? row_bytes : 1 + rng() % (3 * g.line_bytes);
        fast.access_rows(address, row_bytes, rows, stride, kind);
        // A tile of whole rows (stride = row bytes) is one contiguous run: a sector two short
        // rows share is looked up once (docs/l2_model.md, "Addresses").
        const uint64_t runs = stride == row_bytes ? 1 : rows, run_bytes = stride == row_bytes ? rows * row_bytes : row_bytes;
        for (uint64_t r = 0; r < runs; ++r)
          lines_of(g, address + r * stride, run_bytes, [&](uint64_t l, uint8_t m) { ref.access_line(l, m, kind); });
      } else if (what < 97) {  // one line with any mask, the empty one included
        const uint64_t line = address / static_cast<uint64_t>(g.line_bytes);
        const uint8_t mask = static_cast<uint8_t>(rng() % (1u << (g.line_bytes / g.sector_bytes)));
        const Access k = what < 94 ? kind : Access::copy;
        fast.access_line(line, mask, k);
        ref.access_line(line, mask, k);
      } else if (what < 99) {
        fast.write_back_all();
        ref.write_back_all();
      } else {
        fast.flush_and_invalidate();
        ref.flush_and_invalidate();
      }
      if (op % 1000 == 999) {
        for (int probe = 0; probe < 200; ++probe) {
          const uint64_t a = base + rng() % span;
          REQUIRE(fast.holds(a) == ref.holds(a, false));
          REQUIRE(fast.holds_dirty(a) == ref.holds(a, true));
          REQUIRE(fast.valid_sectors(a / static_cast<uint64_t>(g.line_bytes)) ==
                  ref.valid_sectors(a / static_cast<uint64_t>(g.line_bytes)));
        }
      }
    }
    fast.flush_and_invalidate();
    ref.flush_and_invalidate();
    check_equal(fast.take_stats(), ref.stats);
  }
}

TEST_CASE("PartitionedL2 gives the reference partitions' statistics and contents on random "
          "streams from SMs on every side, for 1, 2 and 3 partitions, 32-bit and 64-bit line "
          "addresses", "[l2][reference]") {
  std::mt19937_64 rng(97);
  for (int64_t partitions : {1, 2, 3})
  for (uint64_t line_limit : {L2Cache::kNoLineLimit, L2Cache::kNarrowLineLimit}) {
    for (L2Geometry g : kGeometries) {
      g.capacity_bytes *= partitions;  // each partition as large as the geometry above
      if (partitions == 3) g.capacity_bytes += g.line_bytes;  // rounded down to whole sets
      INFO("partitions " << partitions << " capacity " << g.capacity_bytes << " line " << g.line_bytes
                         << " sector " << g.sector_bytes << " ways " << g.ways << " line limit " << line_limit);
      PartitionedL2 fast(g, partitions, line_limit);
      ReferencePartitions ref(g, partitions);
      const uint64_t span = static_cast<uint64_t>(2 * g.capacity_bytes);
      const uint64_t base = 2 * 1024 * 1024 + 3 * static_cast<uint64_t>(g.sector_bytes);
      for (int op = 0; op < 20000; ++op) {
        const Access kind = random_kind(rng);
        const int64_t sm = static_cast<int64_t>(rng() % 7);
        const uint64_t address = base + rng() % span;
        const unsigned what = static_cast<unsigned>(rng() % 100);
        if (what < 55) {
          const uint64_t bytes = 1 + rng() % static_cast<uint64_t>(5 * g.line_bytes);
          fast.access(sm, address, bytes, kind);
          ref.access(sm, address, bytes, kind);
        } else if (what < 98) {
          const uint64_t row_bytes = 1 + rng() % static_cast<uint64_t>(2 * g.line_bytes);
          const uint64_t rows = 1 + rng() % 12;
          const uint64_t stride = rng() % 3 == 0 ? row_bytes : 1 + rng() % (4 * g.line_bytes);
          fast.access_rows(sm, address, row_bytes, rows, stride, kind);
          ref.access_rows(sm, address, row_bytes, rows, stride, kind);
        } else if (what < 99) {
          fast.write_back_all();
          ref.write_back_all();
        } else {
          fast.flush_and_invalidate();
          ref.flush_and_invalidate();
        }
        if (op % 1000 == 999) {
          check_equal(fast.take_stats(), ref.take_stats());
          for (int probe = 0; probe < 200; ++probe) {
            const uint64_t a = base + rng() % span;
            const int64_t p = static_cast<int64_t>(rng() % static_cast<uint64_t>(partitions));
            REQUIRE(fast.holds(p, a) == ref.parts[static_cast<size_t>(p)].holds(a, false));
          }
        }
      }
      fast.flush_and_invalidate();
      ref.flush_and_invalidate();
      check_equal(fast.take_stats(), ref.take_stats());
    }
  }
}

TEST_CASE("PartitionedL2 gives the reference's statistics and contents on streams that repeat "
          "a few tiles from every side (the runs it serves from counts), with overlapping and "
          "unaligned tiles, strided tiles and other traffic between", "[l2][reference]") {
  std::mt19937_64 rng(4242);
  for (int64_t partitions : {1, 2, 3}) {
    for (L2Geometry g : {L2Geometry{97 * 16 * 128, 128, 32, 16}, L2Geometry{64 * 16 * 128, 128, 32, 16},
                         L2Geometry{5 * 3 * 128, 128, 32, 3}, L2Geometry{40 * 4 * 64, 64, 16, 4},
                         L2Geometry{7 * 1 * 64, 64, 16, 1}}) {
      g.capacity_bytes *= partitions;
      INFO("partitions " << partitions << " capacity " << g.capacity_bytes << " ways " << g.ways);
      PartitionedL2 fast(g, partitions, partitions == 3 ? L2Cache::kNoLineLimit : L2Cache::kNarrowLineLimit);
      ReferencePartitions ref(g, partitions);
      const uint64_t line = static_cast<uint64_t>(g.line_bytes);
      const uint64_t base = 2 * 1024 * 1024;
      // Tiles: whole lines, unaligned ends, one inside another, two that share lines, and one
      // of more lines than a partition has sets (its lines share sets).
      const uint64_t sets = static_cast<uint64_t>(g.capacity_bytes / partitions / g.ways / g.line_bytes);
      struct Tile {
        uint64_t address, bytes;
      };
      std::vector<Tile> tiles = {{base, 16 * line},
                                 {base + 16 * line, 16 * line},
                                 {base + 4 * line, 4 * line},
                                 {base + 8 * line + 40, 9 * line + 3},
                                 {base + 100 * line, 2 * line},
                                 {base + 3 * 1024 * 1024 + 7, 33 * line},
                                 {base + 5 * 1024 * 1024, 256},
                                 {base + 7 * 1024 * 1024, (sets + 5) * line}};
      for (int op = 0; op < 10000; ++op) {
        const Access kind = random_kind(rng);
        const int64_t sm = static_cast<int64_t>(rng() % 5);
        const unsigned what = static_cast<unsigned>(rng() % 100);
        if (what < 85) {
          // The same tile several times in a row from various sides, as resident blocks do.
          const Tile& t = tiles[rng() % tiles.size()];
          const int times = 1 + static_cast<int>(rng() % 4);
          for (int k = 0; k < times; ++k) {
            const int64_t s = k == 0 ? sm : static_cast<int64_t>(rng() % 5);
            if (rng() % 2 == 0) {
              fast.access(s, t.address, t.bytes, kind);
              ref.access(s, t.address, t.bytes, kind);
            } else {  // the same bytes as a tile of whole rows
              fast.access_rows(s, t.address, t.bytes, 1, t.bytes, kind);
              ref.access_rows(s, t.address, t.bytes, 1, t.bytes, kind);
            }
          }
        } else if (what < 97) {
          const uint64_t address = base + rng() % static_cast<uint64_t>(3 * g.capacity_bytes);
          const uint64_t row_bytes = 1 + rng() % (2 * line), rows = 1 + rng() % 6;
          const uint64_t stride = rng() % 2 == 0 ? row_bytes : 1 + rng() % (4 * line);
          fast.access_rows(sm, address, row_bytes, rows, stride, kind);
          ref.access_rows(sm, address, row_bytes, rows, stride, kind);
        } else if (what < 99) {
          fast.write_back_all();
          ref.write_back_all();
        } else {
          fast.flush_and_invalidate();
          ref.flush_and_invalidate();
        }
        if (op % 500 == 499) {
          check_equal(fast.take_stats(), ref.take_stats());
          for (const Tile& t : tiles)
            for (uint64_t a = t.address; a < t.address + std::min<uint64_t>(t.bytes, 64 * line); a += 32)
              for (int64_t p = 0; p < partitions; ++p)
                REQUIRE(fast.holds(p, a) == ref.parts[static_cast<size_t>(p)].holds(a, false));
        }
      }
      fast.flush_and_invalidate();
      ref.flush_and_invalidate();
      check_equal(fast.take_stats(), ref.take_stats());
    }
  }
}

TEST_CASE("an L2 promised lines below a limit refuses a line at or beyond it (a bug, not an input)",
          "[l2]") {
  L2Cache c(L2Geometry{4 * 128, 128, 32, 4}, 1000);
  c.access(999 * 128, 128, Access::read);
  CHECK_THROWS_AS(c.access(999 * 128, 129, Access::read), std::logic_error);
  CHECK_THROWS_AS(c.access_line(1000, 1, Access::write), std::logic_error);
  PartitionedL2 p(L2Geometry{2 * 4 * 128, 128, 32, 4}, 2, 1000);
  p.access_rows(0, 0, 64, 10, 100 * 128, Access::read);  // last row's line: 900
  CHECK_THROWS_AS(p.access_rows(0, 0, 64, 11, 100 * 128, Access::read), std::logic_error);
}
