// L2Sets: the ways of the L2 model's sets (sim/l2_cache.h) in a packed form the replay can
// search quickly. Per set and way: the line address, the valid and dirty sector masks, and a
// recency rank (0 = most recently used, ways − 1 = least). The ranks are a permutation of
// 0 .. ways − 1, and a way that holds no line (valid mask 0) always ranks behind every way that
// does, so the victim of a miss is simply the way ranked last: a free way while there is one,
// else the least recently used line. That is the model's true LRU (docs/l2_model.md,
// "replacement"), with no clock to renumber and nothing moved on a hit.
//
// Layout: one block per set, [valid × ways][dirty × ways][rank × ways], then for 16 ways a
// one-byte fingerprint of each way's line, then the line addresses, aligned: 4 bytes each where
// the owner promises lines below 2^32 (L2SetLayout::narrow_tags; the replay does), else 8.
// Blocks of 8 ways or more are padded to whole 64-byte CPU cache lines. Ranks are bytes up to
// 256 ways, 32-bit words above. The 16-way set, the one every preset has, has its layout fixed
// at compile time: its masks, ranks and fingerprints fill the first CPU cache line of the block
// (128 bytes with 4-byte addresses, 192 with 8) and its addresses the rest, and it is searched
// with SSE2 where the compiler targets it (every x86-64 build): the 16 fingerprints are
// compared at once and only a way whose fingerprint matches has its address compared, so a
// lookup reads the first line and, for a match, one more. Other counts compare the addresses in
// a plain loop. Both give the same answers: the fingerprint only narrows the search.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace flashio::sim {

// Where a set's fields lie in its block, for `ways` ways. narrow_tags: line addresses kept in
// 32 bits, for an L2 that is promised lines below 2^32 only (the replay's tensors lie far below
// 2^32 lines of 128 bytes, 512 GiB; a larger layout keeps 64 bits).
struct L2SetLayout {
  int64_t ways = 0;
  bool wide_ranks = false;        // 32-bit ranks (more than 256 ways)
  bool narrow_tags = false;       // 32-bit line addresses
  size_t fingerprint_offset = 0;  // 16 ways only; 0: no fingerprints
  size_t tags_offset = 0, set_bytes = 0;

  static constexpr L2SetLayout of(int64_t ways, bool narrow_tags) {
    L2SetLayout l;
    const auto w = static_cast<size_t>(ways);
    l.ways = ways;
    l.wide_ranks = ways > 256;
    l.narrow_tags = narrow_tags;
    size_t end = 2 * w + (l.wide_ranks ? 4 : 1) * w;
    if (ways == 16) {
      l.fingerprint_offset = end;
      end += w;
    }
    l.tags_offset = (end + 7) / 8 * 8;
    l.set_bytes = l.tags_offset + (narrow_tags ? 4 : 8) * w;
    if (ways >= 8) l.set_bytes = (l.set_bytes + 63) / 64 * 64;
    return l;
  }
};

// The shapes of set the replay's loop is compiled for: any (the layout read at run time), or
// 16 ways with 32-bit or 64-bit line addresses, whose offsets are constants.
enum class L2Shape { any, ways16_narrow, ways16_wide };

// The sets' storage and layout as plain values. The replay copies it into locals, so that the
// compiler knows storing a mask does not move the sets.
template <L2Shape kShapeOf>
struct L2SetsView {
  static constexpr L2Shape kShape = kShapeOf;
  static constexpr bool k16 = kShape != L2Shape::any;
  static constexpr L2SetLayout kLayout16 = L2SetLayout::of(16, kShape == L2Shape::ways16_narrow);
  static_assert(kLayout16.fingerprint_offset == 48 && kLayout16.tags_offset == 64 &&
                kLayout16.set_bytes == (kLayout16.narrow_tags ? 128 : 192));

  uint8_t* base = nullptr;
  L2SetLayout layout;

  int64_t ways() const {
    if constexpr (k16) return 16;
    return layout.ways;
  }
  size_t set_bytes() const {
    if constexpr (k16) return kLayout16.set_bytes;
    return layout.set_bytes;
  }
  const L2SetLayout& fields() const {
    if constexpr (k16) return kLayout16;
    return layout;
  }
  bool wide_ranks() const {
    if constexpr (k16) return false;
    return layout.wide_ranks;
  }
  // The line address of `way` (the narrow layout's 32 bits are the whole address).
  uint64_t tag(const uint8_t* b, int64_t way) const {
    const uint8_t* t = b + fields().tags_offset;
    if (fields().narrow_tags) return reinterpret_cast<const uint32_t*>(t)[way];
    return reinterpret_cast<const uint64_t*>(t)[way];
  }

  uint8_t* block(uint64_t set) const { return base + set * set_bytes(); }

  // The operations below take a set's block (block(set)).

  // The way that holds `line`, or ways() when none does.
  int64_t find(const uint8_t* b, uint64_t line) const {
#if defined(__SSE2__)
    if constexpr (k16) {
      // The ways whose fingerprint matches, then their line address (and valid mask: a free
      // way can keep an old address).
      const __m128i prints = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kLayout16.fingerprint_offset));
      const __m128i key = bytes_of(fingerprint(line));
      for (unsigned match = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(prints, key))); match != 0;
           match &= match - 1) {
        const int w = __builtin_ctz(match);
        if (tag(b, w) == line && b[w] != 0) return w;
      }
      return 16;
    }
#endif
    for (int64_t w = 0; w < ways(); ++w)
      if (tag(b, w) == line && b[w] != 0) return w;
    return ways();
  }

#if defined(__SSE2__)
  // 16 copies of a byte (a multiplication and one shuffle: SSE2 has no byte broadcast).
  static __m128i bytes_of(uint8_t x) {
    return _mm_shuffle_epi32(_mm_cvtsi32_si128(static_cast<int>(x * 0x01010101u)), 0);
  }
#endif

  // The way a miss takes: the one ranked last (free, or the least recently used).
  int64_t victim(const uint8_t* b) const {
#if defined(__SSE2__)
    if constexpr (k16) {
      const __m128i ranks = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32));
      return __builtin_ctz(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(ranks, _mm_set1_epi8(15)))));
    }
#endif
    const auto last = static_cast<uint32_t>(ways() - 1);
    for (int64_t w = 0; w < ways(); ++w)
      if (rank(b, w) == last) return w;
    return 0;  // not reached: the ranks are a permutation
  }

  // Makes `way` the most recently used: every way ranked before it moves back one place.
  void touch(uint8_t* b, int64_t way) const {
    if (!wide_ranks()) {
      uint8_t* ranks = b + 2 * ways();
      const uint8_t r = ranks[way];
#if defined(__SSE2__)
      if constexpr (k16) {
        // Ranks are below 16, so the signed byte compare is exact.
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ranks));
        const __m128i before = _mm_cmplt_epi8(x, bytes_of(r));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ranks), _mm_sub_epi8(x, before));
        ranks[way] = 0;
        return;
      }
#endif
      for (int64_t w = 0; w < ways(); ++w) ranks[w] = static_cast<uint8_t>(ranks[w] + (ranks[w] < r));
      ranks[way] = 0;
      return;
    }
    const uint32_t r = rank(b, way);
    for (int64_t w = 0; w < ways(); ++w)
      if (const uint32_t x = rank(b, w); x < r) set_rank(b, w, x + 1);
    set_rank(b, way, 0);
  }

  // touch(victim(b)) in one step: the last-ranked way becomes the most recent, so every other
  // way moves back one place (ranks + 1, the last one's wrapping to 0).
  void touch_last(uint8_t* b) const {
#if defined(__SSE2__)
    if constexpr (k16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(b + 32), _mm_and_si128(_mm_add_epi8(x, _mm_set1_epi8(1)), _mm_set1_epi8(15)));
      return;
    }
#endif
    const auto last = static_cast<uint32_t>(ways() - 1);
    for (int64_t w = 0; w < ways(); ++w) {
      const uint32_t x = rank(b, w);
      set_rank(b, w, x == last ? 0 : x + 1);
    }
  }

  uint8_t valid(const uint8_t* b, int64_t way) const { return b[way]; }
  uint8_t dirty(const uint8_t* b, int64_t way) const { return b[ways() + way]; }
  void set_masks(uint8_t* b, int64_t way, uint8_t valid, uint8_t dirty) const {
    b[way] = valid;
    b[ways() + way] = dirty;
  }
  // `line` must be below 2^32 in the narrow layout (the L2's promise, checked by its callers).
  void set_line(uint8_t* b, int64_t way, uint64_t line) const {
    uint8_t* t = b + fields().tags_offset;
    if (fields().narrow_tags)
      reinterpret_cast<uint32_t*>(t)[way] = static_cast<uint32_t>(line);
    else
      reinterpret_cast<uint64_t*>(t)[way] = line;
    if (fields().fingerprint_offset != 0) b[fields().fingerprint_offset + way] = fingerprint(line);
  }
  // A byte that two lines in one set share only by chance (1 in 256): the top byte of a
  // multiplicative hash (the one PartitionedL2 homes lines with, so the replay multiplies once).
  static uint8_t fingerprint(uint64_t line) { return static_cast<uint8_t>((line * 0x9E3779B97F4A7C15ull) >> 56); }

  uint32_t rank(const uint8_t* b, int64_t way) const {
    if (!wide_ranks()) return b[2 * ways() + way];
    uint32_t r;
    std::memcpy(&r, b + 2 * ways() + 4 * way, 4);
    return r;
  }
  void set_rank(uint8_t* b, int64_t way, uint32_t r) const {
    if (!wide_ranks())
      b[2 * ways() + way] = static_cast<uint8_t>(r);
    else
      std::memcpy(b + 2 * ways() + 4 * way, &r, 4);
  }
};

class L2Sets {
 public:
  // narrow_tags: every line the sets will hold is below 2^32 (L2SetLayout).
  L2Sets(int64_t sets, int64_t ways, bool narrow_tags = false) : sets_(sets) {
    view_.layout = L2SetLayout::of(ways, narrow_tags);
    storage_.resize((static_cast<size_t>(sets) * view_.layout.set_bytes + 63) / 8 + 8);
    view_.base = aligned_base();
    clear();
  }
  L2Sets(const L2Sets& o) : sets_(o.sets_), storage_(o.storage_.size()), view_(o.view_) {
    view_.base = aligned_base();
    std::memcpy(view_.base, o.view_.base, static_cast<size_t>(sets_) * view_.set_bytes());
  }
  L2Sets(L2Sets&& o) noexcept = default;  // the vector's buffer, and so the view, moves with it
  L2Sets& operator=(const L2Sets&) = delete;
  L2Sets& operator=(L2Sets&&) = delete;

  int64_t sets() const { return sets_; }
  int64_t ways() const { return view_.ways(); }
  bool narrow_tags() const { return view_.layout.narrow_tags; }
  // Valid while this L2Sets lives (its storage does not move). A fixed shape only where it is
  // this one's (16 ways, and the tags' width).
  const L2SetsView<L2Shape::any>& view() const { return view_; }
  template <L2Shape kShape>
  L2SetsView<kShape> view_as() const {
    return L2SetsView<kShape>{view_.base, view_.layout};
  }

  // Every way free, ranked in way order.
  void clear() {
    std::memset(view_.base, 0, static_cast<size_t>(sets_) * view_.set_bytes());
    for (int64_t s = 0; s < sets_; ++s) {
      uint8_t* b = view_.block(static_cast<uint64_t>(s));
      for (int64_t w = 0; w < view_.ways(); ++w) view_.set_rank(b, w, static_cast<uint32_t>(w));
    }
  }
  // Calls f(dirty mask) for every way, then clears the dirty masks.
  template <typename F>
  void take_dirty(F&& f) {
    for (int64_t s = 0; s < sets_; ++s) {
      uint8_t* dirty = view_.block(static_cast<uint64_t>(s)) + view_.ways();
      for (int64_t w = 0; w < view_.ways(); ++w) {
        f(dirty[w]);
        dirty[w] = 0;
      }
    }
  }

 private:
  uint8_t* aligned_base() {
    // Blocks start on a 64-byte boundary (the vector's data is only 8-byte aligned).
    auto* p = reinterpret_cast<uint8_t*>(storage_.data());
    return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  }

  int64_t sets_;
  std::vector<uint64_t> storage_;
  L2SetsView<L2Shape::any> view_;
};

}  // namespace flashio::sim
