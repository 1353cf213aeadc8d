// Which keys a query sees by position (docs/shapes.md, "Causal and sliding windows"). With
// o = Nk − Nq (bottom-right aligned, as FlashAttention aligns causal and its windows), query q
// sees key j when q + o − left ≤ j ≤ q + o + right; a side at kNoWindow is unbounded. Causal is
// right = 0 with the left side unbounded. The model (TileGrid), the numeric execution and the
// FLOP convention read this one rule; the kernels spell it in kernels/key_limits.cuh.
#pragma once
#include <algorithm>
#include <cstdint>

namespace flashio::sim {

inline constexpr int64_t kNoWindow = -1;  // an unbounded side of the window (`none`)

struct KeyBand {
  int64_t offset = 0;  // o = Nk − Nq (a sequence's own Nk with per-sequence key lengths)
  int64_t left = kNoWindow, right = kNoWindow;
  bool bounded() const { return left != kNoWindow || right != kNoWindow; }
  // The first and last key query q sees among keys 0 … nk − 1 (first > last: none).
  int64_t first_key(int64_t q) const { return left == kNoWindow ? 0 : std::max<int64_t>(0, q + offset - left); }
  int64_t last_key(int64_t q, int64_t nk) const {
    return right == kNoWindow ? nk - 1 : std::min<int64_t>(nk - 1, q + offset + right);
  }
  bool sees(int64_t q, int64_t key, int64_t nk) const { return key >= first_key(q) && key <= last_key(q, nk); }
  // Σ over queries 0 … nq − 1 of the keys each sees, in closed form (the FLOP convention of a
  // window: its visible scores exactly). Needs offset ≥ 0 (a bounded band requires Nk ≥ Nq).
  double visible_scores(int64_t nq, int64_t nk) const {
    // x = q + o runs over [a, b]; Σ max(0, x − c) over that range, in doubles (exact below 2^53).
    const double a = static_cast<double>(offset), b = static_cast<double>(offset + nq - 1);
    auto excess = [&](double c) {
      if (b <= c) return 0.0;
      const double s = std::max(a, c + 1);
      return (b - s + 1) * ((s - c) + (b - c)) / 2;
    };
    const double n = static_cast<double>(nq), sum_x = n * (a + b) / 2;
    const double last = right == kNoWindow ? n * static_cast<double>(nk - 1)
                                           : sum_x + n * static_cast<double>(right) - excess(static_cast<double>(nk - 1 - right));
    const double first = left == kNoWindow ? 0.0 : excess(static_cast<double>(left));
    return last - first + n;
  }
};

}  // namespace flashio::sim
