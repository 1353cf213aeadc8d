// flash2 backward (FlashAttention-2; docs/schedules.md, "flash2"), three kernels in order:
//   flash2_bwd_preprocess  one block per row tile i: delta_i = rowsum(dO_i ∘ O_i), dq_accum_i = 0
//   flash2_bwd             one block per key tile j of a K/V head: K_j, V_j once, then every
//                          visited i ascending over the group's stacked query rows: Q_i, dO_i,
//                          lse_i, delta_i; dq_accum_i += dS K_j by fp32 atomics; finally dK_j,
//                          dV_j (summed over the group)
//   flash2_bwd_convert_dq  one block per row tile i: dQ_i = scale · dq_accum_i (element type)
// The row kernels' grids are (Tr, H, B), the backward's (Tc, Hkv, B), blockIdx.x fastest.
#pragma once
#include "kernels/flash_bwd_tile.cuh"
#include "kernels/launch.h"

namespace flashio::kernels {

// Rows of one block of the element-wise kernels; ≤ 128 (the static staging below).
constexpr int kRowKernelThreads = 128;

// The rows of one row-kernel block (grid (⌈Nq / block_r⌉, H, B)): query head b·H + h's rows
// row0 … row0 + rows − 1, their first row of Q, O, dO, dQ, dq_accum (first_row) and of lse and delta
// (first_stat; strided per head by stats_stride). Packed (FlashParams::cu_seqlens): the sequence's
// n_b rows from H·cu_b + h·n_b on, lse and delta as Q, and rows ≤ 0 past them.
struct RowKernelTile {
  int rows;
  int64_t first_row, first_stat;
  __device__ __forceinline__ RowKernelTile(const FlashParams& p, int block_r) {
    const int row0 = blockIdx.x * block_r;
    const int64_t bh = static_cast<int64_t>(blockIdx.z) * p.heads + blockIdx.y;
    if (p.cu_seqlens != nullptr) {
      const int first = __ldg(p.cu_seqlens + blockIdx.z), n = __ldg(p.cu_seqlens + blockIdx.z + 1) - first;
      rows = min(block_r, n - row0);
      first_row = first_stat = int64_t(p.heads) * first + int64_t(blockIdx.y) * n + row0;
    } else {
      rows = min(block_r, p.seqlen - row0);
      first_row = bh * p.seqlen + row0;
      first_stat = bh * p.stats_stride + row0;
    }
  }
};

template <typename T, int kD>
__global__ void __launch_bounds__(kRowKernelThreads) flash2_bwd_preprocess_kernel(const FlashParams p, int block_r) {
  constexpr int kLanesPerRow = kD / 8;  // 16 bytes of O and of dO per lane
  constexpr int kRowsPerPass = kRowKernelThreads / kLanesPerRow;
  __shared__ float sDelta[128];
  const RowKernelTile t(p, block_r);
  if (t.rows <= 0) return;  // past a variable-length sequence's rows
  const int rows = t.rows;
  const T* o = static_cast<const T*>(p.o) + t.first_row * kD;
  const T* dout = static_cast<const T*>(p.dout) + t.first_row * kD;
  float* dq_accum = p.dq_accum + t.first_row * kD;
  const int sub = threadIdx.x % kLanesPerRow;
  for (int r0 = 0; r0 < rows; r0 += kRowsPerPass) {
    const int r = r0 + threadIdx.x / kLanesPerRow;
    float sum = 0.f;
    if (r < rows) {
      const uint4 ov = *reinterpret_cast<const uint4*>(o + int64_t(r) * kD + sub * 8);
      const uint4 dv = *reinterpret_cast<const uint4*>(dout + int64_t(r) * kD + sub * 8);
      const T* oe = reinterpret_cast<const T*>(&ov);
      const T* de = reinterpret_cast<const T*>(&dv);
#pragma unroll
      for (int e = 0; e < 8; ++e) sum += tile::Elem<T>::to_float(oe[e]) * tile::Elem<T>::to_float(de[e]);
    }
#pragma unroll
    for (int off = kLanesPerRow / 2; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (r < rows && sub == 0) sDelta[r] = sum;
  }
  // Zero this tile's dq_accum rows with whole-sector 16-byte stores.
  for (int u = threadIdx.x; u < rows * kD / 4; u += kRowKernelThreads)
    reinterpret_cast<float4*>(dq_accum)[u] = make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  float* delta = p.delta + t.first_stat;
  for (int r = threadIdx.x; r < rows; r += kRowKernelThreads) delta[r] = sDelta[r];
}

template <typename T, int kD>
__global__ void __launch_bounds__(kRowKernelThreads) flash2_bwd_convert_dq_kernel(const FlashParams p, int block_r) {
  const RowKernelTile t(p, block_r);
  if (t.rows <= 0) return;  // past a variable-length sequence's rows
  const int rows = t.rows;
  const float* acc = p.dq_accum + t.first_row * kD;
  T* dq = static_cast<T*>(p.dq) + t.first_row * kD;
  // 8 elements per thread: two 16-byte loads, one 16-byte store.
  for (int u = threadIdx.x; u < rows * kD / 8; u += kRowKernelThreads) {
    const float4 a = reinterpret_cast<const float4*>(acc)[2 * u];
    const float4 b = reinterpret_cast<const float4*>(acc)[2 * u + 1];
    uint4 out;
    out.x = tile::Elem<T>::pack(a.x * p.scale, a.y * p.scale);
    out.y = tile::Elem<T>::pack(a.z * p.scale, a.w * p.scale);
    out.z = tile::Elem<T>::pack(b.x * p.scale, b.y * p.scale);
    out.w = tile::Elem<T>::pack(b.z * p.scale, b.w * p.scale);
    reinterpret_cast<uint4*>(dq)[u] = out;
  }
}

template <typename T, int kD, int kBr, int kBc>
struct Flash2Bwd {
  using Tile = BwdTile<T, kD, kBr, kBc>;
  static constexpr int kThreads = Tile::kThreads;
  static constexpr int kStageBytes = 2 * kBr * kD * 2 + Tile::kSmemStatsBytes;  // Q, dO, lse, delta
  static constexpr int kFixedBytes = 2 * kBc * kD * 2 + Tile::kSmemDsBytes + Tile::kSmemDqBytes;
  // Blocks per SM: registers allow ~65536 / (threads · 255); shared memory 233472 B per SM with
  // 1 KiB reserved per block. Q, dO, lse, delta get a second stage (the next row tile's loads
  // overlap this one's compute) whenever that costs no resident block.
  static constexpr int kBlocksByRegs = kThreads >= 256 ? 1 : kThreads >= 128 ? 2 : 4;
  static constexpr int blocks_by_smem(int bytes) { return 233472 / (bytes + 1024); }
  static constexpr int min_int(int a, int b) { return a < b ? a : b; }
  static constexpr int kStages =
      min_int(blocks_by_smem(kFixedBytes + 2 * kStageBytes), kBlocksByRegs) >=
              min_int(blocks_by_smem(kFixedBytes + kStageBytes), kBlocksByRegs)
          ? 2
          : 1;
  static constexpr int kSmemBytes = kFixedBytes + kStages * kStageBytes;
  static constexpr MmaKind kMma = MmaKind::mma_sync;
};

__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(tile::smem_addr(smem)), "l"(gmem));
}

// kStacked: more than one query head per K/V head (the rows wrap from head to head). kWindow: a
// sliding window's left side (kernels/key_limits.cuh), an instance of its own with stacked rows
// (exact for one head's rows too), so that the others keep their code. kSparse: a block mask's
// listed row tiles (FlashParams::bwd_tiles; docs/kernels.md, "Block-sparse kernels"), one head's
// rows, likewise an instance of its own. kDropout: fused dropout (BwdTile::Dropout;
// FlashParams::dropout_threshold), stacked rows, likewise.
template <typename T, int kD, int kBr, int kBc, bool kStacked, bool kWindow = false, bool kSparse = false,
          bool kDropout = false>
__global__ void __launch_bounds__(Flash2Bwd<T, kD, kBr, kBc>::kThreads) flash2_bwd_kernel(const FlashParams p) {
  using K = Flash2Bwd<T, kD, kBr, kBc>;
  using Tile = typename K::Tile;
  constexpr int kThreads = K::kThreads;
  constexpr int kStages = K::kStages;
  extern __shared__ uint4 smem_raw[];
  T* sK = reinterpret_cast<T*>(smem_raw);
  T* sV = sK + kBc * kD;
  T* sdS = sV + kBc * kD;
  float* sDq = reinterpret_cast<float*>(sdS + kBc * Tile::kDsCols);
  T* sQ = reinterpret_cast<T*>(sDq + kBr * Tile::kDqStride);  // [kStages][Br][d]
  T* sdO = sQ + kStages * kBr * kD;                              // [kStages][Br][d]
  float* sLse = reinterpret_cast<float*>(sdO + kStages * kBr * kD);  // [kStages][Br]
  float* sDelta = sLse + kStages * kBr;                              // [kStages][Br]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // The block's rows are its K/V head's group's: the g = H / Hkv query heads stacked, g·Nq rows,
  // contiguous in Q, dO and dq_accum (the group's heads are adjacent), so that dK_j and dV_j are
  // summed over the group on chip (sim/config.h, gqa_pack). g = 1 without grouped-query attention.
  const int g = p.heads / p.kv_heads;
  int nq = p.seqlen, n = g * nq, nk = p.seqlen_k;
  const int j = blockIdx.x;
  const int64_t bh_q0 = static_cast<int64_t>(blockIdx.z) * p.heads + int64_t(blockIdx.y) * g;
  const int64_t bkv = static_cast<int64_t>(blockIdx.z) * p.kv_heads + blockIdx.y;
  // kDropout also runs variable-length batches (FlashParams::cu_seqlens): the sequence's n_b
  // queries and keys, its group's rows packed from q_base on (lse and delta likewise, strided per
  // head by n_b), its K/V head's from kv_base on; a key tile past n_b returns at once (no dK, dV
  // rows exist there). Elsewhere the padded layout's bh_q0·Nq, the stats' bh_q0·stats_stride and bkv·Nk.
  int64_t q_base = bh_q0 * nq, stats_base = bh_q0 * p.stats_stride, kv_base = bkv * nk;
  int stats_stride = p.stats_stride;
  if constexpr (kDropout)
    if (p.cu_seqlens != nullptr) {
      const int first = __ldg(p.cu_seqlens + blockIdx.z);
      nq = nk = __ldg(p.cu_seqlens + blockIdx.z + 1) - first;
      n = g * nq;
      if (j * kBc >= nk) return;
      q_base = stats_base = int64_t(p.heads) * first + int64_t(blockIdx.y) * g * nq;
      kv_base = int64_t(p.kv_heads) * first + int64_t(blockIdx.y) * nq;
      stats_stride = nq;
    }
  const int k_row0 = j * kBc;
  const int cols = min(kBc, nk - k_row0);  // the tile's rows of K, V, dK, dV
  const int tr = (n + kBr - 1) / kBr;
  const float scale_log2 = p.scale * tile::kLog2e;
  // kDropout (fused dropout and key padding): per-sequence key lengths (FlashParams::seqlens_k) —
  // sequence b's keys are its first Nk_b, aligned bottom-right in them with causal; the tile reads
  // its keys below Nk_b (seen_cols) and still writes all its rows of dK and dV, zero past Nk_b
  // (their K, V rows are the copy's zeros and every score of them is hidden). A tile wholly past
  // Nk_b visits no row tile. Elsewhere every sequence has Nk.
  int keys = nk, causal_offset = p.causal_offset;
  if constexpr (kDropout)
    if (p.cu_seqlens != nullptr) {
      causal_offset = 0;  // a square sequence
    } else if (p.seqlens_k != nullptr) {
      keys = __ldg(p.seqlens_k + blockIdx.z);
      causal_offset = keys - nq;
    }
  const int seen_cols = kDropout ? min(kBc, keys - k_row0) : cols;
  auto limits = [&](int i) {
    // Without kDropout on the parameters themselves: through the locals, ptxas allocated every
    // other instance differently (up to 3 registers either way).
    if constexpr (kDropout)
      return KeyLimits<kStacked, kWindow>::of_row(i * kBr, nq, keys, causal_offset, p.causal, p.window_lo);
    else
      return KeyLimits<kStacked, kWindow>::of_row(i * kBr, nq, nk, p.causal_offset, p.causal, p.window_lo);
  };
  // Causal: row tiles whose last query sees no key of this tile are skipped (the model's
  // TileGrid::outside_band), and with a window's left side those whose first query sees no key
  // of it. With stacked rows (and windows) the visited tiles need not be contiguous; with one
  // head's rows and causal they are every tile from the one holding query k_row0 − offset on.
  // kSparse: the column tile's listed row tiles, ascending; the loop's visit count v is the
  // position in the list, so tile v + 1 follows visit v (tr past the last).
  const int* row_tiles = nullptr;
  int listed = 0;
  if constexpr (kSparse) {
    const int first = __ldg(p.bwd_tile_offsets + j);
    row_tiles = p.bwd_tiles + first;
    listed = __ldg(p.bwd_tile_offsets + j + 1) - first;
  }
  auto listed_tile = [&](int v) { return v < listed ? __ldg(row_tiles + v) : tr; };
  auto next_visited = [&](int i) {
    if constexpr (kWindow)
      while (i < tr && limits(i).outside(min(kBr, n - i * kBr), k_row0, kBc)) ++i;
    else if constexpr (kStacked)
      if (p.causal)
        while (i < tr && limits(i).above_diagonal(min(kBr, n - i * kBr), k_row0)) ++i;
    return i;
  };
  const int i_first = kSparse                       ? listed_tile(0)
                      : kDropout && k_row0 >= keys ? tr
                      : kStacked                    ? next_visited(0)
                      : p.causal                    ? max(0, k_row0 - p.causal_offset) / kBr
                                                    : 0;

  // The dense instances spell the padded layout's offsets as before (through the locals, ptxas may
  // allocate them otherwise).
  const T* q = static_cast<const T*>(p.q) + (kDropout ? q_base : bh_q0 * nq) * kD;
  const T* dout = static_cast<const T*>(p.dout) + (kDropout ? q_base : bh_q0 * nq) * kD;
  const float* lse = p.lse + (kDropout ? stats_base : bh_q0 * p.stats_stride);
  const float* delta = p.delta + (kDropout ? stats_base : bh_q0 * p.stats_stride);
  float* dq_accum = p.dq_accum + (kDropout ? q_base : bh_q0 * nq) * kD;

  // Row tile i into stage `stage`: Q_i, dO_i (valid rows), lse_i, delta_i (4-byte copies of the
  // valid rows, stacked row r from head r / Nq; rows ≥ g·Nq get lse = +inf, so P = 0 there, and
  // delta = 0).
  auto load_row_tile = [&](int i, int stage, int t) {  // t: the thread index
    const int q_row0 = i * kBr;
    const int rows = min(kBr, n - q_row0);
    tile::load_tile_async<kBr, kD, kThreads>(sQ + stage * kBr * kD, q + int64_t(q_row0) * kD, rows, t);
    tile::load_tile_async<kBr, kD, kThreads>(sdO + stage * kBr * kD, dout + int64_t(q_row0) * kD, rows, t);
    // Stacked: the tile's first row is query q0 of head h0 (one division per tile); a later
    // row's query is q0 + r, past a head's end the next head's (a division only then).
    const int q0 = kStacked ? q_row0 % nq : q_row0, h0 = kStacked ? q_row0 / nq : 0;
    for (int r = t; r < kBr; r += kThreads) {
      if (r < rows) {
        int query = q0 + r, head = h0;
        if constexpr (kStacked) {
          if (query >= nq) {
            head += query / nq;
            query %= nq;
          }
        }
        const int64_t at = head * int64_t(kDropout ? stats_stride : p.stats_stride) + query;
        cp_async_4(sLse + stage * kBr + r, lse + at);
        cp_async_4(sDelta + stage * kBr + r, delta + at);
        if constexpr (kDropout) *Tile::row_key_at(sDq, r, stage) = dropout::row_key(p.dropout_seed, bh_q0 + head, query);
      } else {
        sLse[stage * kBr + r] = INFINITY;
        sDelta[stage * kBr + r] = 0.f;
      }
    }
  };

  tile::load_tile_async<kBc, kD, kThreads>(sK, static_cast<const T*>(p.k) + ((kDropout ? kv_base : bkv * nk) + k_row0) * kD,
                                           seen_cols, tid);
  tile::load_tile_async<kBc, kD, kThreads>(sV, static_cast<const T*>(p.v) + ((kDropout ? kv_base : bkv * nk) + k_row0) * kD,
                                           seen_cols, tid);
  if (i_first < tr) load_row_tile(i_first, 0, tid);
  tile::cp_async_commit();

  Tile acc;
  acc.init();
  int visit = 0;  // visited row tiles so far: the stage parity
  for (int i = i_first; i < tr; ++visit) {
    if constexpr (!kStacked && !kSparse) visit = i - i_first;  // the same count, in the form ptxas allocated better
    // The thread index as each row tile takes it (tile::loop_thread_index, against register spills).
    const int tid_i = tile::loop_thread_index<Tile::kAccumulatorRegisters>(tid);
    const int warp_i = tid_i / 32, lane_i = tid_i % 32;
    const int stage = kStages == 2 ? visit & 1 : 0;
    const int next = kSparse ? listed_tile(visit + 1) : next_visited(i + 1);
    if constexpr (kStages == 2) {
      if (next < tr) load_row_tile(next, stage ^ 1, tid_i);
      tile::cp_async_commit();
      tile::cp_async_wait<1>();
    } else {
      if (i != i_first) {
        load_row_tile(i, 0, tid_i);
        tile::cp_async_commit();
      }
      tile::cp_async_wait<0>();
    }
    const int q_row0 = i * kBr;
    const int rows = min(kBr, n - q_row0);
    // lse in base 2, by the thread whose copy just completed (visible to it after the wait).
    for (int r = tid_i; r < rows; r += kThreads) sLse[stage * kBr + r] *= tile::kLog2e;
    __syncthreads();
    const KeyLimits<kStacked, kWindow> lim = limits(i);
    // lim.partial; with one head's rows spelled on this kernel's values (ptxas allocated that better).
    const bool masked = kStacked || kSparse ? lim.partial(rows, k_row0, kBc)
                                 : (k_row0 + kBc > nk) || (p.causal && k_row0 + kBc - 1 > q_row0 + p.causal_offset);
    acc.template step<kStacked, kWindow, kDropout>(sQ + stage * kBr * kD, sdO + stage * kBr * kD, sK, sV,
                                                   sLse + stage * kBr, sDelta + stage * kBr, sdS, sDq, lim, k_row0,
                                                   masked, scale_log2, warp_i, lane_i,
                                                   {p.dropout_threshold, p.dropout_scale, stage});
    // dq_accum_i += dS K_j: 16-byte fp32 atomics (RED.ADD.F32x4), a warp covering 512
    // contiguous bytes, so every sector is reduced whole.
    float* dq_tile = dq_accum + int64_t(q_row0) * kD;
    for (int u = tid_i; u < rows * kD / 4; u += kThreads) {
      const int r = u / (kD / 4), c = (u % (kD / 4)) * 4;
      atomicAdd(reinterpret_cast<float4*>(dq_tile + int64_t(r) * kD + c),
                *reinterpret_cast<const float4*>(sDq + r * Tile::kDqStride + c));
    }
    __syncthreads();  // this stage, dSᵀ and the staging tile are overwritten next
    i = next;
  }
  tile::cp_async_wait<0>();
  // A column tile no row tile sees (only a window's left side leaves keys unseen: without one the
  // last query sees every key) ran no loop, so no barrier since K_j's and V_j's copies: wait for
  // every thread's before their tiles take dK_j and dV_j, or a late copy overwrites them (H200:
  // dV = V in such tiles). The window and block-sparse instances only (a zero column of blocks
  // leaves keys unseen too), so that the others keep their registers.
  if constexpr (kWindow || kSparse || kDropout)  // kDropout: a tile past its sequence's keys
    if (i_first >= tr) __syncthreads();
  // dK_j, dV_j through the (now free) K, V tiles.
  acc.stage_dk_dv(sK, sV, p.scale, warp, lane, kDropout ? p.dropout_scale : 1.f);
  __syncthreads();
  tile::store_tile<kBc, kD, kThreads>(static_cast<T*>(p.dk) + ((kDropout ? kv_base : bkv * nk) + k_row0) * kD, sK, cols,
                                      tid);
  tile::store_tile<kBc, kD, kThreads>(static_cast<T*>(p.dv) + ((kDropout ? kv_base : bkv * nk) + k_row0) * kD, sV, cols,
                                      tid);
}

// flash2's backward as the kernels launch it (the launch sequence, kernels/attention.h): the
// preprocess (delta, dq_accum zeroed) over row tiles of block_r, the main kernel `launch_main`
// launches (one block per key tile), the convert (dQ = scale · dq_accum). Every flash2 backward
// kernel (mma.sync, wgmma) runs between the same two.
template <typename T, int kD, typename LaunchMain>
void launch_flash2_bwd_passes(const FlashParams& p, int block_r, cudaStream_t stream, LaunchMain&& launch_main) {
  const dim3 row_grid((p.seqlen + block_r - 1) / block_r, p.heads, p.batch);
  flash2_bwd_preprocess_kernel<T, kD><<<row_grid, kRowKernelThreads, 0, stream>>>(p, block_r);
  FLASHIO_LAUNCH_CHECK("flash2_bwd_preprocess");
  launch_main();
  FLASHIO_LAUNCH_CHECK("flash2_bwd");
  flash2_bwd_convert_dq_kernel<T, kD><<<row_grid, kRowKernelThreads, 0, stream>>>(p, block_r);
  FLASHIO_LAUNCH_CHECK("flash2_bwd_convert_dq");
}

template <typename T, int kD, int kBr, int kBc>
void launch_flash2_bwd(const FlashParams& p, cudaStream_t stream) {
  using K = Flash2Bwd<T, kD, kBr, kBc>;
  const bool stacked = p.heads != p.kv_heads;
  constexpr auto kWindowKernel = flash2_bwd_kernel<T, kD, kBr, kBc, true, true>;
  constexpr auto kSparseKernel = flash2_bwd_kernel<T, kD, kBr, kBc, false, false, true>;
  constexpr auto kDropoutKernel = flash2_bwd_kernel<T, kD, kBr, kBc, true, false, false, true>;
  const bool sparse = p.bwd_tiles != nullptr;  // block-sparse: one head's rows (Hkv = H)
  // Fused dropout and key padding (per-sequence key lengths): stacked rows (exact for one head's).
  const bool dropout = p.dropout_threshold > 0 || p.seqlens_k != nullptr;
  if (dropout) opt_in_dynamic_smem<kDropoutKernel>(K::kSmemBytes);
  else if (sparse) opt_in_dynamic_smem<kSparseKernel>(K::kSmemBytes);
  else if (p.window_left) opt_in_dynamic_smem<kWindowKernel>(K::kSmemBytes);
  else if (stacked) opt_in_dynamic_smem<flash2_bwd_kernel<T, kD, kBr, kBc, true>>(K::kSmemBytes);
  else opt_in_dynamic_smem<flash2_bwd_kernel<T, kD, kBr, kBc, false>>(K::kSmemBytes);
  launch_flash2_bwd_passes<T, kD>(p, kBr, stream, [&] {
    const dim3 col_grid((p.seqlen_k + kBc - 1) / kBc, p.kv_heads, p.batch);
    (dropout ? kDropoutKernel
     : sparse ? kSparseKernel
     : p.window_left ? kWindowKernel
     : stacked     ? flash2_bwd_kernel<T, kD, kBr, kBc, true>
                   : flash2_bwd_kernel<T, kD, kBr, kBc, false>)<<<col_grid, K::kThreads, K::kSmemBytes, stream>>>(p);
  });
}

template <typename T, int kD, int kBr, int kBc>
FlashImpl flash2_bwd_impl(DType dtype) {
  using K = Flash2Bwd<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash2, Pass::bwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages, K::kMma},
                   &launch_flash2_bwd<T, kD, kBr, kBc>};
}

}  // namespace flashio::kernels
