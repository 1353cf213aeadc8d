// The SFU benchmarks' work (docs/calibration.md, "Pipes" and "Tensor cores and the SFU
// together"): independent chains y ← 2^(−y) of the softmax's ex2.approx (tile::exp2_approx; the
// negation is the MUFU's operand modifier, so a chain is SFU work alone). From y in [0.5, 1)
// every chain converges to the fixed point y* = 2^(−y*).
#pragma once
#include <cmath>

#include "kernels/mma_tile.cuh"

namespace flashio::kernels::calibrate::detail {

constexpr int kExp2Chains = 8;  // per thread: enough to cover the SFU's latency

// One thread's chains after `iterations` steps each, from y_j = 0.5 + j/16, summed.
__device__ __forceinline__ float exp2_chains(int iterations) {
  float y[kExp2Chains];
#pragma unroll
  for (int j = 0; j < kExp2Chains; ++j) y[j] = 0.5f + 0.0625f * j;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kExp2Chains; ++j) y[j] = tile::exp2_approx(-y[j]);
  }
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kExp2Chains; ++j) sum += y[j];
  return sum;
}

// The softmax's instructions per score (docs/calibration.md, "Tensor cores and the SFU
// together"): the same 8 chains, each step x = y·scale + shift (FFMA: a score scaled, less its
// row's maximum), y ← 2^(−x) (MUFU.EX2), the running maximum (FMNMX) and the running sum (FADD)
// of the chain's values, as a softmax's pass over its scores. scale = 1 and shift = 0 come from
// the host at run time (so the FFMA stays): the chains end where exp2_chains's do. Returns the
// final values' sum in `ends` and the running sums' and maxima's in `sums`.
__device__ __forceinline__ void softmax_chains(int iterations, float scale, float shift, float& ends, float& sums) {
  float y[kExp2Chains], maximum[kExp2Chains], sum[kExp2Chains];
#pragma unroll
  for (int j = 0; j < kExp2Chains; ++j) y[j] = 0.5f + 0.0625f * j, maximum[j] = 0.f, sum[j] = 0.f;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kExp2Chains; ++j) {
      y[j] = tile::exp2_approx(-fmaf(y[j], scale, shift));
      maximum[j] = fmaxf(maximum[j], y[j]);
      sum[j] += y[j];
    }
  }
  ends = 0.f, sums = 0.f;
#pragma unroll
  for (int j = 0; j < kExp2Chains; ++j) ends += y[j], sums += sum[j] + maximum[j];
}

// Where every chain ends: y* = 2^(−y*) = W(ln 2)/ln 2 (ex2.approx's error, 2 ulp, moves it far
// less than 0.1 %; 64 steps or more get within that of it).
inline double exp2_fixed_point() {
  double y = 0.6;
  for (int i = 0; i < 200; ++i) y = std::exp2(-y);
  return y;
}

}  // namespace flashio::kernels::calibrate::detail
