// flash2_fwd (FlashAttention-2 forward; docs/schedules.md, "flash2"): one block per row tile
// i, grid (Tr, H, B) so that blockIdx.x is fastest (launch index i + Tr·bh); with grouped-query
// attention packed, grid (Tr, Hkv, B) over a group's stacked rows (Flash2FwdRowTile). The block reads
// Q_i once, streams K_j, V_j for every visited j in ascending order through a two-stage
// cp.async pipeline, and writes O_i (element type) and lse_i (fp32) once. With split-KV
// (FlashParams::splits > 1) the grid is (S·Tr, H or Hkv, B), a block visits only its split's key
// tiles and writes fp32 partial results, and flash2_fwd_combine merges them into O and lse
// (docs/kernels.md, "Split-KV").
#pragma once
#include "kernels/flash2_fwd_combine.cuh"
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
// kSplit (split-KV, docs/shapes.md "Split-KV"): the grid is (S·Tr, grid heads, B), blockIdx.x =
// s·Tr + i (the model's block order, sim/schedule_flash2.cpp), and the block visits only split
// s's key tiles [s·chunk, min((s + 1)·chunk, Tc)),
// chunk = ⌈Tc / S⌉ (FlashAttention's partition), clipped by causal's j_last as without splits.
// Its keys then count from the split's first, key0 = s·chunk·Bc: K, V, nk, and the limits' Nk and
// causal offset (the limits' tests are linear in the key, so key0 moves out of them), so that
// the kernels' loops run j = 0..j_last over the split's tiles with the very code they run
// without splits, and no value more is live in them (key0 added to each tile's first key, even
// as a constant 0 in the instances without splits, cost d = 128 64 × 128 stacked a register).
// Rows and causal alignment as docs/shapes.md; what each block moves, docs/kernels.md, "Split-KV"
// (docs/schedules.md's flash2_fwd row, per split).
// kPaged, the KV-cache instances (a paged cache, FlashParams::block_table, and/or per-sequence
// key lengths, FlashParams::seqlens_k; either may be absent): the sequence's keys Nk_b (its
// length, or Nk) bound its tiles and set its causal offset Nk_b − Nq; k and v point at the K/V
// head's rows of physical page 0 (cache + kvh·P·d) or, contiguous, at its rows of the cache
// (whose row stride stays Nk); `table` at the sequence's block-table row (null when
// contiguous), and key0 (the split's first key) is kept instead of moving the pointers.
// kWindow, the window instances (a sliding window's left side, FlashParams::window_left): the
// block's first tile is the one holding the first key its first query sees
// (KeyLimits::first_key_tile), and its keys count from that tile's first, key0, as a split's do:
// K, V, nk and the limits' Nk, offset and lo move by key0, so the loop runs j = 0..j_last with
// the code it runs without a window.
// kSparse, the block-sparse instances (FlashParams::fwd_tiles; docs/kernels.md, "Block-sparse
// kernels"): the block visits the row tile's listed key tiles in order, loop step j taking tile
// key_tiles[j] (j itself in every other instance), so the loop runs j = 0..j_last with the code
// it runs dense; one head's rows, no splits, contiguous. The kernels spell the choice
// `kSparse ? __ldg(key_tiles + j) : j` in place: through a helper function, even one returning j,
// ptxas allocated the dense mma.sync instances differently (2 registers either way).
// kPackable, the KV-cache instance without splits or dropout, also runs
// variable-length batches (FlashParams::cu_seqlens): the sequence's n_b queries and keys (causal on
// its own square), its rows packed from q_base on (O's and lse's likewise: flash2_fwd_epilogue); a
// block whose first row is past the sequence's rows is empty (rows ≤ 0) and the kernels return
// before any copy. Only there, so that the split and dropout instances keep their registers.
template <typename T, int kD, int kBr, int kBc, bool kStacked, bool kSplit = false, bool kPaged = false,
          bool kWindow = false, bool kSparse = false, bool kPackable = false>
struct Flash2FwdRowTile {
  static_assert(!kPackable || (kPaged && !kSplit), "packed sequences run in the KV-cache instance without splits");
  static constexpr bool kPacked = kPackable;  // may run a packed variable-length batch
  int n, nk, q_row0, rows, j_last;  // n: rows of the grid head (Nq or g·Nq); nk: keys (from key0 on)
  int64_t bh_q0;                    // b·H + the first query head of the rows
  int64_t q_base = 0;               // kPaged with cu_seqlens: the row of Q (O, lse) of the rows' first
  KeyLimits<kStacked, kWindow> lim;
  const T *q, *k, *v;  // Q_i; K and V of the K/V head (from key0 on)
  const int* table = nullptr;  // kPaged: the sequence's block-table row
  int key0 = 0;                // kPaged: the split's first key
  __device__ __forceinline__ explicit Flash2FwdRowTile(const FlashParams& p) {
    const int g = p.heads / p.kv_heads;
    const int b = blockIdx.z, gh = blockIdx.y;
    const int qh0 = p.group_rows ? gh * g : gh, kvh = p.group_rows ? gh : gh / g;
    n = p.group_rows ? g * p.seqlen : p.seqlen;
    nk = p.seqlen_k;
    int causal_offset = p.causal_offset;
    int nq = p.seqlen;
    int64_t kv_base = 0;  // kPackable with cu_seqlens: the K/V head's first row
    if constexpr (kPackable) {
      if (p.cu_seqlens != nullptr) {
        const int first = __ldg(p.cu_seqlens + b);
        nq = __ldg(p.cu_seqlens + b + 1) - first;
        n = p.group_rows ? g * nq : nq;
        nk = nq;
        causal_offset = 0;
        q_base = int64_t(p.heads) * first + int64_t(qh0) * nq;
        kv_base = int64_t(p.kv_heads) * first + int64_t(kvh) * nq;
      } else if (p.seqlens_k != nullptr) {
        nk = __ldg(p.seqlens_k + b);
        causal_offset = nk - p.seqlen;
      }
    } else if constexpr (kPaged) {
      if (p.seqlens_k != nullptr) {
        nk = __ldg(p.seqlens_k + b);
        causal_offset = nk - p.seqlen;
      }
    }
    bh_q0 = int64_t(b) * p.heads + qh0;
    q_row0 = blockIdx.x * kBr;
    if constexpr (kSplit) q_row0 = (blockIdx.x - split(p) * row_tiles(p)) * kBr;
    rows = min(kBr, n - q_row0);
    if constexpr (kPackable) lim = KeyLimits<kStacked, kWindow>::of_row(q_row0, nq, nk, causal_offset, p.causal);
    else if constexpr (kPaged) lim = KeyLimits<kStacked, kWindow>::of_row(q_row0, p.seqlen, nk, causal_offset, p.causal);
    else lim = KeyLimits<kStacked, kWindow>::of_row(q_row0, p.seqlen, nk, p.causal_offset, p.causal, p.window_lo);
    // Causal: skip tiles wholly above the diagonal (beyond what the tile's last query sees).
    j_last = lim.last_key_tile(rows, kBc);
    if constexpr (kPackable) {
      if (p.cu_seqlens == nullptr) q_base = bh_q0 * p.seqlen;
      q = static_cast<const T*>(p.q) + (q_base + q_row0) * kD;
    } else {
      q = static_cast<const T*>(p.q) + (bh_q0 * p.seqlen + q_row0) * kD;
    }
    const int64_t bkv = int64_t(b) * p.kv_heads + kvh;
    if constexpr (kPaged) {
      if (p.block_table != nullptr) {
        k = static_cast<const T*>(p.k) + int64_t(kvh) * p.page_size * kD;
        v = static_cast<const T*>(p.v) + int64_t(kvh) * p.page_size * kD;
        table = p.block_table + int64_t(b) * p.pages_per_seq;
      } else if constexpr (kPackable) {
        if (p.cu_seqlens == nullptr) kv_base = bkv * p.seqlen_k;
        k = static_cast<const T*>(p.k) + kv_base * kD;
        v = static_cast<const T*>(p.v) + kv_base * kD;
      } else {
        k = static_cast<const T*>(p.k) + bkv * p.seqlen_k * kD;
        v = static_cast<const T*>(p.v) + bkv * p.seqlen_k * kD;
      }
    } else {
      k = static_cast<const T*>(p.k) + bkv * nk * kD;
      v = static_cast<const T*>(p.v) + bkv * nk * kD;
    }
    if constexpr (kWindow) {
      const int j_first = lim.first_key_tile(rows, kBc);
      j_last -= j_first;
      const int key0 = j_first * kBc;
      nk -= key0;
      lim.nk -= key0;
      lim.offset -= key0;
      lim.lo -= key0;  // key < q + lo  ⇔  key − key0 < q + (lo − key0)
      k += int64_t(key0) * kD;
      v += int64_t(key0) * kD;
    }
    if constexpr (kSparse)  // the row tile's listed key tiles (key_tiles); −1: none (O = 0, lse = −inf)
      j_last = __ldg(p.fwd_tile_offsets + blockIdx.x + 1) - __ldg(p.fwd_tile_offsets + blockIdx.x) - 1;
    if constexpr (kSplit) {
      const int tiles = (nk + kBc - 1) / kBc, chunk = (tiles + p.splits - 1) / p.splits;
      const int j_first = split(p) * chunk;
      // The split's last tile, counted from its first; < 0: nothing to visit (the range is
      // empty, or wholly above the causal diagonal for this row tile).
      j_last = min(j_last, min(j_first + chunk, tiles) - 1) - j_first;
      const int key0 = j_first * kBc;
      nk -= key0;
      lim.nk -= key0;      // key ≥ Nk  ⇔  key − key0 ≥ Nk − key0
      lim.offset -= key0;  // key > q + offset  ⇔  key − key0 > q + (offset − key0)
      if constexpr (kPaged) {
        this->key0 = key0;
      } else {
        k += int64_t(key0) * kD;
        v += int64_t(key0) * kD;
      }
    }
  }
  // kSparse: the row tile's visited key tiles, ascending (null elsewhere), read once before the loop.
  static __device__ __forceinline__ const int* key_tiles(const FlashParams& p) {
    if constexpr (kSparse) return p.fwd_tiles + __ldg(p.fwd_tile_offsets + blockIdx.x);
    return nullptr;
  }
  // kSplit: the block's split s, and s·B·H + bh_q0, the head of its rows in o_accum and
  // lse_accum ([S][B][H][Nq]); from blockIdx when needed, so nothing more is held through the loop.
  static __device__ __forceinline__ int row_tiles(const FlashParams& p) {
    return ((p.group_rows ? p.heads / p.kv_heads * p.seqlen : p.seqlen) + kBr - 1) / kBr;
  }
  static __device__ __forceinline__ int split(const FlashParams& p) { return blockIdx.x / row_tiles(p); }
  __device__ __forceinline__ int64_t accum_bh_q0(const FlashParams& p) const {
    return int64_t(split(p)) * p.batch * p.heads + bh_q0;
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

// K_j and V_j (`cols` keys from the tile's first, k_row, counted from the block's first key) into
// their stages. Contiguous: the rows at k + k_row·d, as every kernel without paging reads them.
// kPaged (docs/kernels.md, "Paged KV cache"): each row from its page, which the thread reads from the
// block-table row first (sim's schedule counts these entries per tile, and the time model the
// load as a round the copies wait for: sim/kernel_catalog.h, dependent_load_rounds); without a
// table (per-sequence key lengths over a contiguous cache) the rows at k + (key0 + k_row)·d.
template <int kBc, int kD, int kThreads, typename T, typename Layout, bool kPaged, typename RowTile>
__device__ __forceinline__ void load_kv_tiles(T* sK, T* sV, const T* k, const T* v, int k_row, int cols, int tid,
                                              const RowTile& t, const FlashParams& p) {
  if constexpr (!kPaged) {
    tile::load_tile_async<kBc, kD, kThreads, T, Layout>(sK, k + int64_t(k_row) * kD, cols, tid);
    tile::load_tile_async<kBc, kD, kThreads, T, Layout>(sV, v + int64_t(k_row) * kD, cols, tid);
  } else if (t.table == nullptr) {
    const int64_t first = int64_t(t.key0 + k_row) * kD;
    tile::load_tile_async<kBc, kD, kThreads, T, Layout>(sK, k + first, cols, tid);
    tile::load_tile_async<kBc, kD, kThreads, T, Layout>(sV, v + first, cols, tid);
  } else {
    constexpr int kUnitsPerRow = kD / 8;
    constexpr int kUnits = kBc * kUnitsPerRow;
    const int page_size = p.page_size;
    const int64_t page_elements = int64_t(p.kv_heads) * page_size * kD;  // one physical page: (Hkv, P, d)
#pragma unroll
    for (int it = 0; it < (kUnits + kThreads - 1) / kThreads; ++it) {
      const int u = it * kThreads + tid;
      if (kUnits % kThreads != 0 && u >= kUnits) break;
      const int row = u / kUnitsPerRow, c = (u % kUnitsPerRow) * 8;
      T* dk = sK + Layout::at(row, c);
      T* dv = sV + Layout::at(row, c);
      if (row < cols) {
        const int key = t.key0 + k_row + row;
        const int64_t at = __ldg(t.table + key / page_size) * page_elements + int64_t(key % page_size) * kD + c;
        tile::cp_async_16(dk, k + at);
        tile::cp_async_16(dv, v + at);
      } else {
        *reinterpret_cast<uint4*>(dk) = make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(dv) = make_uint4(0, 0, 0, 0);
      }
    }
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
  if constexpr (RowTile::kPacked) {  // the rows from q_base on, O's and lse's (packed: no stride)
    tile::store_tile<kBr, kD, kThreads>(static_cast<T*>(p.o) + (t.q_base + t.q_row0) * kD, sO, t.rows, tid);
    if (p.cu_seqlens != nullptr) {
      for (int r = tid; r < t.rows; r += kThreads) p.lse[t.q_base + t.q_row0 + r] = sLse[r];
      return;
    }
  } else {
    tile::store_tile<kBr, kD, kThreads>(static_cast<T*>(p.o) + (t.bh_q0 * p.seqlen + t.q_row0) * kD, sO, t.rows, tid);
  }
  // lse is strided per head: a stacked row r goes to head r / Nq, position r mod Nq.
  float* lse = p.lse + t.bh_q0 * p.stats_stride;
  for (int r = tid; r < t.rows; r += kThreads) {
    const int row = t.q_row0 + r, head = row / p.seqlen;
    lse[head * int64_t(p.stats_stride) + row - head * p.seqlen] = sLse[r];
  }
}

// The epilogue of a split block (kSplit), after the loop's last barrier: the split's O_s = O / ℓ_s
// (fp32) and lse_s into o_accum and lse_accum, rows addressed as O's (docs/kernels.md, "Split-KV").
// Straight from the accumulators: each lane stores 8-byte pairs and the 4 lanes of a quad one
// whole 32-byte sector of a row, so no staging is needed for whole sectors. A row that sees no
// key of the split (causal), or a block whose split has no tile for it (empty: the loop ran no
// tile), has ℓ_s = 0 and m = −inf: o 0 and lse −inf.
template <int kD, typename Tile, typename RowTile>
__device__ __forceinline__ void flash2_fwd_split_epilogue(Tile& acc, const FlashParams& p, const RowTile& t, int warp,
                                                          int lane) {
  acc.reduce_row_sums();
  float* o_accum = p.o_accum + (t.accum_bh_q0(p) * p.seqlen + t.q_row0) * kD;
  float* lse_accum = p.lse_accum + t.accum_bh_q0(p) * p.seqlen + t.q_row0;
#pragma unroll
  for (int mt = 0; mt < Tile::kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = Tile::row_of(warp, lane, mt, h);
      if (row >= t.rows) continue;
      const float inv = acc.l[mt][h] > 0.f ? 1.f / acc.l[mt][h] : 0.f;
#pragma unroll
      for (int dt = 0; dt < Tile::kDT; ++dt)
        *reinterpret_cast<float2*>(o_accum + int64_t(row) * kD + dt * 8 + (lane & 3) * 2) =
            make_float2(acc.o[mt][dt][2 * h] * inv, acc.o[mt][dt][2 * h + 1] * inv);
      // As flash2_fwd_epilogue's lse; ℓ = 0 gives log2 0 = −inf.
      if ((lane & 3) == 0)
        lse_accum[row] = (acc.m[mt][h] + __log2f(acc.l[mt][h])) * 0.6931471805599453f;
    }
}

// Fused dropout's row keys of this thread's rows (FwdTile::dropout_rows): row r of the block's
// rows is query lim.query(r) of head bh_q0 + (q_row0 + r) / Nq (stacked rows cross heads; one
// head's rows stay in it). Nothing without kDropout.
template <bool kDropout, typename Tile, typename RowTile>
__device__ __forceinline__ typename Tile::Dropout flash2_fwd_dropout(const FlashParams& p, const RowTile& t, int warp,
                                                                     int lane) {
  if constexpr (kDropout) {
    return Tile::dropout_rows(
        p.dropout_seed, p.dropout_threshold, warp, lane, [&](int r) { return t.lim.query(r); },
        [&](int r) { return t.bh_q0 + (t.q_row0 + r) / p.seqlen; });
  } else {
    return {};
  }
}

// kStacked: the block's rows are a group's stacked query heads (Flash2FwdRowTile); false for one
// head's rows, which is also every problem without grouped-query attention. kSplit: the block
// runs one split of the key tiles and writes partial results (split-KV; docs/kernels.md, "Split-KV");
// its own instances, so that those without splits keep their registers. kPaged: K and V from a
// paged cache (load_kv_tiles), in instances of their own for the same reason; kWindow: a window's
// left side (Flash2FwdRowTile), likewise; kSparse: a block mask's listed tiles (Flash2FwdRowTile);
// kDropout: fused dropout (FwdTile::Dropout; FlashParams::dropout_threshold), likewise; its
// instance is a KV-cache one (kPaged, contiguous), so that it takes key lengths (padding) too.
template <typename T, int kD, int kBr, int kBc, bool kStacked, bool kSplit, bool kPaged = false, bool kWindow = false,
          bool kSparse = false, bool kDropout = false>
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
  constexpr bool kPackable = kPaged && !kSplit && !kDropout;
  const Flash2FwdRowTile<T, kD, kBr, kBc, kStacked, kSplit, kPaged, kWindow, kSparse, kPackable> t(p);
  if constexpr (kPackable)
    if (t.rows <= 0) return;  // a row tile past its (variable-length) sequence's rows: nothing to do
  const int nk = t.nk, rows = t.rows, j_last = t.j_last;
  const T *q = t.q, *k = t.k, *v = t.v;
  const int* const key_tiles = t.key_tiles(p);
  const float scale_log2 = p.scale * tile::kLog2e;
  using KVLayout = tile::RowSwizzled<kD>;

  // A split with no key tile for this row tile (kSplit, j_last < 0; block-uniform) copies
  // nothing, its loop visits no tile, and its epilogue writes what a split that sees no key
  // writes: ℓ = 0, m = −inf, so o_accum 0 and lse_accum −inf (docs/kernels.md, "Split-KV"). A guard
  // rather than an early return: with the return, ptxas gave d = 128 64 × 128 stacked 32 bytes
  // of stack; with the guard it needs fewer registers than its instance without splits.
  // A block-sparse row tile without a listed tile (kSparse, j_last < 0) reads Q_i alone, as the
  // model's schedule has every block read it (sim/schedule_flash2.cpp, emit_row_tile).
  if (!kSplit || j_last >= 0) {
    tile::load_tile_async<kBr, kD, kThreads>(sQ, q, rows, tid);
    if (!kSparse || j_last >= 0) {
      const int k_row = (kSparse ? __ldg(key_tiles) : 0) * kBc;
      load_kv_tiles<kBc, kD, kThreads, T, KVLayout, kPaged>(sK, sV, k, v, k_row, min(kBc, nk - k_row), tid, t, p);
    }
    tile::cp_async_commit();
  }
  if (j_last >= 1) {  // K_1, V_1 into the second stage, nothing has read it yet
    const int k_row = (kSparse ? __ldg(key_tiles + 1) : 1) * kBc;
    const int cols = min(kBc, nk - k_row);
    load_kv_tiles<kBc, kD, kThreads, T, KVLayout, kPaged>(sK + kBc * kD, sV + kBc * kD, k, v, k_row, cols, tid, t, p);
    tile::cp_async_commit();
  }

  Tile acc;
  acc.init();
  const typename Tile::Dropout drop = flash2_fwd_dropout<kDropout, Tile>(p, t, warp, lane);
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
      const int k_row = (kSparse ? __ldg(key_tiles + j + 1) : j + 1) * kBc;
      const int cols = min(kBc, nk - k_row);
      load_kv_tiles<kBc, kD, kThreads, T, KVLayout, kPaged>(sK + (stage ^ 1) * kBc * kD, sV + (stage ^ 1) * kBc * kD, k,
                                                             v, k_row, cols, tid_j, t, p);
      tile::cp_async_commit();
    }
    const int k_row0 = (kSparse ? __ldg(key_tiles + j) : j) * kBc;
    acc.template step<kStacked, kWindow, kDropout>(sQ, sK + stage * kBc * kD, sV + stage * kBc * kD, t.lim, k_row0,
                                                   t.lim.partial(rows, k_row0, kBc), scale_log2, warp_j, lane_j, drop);
  }
  if constexpr (kDropout) acc.scale_output(p.dropout_scale);
  // A block-sparse row tile with no listed tile ran no loop, so nothing waited for its Q_i copy:
  // wait before the epilogue stages O over Q, or a late copy overwrites O = 0 with Q's values.
  if constexpr (kSparse)
    if (j_last < 0) tile::cp_async_wait<0>();
  if constexpr (kSplit) {
    flash2_fwd_split_epilogue<kD>(acc, p, t, warp, lane);
  } else {
    __syncthreads();  // the epilogue stages O over Q and lse over K, which other warps may still read
    flash2_fwd_epilogue<kBr, kD, kThreads>(acc, sQ, sK, p, t, warp, lane, tid);
  }
}

// Whether a forward block's rows are a group's stacked query heads (FlashParams::group_rows with
// more than one query head per K/V head), which selects the kernel instance.
inline bool fwd_rows_stacked(const FlashParams& p) { return p.group_rows && p.heads != p.kv_heads; }

// Launches a flash2 forward (K: the kernel's traits; kOne / kStacked: the instances for one
// head's rows and for a group's stacked rows, kOneSplit / kStackedSplit the same with splits;
// kCombine: the combine's launch) over grid (Tr, H or Hkv, B), raising the kernel's dynamic
// shared-memory limit once. With splits > 1 a split instance runs over grid (S·Tr, H or Hkv, B)
// and the combine follows it on the same stream (docs/kernels.md, "Split-KV"). Shared by the mma.sync
// and wgmma forwards.
// kPaged / kPagedSplit: the instances over a paged cache (FlashParams::block_table), without and
// with splits; stacked-row instances, which take one head's rows too (KeyLimits<true> is exact
// for them), so that paging adds two instances rather than four. kWindow: the window instance
// (a left side; stacked rows, no splits, contiguous: sim's validate refuses the others). kSparse:
// the block-sparse instance (FlashParams::fwd_tiles; one head's rows, no splits, contiguous).
using Flash2FwdKernel = void (*)(FlashParams);
template <typename K, int kBr, Flash2FwdKernel kOne, Flash2FwdKernel kStacked, Flash2FwdKernel kOneSplit,
          Flash2FwdKernel kStackedSplit, Flash2FwdKernel kPaged, Flash2FwdKernel kPagedSplit, Flash2FwdKernel kWindow,
          Flash2FwdKernel kSparse, Flash2FwdKernel kDropout, LaunchFn kCombine>
void launch_flash2_fwd(const FlashParams& p, cudaStream_t stream) {
  const bool stacked = fwd_rows_stacked(p);
  const int rows = p.group_rows ? p.heads / p.kv_heads * p.seqlen : p.seqlen;
  const int grid_heads = p.group_rows ? p.kv_heads : p.heads;
  // Fused dropout, with or without per-sequence key lengths (FlashParams::seqlens_k): a KV-cache
  // instance (kPaged, contiguous) with stacked rows (exact for one head's), no splits.
  if (p.dropout_threshold > 0) {
    opt_in_dynamic_smem<kDropout>(K::kSmemBytes);
    const dim3 grid((rows + kBr - 1) / kBr, grid_heads, p.batch);
    kDropout<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
    FLASHIO_LAUNCH_CHECK("flash2_fwd");
    return;
  }
  if (p.fwd_tiles != nullptr) {  // block-sparse: one head's rows (Hkv = H), no splits, contiguous
    opt_in_dynamic_smem<kSparse>(K::kSmemBytes);
    const dim3 grid((p.seqlen + kBr - 1) / kBr, p.heads, p.batch);
    kSparse<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
    FLASHIO_LAUNCH_CHECK("blocksparse_fwd");
    return;
  }
  if (p.window_left) {
    opt_in_dynamic_smem<kWindow>(K::kSmemBytes);
    const dim3 grid((rows + kBr - 1) / kBr, grid_heads, p.batch);
    kWindow<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
    FLASHIO_LAUNCH_CHECK("flash2_fwd");
    return;
  }
  if (p.block_table != nullptr || p.seqlens_k != nullptr) {  // the KV-cache instances
    const Flash2FwdKernel kernel = p.splits > 1 ? kPagedSplit : kPaged;
    if (p.splits > 1) opt_in_dynamic_smem<kPagedSplit>(K::kSmemBytes);
    else opt_in_dynamic_smem<kPaged>(K::kSmemBytes);
    const dim3 grid((rows + kBr - 1) / kBr * p.splits, grid_heads, p.batch);  // blockIdx.x = s·Tr + i
    kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
    FLASHIO_LAUNCH_CHECK("flash2_fwd");
    if (p.splits > 1) kCombine(p, stream);
    return;
  }
  if (p.splits > 1) {
    if (stacked) opt_in_dynamic_smem<kStackedSplit>(K::kSmemBytes);
    else opt_in_dynamic_smem<kOneSplit>(K::kSmemBytes);
    const dim3 grid((rows + kBr - 1) / kBr * p.splits, grid_heads, p.batch);  // blockIdx.x = s·Tr + i
    (stacked ? kStackedSplit : kOneSplit)<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
    FLASHIO_LAUNCH_CHECK("flash2_fwd");
    kCombine(p, stream);
    return;
  }
  if (stacked) opt_in_dynamic_smem<kStacked>(K::kSmemBytes);
  else opt_in_dynamic_smem<kOne>(K::kSmemBytes);
  const dim3 grid((rows + kBr - 1) / kBr, grid_heads, p.batch);
  (stacked ? kStacked : kOne)<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
  FLASHIO_LAUNCH_CHECK("flash2_fwd");
}

template <typename T, int kD, int kBr, int kBc>
FlashImpl flash2_fwd_impl(DType dtype) {
  using K = Flash2Fwd<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash2, Pass::fwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages, K::kMma},
                   &launch_flash2_fwd<K, kBr, flash2_fwd_kernel<T, kD, kBr, kBc, false, false>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true, false>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, false, true>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true, true>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true, false, true>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true, true, true>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true, false, false, true>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, false, false, false, false, true>,
                                      flash2_fwd_kernel<T, kD, kBr, kBc, true, false, true, false, false, true>,
                                      launch_flash2_fwd_combine<T, kD>>};
}

}  // namespace flashio::kernels
