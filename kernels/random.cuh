// Counter-based random numbers for input fills and dropout: a value is a pure function of
// (seed, index), so any element can be regenerated (dropout's backward) without a stored mask
// and fills are identical however the work is split. The mixer is SplitMix64's finaliser.
#pragma once
#include <cstdint>

namespace flashio::kernels::random {

__host__ __device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 24 random bits.
__host__ __device__ __forceinline__ float uniform01(uint64_t seed, uint64_t index) {
  return static_cast<float>(mix64(seed ^ mix64(index)) >> 40) * (1.f / 16777216.f);
}

// Standard normal by Box–Muller from two independent uniforms.
__device__ __forceinline__ float normal(uint64_t seed, uint64_t index) {
  const uint64_t bits = mix64(seed ^ mix64(index));
  const float u1 = (static_cast<float>(bits >> 40) + 1.f) * (1.f / 16777217.f);  // (0, 1]
  const float u2 = static_cast<float>((bits >> 8) & 0xffffffu) * (1.f / 16777216.f);
  return sqrtf(-2.f * __logf(u1)) * __cosf(6.283185307179586f * u2);
}

}  // namespace flashio::kernels::random
