// flash2_fwd_combine (split-KV, the second launch of a flash2 forward with splits > 1;
// docs/kernels.md, "Split-KV"): merges the splits' partial results into O and lse. Split s of a row
// wrote O_s = (Σ P̃V) / ℓ_s (normalised by its own row sum) and lse_s = ln Σ exp(scale·S) over its
// keys, so the whole row is
//   lse = ln Σ_s exp(lse_s),    O = Σ_s exp(lse_s − lse) · O_s
// (a split the row does not see has lse_s = −inf and weight 0). Grid (⌈Nq / 64⌉, H, B),
// blockIdx.x fastest: 64 query rows of one query head per block, 128 threads. Each block reads
// every lse_accum and o_accum element of its rows once (o_accum in 16-byte loads) and writes O
// (element type, 16-byte stores) and lse (fp32, stats_stride layout) once: what the model counts
// for it (a row kernel beside docs/schedules.md's flash2 rows). One query head's rows whatever
// gqa_pack (docs/shapes.md): the partials are addressed as O, so a head's rows are contiguous.
#pragma once
#include "kernels/launch.h"
#include "kernels/mma_tile.cuh"

namespace flashio::kernels {

constexpr int kCombineRows = 64;     // query rows (of one query head) per block
constexpr int kCombineThreads = 128;
// Splits whose weights one pass holds in shared memory (8 KiB): the sum over splits runs pass
// by pass with a running max, so any number of splits (up to ⌈Nk / Bc⌉) fits a fixed array.
constexpr int kCombineSplitsPerPass = 32;

template <typename T, int kD>
__global__ void __launch_bounds__(kCombineThreads) flash2_fwd_combine_kernel(const FlashParams p) {
  // A chunk: 8 consecutive elements of one row, 32 bytes of o_accum (two 16-byte loads per split)
  // and 16 bytes of O (one store). A warp's chunks cover whole rows, so every sector is whole.
  constexpr int kChunksPerRow = kD / 8;
  constexpr int kChunksPerThread = kCombineRows * kChunksPerRow / kCombineThreads;  // 4 (d64), 8 (d128)
  static_assert(kCombineRows * kChunksPerRow % kCombineThreads == 0, "whole chunks per thread");
  // The pass's lse, then (in place) its weights exp(lse_s − running max), [split][row].
  __shared__ __align__(16) float sWeight[kCombineSplitsPerPass][kCombineRows];
  __shared__ float sRowScale[kCombineRows];  // a pass's rescale of the running sums; at the end 1/ℓ

  const int tid = threadIdx.x;
  const int nq = p.seqlen, splits = p.splits;
  const int64_t bh = static_cast<int64_t>(blockIdx.z) * p.heads + blockIdx.y;
  const int q0 = blockIdx.x * kCombineRows;
  const int rows = min(kCombineRows, nq - q0);
  // [S][B][H][Nq](·d): split s of this head's rows is B·H·Nq rows further on.
  const int64_t split_rows = static_cast<int64_t>(p.batch) * p.heads * nq;
  const float* lse_accum = p.lse_accum + bh * nq + q0;
  const float* o_accum = p.o_accum + (bh * nq + q0) * kD;

  float acc[kChunksPerThread][8];  // Σ_s exp(lse_s − running max) · O_s, this thread's chunks
#pragma unroll
  for (int c = 0; c < kChunksPerThread; ++c)
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[c][e] = 0.f;
  float run_max = -INFINITY, run_sum = 0.f;  // row `tid`'s (tid < rows): natural-log units

  for (int s0 = 0; s0 < splits; s0 += kCombineSplitsPerPass) {
    const int pass_splits = min(kCombineSplitsPerPass, splits - s0);
    // The pass's lse: each split's rows are contiguous; 16-byte loads when Nq is a multiple of 4
    // (then every split's rows start on 16 bytes and rows is a multiple of 4).
    if (nq % 4 == 0) {
      for (int u = tid; u < pass_splits * kCombineRows / 4; u += kCombineThreads) {
        const int s = u / (kCombineRows / 4), r = (u % (kCombineRows / 4)) * 4;
        if (r < rows)
          *reinterpret_cast<float4*>(&sWeight[s][r]) =
              *reinterpret_cast<const float4*>(lse_accum + (s0 + s) * split_rows + r);
      }
    } else {
      for (int u = tid; u < pass_splits * kCombineRows; u += kCombineThreads) {
        const int s = u / kCombineRows, r = u % kCombineRows;
        if (r < rows) sWeight[s][r] = lse_accum[(s0 + s) * split_rows + r];
      }
    }
    __syncthreads();
    if (tid < rows) {
      float pass_max = -INFINITY;
      for (int s = 0; s < pass_splits; ++s) pass_max = fmaxf(pass_max, sWeight[s][tid]);
      const float new_max = fmaxf(run_max, pass_max);
      // While every split so far is −inf (none can be: split 0 holds key 0, which every row
      // sees), subtract 0 so that the weights stay 0 rather than NaN.
      const float use_max = new_max == -INFINITY ? 0.f : new_max;
      const float rescale = tile::exp2_approx((run_max - use_max) * tile::kLog2e);
      run_sum *= rescale;
      for (int s = 0; s < pass_splits; ++s) {
        const float w = tile::exp2_approx((sWeight[s][tid] - use_max) * tile::kLog2e);
        sWeight[s][tid] = w;
        run_sum += w;
      }
      run_max = new_max;
      sRowScale[tid] = rescale;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kChunksPerThread; ++c) {
      const int r = (c * kCombineThreads + tid) / kChunksPerRow;
      if (r < rows) {
        const float rescale = sRowScale[r];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[c][e] *= rescale;
      }
    }
    for (int s = 0; s < pass_splits; ++s) {
      const float* o_split = o_accum + (s0 + s) * split_rows * kD;
      // Every chunk's loads of this split first, then their FMAs: kChunksPerThread · 32 bytes in
      // flight per thread.
      float4 lo[kChunksPerThread], hi[kChunksPerThread];
#pragma unroll
      for (int c = 0; c < kChunksPerThread; ++c) {
        const int u = c * kCombineThreads + tid, r = u / kChunksPerRow, col = (u % kChunksPerRow) * 8;
        if (r < rows) {
          const float4* src = reinterpret_cast<const float4*>(o_split + int64_t(r) * kD + col);
          lo[c] = src[0];
          hi[c] = src[1];
        }
      }
#pragma unroll
      for (int c = 0; c < kChunksPerThread; ++c) {
        const int r = (c * kCombineThreads + tid) / kChunksPerRow;
        if (r < rows) {
          const float w = sWeight[s][r];
          const float v[8] = {lo[c].x, lo[c].y, lo[c].z, lo[c].w, hi[c].x, hi[c].y, hi[c].z, hi[c].w};
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[c][e] = fmaf(w, v[e], acc[c][e]);
        }
      }
    }
    __syncthreads();  // the next pass overwrites sWeight and sRowScale
  }

  if (tid < rows) {
    // lse = running max + ln Σ exp(lse_s − running max), written as flash2_fwd writes it.
    p.lse[bh * p.stats_stride + q0 + tid] = run_max + logf(run_sum);
    sRowScale[tid] = run_sum > 0.f ? 1.f / run_sum : 0.f;
  }
  __syncthreads();
  T* o = static_cast<T*>(p.o) + (bh * nq + q0) * kD;
#pragma unroll
  for (int c = 0; c < kChunksPerThread; ++c) {
    const int u = c * kCombineThreads + tid, r = u / kChunksPerRow, col = (u % kChunksPerRow) * 8;
    if (r < rows) {
      const float inv = sRowScale[r];
      uint4 out;
      out.x = tile::Elem<T>::pack(acc[c][0] * inv, acc[c][1] * inv);
      out.y = tile::Elem<T>::pack(acc[c][2] * inv, acc[c][3] * inv);
      out.z = tile::Elem<T>::pack(acc[c][4] * inv, acc[c][5] * inv);
      out.w = tile::Elem<T>::pack(acc[c][6] * inv, acc[c][7] * inv);
      *reinterpret_cast<uint4*>(o + int64_t(r) * kD + col) = out;
    }
  }
}

// The combine's launch: grid (⌈Nq / 64⌉, H, B), no dynamic shared memory.
template <typename T, int kD>
void launch_flash2_fwd_combine(const FlashParams& p, cudaStream_t stream) {
  const dim3 grid((p.seqlen + kCombineRows - 1) / kCombineRows, p.heads, p.batch);
  flash2_fwd_combine_kernel<T, kD><<<grid, kCombineThreads, 0, stream>>>(p);
  FLASHIO_LAUNCH_CHECK("flash2_fwd_combine");
}

}  // namespace flashio::kernels
