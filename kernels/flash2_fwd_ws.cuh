// flash2_fwd on Hopper, warp-specialised (FlashAttention-3's structure; docs/kernels.md,
// "Warp-specialised forward"): the schedule of flash2_fwd.cuh (one block per row tile i, Q_i read
// once, K_j and V_j for every visited j in ascending order, O_i and lse_i written once), so the
// model's counts are flash2's; what differs is who moves the data and when the tensor cores run.
// - A producer warpgroup (warpgroup 0; one thread of it issues every copy) gives most of its
//   registers back (setmaxnreg) and loads Q_i, then K_j and V_j into kStages buffers each, by TMA
//   (kernels/tma.cuh): a copy per 64-column panel, swizzled into wgmma's atoms, rows past the
//   matrix filled with zeros. Each buffer has a "full" mbarrier (the copy's bytes arrived) and an
//   "empty" one (every consumer warp is done with it).
// - kBr / 64 consumer warpgroups, 64 rows of the tile each, take the registers and compute
//   S = Q Kᵀ (wgmma from shared memory), the online softmax on the accumulators (FwdTile's
//   layout) and O += P V (P from registers).
// - Within a consumer warpgroup the step is pipelined: step j issues S_j = Q K_jᵀ and then
//   O += P_{j−1} V_{j−1} (P of the previous step), so the softmax of S_j runs while the tensor
//   cores do P_{j−1} V_{j−1}; O is rescaled by step j's correction after that product is done.
// - Between consumer warpgroups the GEMM issues take turns (named barriers in a ring): while one
//   warpgroup computes its softmax the other's GEMMs have the tensor cores ("ping-pong").
// Causal blocks run the row tiles last-first, so that the longest rows (the most key tiles) start
// in the first wave (sim/schedule.h's grid order for this kernel).
#pragma once
#include "kernels/flash2_fwd.cuh"
#include "kernels/flash_fwd_tile.cuh"
#include "kernels/launch.h"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace flashio::kernels {

// kStages: buffers of K and of V (each a key tile; Q's tile and 2·kStages key tiles must fit the
// 227 KiB of shared memory: three at d = 128, 128 × 128).
template <typename T, int kD, int kBr, int kBc, int kStages_>
struct Flash2FwdWs {
  static_assert((kBr == 128 || kBr == 192) && kBc == 128 && (kD == 64 || kD == 128),
                "warp-specialised forward: Br 128 or 192 (64 rows per consumer warpgroup), Bc 128, d 64 or 128");
  static constexpr int kConsumers = kBr / 64;             // consumer warpgroups
  static constexpr int kThreads = 128 * (kConsumers + 1);  // + the producer warpgroup
  static constexpr int kConsumerWarps = 4 * kConsumers;
  using Tile = FwdTile<T, kD, kBr, kBc, kBr / 16>;  // its per-warp layout and softmax helpers
  static_assert(Tile::kMT == 1, "one 16-row slice per warp");
  static constexpr int kStages = kStages_;
  // Registers per thread after setmaxnreg: the producer keeps few, the consumers take the rest
  // of the SM's 64 Ki (one block per SM): (producer + consumers · kConsumers) · 128 ≤ 65536.
  static constexpr int kProducerRegisters = kConsumers == 2 ? 40 : 32;
  static constexpr int kConsumerRegisters = kConsumers == 2 ? 232 : 160;
  static_assert((kProducerRegisters + kConsumers * kConsumerRegisters) * 128 <= 65536, "register pool");
  static constexpr int kQBytes = kBr * kD * 2, kKVBytes = kBc * kD * 2;
  static constexpr int kBarriers = 1 + 4 * kStages;  // Q full; K full, K empty, V full, V empty per stage
  // Q, the K and V stages, the barriers, and room to align the tiles to 1024 B (swizzle atoms).
  // In whole 128-byte allocation units, as the driver allocates it.
  static constexpr int kSmemBytes = (kQBytes + 2 * kStages * kKVBytes + 8 * kBarriers + 1024 + 127) / 128 * 128;
  static constexpr MmaKind kMma = MmaKind::wgmma_ws;
  // Named barrier ids: 1 + w is consumer warpgroup w's turn to issue GEMMs; 1 + kConsumers + w
  // its epilogue's.
  static constexpr int kTurnBarrier = 1, kEpilogueBarrier = 1 + kConsumers;
  static_assert(kEpilogueBarrier + kConsumers <= 16, "16 named barriers");
  static_assert(kSmemBytes <= 232448, "the H200's 227 KiB of shared memory per block");
  static_assert(kSmemBytes <= 232448, "the H200's 227 KiB of shared memory per block");
};

// The row tile a block owns: blockIdx.x, or last-first with causal. One head's rows, or with
// group_rows a K/V head's group of query heads stacked (FlashParams::group_rows).
struct WsRowTile {
  int n, q_row0, rows, j_last;
  int q_head, kv_head;  // the Q/O map's and the K/V map's third coordinate
  int64_t bh_q0;        // b·H + the rows' first query head (lse)
  KeyLimits<true> lim;
  template <int kBr, int kBc>
  static __device__ __forceinline__ WsRowTile of(const FlashParams& p) {
    WsRowTile t;
    const int g = p.heads / p.kv_heads, b = blockIdx.z, gh = blockIdx.y;
    const int grid_heads = p.group_rows ? p.kv_heads : p.heads;
    t.n = p.group_rows ? g * p.seqlen : p.seqlen;
    const int tiles = (t.n + kBr - 1) / kBr;
    const int i = p.causal ? tiles - 1 - int(blockIdx.x) : int(blockIdx.x);
    t.q_row0 = i * kBr;
    t.rows = min(kBr, t.n - t.q_row0);
    t.q_head = b * grid_heads + gh;
    t.kv_head = b * p.kv_heads + (p.group_rows ? gh : gh / g);
    t.bh_q0 = int64_t(b) * p.heads + (p.group_rows ? gh * g : gh);
    t.lim = KeyLimits<true>::of_row(t.q_row0, p.seqlen, p.seqlen_k, p.causal_offset, p.causal);
    t.j_last = t.lim.last_key_tile(t.rows, kBc);  // < 0: the rows see no key (O = 0, lse = −inf)
    return t;
  }
};

template <typename T, int kD, int kBr, int kBc, int kStages>
__global__ void __launch_bounds__(Flash2FwdWs<T, kD, kBr, kBc, kStages>::kThreads, 1)
    flash2_fwd_ws_kernel(const FlashParams p, const __grid_constant__ tma::ForwardMaps maps) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = Flash2FwdWs<T, kD, kBr, kBc, kStages>;
  using Tile = typename K::Tile;
  constexpr int kS = K::kStages;
  extern __shared__ uint4 smem_raw[];
  const uint32_t raw = tile::smem_addr(smem_raw);
  T* sQ = reinterpret_cast<T*>(reinterpret_cast<char*>(smem_raw) + (((raw + 1023) & ~1023u) - raw));
  T* sK = sQ + kBr * kD;
  T* sV = sK + kS * kBc * kD;
  uint64_t* q_full = reinterpret_cast<uint64_t*>(sV + kS * kBc * kD);
  uint64_t* k_full = q_full + 1;
  uint64_t* k_empty = k_full + kS;
  uint64_t* v_full = k_empty + kS;
  uint64_t* v_empty = v_full + kS;

  const WsRowTile t = WsRowTile::of<kBr, kBc>(p);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, warpgroup = warp / 4;
  if (tid == 0) {
    tma::mbarrier_init(q_full, 1);
    for (int s = 0; s < kS; ++s) {
      tma::mbarrier_init(k_full + s, 1);
      tma::mbarrier_init(v_full + s, 1);
      tma::mbarrier_init(k_empty + s, K::kConsumerWarps);
      tma::mbarrier_init(v_empty + s, K::kConsumerWarps);
    }
    tma::fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {  // the producer
    tma::give_registers<K::kProducerRegisters>();
    if (tid == 0 && t.j_last >= 0) {
      tma::prefetch_map(maps.k);
      tma::prefetch_map(maps.v);
      tma::arrive_expect_bytes(q_full, K::kQBytes);
#pragma unroll
      for (int panel = 0; panel < kD / 64; ++panel)
        tma::load_box(sQ + panel * kBr * 64, maps.q, panel * 64, t.q_row0, t.q_head, q_full);
      for (int j = 0; j <= t.j_last; ++j) {
        const int s = j % kS;
        const uint32_t free_parity = ((j / kS) & 1) ^ 1;  // round 0 passes: the buffers start free
        tma::wait(k_empty + s, free_parity);
        tma::arrive_expect_bytes(k_full + s, K::kKVBytes);
#pragma unroll
        for (int panel = 0; panel < kD / 64; ++panel)
          tma::load_box(sK + s * kBc * kD + panel * kBc * 64, maps.k, panel * 64, j * kBc, t.kv_head, k_full + s);
        tma::wait(v_empty + s, free_parity);
        tma::arrive_expect_bytes(v_full + s, K::kKVBytes);
#pragma unroll
        for (int panel = 0; panel < kD / 64; ++panel)
          tma::load_box(sV + s * kBc * kD + panel * kBc * 64, maps.v, panel * 64, j * kBc, t.kv_head, v_full + s);
      }
    }
    return;
  }

  // A consumer warpgroup: rows 64·cw .. 64·cw + 63 of the tile; its warps are the tile's warps
  // 4·cw .. 4·cw + 3 (FwdTile's row_of).
  tma::take_registers<K::kConsumerRegisters>();
  const int cw = warpgroup - 1, tile_warp = warp - 4;
  const int next = (cw + 1) % K::kConsumers;
  constexpr int kTurnThreads = 256;  // a turn: this warpgroup's sync and the previous one's arrival
  const float scale_log2 = p.scale * tile::kLog2e;
  constexpr uint32_t kAtomBytes = 1024;
  const T* q_wg = sQ + cw * 64 * 64;  // this warpgroup's 64 rows in each panel

  Tile acc;
  acc.init();
  if (t.j_last >= 0) {
    float s[1][Tile::kNT][4];
    float(&s_flat)[kBc / 2] = reinterpret_cast<float(&)[kBc / 2]>(s);
    float(&o_flat)[kD / 2] = reinterpret_cast<float(&)[kD / 2]>(acc.o);
    uint32_t a[kBc / 16][4];  // P of the previous step, the A operand of its P V
    // Turns: warpgroup w issues after w − 1 (warpgroup 0 first). Every warpgroup syncs on its
    // turn j_last + 2 times and arrives on the next one's as often, but the last warpgroup's
    // final arrival is replaced by this first one, so every barrier sees as many arrivals as syncs.
    if (cw == K::kConsumers - 1) tma::named_arrive(K::kTurnBarrier + next, kTurnThreads);
    tma::wait(q_full, 0);
    // S_j = Q K_jᵀ issued (the first k step overwrites S); K_j's buffer freed once it is done.
    auto issue_s = [&](int j) {
      const int st = j % kS;
      tma::wait(k_full + st, (j / kS) & 1);
      tma::named_sync(K::kTurnBarrier + cw, kTurnThreads);
      wg::fence();  // P's fragments and the rescaled O, written since the last wgmma
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        const uint64_t qd = wg::sw128_desc(q_wg + (kk / 4) * (kBr * 64) + (kk % 4) * 16, 16, kAtomBytes);
        const uint64_t kd = wg::sw128_desc(sK + st * kBc * kD + (kk / 4) * (kBc * 64) + (kk % 4) * 16, 16, kAtomBytes);
        wg::wgmma_ss<T, kBc>(s_flat, qd, kd, kk > 0);
      }
      wg::commit();
    };
    // O += P V_j from a[], once V_j is in.
    auto issue_pv = [&](int j) {
      tma::wait(v_full + j % kS, (j / kS) & 1);
      wg::fence();  // again after the wait's loop: without it ptxas serialises the wgmmas
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk)
        wg::wgmma_rs_tn<T, kD>(o_flat, a[kk], wg::sw128_desc(sV + (j % kS) * kBc * kD + kk * 16 * 64, kBc * 128, kAtomBytes));
      wg::commit();
    };
    auto release = [&](uint64_t* empty) {
      __syncwarp();
      if (lane == 0) tma::arrive(empty);
    };
    // The online softmax of S_j (FwdTile::update_max and exp_to_a's arithmetic): the masked
    // scores, the new maxima, P in place in s and its row sums; returns O's correction
    // 2^(m_old − m_new) per row half, applied by the caller once O is free.
    auto softmax = [&](int j, float (&alpha)[2]) {
      const int k_row0 = j * kBc;
      if (t.lim.partial(t.rows, k_row0, kBc)) Tile::mask_scores(s, t.lim, k_row0, tile_warp, lane);
      float m_use[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < Tile::kNT; nt += 2) {
          mx0 = fmaxf(mx0, fmaxf(s[0][nt][2 * h], s[0][nt][2 * h + 1]));
          mx1 = fmaxf(mx1, fmaxf(s[0][nt + 1][2 * h], s[0][nt + 1][2 * h + 1]));
        }
        const float mx = tile::quad_max(fmaxf(mx0, mx1)) * scale_log2;
        const float m_new = fmaxf(acc.m[0][h], mx);
        m_use[h] = m_new == -INFINITY ? 0.f : m_new;  // a row with no visible key yet: exponents −inf, not NaN
        alpha[h] = tile::exp2_approx(acc.m[0][h] - m_use[h]);
        acc.m[0][h] = m_new;
      }
      float sum[2] = {0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < Tile::kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float pe = tile::exp2_approx(fmaf(s[0][nt][e], scale_log2, -m_use[e >> 1]));
          s[0][nt][e] = pe;
          sum[e >> 1] += pe;
        }
#pragma unroll
      for (int h = 0; h < 2; ++h) acc.l[0][h] = acc.l[0][h] * alpha[h] + sum[h];
    };
    auto to_a = [&] {
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk) tile::acc_to_a<T>(a[kk], s[0][2 * kk], s[0][2 * kk + 1]);
    };

    // Step 0: S_0 alone (O is still zero).
    issue_s(0);
    tma::named_arrive(K::kTurnBarrier + next, kTurnThreads);
    wg::wait<0>();
    release(k_empty);
    {
      float alpha[2];
      softmax(0, alpha);
    }
    to_a();
    // Steps 1..j_last: S_j, then P_{j−1} V_{j−1}; S_j's softmax while that product runs.
    for (int j = 1; j <= t.j_last; ++j) {
      issue_s(j);
      issue_pv(j - 1);
      tma::named_arrive(K::kTurnBarrier + next, kTurnThreads);
      wg::wait<1>();  // S_j done; P_{j−1} V_{j−1} may still run
      release(k_empty + j % kS);
      float alpha[2];
      softmax(j, alpha);
      wg::wait<0>();  // P_{j−1} V_{j−1} done: O may be rescaled, V_{j−1}'s buffer and a[] reused
      release(v_empty + (j - 1) % kS);
      // Unconditionally: a branch around accumulator registers makes ptxas serialise the wgmmas.
#pragma unroll
      for (int dt = 0; dt < Tile::kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc.o[0][dt][e] *= alpha[e >> 1];
      to_a();
    }
    // The last step's P V.
    tma::named_sync(K::kTurnBarrier + cw, kTurnThreads);
    issue_pv(t.j_last);
    if (cw != K::kConsumers - 1) tma::named_arrive(K::kTurnBarrier + next, kTurnThreads);
    wg::wait<0>();
  }

  // Epilogue: O / ℓ (16-bit) staged over this warpgroup's own rows of Q (which only its own
  // S GEMMs read, all done) in the O map's swizzled box layout, written by TMA; lse by the
  // lanes holding each row's ℓ, eight consecutive rows per store (a 32-byte sector).
  acc.reduce_row_sums();
  using QLayout = wg::AtomSwizzled<kBr>;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float inv = acc.l[0][h] > 0.f ? 1.f / acc.l[0][h] : 0.f;
    const int row = Tile::row_of(tile_warp, lane, 0, h);
#pragma unroll
    for (int dt = 0; dt < Tile::kDT; ++dt) {
      const int col = dt * 8 + (lane & 3) * 2;
      *reinterpret_cast<uint32_t*>(sQ + QLayout::at(row, col)) =
          tile::Elem<T>::pack(acc.o[0][dt][2 * h] * inv, acc.o[0][dt][2 * h + 1] * inv);
    }
    const int r = t.q_row0 + row;
    if ((lane & 3) == 0 && row < t.rows) {
      const int head = r / p.seqlen;  // a stacked row r: head r / Nq, position r mod Nq
      p.lse[(t.bh_q0 + head) * int64_t(p.stats_stride) + r - head * p.seqlen] =
          (acc.m[0][h] + __log2f(acc.l[0][h])) * 0.6931471805599453f;
    }
  }
  wg::fence_proxy_async();  // the staged O, before TMA reads it
  tma::named_sync(K::kEpilogueBarrier + cw, 128);
  if (tid % 128 == 0 && cw * 64 < t.rows) {  // a warpgroup wholly past the matrix's rows writes nothing
#pragma unroll
    for (int panel = 0; panel < kD / 64; ++panel)
      tma::store_box(maps.o, sQ + panel * kBr * 64 + cw * 64 * 64, panel * 64, t.q_row0 + cw * 64, t.q_head);
    tma::store_commit();
    tma::store_wait_read();
  }
#endif
}

// The maps of a launch: Q and O over the grid's heads (one head's rows, or a group's stacked
// rows: FlashParams::group_rows), K and V over the K/V heads; Q's box is the tile's rows, O's a
// consumer warpgroup's 64, K's and V's a key tile.
template <typename K>
tma::ForwardMaps forward_maps(const FlashParams& p, DType dtype, int d, int block_r, int block_c) {
  const int64_t g = p.heads / p.kv_heads;
  const int64_t rows = p.group_rows ? g * p.seqlen : p.seqlen;
  const int64_t grid_heads = int64_t(p.batch) * (p.group_rows ? p.kv_heads : p.heads);
  const int64_t kv_heads = int64_t(p.batch) * p.kv_heads;
  return tma::ForwardMaps{make_tensor_map(p.q, dtype, grid_heads, rows, d, block_r),
                          make_tensor_map(p.k, dtype, kv_heads, p.seqlen_k, d, block_c),
                          make_tensor_map(p.v, dtype, kv_heads, p.seqlen_k, d, block_c),
                          make_tensor_map(p.o, dtype, grid_heads, rows, d, 64)};
}

template <typename T, int kD, int kBr, int kBc, int kStages>
void launch_flash2_fwd_ws(const FlashParams& p, cudaStream_t stream) {
  using K = Flash2FwdWs<T, kD, kBr, kBc, kStages>;
  constexpr auto kernel = flash2_fwd_ws_kernel<T, kD, kBr, kBc, kStages>;
  opt_in_dynamic_smem<kernel>(K::kSmemBytes);
  const DType dtype = std::is_same_v<T, __half> ? DType::fp16 : DType::bf16;
  const tma::ForwardMaps maps = forward_maps<K>(p, dtype, kD, kBr, kBc);
  const int rows = p.group_rows ? p.heads / p.kv_heads * p.seqlen : p.seqlen;
  const dim3 grid((rows + kBr - 1) / kBr, p.group_rows ? p.kv_heads : p.heads, p.batch);
  kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p, maps);
  FLASHIO_LAUNCH_CHECK("flash2_fwd");
}

template <typename T, int kD, int kBr, int kBc, int kStages>
FlashImpl flash2_fwd_ws_impl(DType dtype) {
  using K = Flash2FwdWs<T, kD, kBr, kBc, kStages>;
  return FlashImpl{KernelEntry{Algo::flash2, Pass::fwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages,
                               K::kMma, /*dense_only=*/true},
                   &launch_flash2_fwd_ws<T, kD, kBr, kBc, kStages>};
}

}  // namespace flashio::kernels
