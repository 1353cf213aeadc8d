// The backward step shared by flash1 and flash2 (paper Algorithm 4, lines 11–22; FA2's
// backward): for one visited tile (i, j) with K_j, V_j resident and Q_i, dO_i, the row
// statistics in shared memory, it recomputes P, accumulates dV_j += Pᵀ dO_i and
// dK_j += dSᵀ Q_i in registers, and leaves dQ_i's partial dS K_j (fp32) in shared memory for the
// caller to add to dq_accum (flash2: atomics; flash1: read-modify-write).
// Warps split the Bc key rows (16 per warp), so the block computes Sᵀ = K Qᵀ directly and each
// warp's Pᵀ, dSᵀ are already the A operands of dV and dK.
#pragma once
#include <cmath>

#include "kernels/dropout_keep.h"
#include "kernels/key_limits.cuh"
#include "kernels/mma_tile.cuh"

namespace flashio::kernels {

template <typename T, int kD, int kBr, int kBc>
struct BwdTile {
  static constexpr int kWarps = kBc / 16;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kQT = kBr / 8;  // 8-column (query) tiles of Sᵀ
  static constexpr int kDT = kD / 8;
  static constexpr int kAccumulatorRegisters = 2 * kDT * 4 + 2 * kQT * 4;  // dk, dv; step's Sᵀ, dPᵀ
  static constexpr int kDqStride = kD + 8;  // fp32 staging row, padded against bank conflicts
  static constexpr int kDsCols = kBr < 64 ? 64 : kBr;  // dSᵀ rows padded to the swizzle's minimum
  // dQ = dS K is split over the warps by (16-row slices, column range): each warp takes s
  // slices × c columns with (Br/16 / s)·(d / c) = warps, in passes of `chunk` columns so its
  // accumulators stay ≤ 64 registers beside dK and dV. Per 16 keys a warp loads s·(c/chunk)
  // A fragments (dS) and c/16 B fragment pairs (K); s is chosen to load the fewest, since the
  // backward is bound by shared-memory bandwidth (ncu: L1/TEX 86 % at d = 128).
  static constexpr int kQSlices = kBr / 16;
  static constexpr int dq_splits(int s) { return kWarps * s / kQSlices; }
  static constexpr int dq_chunk(int s) {
    return (kD / dq_splits(s)) < 128 / s ? kD / dq_splits(s) : 128 / s;
  }
  static constexpr bool dq_valid(int s) {
    return s <= kQSlices && kQSlices % s == 0 && (kWarps * s) % kQSlices == 0 && dq_splits(s) >= 1 &&
           kD % (16 * dq_splits(s)) == 0 && dq_chunk(s) % 16 == 0;
  }
  static constexpr int dq_cost(int s) { return s * ((kD / dq_splits(s)) / dq_chunk(s)) + kD / dq_splits(s) / 16; }
  static constexpr int best_dq_slices() {
    int best = 0;
    for (int s = 1; s <= 8; s *= 2)
      if (dq_valid(s) && (best == 0 || dq_cost(s) < dq_cost(best))) best = s;
    return best;
  }
  static constexpr int kDqSlicesPerWarp = best_dq_slices();
  static constexpr int kDqSplits = dq_splits(kDqSlicesPerWarp);
  static constexpr int kDqCols = kD / kDqSplits;
  static constexpr int kDqChunk = dq_chunk(kDqSlicesPerWarp);
  static_assert(kDqSlicesPerWarp >= 1, "no valid dQ split");
  static_assert(kBr % 16 == 0 && kBc % 16 == 0, "tiles are multiples of 16");
  static_assert(kDqChunk % 16 == 0 && kDqCols % kDqChunk == 0, "dQ column split");

  // Shared memory the step uses besides K, V, Q, dO: lse, delta, dSᵀ and the dQ staging tile.
  static constexpr int kSmemStatsBytes = 2 * kBr * 4;
  static constexpr int kSmemDsBytes = kBc * kDsCols * 2;
  static constexpr int kSmemDqBytes = kBr * kDqStride * 4;

  // Fused dropout (docs/kernels.md, "Fused dropout"; the rule: kernels/dropout_keep.h), the
  // kDropout instances: the threshold, 1 / (1 − p), and where the row keys of the step's row tile
  // are: the caller computes one per query row when it loads the row tile and stores it in the
  // dQ staging tile's padding, column kD + slot of the row (kDqStride leaves 8 floats a row that
  // nothing else touches), so that the dropout instances need no shared memory more. The step
  // regenerates the forward's decisions (Algorithm 4, lines 14, 16 and 20): dV += (P ∘ Z)ᵀ dO
  // and dS = P ∘ (Z ∘ dP / (1 − p) − D), Z's 1 / (1 − p) of dV applied once, when it is written.
  // A thread holds keys 8 apart of one parity, so it decides one score of each draw; the lane
  // holding the pair's other key (lane ^ 4) decides the other, and the two share the hashing by
  // a shuffle (the forward's threads hold adjacent keys and use both halves of their draws).
  struct Dropout {
    uint32_t threshold = 0;
    float scale = 1.f;
    int slot = 0;
  };
  static_assert(kDqStride - kD >= 2, "two row-key slots in the dQ staging rows' padding");
  // The row key of tile row r, in `slot`, in the dQ staging tile sDq.
  static __device__ __forceinline__ uint32_t* row_key_at(float* sDq, int r, int slot) {
    return reinterpret_cast<uint32_t*>(sDq + r * kDqStride + kD + slot);
  }

  float dk[kDT][4];
  float dv[kDT][4];

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) dk[dt][e] = dv[dt][e] = 0.f;
  }

  // sLse holds lse·log2 e per query row (+inf for rows ≥ N, so their P is 0); sDelta holds
  // rowsum(dO ∘ O) (0 for rows ≥ N). Ends with a __syncthreads(); sDq then holds dS K_j.
  // kDropout: drop's decisions (Dropout).
  template <bool kStacked, bool kWindow, bool kDropout = false>
  __device__ __forceinline__ void step(const T* sQ, const T* sdO, const T* sK, const T* sV, const float* sLse,
                                       const float* sDelta, T* sdS, float* sDq, const KeyLimits<kStacked, kWindow> lim,
                                       int k_row0,
                                       bool masked, float scale_log2, int warp, int lane, const Dropout& drop = {}) {
    const int g = lane >> 2, t = lane & 3;
    const int row0 = lim.row0, nq = lim.nq, nk = lim.nk, offset = lim.offset;  // KeyLimits::hidden
    const bool causal = lim.causal;
    const int lo = lim.lo;  // read by the window instances only
    // kDropout: Z first, before Sᵀ = K Qᵀ, so that its integer work can issue among the mmas:
    // bit nt·4 + e of `kept` for key k_row0 + warp·16 + g + (e >> 1)·8 of query column
    // nt·8 + t·2 + (e & 1); the thread's two keys have g's parity, so one half of every draw
    // decides (dropout::keeps).
    uint32_t kept[(kQT * 4 + 31) / 32] = {};
    if constexpr (kDropout) {
      if (drop.threshold != 0) {  // 0: key padding without dropout, every P kept
        const int key = k_row0 + warp * 16 + g;
        const uint32_t pair0 = uint32_t(key >> 1) * dropout::kPairStep;
        const uint32_t pair1 = uint32_t((key + 8) >> 1) * dropout::kPairStep;
        // Lanes g and g ^ 1 (lane ^ 4) hold keys 2m and 2m + 1 of one pair for the same queries, so
        // they share its draws: the even lane computes those of its key's pair (h = 0), the odd one
        // those of key + 8's (h = 1), and each takes the other's by a shuffle — half the hashing.
        const bool odd = g & 1;
        const uint32_t pair_mine = odd ? pair1 : pair0;
#pragma unroll
        for (int nt = 0; nt < kQT; ++nt)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const uint32_t rk = *row_key_at(sDq, nt * 8 + t * 2 + c, drop.slot);
            const uint32_t mine = dropout::lowbias32(rk + pair_mine);
            const uint32_t theirs = __shfl_xor_sync(0xffffffffu, mine, 4);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const uint32_t draw = (h == 1) == odd ? mine : theirs;
              const int bit = nt * 4 + h * 2 + c;
              kept[bit / 32] |= (dropout::keeps(draw, key, drop.threshold) ? 1u : 0u) << (bit % 32);
            }
          }
      } else {
#pragma unroll
        for (int w = 0; w < (kQT * 4 + 31) / 32; ++w) kept[w] = ~0u;
      }
    }
    // Sᵀ = K_j Q_iᵀ (this warp's 16 key rows × Br queries).
    float p[kQT][4];
    tile::warp_mma_abt<kD>(p, sK, warp * 16, sQ, lane);
    // Pᵀ = exp(scale·Sᵀ − lse) (Algorithm 4, line 13 with ℓ, m folded into lse).
#pragma unroll
    for (int nt = 0; nt < kQT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qc = nt * 8 + t * 2 + (e & 1);
        float v = tile::exp2_approx(fmaf(p[nt][e], scale_log2, -sLse[qc]));
        if (masked) {
          const int key = k_row0 + warp * 16 + g + (e >> 1) * 8;
          if (KeyLimits<kStacked, kWindow>::hidden(row0, nq, nk, offset, causal, qc, key, lo)) v = 0.f;
        }
        // kDropout: a dropped P is kept as −P (P ≥ 0): dV's A operand is then max(±P, 0) and dS
        // reads both P (its magnitude) and Z (its sign) from the one register.
        if constexpr (kDropout)
          if (!((kept[(nt * 4 + e) / 32] >> ((nt * 4 + e) % 32)) & 1u)) v = -v;
        p[nt][e] = v;
      }
    // dV_j += Pᵀ dO_i (line 16); with dropout (P ∘ Z)ᵀ dO_i, Z's 1 / (1 − p) applied when dV is written.
    tile::warp_mma_acc_b<kD, kQT, T, kDropout>(dv, p, sdO, lane);
    // dPᵀ = V_j dO_iᵀ (line 17), then dSᵀ = Pᵀ ∘ (dPᵀ − D) (line 20), kept in p; with dropout
    // the gradient of P ∘ Z / (1 − p) passed back through Z: Pᵀ ∘ (Z ∘ dPᵀ / (1 − p) − D).
    {
      float dp_acc[kQT][4];
      tile::warp_mma_abt<kD>(dp_acc, sV, warp * 16, sdO, lane);
#pragma unroll
      for (int nt = 0; nt < kQT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float delta = sDelta[nt * 8 + t * 2 + (e & 1)];
          if constexpr (kDropout)
            p[nt][e] = fmaxf(p[nt][e], 0.f) * (dp_acc[nt][e] * drop.scale) - fabsf(p[nt][e]) * delta;
          else
            p[nt][e] *= dp_acc[nt][e] - delta;
        }
    }
    // dK_j += dSᵀ Q_i (line 22; the scale is applied once, when dK is written).
    tile::warp_mma_acc_b<kD>(dk, p, sQ, lane);
    // dSᵀ to shared memory ([key][query]), for dQ_i = dS K_j (line 21), whose inner dimension
    // (keys) is split across warps.
#pragma unroll
    for (int nt = 0; nt < kQT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<uint32_t*>(sdS + tile::swz<kDsCols>(warp * 16 + g + h * 8, nt * 8 + t * 2)) =
            tile::Elem<T>::pack(p[nt][2 * h], p[nt][2 * h + 1]);
    __syncthreads();

    const int slice0 = (warp / kDqSplits) * kDqSlicesPerWarp;
    const int col0 = (warp % kDqSplits) * kDqCols;
#pragma unroll
    for (int chunk = 0; chunk < kDqCols / kDqChunk; ++chunk) {
      float dq[kDqSlicesPerWarp][kDqChunk / 8][4];
#pragma unroll
      for (int s = 0; s < kDqSlicesPerWarp; ++s)
#pragma unroll
        for (int nt = 0; nt < kDqChunk / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) dq[s][nt][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk) {
#pragma unroll
        for (int s = 0; s < kDqSlicesPerWarp; ++s) {
          uint32_t a[4];
          tile::load_a_trans<kDsCols>(a, sdS, (slice0 + s) * 16, kk * 16, lane);
#pragma unroll
          for (int np = 0; np < kDqChunk / 16; ++np) {
            uint32_t b[4];
            tile::load_b_kn<kD>(b, sK, kk * 16, col0 + chunk * kDqChunk + np * 16, lane);
            tile::mma_16816<T>(dq[s][2 * np], a, b[0], b[1]);
            tile::mma_16816<T>(dq[s][2 * np + 1], a, b[2], b[3]);
          }
        }
      }
#pragma unroll
      for (int s = 0; s < kDqSlicesPerWarp; ++s)
#pragma unroll
        for (int nt = 0; nt < kDqChunk / 8; ++nt)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = (slice0 + s) * 16 + g + h * 8;
            const int col = col0 + chunk * kDqChunk + nt * 8 + t * 2;
            *reinterpret_cast<float2*>(sDq + row * kDqStride + col) = make_float2(dq[s][nt][2 * h], dq[s][nt][2 * h + 1]);
          }
    }
    __syncthreads();
  }

  // scale·dK and dv_scale·dV (fused dropout's 1 / (1 − p); else 1) as 16-bit into swizzled [Bc][d]
  // staging tiles.
  __device__ __forceinline__ void stage_dk_dv(T* sdK, T* sdV, float scale, int warp, int lane,
                                              float dv_scale = 1.f) const {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp * 16 + g + h * 8;
        const int col = dt * 8 + t * 2;
        *reinterpret_cast<uint32_t*>(sdK + tile::swz<kD>(row, col)) =
            tile::Elem<T>::pack(dk[dt][2 * h] * scale, dk[dt][2 * h + 1] * scale);
        *reinterpret_cast<uint32_t*>(sdV + tile::swz<kD>(row, col)) =
            tile::Elem<T>::pack(dv[dt][2 * h] * dv_scale, dv[dt][2 * h + 1] * dv_scale);
      }
  }
};

}  // namespace flashio::kernels
