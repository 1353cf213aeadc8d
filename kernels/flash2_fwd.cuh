// flash2_fwd (FlashAttention-2 forward; docs/schedules.md, "flash2"): one block per row tile
// i, grid (Tr, H, B) so that blockIdx.x is fastest (launch index i + Tr·bh); with grouped-query
// attention packed, grid (Tr, Hkv, B) over a group's stacked rows (Flash2FwdRowTile). The block reads
// Q_i once, streams K_j, V_j for every visited j in ascending order through a two-stage
// cp.async pipeline, and writes O_i (element type) and lse_i (fp32) once.
#pragma once
#include "kernels/flash_fwd_tile.cuh"
#include "kernels/launch.h"

namespace flashio::kernels {

// Blocks per SM that the register allocation must leave room for (__launch_bounds__). The
// forward is latency-bound (docs/kernels.md, "Speed"): at d = 64, 128 × 64 holds a 32 × 64
// score tile and a 32 × 64 output tile per warp, which fit in 168 registers (with the same
// 16-byte stack frame as 128 × 128), so three 4-warp blocks (48 KiB shared memory each)
// share an SM instead of two. Measured on the H200 it still trails 128 × 128 at two blocks
// (287–292 against 302–307 TFLOP/s at B16 H16 N4096), which stays the default.
// Everywhere else the accumulators alone take over 168 registers: no bound.
constexpr int fwd_min_blocks(int block_r, int block_c, int headdim) {
  return headdim == 64 && block_r == 128 && block_c == 64 ? 3 : 1;
}

// The row tile i that a forward block owns and the key tiles 0..j_last it visits. The grid is
// (Tr, grid heads, B), blockIdx.x fastest: a grid head is a query head, or with group_rows a K/V
// head whose group's g query heads are stacked (g·Nq rows, contiguous in Q and O since the
// group's heads are adjacent). Shared by the mma.sync and wgmma forwards.
template <typename T, int kD, int kBr, int kBc, bool kStacked>
struct Flash2FwdRowTile {
  int n, nk, q_row0, rows, j_last;  // n: rows of the grid head (Nq or g·Nq); nk: keys
  int64_t bh_q0;                    // b·H + the first query head of the rows
  KeyLimits<kStacked> lim;
  const T *q, *k, *v;  // Q_i; K and V of the K/V head
  __device__ __forceinline__ explicit Flash2FwdRowTile(const FlashParams& p) {
    const int g = p.heads / p.kv_heads;
    const int b = blockIdx.z, gh = blockIdx.y;
    const int qh0 = p.group_rows ? gh * g : gh, kvh = p.group_rows ? gh : gh / g;
    n = p.group_rows ? g * p.seqlen : p.seqlen;
    nk = p.seqlen_k;
    bh_q0 = int64_t(b) * p.heads + qh0;
    q_row0 = blockIdx.x * kBr;
    rows = min(kBr, n - q_row0);
    lim = KeyLimits<kStacked>::of_row(q_row0, p.seqlen, nk, p.causal_offset, p.causal);
    // Causal: skip tiles wholly above the diagonal (beyond what the tile's last query sees).
    j_last = lim.last_key_tile(rows, kBc);
    q = static_cast<const T*>(p.q) + (bh_q0 * p.seqlen + q_row0) * kD;
    const int64_t bkv = int64_t(b) * p.kv_heads + kvh;
    k = static_cast<const T*>(p.k) + bkv * nk * kD;
    v = static_cast<const T*>(p.v) + bkv * nk * kD;
  }
};

template <typename T, int kD, int kBr, int kBc>
struct Flash2Fwd {
  static constexpr int kWarps = fwd_warps(kBr, kBc, kD);
  using Tile = FwdTile<T, kD, kBr, kBc, kWarps>;
  static constexpr int kThreads = Tile::kThreads;
  // Q tile + two stages of K and V tiles; the epilogue reuses Q's space for O and K's for lse.
  static constexpr int kSmemBytes = (kBr * kD + 4 * kBc * kD) * 2;
  static constexpr int kStages = 2;  // K, V double-buffered
  static constexpr MmaKind kMma = MmaKind::mma_sync;
  // Resident blocks per SM the register allocation must allow (__launch_bounds__).
  static constexpr int kMinBlocks = fwd_min_blocks(kBr, kBc, kD);
  static_assert(kBc * kD * 2 >= kBr * 4, "lse staging must fit in one K stage");
};

// Waits for this thread's copies of K_j, V_j. K_1, V_1 are issued with tile 0, so at j = 0 one
// later group may still be in flight.
__device__ __forceinline__ void wait_for_kv_tile(int j, int j_last) {
  if (j == 0 && j_last >= 1) {
    tile::cp_async_wait<1>();
  } else {
    tile::cp_async_wait<0>();
  }
}

// The epilogue of both forwards, after the loop's last barrier: O/ℓ staged (16-bit) over Q and
// lse over K in shared memory, then O_i and lse_i written once, whole sectors.
template <int kBr, int kD, int kThreads, typename T, typename Tile, typename RowTile>
__device__ __forceinline__ void flash2_fwd_epilogue(Tile& acc, T* sQ, T* sK, const FlashParams& p, const RowTile& t,
                                                    int warp, int lane, int tid) {
  acc.reduce_row_sums();
  T* sO = sQ;
  float* sLse = reinterpret_cast<float*>(sK);
  acc.stage_normalised(sO, warp, lane);
  if ((lane & 3) == 0) {
#pragma unroll
    for (int mt = 0; mt < Tile::kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // lse = ln(Σ exp(scale·s)) = (m₂ + log2 ℓ)·ln 2, m₂ being the base-2 running max.
        sLse[Tile::row_of(warp, lane, mt, h)] = (acc.m[mt][h] + __log2f(acc.l[mt][h])) * 0.6931471805599453f;
      }
  }
  __syncthreads();
  tile::store_tile<kBr, kD, kThreads>(static_cast<T*>(p.o) + (t.bh_q0 * p.seqlen + t.q_row0) * kD, sO, t.rows, tid);
  // lse is strided per head: a stacked row r goes to head r / Nq, position r mod Nq.
  float* lse = p.lse + t.bh_q0 * p.stats_stride;
  for (int r = tid; r < t.rows; r += kThreads) {
    const int row = t.q_row0 + r, head = row / p.seqlen;
    lse[head * int64_t(p.stats_stride) + row - head * p.seqlen] = sLse[r];
  }
}

// kStacked: the block's rows are a group's stacked query heads (Flash2FwdRowTile); false for one
// head's rows, which is also every problem without grouped-query attention.
template <typename T, int kD, int kBr, int kBc, bool kStacked>
__global__ void __launch_bounds__(Flash2Fwd<T, kD, kBr, kBc>::kThreads, Flash2Fwd<T, kD, kBr, kBc>::kMinBlocks)
    flash2_fwd_kernel(const FlashParams p) {
  using K = Flash2Fwd<T, kD, kBr, kBc>;
  using Tile = typename K::Tile;
  constexpr int kThreads = K::kThreads;
  extern __shared__ uint4 smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  T* sK = sQ + kBr * kD;
  T* sV = sK + 2 * kBc * kD;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const Flash2FwdRowTile<T, kD, kBr, kBc, kStacked> t(p);
  const int nk = t.nk, rows = t.rows, j_last = t.j_last;
  const T *q = t.q, *k = t.k, *v = t.v;
  const float scale_log2 = p.scale * tile::kLog2e;

  tile::load_tile_async<kBr, kD, kThreads>(sQ, q, rows, tid);
  tile::load_tile_async<kBc, kD, kThreads>(sK, k, min(kBc, nk), tid);
  tile::load_tile_async<kBc, kD, kThreads>(sV, v, min(kBc, nk), tid);
  tile::cp_async_commit();
  if (j_last >= 1) {  // K_1, V_1 into the second stage, nothing has read it yet
    const int cols = min(kBc, nk - kBc);
    tile::load_tile_async<kBc, kD, kThreads>(sK + kBc * kD, k + int64_t(kBc) * kD, cols, tid);
    tile::load_tile_async<kBc, kD, kThreads>(sV + kBc * kD, v + int64_t(kBc) * kD, cols, tid);
    tile::cp_async_commit();
  }

  Tile acc;
  acc.init();
  for (int j = 0; j <= j_last; ++j) {
    // The thread index as each key tile takes it (tile::loop_thread_index, against register spills).
    const int tid_j = tile::loop_thread_index<Tile::kAccumulatorRegisters>(tid);
    const int warp_j = tid_j / 32, lane_j = tid_j % 32;
    const int stage = j & 1;
    // One barrier per tile: once K_j, V_j have landed (this thread's copies) and every warp
    // has passed the barrier, every warp has also finished tile j − 1, so the other stage is
    // free for the prefetch of K_{j+1}, V_{j+1}, which then overlaps this tile's compute.
    wait_for_kv_tile(j, j_last);
    __syncthreads();
    if (j >= 1 && j < j_last) {
      const int k_row = (j + 1) * kBc;
      const int cols = min(kBc, nk - k_row);
      tile::load_tile_async<kBc, kD, kThreads>(sK + (stage ^ 1) * kBc * kD, k + int64_t(k_row) * kD, cols, tid_j);
      tile::load_tile_async<kBc, kD, kThreads>(sV + (stage ^ 1) * kBc * kD, v + int64_t(k_row) * kD, cols, tid_j);
      tile::cp_async_commit();
    }
    const int k_row0 = j * kBc;
    acc.step(sQ, sK + stage * kBc * kD, sV + stage * kBc * kD, t.lim, k_row0, t.lim.partial(rows, k_row0, kBc),
             scale_log2, warp_j, lane_j);
  }
  __syncthreads();  // the epilogue stages O over Q and lse over K, which other warps may still read

  flash2_fwd_epilogue<kBr, kD, kThreads>(acc, sQ, sK, p, t, warp, lane, tid);
}

// Whether a forward block's rows are a group's stacked query heads (FlashParams::group_rows with
// more than one query head per K/V head), which selects the kernel instance.
inline bool fwd_rows_stacked(const FlashParams& p) { return p.group_rows && p.heads != p.kv_heads; }

// Launches a flash2 forward kernel (K: its traits, kOne / kStacked: the instances for one head's
// rows and for a group's stacked rows) over grid (Tr, H or Hkv, B), raising the kernel's dynamic
// shared-memory limit once. Shared by the mma.sync and wgmma forwards.
template <typename K, int kBr, void (*kOne)(FlashParams), void (*kStacked)(FlashParams)>
void launch_flash2_fwd(const FlashParams& p, cudaStream_t stream) {
  const bool stacked = fwd_rows_stacked(p);
  if (stacked) opt_in_dynamic_smem<kStacked>(K::kSmemBytes);
  else opt_in_dynamic_smem<kOne>(K::kSmemBytes);
  const int rows = p.group_rows ? p.heads / p.kv_heads * p.seqlen : p.seqlen;
  const dim3 grid((rows + kBr - 1) / kBr, p.group_rows ? p.kv_heads : p.heads, p.batch);
  (stacked ? kStacked : kOne)<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
  FLASHIO_LAUNCH_CHECK("flash2_fwd");
}

template <typename T, int kD, int kBr, int kBc>
FlashImpl flash2_fwd_impl(DType dtype) {
  using K = Flash2Fwd<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash2, Pass::fwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages, K::kMma},
                   &launch_flash2_fwd<K, kBr, flash2_fwd_kernel<T, kD, kBr, kBc, false>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true>>};
}

}  // namespace flashio::kernels
