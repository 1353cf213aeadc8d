// flash1: the paper's loop order (Algorithms 1 and 4; docs/schedules.md, "flash1"): one block
// per (b, h), K_j, V_j in the outer loop, the row tiles i inside. The running output and
// statistics live in HBM between inner steps, as the paper writes them:
//   o_accum (fp32, normalised O_i of Algorithm 1 line 12), ℓ_i, m_i (fp32);
// the last visited step of row tile i writes O_i in the element type instead of o_accum.
// The backward keeps dQ in dq_accum (fp32) likewise and writes dQ_i on the last step.
// Both reuse the flash2 tile steps (flash_fwd_tile.cuh, flash_bwd_tile.cuh).
#pragma once
#include "kernels/flash_bwd_tile.cuh"
#include "kernels/flash_fwd_tile.cuh"
#include "kernels/launch.h"

namespace flashio::kernels {

// The last key tile row tile i visits (causal: the one holding its last query).
__device__ __forceinline__ int last_visited_key_tile(int q_row0, int rows, int tc, int block_c, bool causal) {
  return causal ? min(tc - 1, (q_row0 + rows - 1) / block_c) : tc - 1;
}

// Warps of flash1's forward block: one 16-row slice of the row tile each (2, 4, 8 for Br = 32,
// 64, 128). Its grid is one block per head, often fewer blocks than SMs: with 4 warps a Br = 128
// block left each scheduler one warp, whose dependent latencies nothing hid (ncu on the H200:
// docs/time_model.md, "Why flash1's forward is under-predicted"); 8 give each scheduler two.
constexpr int flash1_fwd_warps(int block_r) { return block_r / 16; }

template <typename T, int kD, int kBr, int kBc>
struct Flash1Fwd {
  static constexpr int kWarps = flash1_fwd_warps(kBr);
  using Tile = FwdTile<T, kD, kBr, kBc, kWarps>;
  static constexpr int kThreads = Tile::kThreads;
  // K, V; Q double-buffered; O staging.
  static constexpr int kSmemBytes = (2 * kBc * kD + 3 * kBr * kD) * 2;
  static constexpr int kStages = 2;  // Q double-buffered
  static constexpr MmaKind kMma = MmaKind::mma_sync;
};

// kDropout: fused dropout (FwdTile::Dropout; FlashParams::dropout_threshold), an instance of its
// own so that the other keeps its registers; the row keys of a step's rows are computed per step
// (the rows change with i), and 1 / (1 − p) applied when O_i is written (the o_accum between steps
// stays unscaled, as ℓ sums every probability).
template <typename T, int kD, int kBr, int kBc, bool kDropout = false>
__global__ void __launch_bounds__(Flash1Fwd<T, kD, kBr, kBc>::kThreads) flash1_fwd_kernel(const FlashParams p) {
  using K = Flash1Fwd<T, kD, kBr, kBc>;
  using Tile = typename K::Tile;
  constexpr int kThreads = K::kThreads;
  extern __shared__ uint4 smem_raw[];
  T* sK = reinterpret_cast<T*>(smem_raw);
  T* sV = sK + kBc * kD;
  T* sQ = sV + kBc * kD;  // two buffers
  T* sO = sQ + 2 * kBr * kD;

  const int n = p.seqlen;
  const int64_t bh = static_cast<int64_t>(blockIdx.z) * p.heads + blockIdx.y;
  // kDropout (fused dropout and key padding): the sequence's keys are its first Nk_b
  // (FlashParams::seqlens_k; causal needs Nk_b = N), so its key tiles are ⌈Nk_b / Bc⌉.
  int keys = n;
  if constexpr (kDropout)
    if (p.seqlens_k != nullptr) keys = __ldg(p.seqlens_k + blockIdx.z);
  const int tr = (n + kBr - 1) / kBr, tc = (keys + kBc - 1) / kBc;
  const float scale_log2 = p.scale * tile::kLog2e;
  const T* q = static_cast<const T*>(p.q) + bh * n * kD;
  const T* k = static_cast<const T*>(p.k) + bh * n * kD;
  const T* v = static_cast<const T*>(p.v) + bh * n * kD;
  T* o = static_cast<T*>(p.o) + bh * n * kD;
  float* o_accum = p.o_accum + bh * n * kD;
  float* row_sum = p.row_sum + bh * p.stats_stride;
  float* row_max = p.row_max + bh * p.stats_stride;

  for (int j = 0; j < tc; ++j) {  // Algorithm 1, line 5
    // The thread index as each step and tile take it (tile::loop_thread_index, against register spills).
    const int tid_j = tile::loop_thread_index<Tile::kAccumulatorRegisters>(int(threadIdx.x));
    const int k_row0 = j * kBc;
    const int cols = min(kBc, keys - k_row0);
    tile::load_tile_async<kBc, kD, kThreads>(sK, k + int64_t(k_row0) * kD, cols, tid_j);
    tile::load_tile_async<kBc, kD, kThreads>(sV, v + int64_t(k_row0) * kD, cols, tid_j);
    const int i_first = p.causal ? k_row0 / kBr : 0;
    tile::load_tile_async<kBr, kD, kThreads>(sQ, q + int64_t(i_first) * kBr * kD, min(kBr, n - i_first * kBr), tid_j);
    tile::cp_async_commit();
    for (int i = i_first; i < tr; ++i) {  // line 7
      const int tid = tile::loop_thread_index<Tile::kAccumulatorRegisters>(tid_j);
      const int warp = tid / 32, lane = tid % 32;
      const int buf = (i - i_first) & 1;
      if (i + 1 < tr) {
        const int next_row0 = (i + 1) * kBr;
        tile::load_tile_async<kBr, kD, kThreads>(sQ + (buf ^ 1) * kBr * kD, q + int64_t(next_row0) * kD,
                                                 min(kBr, n - next_row0), tid);
      }
      tile::cp_async_commit();
      tile::cp_async_wait<1>();
      __syncthreads();
      const int q_row0 = i * kBr;
      const int rows = min(kBr, n - q_row0);
      const bool first = j == 0;  // tile (i, 0) is always visited
      const bool last = j == last_visited_key_tile(q_row0, rows, tc, kBc, p.causal);

      Tile acc;
      acc.init();
      if (!first) {  // line 8: read O_i, ℓ_i, m_i (valid rows only)
        // Every row slice's loads are issued before any is used, so a step waits for one round
        // trip, not one per 8-row slice (ncu on the H200: at 64 × 32 the two waits of the
        // slice-by-slice version held the warps 41 % of the time; docs/kernels.md).
        float l_in[Tile::kMT][2];
#pragma unroll
        for (int mt = 0; mt < Tile::kMT; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = Tile::row_of(warp, lane, mt, h);
            l_in[mt][h] = 0.f;
            if (r < rows) {
              // __ldcg: past L1 to the L2, so a row this block wrote one step earlier is not
              // served by L1 and the per-SM counters see every re-read Algorithm 1 counts.
              l_in[mt][h] = __ldcg(row_sum + q_row0 + r);
              acc.m[mt][h] = __ldcg(row_max + q_row0 + r);  // natural-log units until below
#pragma unroll
              for (int dt = 0; dt < Tile::kDT; ++dt) {
                const float2 x = __ldcg(reinterpret_cast<const float2*>(o_accum + int64_t(q_row0 + r) * kD +
                                                                        dt * 8 + (lane & 3) * 2));
                acc.o[mt][dt][2 * h] = x.x;
                acc.o[mt][dt][2 * h + 1] = x.y;
              }
            }
          }
#pragma unroll
        for (int mt = 0; mt < Tile::kMT; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            if (Tile::row_of(warp, lane, mt, h) >= rows) continue;
            const float l = l_in[mt][h];
            acc.m[mt][h] *= tile::kLog2e;
            acc.l[mt][h] = (lane & 3) == 0 ? l : 0.f;  // lane-partial sums, reduced at the end
#pragma unroll
            for (int dt = 0; dt < Tile::kDT; ++dt) {  // O_i was stored normalised
              acc.o[mt][dt][2 * h] *= l;
              acc.o[mt][dt][2 * h + 1] *= l;
            }
          }
      }
      // One head's rows, Nk = Nq: lim.partial's test with row0 the first query, spelled on this
      // kernel's values (read from the struct, ptxas allocated the kernel worse).
      const bool masked = (k_row0 + kBc > keys) || (p.causal && k_row0 + kBc - 1 > q_row0);
      const KeyLimits<false> lim{q_row0, n, keys, 0, p.causal};
      typename Tile::Dropout drop{};
      if constexpr (kDropout)
        drop = Tile::dropout_rows(
            p.dropout_seed, p.dropout_threshold, warp, lane, [&](int r) { return q_row0 + r; },
            [&](int) { return bh; });
      acc.template step<false, false, kDropout>(sQ + buf * kBr * kD, sK, sV, lim, k_row0, masked, scale_log2, warp, lane,
                                                drop);
      acc.reduce_row_sums();
      // Lines 12–13: write O_i (fp32 o_accum, or the final O in the element type), ℓ_i, m_i.
#pragma unroll
      for (int mt = 0; mt < Tile::kMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = Tile::row_of(warp, lane, mt, h);
          if (r < rows) {
            if ((lane & 3) == 0) {
              row_sum[q_row0 + r] = acc.l[mt][h];
              row_max[q_row0 + r] = acc.m[mt][h] * (1.f / tile::kLog2e);
            }
            if (!last) {
              const float inv = 1.f / acc.l[mt][h];
#pragma unroll
              for (int dt = 0; dt < Tile::kDT; ++dt)
                *reinterpret_cast<float2*>(o_accum + int64_t(q_row0 + r) * kD + dt * 8 + (lane & 3) * 2) =
                    make_float2(acc.o[mt][dt][2 * h] * inv, acc.o[mt][dt][2 * h + 1] * inv);
            }
          }
        }
      if (last) {
        if constexpr (kDropout) acc.scale_output(p.dropout_scale);
        acc.stage_normalised(sO, warp, lane);
        __syncthreads();
        tile::store_tile<kBr, kD, kThreads>(o + int64_t(q_row0) * kD, sO, rows, tid);
      }
      __syncthreads();  // the Q buffer and sO are reused
    }
    tile::cp_async_wait<0>();
    __syncthreads();  // K, V are overwritten by the next j
  }
}

template <typename T, int kD, int kBr, int kBc>
struct Flash1Bwd {
  using Tile = BwdTile<T, kD, kBr, kBc>;
  static constexpr int kThreads = Tile::kThreads;
  // K, V, then Q, dO, O, lse/delta, dSᵀ, dQ staging.
  static constexpr int kSmemBytes = (2 * kBc * kD + 3 * kBr * kD) * 2 + Tile::kSmemStatsBytes +
                                    Tile::kSmemDsBytes + Tile::kSmemDqBytes;
  static constexpr int kStages = 1;
  static constexpr MmaKind kMma = MmaKind::mma_sync;
};

// kDropout: fused dropout (BwdTile::Dropout), an instance of its own; the row keys go with the
// step's lse into shared memory (BwdTile::row_key_at, slot 0).
template <typename T, int kD, int kBr, int kBc, bool kDropout = false>
__global__ void __launch_bounds__(Flash1Bwd<T, kD, kBr, kBc>::kThreads) flash1_bwd_kernel(const FlashParams p) {
  using K = Flash1Bwd<T, kD, kBr, kBc>;
  using Tile = typename K::Tile;
  constexpr int kThreads = K::kThreads;
  extern __shared__ uint4 smem_raw[];
  T* sK = reinterpret_cast<T*>(smem_raw);
  T* sV = sK + kBc * kD;
  T* sQ = sV + kBc * kD;
  T* sdO = sQ + kBr * kD;
  T* sO = sdO + kBr * kD;
  float* sLse = reinterpret_cast<float*>(sO + kBr * kD);
  float* sDelta = sLse + kBr;
  T* sdS = reinterpret_cast<T*>(sDelta + kBr);
  float* sDq = reinterpret_cast<float*>(sdS + kBc * Tile::kDsCols);

  const int n = p.seqlen;
  const int64_t bh = static_cast<int64_t>(blockIdx.z) * p.heads + blockIdx.y;
  // kDropout (fused dropout and key padding): the sequence's keys are its first Nk_b
  // (FlashParams::seqlens_k; causal needs Nk_b = N): ⌈Nk_b / Bc⌉ key tiles are seen (tc_seen),
  // and every key tile writes its dK_j, dV_j, zero past Nk_b (a tile wholly past it runs no step).
  int keys = n;
  if constexpr (kDropout)
    if (p.seqlens_k != nullptr) keys = __ldg(p.seqlens_k + blockIdx.z);
  const int tr = (n + kBr - 1) / kBr, tc = (n + kBc - 1) / kBc, tc_seen = (keys + kBc - 1) / kBc;
  const float scale_log2 = p.scale * tile::kLog2e;
  const T* q = static_cast<const T*>(p.q) + bh * n * kD;
  const T* o = static_cast<const T*>(p.o) + bh * n * kD;
  const T* dout = static_cast<const T*>(p.dout) + bh * n * kD;
  const float* row_sum = p.row_sum + bh * p.stats_stride;
  const float* row_max = p.row_max + bh * p.stats_stride;
  float* dq_accum = p.dq_accum + bh * n * kD;
  T* dq = static_cast<T*>(p.dq) + bh * n * kD;

  for (int j = 0; j < tc; ++j) {  // Algorithm 4, line 6
    // The thread index as each step and tile take it (tile::loop_thread_index, against register spills).
    const int tid_j = tile::loop_thread_index<Tile::kAccumulatorRegisters>(int(threadIdx.x));
    const int k_row0 = j * kBc;
    const int cols = min(kBc, n - k_row0), seen_cols = min(kBc, keys - k_row0);
    tile::load_tile_async<kBc, kD, kThreads>(sK, static_cast<const T*>(p.k) + (bh * n + k_row0) * kD, seen_cols, tid_j);
    tile::load_tile_async<kBc, kD, kThreads>(sV, static_cast<const T*>(p.v) + (bh * n + k_row0) * kD, seen_cols, tid_j);
    Tile acc;
    acc.init();
    const int i_first = kDropout && j >= tc_seen ? tr : p.causal ? k_row0 / kBr : 0;
    for (int i = i_first; i < tr; ++i) {  // line 9
      const int tid = tile::loop_thread_index<Tile::kAccumulatorRegisters>(tid_j);
      const int warp = tid / 32, lane = tid % 32;
      const int q_row0 = i * kBr;
      const int rows = min(kBr, n - q_row0);
      tile::load_tile_async<kBr, kD, kThreads>(sQ, q + int64_t(q_row0) * kD, rows, tid);
      tile::load_tile_async<kBr, kD, kThreads>(sdO, dout + int64_t(q_row0) * kD, rows, tid);
      tile::load_tile_async<kBr, kD, kThreads>(sO, o + int64_t(q_row0) * kD, rows, tid);
      tile::cp_async_commit();
      for (int r = tid; r < kBr; r += kThreads) {  // lse = m + log ℓ, in base 2
        sLse[r] = r < rows ? (__ldcg(row_max + q_row0 + r) + logf(__ldcg(row_sum + q_row0 + r))) * tile::kLog2e
                           : INFINITY;
        if constexpr (kDropout) *Tile::row_key_at(sDq, r, 0) = dropout::row_key(p.dropout_seed, bh, q_row0 + r);
      }
      tile::cp_async_wait<0>();
      __syncthreads();
      // Line 19: D_i = rowsum(dO_i ∘ O_i), recomputed here (flash2 precomputes it).
      for (int r = tid; r < kBr; r += kThreads) {
        float sum = 0.f;
        if (r < rows) {
#pragma unroll 8
          for (int c = 0; c < kD; ++c)
            sum += tile::Elem<T>::to_float(sdO[tile::swz<kD>(r, c)]) * tile::Elem<T>::to_float(sO[tile::swz<kD>(r, c)]);
        }
        sDelta[r] = sum;
      }
      __syncthreads();
      // As in the forward: lim.partial's test on this kernel's values.
      const bool masked = (k_row0 + kBc > keys) || (p.causal && k_row0 + kBc - 1 > q_row0);
      const KeyLimits<false> lim{q_row0, n, keys, 0, p.causal};
      acc.template step<false, false, kDropout>(sQ, sdO, sK, sV, sLse, sDelta, sdS, sDq, lim, k_row0, masked,
                                                scale_log2, warp, lane, {p.dropout_threshold, p.dropout_scale, 0});
      // Line 21: dQ_i += dS K_j, read-modify-write of the fp32 accumulator (this block owns
      // head bh, so no atomics); the last visited step writes dQ_i in the element type.
      const bool first = j == 0;
      const bool last = j == last_visited_key_tile(q_row0, rows, tc_seen, kBc, p.causal);
      float* acc_tile = dq_accum + int64_t(q_row0) * kD;
      // One float4 per thread and step, consecutive lanes on consecutive 16 bytes: every 32-byte
      // sector of dq_accum is read by one instruction (__ldcg goes past L1, so two half-sector
      // reads would move the sector twice) and written whole.
      for (int u = tid; u < rows * kD / 4; u += kThreads) {
        const int r = u / (kD / 4), c = (u % (kD / 4)) * 4;
        float4 a = *reinterpret_cast<const float4*>(sDq + r * Tile::kDqStride + c);
        float* g = acc_tile + int64_t(r) * kD + c;
        if (!first) {
          const float4 ga = __ldcg(reinterpret_cast<const float4*>(g));  // L2, not L1 (see above)
          a = make_float4(a.x + ga.x, a.y + ga.y, a.z + ga.z, a.w + ga.w);
        }
        if (last) {
          const float s = p.scale;
          uint2 out;
          out.x = tile::Elem<T>::pack(a.x * s, a.y * s);
          out.y = tile::Elem<T>::pack(a.z * s, a.w * s);
          *reinterpret_cast<uint2*>(dq + int64_t(q_row0 + r) * kD + c) = out;
        } else {
          *reinterpret_cast<float4*>(g) = a;
        }
      }
      __syncthreads();
    }
    if constexpr (kDropout)  // a tile past the sequence's keys ran no step: nothing since its (zero) K, V stores
      if (i_first >= tr) __syncthreads();
    acc.stage_dk_dv(sK, sV, p.scale, tid_j / 32, tid_j % 32, kDropout ? p.dropout_scale : 1.f);  // line 24: dK_j, dV_j
    __syncthreads();
    tile::store_tile<kBc, kD, kThreads>(static_cast<T*>(p.dk) + (bh * n + k_row0) * kD, sK, cols, tid_j);
    tile::store_tile<kBc, kD, kThreads>(static_cast<T*>(p.dv) + (bh * n + k_row0) * kD, sV, cols, tid_j);
    __syncthreads();
  }
}

// Launches a flash1 kernel (K: its traits; kDropoutKernel: its instance for fused dropout and
// key padding) with one
// block per head, grid (1, H, B).
template <typename K, void (*kKernel)(FlashParams), void (*kDropoutKernel)(FlashParams)>
void launch_flash1(const FlashParams& p, cudaStream_t stream) {
  const bool dropout = p.dropout_threshold > 0 || p.seqlens_k != nullptr;  // and key padding
  if (dropout) opt_in_dynamic_smem<kDropoutKernel>(K::kSmemBytes);
  else opt_in_dynamic_smem<kKernel>(K::kSmemBytes);
  (dropout ? kDropoutKernel : kKernel)<<<dim3(1, p.heads, p.batch), K::kThreads, K::kSmemBytes, stream>>>(p);
  FLASHIO_LAUNCH_CHECK("flash1 kernel");
}

template <typename T, int kD, int kBr, int kBc>
FlashImpl flash1_fwd_impl(DType dtype) {
  using K = Flash1Fwd<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash1, Pass::fwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages, K::kMma},
                   &launch_flash1<K, flash1_fwd_kernel<T, kD, kBr, kBc>, flash1_fwd_kernel<T, kD, kBr, kBc, true>>};
}
template <typename T, int kD, int kBr, int kBc>
FlashImpl flash1_bwd_impl(DType dtype) {
  using K = Flash1Bwd<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash1, Pass::bwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages, K::kMma},
                   &launch_flash1<K, flash1_bwd_kernel<T, kD, kBr, kBc>, flash1_bwd_kernel<T, kD, kBr, kBc, true>>};
}

}  // namespace flashio::kernels
