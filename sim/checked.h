// Checked 64-bit arithmetic for the model's counts (docs/architecture.md, "Limits"). Every
// count is an int64_t; the closed forms and the per-step FLOPs form their products and sums
// with these helpers, so a count that would not fit in 64 bits throws CountOverflow instead of
// wrapping to a wrong number. check_limits (sim/limits.h) evaluates the closed form before any
// work and turns a CountOverflow into InvalidInput naming the field; a CountOverflow that
// reaches a front end any other way is a bug (an internal error, exit status 1).
#pragma once
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace flashio::sim {

class CountOverflow : public std::overflow_error {
 public:
  CountOverflow() : std::overflow_error("a count does not fit in 64 bits") {}
};

inline constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();  // 2^63 − 1

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw CountOverflow();
  return r;
}
template <typename... Rest>
int64_t checked_mul(int64_t a, int64_t b, int64_t c, Rest... rest) {
  return checked_mul(checked_mul(a, b), c, rest...);
}

inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw CountOverflow();
  return r;
}

// The product, or kMaxCount when it would not fit: for comparisons against a limit below
// kMaxCount ("does the footprint fit in M?"), where a product too large for 64 bits is as
// certainly over the limit as any that fits. Factors are >= 0.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMaxCount : r;
}
template <typename... Rest>
int64_t saturating_mul(int64_t a, int64_t b, int64_t c, Rest... rest) {
  return saturating_mul(saturating_mul(a, b), c, rest...);
}
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMaxCount : r;
}

// ⌈a / b⌉ for a >= 0, b > 0, without forming a + b − 1 (which overflows for a near 2^63).
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace flashio::sim
