// Dropout's keep decision (docs/kernels.md, "Fused dropout"): which attention probabilities
// P(b, h, query, key) survive `--dropout p`. A pure function of (seed, b·H + h, query, key), so
// a forward and its backward regenerate the same decisions with no mask in memory, and every
// kernel that drops (standard's dropout pass, flash1's and flash2's fused tiles) and the
// model's reference (sim/execute.cpp) keep the same elements: host and device code, 32-bit
// integer arithmetic only (GPUs have no fast 64-bit multiply).
//
// The rule: each (head, query) row gets a key from two rounds of `lowbias32` (Chris Wellons's
// 32-bit integer hash: xor-shift, multiply, xor-shift, multiply, xor-shift; a bijection on 32
// bits); each pair of keys (2c, 2c + 1) of a row one 32-bit draw, lowbias32(row key + c·φ),
// φ = 0x9E3779B9 (odd, so the draws of one row's pairs are distinct); key 2c takes the draw's low
// 16 bits, key 2c + 1 its high 16 bits, and is kept when they are ≥ the threshold round(p·2^16).
// The probability used is therefore p rounded to a multiple of 2^-16 (p = 0.1 → 6554 / 65536 =
// 0.1000061; any p > 0 at least 2^-16), and kept probabilities are scaled by 1 / (1 − that).
// A forward thread holds pairs of adjacent keys of a row (the mma accumulator layout), so it
// computes one draw per two probabilities.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define FLASHIO_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FLASHIO_HOST_DEVICE inline
#endif

namespace flashio::dropout {

inline constexpr uint32_t kPairStep = 0x9E3779B9u;  // φ: 2^32 / golden ratio, odd
inline constexpr uint32_t kThresholdOne = 65536u;    // 2^16: the threshold's unit

FLASHIO_HOST_DEVICE uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// The row key of query `query` of head bh (= b·H + h) under `seed`.
FLASHIO_HOST_DEVICE uint32_t row_key(uint64_t seed, int64_t bh, int64_t query) {
  const uint32_t mixed = lowbias32(static_cast<uint32_t>(query) ^ static_cast<uint32_t>(seed));
  return lowbias32(mixed + static_cast<uint32_t>(bh) * kPairStep + static_cast<uint32_t>(seed >> 32));
}

// The draw of the key pair holding `key` (keys 2c and 2c + 1 share draw c).
FLASHIO_HOST_DEVICE uint32_t pair_draw(uint32_t row_key, int64_t key) {
  return lowbias32(row_key + static_cast<uint32_t>(key >> 1) * kPairStep);
}

// Whether `key` survives, given its pair's draw: its 16 bits (low for an even key, high for an
// odd one) ≥ threshold.
FLASHIO_HOST_DEVICE bool keeps_even(uint32_t draw, uint32_t threshold) { return (draw & 0xffffu) >= threshold; }
FLASHIO_HOST_DEVICE bool keeps_odd(uint32_t draw, uint32_t threshold) { return draw >= (threshold << 16); }
FLASHIO_HOST_DEVICE bool keeps(uint32_t draw, int64_t key, uint32_t threshold) {
  return (key & 1) ? keeps_odd(draw, threshold) : keeps_even(draw, threshold);
}

// round(p · 2^16) for p in [0, 1), at least 1 when p > 0 (so that any p > 0 drops, as the
// model counts it) and at most 65535 (a kept fraction of at least 2^-16); 0 only for p = 0.
FLASHIO_HOST_DEVICE uint32_t threshold_of(double p) {
  if (!(p > 0.0)) return 0u;
  const double t = p * kThresholdOne + 0.5;
  return t >= 65535.0 ? 65535u : t < 1.0 ? 1u : static_cast<uint32_t>(t);
}
// The probability the rule drops with (p rounded), and the scale of what it keeps.
FLASHIO_HOST_DEVICE double applied_probability(double p) { return threshold_of(p) / double(kThresholdOne); }
FLASHIO_HOST_DEVICE double keep_scale(double p) {
  return double(kThresholdOne) / double(kThresholdOne - threshold_of(p));
}

}  // namespace flashio::dropout
