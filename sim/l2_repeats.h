// L2Repeats: the L2 model's memory of runs whose repeat changes nothing but the counts.
//
// In the replay the resident blocks of one head often take turns on the same tile: in
// FlashAttention-2's backward every block of a head reads Q_i, dO_i, L_i, D_i and adds into dQ_i
// in the same turn (docs/l2_model.md, "Waves and interleaving"). After a read of a contiguous
// run from side n, each line of the run is the most recently used line of its set in partition
// n, with the run's sectors valid (docs/l2_model.md, "Partitions": a read always leaves the line
// near, as a hit, a home read or a copy). Read again from side n, every line is a hit on that
// near line and no rank moves: the repeat adds the run's sectors to the hits and changes
// nothing else. Likewise after a store or an atomic each line is the most recent of its set in
// its home partition with the sectors valid and dirty: a repeated store adds its sectors to the
// writes, a repeated atomic to the hits and the writes.
//
// That stays true until another line is looked up in one of the run's sets (in any partition:
// a conservative rule; only another line can allocate there, evict, or rank before the run's
// line), or until the L2 is written back or flushed. So the model remembers a few contiguous
// runs that came twice in a short while, each with what a repeat may be served as (a read from
// side n, a store or atomic), and
// marks each set a remembered run covers with the run and its line there. A run served line by
// line checks every set it looks up and forgets the run marked there if the line differs; a
// remembered run's repeat is served from its counts alone. A run is not remembered when two of
// its lines share a set (a later one could push an earlier one back) or when it spans more than
// kStretches stretches of consecutive sets; a run that would share a set with another
// remembered run makes the model forget that one first, so a set is marked by one run at most.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace flashio::sim {

// Lines line .. line + count − 1 in the sets set .. set + count − 1 (the L2SetWalker's straight
// stretches).
struct L2Stretch {
  uint64_t line = 0, set = 0, count = 0;
};

class L2Repeats {
 public:
  static constexpr size_t kRuns = 16;      // runs remembered at once
  static constexpr size_t kStretches = 4;  // stretches of a run that can be remembered
  static constexpr int64_t kSides = 64;    // reads are remembered from sides 0 .. 63

  explicit L2Repeats(uint64_t sets) : owner_(sets, 0), line_at_(sets, 0) {}

  // How a repeat would be served: as a read from side `side` (the SM's near partition), or as a
  // store or atomic (side −1). The sectors the remembered run requested, or −1 when a repeat of
  // [address, address + bytes) cannot be served from counts.
  int64_t find(uint64_t address, uint64_t bytes, int64_t side) const {
    const Run& r = runs_[slot_of(address, bytes)];
    if (!r.live || r.address != address || r.bytes != bytes) return -1;
    const bool served = side < 0 ? r.store : side < kSides && (r.read_sides >> side & 1) != 0;
    return served ? r.requested : -1;
  }

  // `line` was just looked up in `set` (by a run served line by line): forgets the run marked
  // there if its line there is another.
  void looked_up(uint64_t set, uint64_t line) {
    const uint8_t o = owner_[set];
    if (o != 0 && line_at_[set] != line) forget(o - 1u);
  }
  // Whether any run is remembered (looked_up has nothing to do otherwise).
  bool any() const { return live_ != 0; }
  // Per set: nonzero where a remembered run is marked (where looked_up has work).
  const uint8_t* marks() const { return owner_.data(); }

  // The run [address, address + bytes) was just served line by line as a read from side
  // `side` (or a store or atomic: −1); it requested `requested` sectors and looked up the lines
  // of `stretches`. A run already remembered is now also served so from that side; a run seen
  // a moment ago (the last one of its slot) is remembered; any other is only noted as seen:
  // runs that never repeat cost no marks.
  void served(uint64_t address, uint64_t bytes, int64_t side, int64_t requested, const L2Stretch* stretches,
              size_t n) {
    if (side >= kSides) return;
    const size_t slot = slot_of(address, bytes);
    Run& r = runs_[slot];
    if (r.live && r.address == address && r.bytes == bytes) {
      add(r, side);  // the same lines, looked up again: still the most recent in their sets
      return;
    }
    Seen& seen = seen_[slot];
    if (seen.address != address || seen.bytes != bytes) {
      seen = Seen{address, bytes};
      return;
    }
    if (n == 0 || n > kStretches) return;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j)
        if (std::max(stretches[i].set, stretches[j].set) <
            std::min(stretches[i].set + stretches[i].count, stretches[j].set + stretches[j].count))
          return;
    if (r.live) forget(slot);
    for (size_t i = 0; i < n; ++i)
      for (uint64_t k = 0; k < stretches[i].count; ++k)
        if (const uint8_t o = owner_[stretches[i].set + k]; o != 0) forget(o - 1u);
    r = Run{};
    r.live = true;
    r.address = address;
    r.bytes = bytes;
    r.requested = requested;
    r.stretches = n;
    for (size_t i = 0; i < n; ++i) {
      r.stretch[i] = stretches[i];
      for (uint64_t k = 0; k < stretches[i].count; ++k) {
        owner_[stretches[i].set + k] = static_cast<uint8_t>(slot + 1);
        line_at_[stretches[i].set + k] = stretches[i].line + k;
      }
    }
    add(r, side);
    ++live_;
  }

  // Forgets every run (a write-back clears dirty masks, a flush empties the L2).
  void clear() {
    for (size_t s = 0; s < kRuns; ++s)
      if (runs_[s].live) forget(s);
  }

 private:
  struct Seen {
    uint64_t address = 0, bytes = 0;  // bytes 0: nothing seen
  };
  struct Run {
    bool live = false, store = false;
    uint64_t read_sides = 0;  // bit n: a read from side n is served from counts
    uint64_t address = 0, bytes = 0;
    int64_t requested = 0;
    size_t stretches = 0;
    std::array<L2Stretch, kStretches> stretch{};
  };
  static size_t slot_of(uint64_t address, uint64_t bytes) {
    return static_cast<size_t>(((address ^ (bytes << 20)) * 0x9E3779B97F4A7C15ull) >> 60) % kRuns;
  }
  static void add(Run& r, int64_t side) {
    if (side < 0)
      r.store = true;
    else
      r.read_sides |= uint64_t{1} << side;
  }
  void forget(size_t slot) {
    Run& r = runs_[slot];
    for (size_t i = 0; i < r.stretches; ++i)
      std::memset(&owner_[r.stretch[i].set], 0, r.stretch[i].count);
    r.live = false;
    --live_;
  }

  std::array<Run, kRuns> runs_{};
  std::array<Seen, kRuns> seen_{};
  size_t live_ = 0;
  std::vector<uint8_t> owner_;     // per set: 1 + the slot of the run marked there, or 0
  std::vector<uint64_t> line_at_;  // per set: that run's line there
};

}  // namespace flashio::sim
