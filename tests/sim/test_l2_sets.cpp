// The L2 model's building blocks on their own: L2Sets (sim/l2_sets.h: ranked ways), the
// L2SetWalker (sim/l2_cache.h: sets of consecutive lines without dividing) and L2Repeats
// (sim/l2_repeats.h: runs whose repeat is served from counts). Each is checked against the plain
// definition it stands for, on random inputs and awkward sizes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/l2_cache.h"
#include "sim/l2_repeats.h"
#include "sim/l2_sets.h"

using namespace flashio::sim;

namespace {

// A set as a list of (line, valid) in recency order, front = most recent, `ways` long at most:
// the LRU that L2Sets' ranks stand for.
struct ListSet {
  std::vector<std::pair<uint64_t, uint8_t>> lines;
};

}  // namespace

TEST_CASE("L2Sets' ranks give the LRU order of a recency list: find, victim (free ways first) and "
          "touch agree with it on random streams, for 1, 3, 16 and 300 ways", "[l2][sets]") {
  std::mt19937_64 rng(7);
  for (int64_t ways : {1, 3, 16, 300}) {
    INFO("ways " << ways);
    const int64_t sets = 5;
    L2Sets fast(sets, ways);
    std::vector<ListSet> ref(static_cast<size_t>(sets));
    const L2SetsView<L2Shape::any>& v = fast.view();
    for (int op = 0; op < 20000; ++op) {
      const auto set = static_cast<uint64_t>(rng() % sets);
      // Lines from a pool about twice the set's ways, some with high halves that differ only
      // above bit 32 (the layout keeps the halves apart).
      const uint64_t pool = static_cast<uint64_t>(2 * ways + 1);
      const uint64_t pick = rng() % pool;
      const uint64_t line = (pick % 2 == 0 ? pick : (pick << 32) | 5) + (set << 40);
      uint8_t* b = v.block(set);
      auto& list = ref[set].lines;
      const auto it = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == line; });
      const int64_t way = v.find(b, line);
      REQUIRE((way < ways) == (it != list.end()));
      if (way < ways) {
        REQUIRE(v.valid(b, way) == it->second);
        v.touch(b, way);
        const auto e = *it;
        list.erase(it);
        list.insert(list.begin(), e);
        continue;
      }
      // A miss: the victim is free while the list is short, else its last line.
      const int64_t victim = v.victim(b);
      if (static_cast<int64_t>(list.size()) < ways) {
        REQUIRE(v.valid(b, victim) == 0);
      } else {
        REQUIRE(v.valid(b, victim) != 0);
        REQUIRE(v.find(b, list.back().first) == victim);
        list.pop_back();
      }
      const auto mask = static_cast<uint8_t>(1 + rng() % 15);
      v.set_line(b, victim, line);
      v.set_masks(b, victim, mask, 0);
      v.touch(b, victim);
      list.insert(list.begin(), {line, mask});
      if (op % 5000 == 4999) {
        fast.clear();
        for (auto& s : ref) s.lines.clear();
      }
    }
  }
}

TEST_CASE("the fixed 16-way L2Sets views (constant layout, SSE2 where built, 32-bit and 64-bit line "
          "addresses) answer as the general view on the same sets", "[l2][sets]") {
  std::mt19937_64 rng(16);
  for (bool narrow : {false, true}) {
    INFO("narrow " << narrow);
    L2Sets sets(3, 16, narrow);
    const L2SetsView<L2Shape::any>& general = sets.view();
    const auto check = [&](const auto& fixed) {
      for (int op = 0; op < 20000; ++op) {
        const auto set = static_cast<uint64_t>(rng() % 3);
        // Lines below 2^32 for the narrow layout; for the wide one also lines that differ only
        // above bit 32.
        const uint64_t line = (rng() % 40) << (!narrow && rng() % 2 == 0 ? 33 : 0);
        uint8_t* b = general.block(set);
        REQUIRE(fixed.block(set) == b);
        const int64_t way = general.find(b, line);
        REQUIRE(fixed.find(b, line) == way);
        REQUIRE(fixed.victim(b) == general.victim(b));
        if (way < 16) {
          if (op % 2 == 0)
            fixed.touch(b, way);
          else
            general.touch(b, way);
        } else if (op % 3 == 0) {
          const int64_t victim = general.victim(b);
          general.set_line(b, victim, line);  // the general view keeps the fingerprints too
          general.set_masks(b, victim, static_cast<uint8_t>(1 + rng() % 15), 0);
          fixed.touch_last(b);
        } else {
          const int64_t victim = fixed.victim(b);
          fixed.set_line(b, victim, line);
          fixed.set_masks(b, victim, static_cast<uint8_t>(1 + rng() % 15), 0);
          general.touch(b, victim);
        }
      }
    };
    if (narrow)
      check(sets.view_as<L2Shape::ways16_narrow>());
    else
      check(sets.view_as<L2Shape::ways16_wide>());
  }
}

TEST_CASE("the set walker gives l2_set_of's set for every line, stepping or jumping, and its "
          "straight stretches are runs of consecutive sets", "[l2][sets]") {
  std::mt19937_64 rng(97);
  for (uint64_t sets : {1ull, 5ull, 97ull, 15360ull, 1ull << 20}) {
    INFO("sets " << sets);
    L2SetWalker walker(sets);
    uint64_t line = rng();
    for (int op = 0; op < 20000; ++op) {
      const unsigned what = static_cast<unsigned>(rng() % 10);
      if (what < 6)
        line += 1;
      else if (what < 8)
        line += rng() % (3 * sets + 2);  // forward, within the span or beyond it
      else if (what < 9)
        line -= rng() % 1000;  // backward
      else
        line = rng() % 3 == 0 ? ~uint64_t{0} - rng() % 50 : rng();  // anywhere, near 2^64 too
      const uint64_t set = walker.set_of(line);
      REQUIRE(set == l2_set_of(line, sets));
      const uint64_t n = walker.straight();
      REQUIRE(n >= 1);
      for (uint64_t k = 1; k < std::min<uint64_t>(n, 40); ++k) REQUIRE(l2_set_of(line + k, sets) == set + k);
      if (n < 64) {  // the stretch ends where the next line's set is not the next set
        REQUIRE(set + n <= sets);
        const bool ends = line + n == 0 || l2_set_of(line + n, sets) != set + n || set + n == sets ||
                          (line + n) % sets == 0;
        REQUIRE(ends);
      }
    }
  }
}

TEST_CASE("L2Repeats serves a run seen twice from the side it was served from, and forgets it when "
          "another line is looked up in one of its sets, when a run sharing a set is remembered, "
          "or on clear", "[l2][repeats]") {
  L2Repeats r(100);
  const L2Stretch tile[] = {{1000, 10, 5}};  // lines 1000..1004 in sets 10..14
  r.served(4096, 640, 0, 20, tile, 1);
  CHECK(r.find(4096, 640, 0) == -1);  // seen once: not remembered
  r.served(4096, 640, 0, 20, tile, 1);
  CHECK(r.find(4096, 640, 0) == 20);
  CHECK(r.find(4096, 640, 1) == -1);  // another side: its near partition may not hold the lines
  CHECK(r.find(4096, 640, -1) == -1);  // a store needs them dirty at home
  CHECK(r.find(4096, 641, 0) == -1);   // other bytes
  r.served(4096, 640, -1, 20, tile, 1);  // stored as well: now also a store's repeat
  CHECK(r.find(4096, 640, -1) == 20);
  r.looked_up(12, 1002);  // the run's own line: nothing changes
  CHECK(r.find(4096, 640, 0) == 20);
  r.looked_up(15, 7);  // a set outside the run
  CHECK(r.find(4096, 640, 0) == 20);
  r.looked_up(12, 77);  // another line in set 12
  CHECK(r.find(4096, 640, 0) == -1);
  CHECK(r.find(4096, 640, -1) == -1);

  // A run sharing set 14 with a remembered one (another line there) makes it forgotten.
  r.served(4096, 640, 0, 20, tile, 1);
  r.served(4096, 640, 0, 20, tile, 1);
  REQUIRE(r.find(4096, 640, 0) == 20);
  const L2Stretch other[] = {{5000, 14, 3}};
  r.served(8192, 384, 1, 12, other, 1);
  r.served(8192, 384, 1, 12, other, 1);
  CHECK(r.find(8192, 384, 1) == 12);
  CHECK(r.find(4096, 640, 0) == -1);
  r.clear();
  CHECK(r.find(8192, 384, 1) == -1);

  // Runs whose stretches share a set are not remembered (a later line could push an earlier one
  // back), nor runs of more stretches than it keeps.
  const L2Stretch wraps[] = {{0, 95, 5}, {5, 0, 3}, {8, 96, 2}};
  r.served(0, 1280, 0, 40, wraps, 3);
  r.served(0, 1280, 0, 40, wraps, 3);
  CHECK(r.find(0, 1280, 0) == -1);
  const L2Stretch many[] = {{0, 0, 1}, {1, 10, 1}, {2, 20, 1}, {3, 30, 1}, {4, 40, 1}};
  r.served(0, 640, 0, 20, many, 5);
  r.served(0, 640, 0, 20, many, 5);
  CHECK(r.find(0, 640, 0) == -1);
  const L2Stretch apart[] = {{0, 95, 5}, {5, 0, 3}};
  r.served(0, 1024, 0, 32, apart, 2);
  r.served(0, 1024, 0, 32, apart, 2);
  CHECK(r.find(0, 1024, 0) == 32);
}
