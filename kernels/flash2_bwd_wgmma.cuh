// flash2's backward on Hopper's warpgroup mma (wgmma, sm_90a; docs/kernels.md, "wgmma backward"):
// the schedule of flash2_bwd.cuh (docs/schedules.md, "flash2": one block per key tile j of a K/V
// head, K_j and V_j read once, then every visited row tile i ascending over the group's stacked
// query rows: Q_i, dO_i, lse_i, delta_i through a two-stage cp.async pipeline; dq_accum_i += dS K_j
// by fp32 reductions in L2; dK_j, dV_j written once), so the model's counts are the same, and the same
// preprocess and convert kernels around it. Only the arithmetic differs: two warpgroups each own
// 64 of the Bc = 128 keys and run the five GEMMs of a tile (FA2's backward; paper Algorithm 4,
// lines 11–21) as wgmma:
//   Sᵀ  = K_w Q_iᵀ      K and Q from shared memory (K-major), 64 × Br × d
//   dPᵀ = V_w dO_iᵀ     V and dO likewise
//   Pᵀ  = exp(scale·Sᵀ − lse), dSᵀ = Pᵀ ∘ (dPᵀ − delta) on the accumulators (one query per column)
//   dV_w += Pᵀ dO_i     Pᵀ's fragments from registers, dO N-major from shared memory
//   dK_w += dSᵀ Q_i     dSᵀ's fragments from registers, Q N-major
//   dQ_i  = dS K_j      dSᵀ staged in shared memory (both warpgroups' keys), read M-major; K
//                       N-major; the warpgroups split dQ_i's rows (Br = 128) or its columns (Br = 64);
//                       staged in fp32 and added to dq_accum by TMA reductions in L2 (one thread)
// Sᵀ's exponentials run while dPᵀ's GEMM does, and dV's and dK's GEMMs while the next slices'
// dSᵀ are computed. Dense problems only (KernelEntry::dense_only): causal or not, grouped-query
// heads (stacked rows), Nq ≠ Nk, a window's right side (causal with an offset).
#pragma once
#include "kernels/flash2_bwd.cuh"
#include "kernels/key_limits.cuh"
#include "kernels/launch.h"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace flashio::kernels {

template <typename T, int kD, int kBr, int kBc>
struct Flash2BwdWgmma {
  static_assert(kBc == 128 && ((kD == 64 && kBr == 128) || (kD == 128 && kBr == 64)),
                "wgmma backward: Bc = 128 (two warpgroups of 64 keys); Br 128 at d = 64, 64 at d = 128");
  static constexpr int kThreads = 256;
  static constexpr int kStages = 2;  // Q, dO, lse, delta double-buffered
  static constexpr MmaKind kMma = MmaKind::wgmma;
  // dQ_i = dS K_j: each warpgroup computes a 64 × 64 part, rows 64w (Br = 128) or columns 64w (Br = 64).
  static constexpr int kDqCols = kBr == 128 ? kD : kD / 2;
  static_assert(kDqCols == 64, "one m64n64 accumulator of dQ per warpgroup");
  // dQ_i into dq_accum: at d = 128 staged and reduce-added by TMA (a thread per warp), which ran 1.04×
  // the speed of 8-byte atomics from the registers on the H200; at d = 64 the atomics, since
  // there the staging's addresses made ptxas spill 124 bytes a thread and ran 0.96× their speed
  // (docs/kernels.md, "wgmma backward").
  static constexpr bool kDqByTma = kD == 128;
  // K, V; two stages of Q and dO; dSᵀ; dQ_i's fp32 staging tile (kDqByTma); two stages of lse and
  // delta; room to align the tiles to 1024 B (swizzle atoms).
  static constexpr int kSmemBytes = (2 * kBc * kD + 2 * kStages * kBr * kD + kBc * kBr) * 2 +
                                    (kDqByTma ? kBr * kD * 4 : 0) + 2 * kStages * kBr * 4 + 1024;
};

// dQ_i's fp32 staging tile (kDqByTma), one part per warp: its 16 rows × 64 columns of dQ_i as two
// boxes of 16 rows × 32 columns (128 B), each swizzled by 128 bytes as the dq_accum tensor map's
// boxes (kernels/tensor_map.h): the 16-byte unit u of row r at unit u ^ (r mod 8), so that the 8
// rows of an accumulator's quad columns hit 8 bank groups. row < 16 and col < 64 are the warp's.
__device__ __forceinline__ int dq_staging_at(int warp, int row, int col) {
  return warp * (16 * 64) + (col >> 5) * (16 * 32) + row * 32 + ((((col >> 2) & 7) ^ (row & 7)) << 2) + (col & 3);
}

// kStacked: more than one query head per K/V head (the rows wrap from head to head).
template <typename T, int kD, int kBr, int kBc, bool kStacked>
__global__ void __launch_bounds__(Flash2BwdWgmma<T, kD, kBr, kBc>::kThreads, 1)
    flash2_bwd_wgmma_kernel(const FlashParams p, const __grid_constant__ tma::Map dq_map) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = Flash2BwdWgmma<T, kD, kBr, kBc>;
  constexpr int kThreads = K::kThreads, kStages = K::kStages;
  using KVLayout = wg::AtomSwizzled<kBc>;
  using QLayout = wg::AtomSwizzled<kBr>;
  extern __shared__ uint4 smem_raw[];
  const uint32_t raw = tile::smem_addr(smem_raw);
  T* sK = reinterpret_cast<T*>(reinterpret_cast<char*>(smem_raw) + (((raw + 1023) & ~1023u) - raw));
  T* sV = sK + kBc * kD;
  T* sQ = sV + kBc * kD;                 // [kStages][Br][d]
  T* sdO = sQ + kStages * kBr * kD;      // [kStages][Br][d]
  T* sdS = sdO + kStages * kBr * kD;     // dSᵀ, [Bc][Br] as KVLayout's panels of 64 queries
  float* sDq = reinterpret_cast<float*>(sdS + kBc * kBr);   // dq_staging_at
  float* sLse = sDq + (K::kDqByTma ? kBr * kD : 0);         // [kStages][Br]
  float* sDelta = sLse + kStages * kBr;                     // [kStages][Br]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wg_index = warp / 4;
  const int g_lane = lane / 4, q_lane = lane % 4;  // the accumulator's row and column pair in its 8 × 8
  // The block's rows: the K/V head's group's query heads stacked (flash2_bwd_kernel).
  const int g = p.heads / p.kv_heads;
  const int nq = p.seqlen, n = g * nq, nk = p.seqlen_k;
  const int j = blockIdx.x;
  const int64_t bh_q0 = static_cast<int64_t>(blockIdx.z) * p.heads + int64_t(blockIdx.y) * g;
  const int64_t bkv = static_cast<int64_t>(blockIdx.z) * p.kv_heads + blockIdx.y;
  const int k_row0 = j * kBc;
  const int cols = min(kBc, nk - k_row0);
  const int tr = (n + kBr - 1) / kBr;
  const float scale_log2 = p.scale * tile::kLog2e;
  auto limits = [&](int i) {
    return KeyLimits<kStacked>::of_row(i * kBr, nq, nk, p.causal_offset, p.causal);
  };
  // Causal: row tiles whose last query sees no key of this tile are skipped (flash2_bwd_kernel).
  auto next_visited = [&](int i) {
    if constexpr (kStacked)
      if (p.causal)
        while (i < tr && limits(i).above_diagonal(min(kBr, n - i * kBr), k_row0)) ++i;
    return i;
  };
  const int i_first = kStacked ? next_visited(0) : p.causal ? max(0, k_row0 - p.causal_offset) / kBr : 0;

  const T* q = static_cast<const T*>(p.q) + bh_q0 * nq * kD;
  const T* dout = static_cast<const T*>(p.dout) + bh_q0 * nq * kD;
  const float* lse = p.lse + bh_q0 * p.stats_stride;
  const float* delta = p.delta + bh_q0 * p.stats_stride;

  // Row tile i into stage `stage`: Q_i, dO_i (valid rows, zeros past them), lse_i and
  // delta_i (rows past the group's: lse = +inf, so P = 0 there, delta = 0).
  auto load_row_tile = [&](int i, int stage, int tid) {
    const int q_row0 = i * kBr;
    const int rows = min(kBr, n - q_row0);
    tile::load_tile_async<kBr, kD, kThreads, T, QLayout>(sQ + stage * kBr * kD, q + int64_t(q_row0) * kD, rows, tid);
    tile::load_tile_async<kBr, kD, kThreads, T, QLayout>(sdO + stage * kBr * kD, dout + int64_t(q_row0) * kD, rows, tid);
    const int r = tid;
    if (r < kBr) {
      if (r < rows) {
        const int query = KeyLimits<kStacked>::query_of(kStacked ? q_row0 % nq : q_row0, nq, r);
        const int head = kStacked ? (q_row0 + r) / nq : 0;
        const int64_t at = head * int64_t(p.stats_stride) + query;
        cp_async_4(sLse + stage * kBr + r, lse + at);
        cp_async_4(sDelta + stage * kBr + r, delta + at);
      } else {
        sLse[stage * kBr + r] = INFINITY;
        sDelta[stage * kBr + r] = 0.f;
      }
    }
  };

  const int64_t kv_row0 = bkv * nk + k_row0;
  tile::load_tile_async<kBc, kD, kThreads, T, KVLayout>(sK, static_cast<const T*>(p.k) + kv_row0 * kD, cols, tid);
  tile::load_tile_async<kBc, kD, kThreads, T, KVLayout>(sV, static_cast<const T*>(p.v) + kv_row0 * kD, cols, tid);
  if (i_first < tr) load_row_tile(i_first, 0, tid);
  tile::cp_async_commit();

  constexpr uint32_t kAtomBytes = 1024;
  constexpr int kQSlices = kBr / 16;  // 16-query k slices of dV's and dK's GEMMs
  float dv[kD / 2], dk[kD / 2];
#pragma unroll
  for (int e = 0; e < kD / 2; ++e) dv[e] = dk[e] = 0.f;
  const T* k_wg = sK + wg_index * 64 * 64;  // this warpgroup's 64 keys in each panel
  const T* v_wg = sV + wg_index * 64 * 64;
  // dQ's part: rows m0 and columns n0 of dQ_i (K::kDqCols).
  const int dq_m0 = kBr == 128 ? 64 * wg_index : 0, dq_n0 = kBr == 128 ? 0 : 64 * wg_index;
  int stage = 0;
  for (int i = i_first; i < tr; stage ^= 1) {
    tile::cp_async_wait<0>();
    wg::fence_proxy_async();  // this thread's cp.async writes, before wgmma reads them
    __syncthreads();          // every thread's, and every warpgroup done with the other stage and dSᵀ
    // The next row tile's copies (issued after this tile's GEMMs instead, the H200 ran 3 % slower).
    const int next = next_visited(i + 1);
    if (next < tr) load_row_tile(next, stage ^ 1, tid);
    tile::cp_async_commit();
    const T* sQs = sQ + stage * kBr * kD;
    const T* sdOs = sdO + stage * kBr * kD;
    const int q_row0 = i * kBr;
    const int rows = min(kBr, n - q_row0);

    // Sᵀ = K_w Q_iᵀ, then dPᵀ = V_w dO_iᵀ (the first k step overwrites: scale_d = 0).
    float s[kBr / 2], dp[kBr / 2];
    wg::fence();
    // A 16-wide k step is 32 B inside a 64-wide panel, a new panel (the tile's rows × 64) every 4.
    // Each operand's descriptor is made once a tile and stepped (wg::desc_at).
    const uint64_t k_desc = wg::sw128_desc(k_wg, 16, kAtomBytes), v_desc = wg::sw128_desc(v_wg, 16, kAtomBytes);
    const uint64_t q_desc = wg::sw128_desc(sQs, 16, kAtomBytes), do_desc = wg::sw128_desc(sdOs, 16, kAtomBytes);
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      wg::wgmma_ss<T, kBr>(s, wg::desc_at<T>(k_desc, (kk / 4) * (kBc * 64) + (kk % 4) * 16),
                           wg::desc_at<T>(q_desc, (kk / 4) * (kBr * 64) + (kk % 4) * 16), kk > 0);
    wg::commit();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      wg::wgmma_ss<T, kBr>(dp, wg::desc_at<T>(v_desc, (kk / 4) * (kBc * 64) + (kk % 4) * 16),
                           wg::desc_at<T>(do_desc, (kk / 4) * (kBr * 64) + (kk % 4) * 16), kk > 0);
    wg::commit();
    wg::wait<1>();  // Sᵀ; dPᵀ still running

    // Pᵀ = 2^(scale·log2e·Sᵀ − lse₂). Element 8·kk + 4·u + 2·h + e of s is key row
    // 16·warp + g_lane + 8·h of the tile and query column 16·kk + 8·u + 2·q_lane + e.
    const float* lse_s = sLse + stage * kBr;
    const KeyLimits<kStacked> lim = limits(i);
    const bool masked = lim.partial(rows, k_row0, kBc);
    const int key_lane = k_row0 + 16 * warp + g_lane;
#pragma unroll
    for (int kk = 0; kk < kQSlices; ++kk)
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int col = 16 * kk + 8 * u + 2 * q_lane;
        const float2 l2 = *reinterpret_cast<const float2*>(lse_s + col);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[8 * kk + 4 * u + 2 * h + e];
            x = exp2f(fmaf(x, scale_log2, -(e ? l2.y : l2.x) * tile::kLog2e));
            if (masked && KeyLimits<kStacked>::hidden(lim.row0, nq, nk, p.causal_offset, p.causal, col + e,
                                                      key_lane + 8 * h))
              x = 0.f;
          }
      }
    wg::wait<0>();  // dPᵀ

    // dSᵀ = Pᵀ ∘ (dPᵀ − delta), slice by slice: Pᵀ's and dSᵀ's fragments (the m16n8k16 A layout
    // of the accumulators' 16-column slices), dSᵀ staged for dQ, dV's and dK's GEMMs issued.
    const float* delta_s = sDelta + stage * kBr;
    uint32_t pa[kQSlices][4], dsa[kQSlices][4];
    const uint64_t do_n_desc = wg::sw128_desc(sdOs, kBr * 128, kAtomBytes), q_n_desc = wg::sw128_desc(sQs, kBr * 128, kAtomBytes);
#pragma unroll
    for (int kk = 0; kk < kQSlices; ++kk) {
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int col = 16 * kk + 8 * u + 2 * q_lane;
        const float2 d2 = *reinterpret_cast<const float2*>(delta_s + col);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int x = 8 * kk + 4 * u + 2 * h;
          pa[kk][2 * u + h] = tile::Elem<T>::pack(s[x], s[x + 1]);
          dsa[kk][2 * u + h] = tile::Elem<T>::pack(s[x] * (dp[x] - d2.x), s[x + 1] * (dp[x + 1] - d2.y));
          *reinterpret_cast<uint32_t*>(sdS + KVLayout::at(16 * warp + g_lane + 8 * h, col)) = dsa[kk][2 * u + h];
        }
      }
      wg::fence();  // pa[kk], dsa[kk] (and at kk = 0 dV, dK) written since the last wgmma
      wg::wgmma_rs_tn<T, kD>(dv, pa[kk], wg::desc_at<T>(do_n_desc, kk * 16 * 64));
      wg::wgmma_rs_tn<T, kD>(dk, dsa[kk], wg::desc_at<T>(q_n_desc, kk * 16 * 64));
    }
    wg::commit();

    // dQ_i's part = dS K_j over the tile's 128 keys: both warpgroups' dSᵀ must be staged.
    wg::fence_proxy_async();
    __syncthreads();
    float dq[32];
    const uint64_t ds_desc = wg::sw128_desc(sdS + (dq_m0 / 64) * (kBc * 64), kBc * 128, kAtomBytes);
    const uint64_t k_n_desc = wg::sw128_desc(sK + (dq_n0 / 64) * (kBc * 64), kBc * 128, kAtomBytes);
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk)
      wg::wgmma_ss_mn<T, 64>(dq, wg::desc_at<T>(ds_desc, kk * 16 * 64), wg::desc_at<T>(k_n_desc, kk * 16 * 64), kk > 0);
    wg::commit();
    wg::wait<0>();
    // dq_accum_i += dQ_i. Element 4·t + 2·h + e of dq: row dq_m0 + 16·(warp mod 4) + g_lane + 8·h,
    // column dq_n0 + 8·t + 2·q_lane + e.
    if constexpr (K::kDqByTma) {
      // Staged, then added in L2 by TMA reductions, each warp its own rows (lane 0, asynchronous;
      // rows past the group's are not touched), so that no warp waits for another's.
      if (lane == 0) tma::store_wait_read();  // the last tile's reductions have read this warp's part
      __syncwarp();
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int t8 = 0; t8 < 8; ++t8)
          *reinterpret_cast<float2*>(sDq + dq_staging_at(warp, g_lane + 8 * h, 8 * t8 + 2 * q_lane)) =
              make_float2(dq[4 * t8 + 2 * h], dq[4 * t8 + 2 * h + 1]);
      wg::fence_proxy_async();
      __syncwarp();
      if (lane == 0) {
        const int row = q_row0 + dq_m0 + 16 * (warp % 4);
#pragma unroll
        for (int box = 0; box < 2; ++box)
          tma::reduce_add_box(dq_map, sDq + dq_staging_at(warp, 0, 32 * box), dq_n0 + 32 * box, row, int(bkv));
        tma::store_commit();
      }
    } else {
      // 8-byte fp32 reductions from the registers, a quad of lanes covering one 32-byte sector.
      float* dq_tile = p.dq_accum + (bh_q0 * nq + q_row0) * kD;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = dq_m0 + 16 * (warp % 4) + g_lane + 8 * h;
        if (r < rows)
#pragma unroll
          for (int t8 = 0; t8 < 8; ++t8)
            atomicAdd(reinterpret_cast<float2*>(dq_tile + int64_t(r) * kD + dq_n0 + 8 * t8 + 2 * q_lane),
                      make_float2(dq[4 * t8 + 2 * h], dq[4 * t8 + 2 * h + 1]));
      }
    }
    i = next;
  }
  tile::cp_async_wait<0>();
  if (K::kDqByTma && lane == 0) tma::store_wait_read();  // the last reductions' reads of the staging tile
  __syncthreads();  // K_j's and V_j's tiles (and copies) done with: they stage dK_j, dV_j

  // dK_j = scale · Σ dSᵀ Q, dV_j = Σ Pᵀ dO, through the (now free) K, V tiles, rows as
  // tile::store_tile reads them (row-swizzled). Element 4·t + 2·h + e: row 16·warp + g_lane + 8·h,
  // column 8·t + 2·q_lane + e.
#pragma unroll
  for (int t8 = 0; t8 < kD / 8; ++t8)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 16 * warp + g_lane + 8 * h, col = 8 * t8 + 2 * q_lane;
      *reinterpret_cast<uint32_t*>(sK + tile::swz<kD>(row, col)) =
          tile::Elem<T>::pack(dk[4 * t8 + 2 * h] * p.scale, dk[4 * t8 + 2 * h + 1] * p.scale);
      *reinterpret_cast<uint32_t*>(sV + tile::swz<kD>(row, col)) =
          tile::Elem<T>::pack(dv[4 * t8 + 2 * h], dv[4 * t8 + 2 * h + 1]);
    }
  __syncthreads();
  tile::store_tile<kBc, kD, kThreads>(static_cast<T*>(p.dk) + kv_row0 * kD, sK, cols, tid);
  tile::store_tile<kBc, kD, kThreads>(static_cast<T*>(p.dv) + kv_row0 * kD, sV, cols, tid);
#endif
}

template <typename T, int kD, int kBr, int kBc>
void launch_flash2_bwd_wgmma(const FlashParams& p, cudaStream_t stream) {
  using K = Flash2BwdWgmma<T, kD, kBr, kBc>;
  const bool stacked = p.heads != p.kv_heads;
  constexpr auto kOne = flash2_bwd_wgmma_kernel<T, kD, kBr, kBc, false>;
  constexpr auto kStackedKernel = flash2_bwd_wgmma_kernel<T, kD, kBr, kBc, true>;
  if (stacked) opt_in_dynamic_smem<kStackedKernel>(K::kSmemBytes);
  else opt_in_dynamic_smem<kOne>(K::kSmemBytes);
  // kDqByTma: dq_accum as the K/V heads' groups of stacked rows, (B·Hkv) matrices of g·Nq × d.
  tma::Map dq_map{};
  if constexpr (K::kDqByTma)
    dq_map = make_fp32_tensor_map(p.dq_accum, int64_t(p.batch) * p.kv_heads, int64_t(p.heads / p.kv_heads) * p.seqlen,
                                  kD, 16);
  launch_flash2_bwd_passes<T, kD>(p, kBr, stream, [&] {
    const dim3 col_grid((p.seqlen_k + kBc - 1) / kBc, p.kv_heads, p.batch);
    (stacked ? kStackedKernel : kOne)<<<col_grid, K::kThreads, K::kSmemBytes, stream>>>(p, dq_map);
  });
}

template <typename T, int kD, int kBr, int kBc>
FlashImpl flash2_bwd_wgmma_impl(DType dtype) {
  using K = Flash2BwdWgmma<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash2, Pass::bwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages,
                               K::kMma, /*dense_only=*/true},
                   &launch_flash2_bwd_wgmma<T, kD, kBr, kBc>};
}

}  // namespace flashio::kernels
