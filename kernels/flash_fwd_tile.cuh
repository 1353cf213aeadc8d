// The forward step shared by flash1 and flash2: for one visited tile (i, j), S = Q_i K_jᵀ on
// tensor cores, the online-softmax update of the running max m and sum ℓ (paper Algorithm 1,
// lines 9–11, in FlashAttention-2's form: O kept unnormalised in fp32 registers) and
// O += P̃ V_j. Warps split the Br rows; each warp owns kMT 16-row slices.
#pragma once
#include <cmath>

#include "kernels/dropout_keep.h"
#include "kernels/key_limits.cuh"
#include "kernels/mma_tile.cuh"

namespace flashio::kernels {

// Warps per forward block: 4 (FlashAttention-2's choice); 2 for Br = 32; 8 when a warp would
// otherwise hold a 32 × 128 score tile and a 32 × 128 output tile (register spills).
constexpr int fwd_warps(int block_r, int block_c, int headdim) {
  if (block_r == 32) return 2;
  if (block_r == 128 && block_c == 128 && headdim == 128) return 8;
  return 4;
}

template <typename T, int kD, int kBr, int kBc, int kWarps>
struct FwdTile {
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMT = kBr / (16 * kWarps);  // 16-row slices per warp
  static constexpr int kNT = kBc / 8;              // 8-column tiles of S
  static constexpr int kDT = kD / 8;               // 8-column tiles of O
  static constexpr int kAccumulatorRegisters = kMT * (kDT + kNT) * 4;  // o and step's s, per thread
  static constexpr int kKeptWords = (kMT * kNT * 4 + 31) / 32;       // fused dropout's Z bits, per thread
  static_assert(kMT >= 1 && kBr % (16 * kWarps) == 0, "Br must split into 16-row warp slices");
  static_assert(kBc % 16 == 0 && kD % 16 == 0, "Bc and d must be multiples of 16");

  // Fused dropout (docs/kernels.md, "Fused dropout"; the rule: kernels/dropout_keep.h), the
  // kDropout instances: the row keys of the rows this thread holds, set once per block
  // (dropout_rows), and the threshold. The step zeroes the dropped probabilities of P̃ before
  // O += P̃ V while ℓ sums them all (paper Algorithm 2, lines 10–13); the 1 / (1 − p) of the kept
  // ones is applied once, to O, before the epilogue (scale_output).
  struct Dropout {
    uint32_t row_key[kMT][2];
    uint32_t threshold;
  };

  float o[kMT][kDT][4];
  float m[kMT][2];  // running max of scale·S·log2 e (base-2 units)
  float l[kMT][2];  // running sum; each lane holds its quarter of the row until finish()

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        m[mt][h] = -INFINITY;
        l[mt][h] = 0.f;
      }
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[mt][dt][e] = 0.f;
    }
  }

  // Row (within the Br tile) of accumulator element (mt, h) of this lane.
  static __device__ __forceinline__ int row_of(int warp, int lane, int mt, int h) {
    return warp * 16 * kMT + mt * 16 + h * 8 + (lane >> 2);
  }

  // One visited tile. lim: the keys the tile's rows see; k_row0: the tile's first key; masked:
  // the tile crosses Nk or the causal diagonal (lim.partial), so scores are checked one by one.
  // kDropout: drop's decisions zero P̃'s dropped elements in O's update (Dropout).
  template <bool kStacked, bool kWindow, bool kDropout = false>
  __device__ __forceinline__ void step(const T* sQ, const T* sK, const T* sV, const KeyLimits<kStacked, kWindow> lim,
                                       int k_row0,
                                       bool masked, float scale_log2, int warp, int lane, const Dropout& drop = {}) {
    // kDropout: Z first, before S = Q Kᵀ, so that its integer work can issue among the mmas.
    uint32_t kept[kKeptWords] = {};
    if constexpr (kDropout) dropout_bits(drop, k_row0, lane, kept);
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;

    // S = Q Kᵀ: A from the Q tile, B from the K tile (stored [key][d], i.e. column-major B).
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) tile::load_a<kD>(a[mt], sQ, warp * 16 * kMT + mt * 16, kk * 16, lane);
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        uint32_t b[4];
        tile::load_b_nk<kD>(b, sK, np * 16, kk * 16, lane);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          tile::mma_16816<T>(s[mt][2 * np], a[mt], b[0], b[1]);
          tile::mma_16816<T>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }

    if (masked) mask_scores(s, lim, k_row0, warp, lane);
    float m_use[kMT][2];
    update_max(s, scale_log2, m_use);

    // P one 16-key slice at a time, each slice going straight into O += P V as the A operand;
    // V tile is [key][d].
    float sum[kMT][2][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) sum[mt][h][0] = sum[mt][h][1] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) exp_to_a<kDropout>(s, mt, kk, m_use, scale_log2, sum, a[mt], kept);
#pragma unroll
      for (int dp = 0; dp < kD / 16; ++dp) {
        uint32_t b[4];
        tile::load_b_kn<kD>(b, sV, kk * 16, dp * 16, lane);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          tile::mma_16816<T>(o[mt][2 * dp], a[mt], b[0], b[1]);
          tile::mma_16816<T>(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
    add_sums(sum);
  }

  // Scores outside the matrix (key ≥ Nk), above the causal diagonal (or a window's right side) or
  // before a window's left side become −inf.
  template <bool kStacked, bool kWindow>
  static __device__ __forceinline__ void mask_scores(float (&s)[kMT][kNT][4], const KeyLimits<kStacked, kWindow> lim,
                                                     int k_row0, int warp, int lane) {
    const int row0 = lim.row0, nq = lim.nq, nk = lim.nk, offset = lim.offset;  // KeyLimits::hidden
    const bool causal = lim.causal;
    const int lo = lim.lo;  // read by the window instances only
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = k_row0 + nt * 8 + (lane & 3) * 2 + (e & 1);
          if (KeyLimits<kStacked, kWindow>::hidden(row0, nq, nk, offset, causal, row_of(warp, lane, mt, e >> 1), col, lo))
            s[mt][nt][e] = -INFINITY;
        }
  }

  // Online softmax (FlashAttention-2, Algorithm 1 lines 8–10), first part: the new row max
  // and 2^(m_old − m_new), and the rescale of the running sum and output — O only when some
  // row of the warp has a new max (warp-uniform branch): after the first few tiles the running
  // max rarely moves. The branch sits before any exponential, so that what follows is one
  // straight-line block: the exponentials of key slice kk+1 (SFU) can issue while the tensor
  // cores run slice kk's O += P V. Each score costs 4·d mma FLOPs but one SFU exponential, and
  // the SFU gives only 16 per clock per SM: at d = 64 it is busy for a large part of the tile,
  // and with two warps per scheduler the time it does not overlap the mma is lost
  // (docs/kernels.md, "Speed").
  __device__ __forceinline__ void update_max(const float (&s)[kMT][kNT][4], float scale_log2,
                                             float (&m_use)[kMT][2]) {
    float alpha[kMT][2];
    bool max_moved = false;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // Two partial maxima halve the dependent FMNMX chain.
        float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kNT; nt += 2) {
          mx0 = fmaxf(mx0, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
          mx1 = fmaxf(mx1, fmaxf(s[mt][nt + 1][2 * h], s[mt][nt + 1][2 * h + 1]));
        }
        const float mx = tile::quad_max(fmaxf(mx0, mx1)) * scale_log2;
        const float m_new = fmaxf(m[mt][h], mx);
        // A row with no visible key yet keeps m = −inf; use 0 so exponents stay −inf, not NaN.
        m_use[mt][h] = m_new == -INFINITY ? 0.f : m_new;
        alpha[mt][h] = tile::exp2_approx(m[mt][h] - m_use[mt][h]);
        max_moved = max_moved || m_new != m[mt][h];
        m[mt][h] = m_new;
        l[mt][h] *= alpha[mt][h];
      }
    }
    if (__any_sync(0xffffffffu, max_moved)) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
          for (int e = 0; e < 4; ++e) o[mt][dt][e] *= alpha[mt][e >> 1];
    }
  }

  // Second part, for key slice kk of row slice mt: P = 2^(scale·S·log2 e − m) as the A
  // fragment of P V (the C layout of two S tiles is the A layout of one k-slice), its row sums
  // in two partial sums per row (shorter FADD chains).
  // kDropout: then the dropped elements of P̃ zeroed (after the sum: ℓ counts them), by the bits
  // dropout_bits left in `kept`.
  template <bool kDropout = false>
  static __device__ __forceinline__ void exp_to_a(float (&s)[kMT][kNT][4], int mt, int kk,
                                                  const float (&m_use)[kMT][2], float scale_log2,
                                                  float (&sum)[kMT][2][2], uint32_t (&a)[4],
                                                  const uint32_t (&kept)[kKeptWords] = {}) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int nt = 2 * kk + half;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = tile::exp2_approx(fmaf(s[mt][nt][e], scale_log2, -m_use[mt][e >> 1]));
        s[mt][nt][e] = p;
        sum[mt][e >> 1][half] += p;
      }
      if constexpr (kDropout) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int bit = (mt * kNT + nt) * 4 + e;
          if (!((kept[bit / 32] >> (bit % 32)) & 1u)) s[mt][nt][e] = 0.f;
        }
      }
    }
    tile::acc_to_a<T>(a, s[mt][2 * kk], s[mt][2 * kk + 1]);
  }

  // Z of this thread's elements of the tile whose first key is k_row0 (even): bit
  // (mt·kNT + nt)·4 + e of `kept` set when s[mt][nt][e] is kept. One draw per pair of adjacent
  // keys of a row (e = 0, 1 and e = 2, 3 of an 8-column tile). Data-independent, so a kernel may
  // compute it while its tensor cores run (the wgmma forward: between S's commit and wait).
  static __device__ __forceinline__ void dropout_bits(const Dropout& drop, int k_row0, int lane,
                                                      uint32_t (&kept)[kKeptWords]) {
    const uint32_t pair_step = pair_step_of(k_row0, lane);
#pragma unroll
    for (int w = 0; w < kKeptWords; ++w) kept[w] = 0;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // The pair of keys (k_row0 + nt·8 + (lane & 3)·2, + 1): pair index + nt·4.
          const uint32_t draw =
              dropout::lowbias32(drop.row_key[mt][h] + pair_step + uint32_t(nt * 4) * dropout::kPairStep);
          const int bit = (mt * kNT + nt) * 4 + 2 * h;
          kept[bit / 32] |= (dropout::keeps_even(draw, drop.threshold) ? 1u : 0u) << (bit % 32);
          kept[bit / 32] |= (dropout::keeps_odd(draw, drop.threshold) ? 2u : 0u) << (bit % 32);
        }
  }

  // The pair draws' offset of this lane's first pair in the key tile starting at k_row0 (even):
  // pair index (k_row0 + (lane & 3)·2) / 2, times the rule's step (dropout::pair_draw).
  static __device__ __forceinline__ uint32_t pair_step_of(int k_row0, int lane) {
    return uint32_t((k_row0 >> 1) + (lane & 3)) * dropout::kPairStep;
  }

  // kDropout: the row keys of this thread's rows. query_of(r) and head_of(r) give tile row r's
  // query and its head's b·H + h.
  template <typename QueryOf, typename HeadOf>
  static __device__ __forceinline__ Dropout dropout_rows(uint64_t seed, uint32_t threshold, int warp, int lane,
                                                         QueryOf query_of, HeadOf head_of) {
    Dropout d;
    d.threshold = threshold;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row_of(warp, lane, mt, h);
        d.row_key[mt][h] = dropout::row_key(seed, head_of(r), query_of(r));
      }
    return d;
  }

  // O ← factor·O: fused dropout's 1 / (1 − p), once before the epilogue.
  __device__ __forceinline__ void scale_output(float factor) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[mt][dt][e] *= factor;
  }

  __device__ __forceinline__ void add_sums(const float (&sum)[kMT][2][2]) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) l[mt][h] += sum[mt][h][0] + sum[mt][h][1];
  }

  // Full row sums (each lane ends with the whole row's ℓ).
  __device__ __forceinline__ void reduce_row_sums() {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) l[mt][h] = tile::quad_sum(l[mt][h]);
  }

  // O / ℓ as 16-bit into a swizzled [Br][d] staging tile (for whole-sector 16-byte stores).
  __device__ __forceinline__ void stage_normalised(T* sO, int warp, int lane) const {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float inv = l[mt][h] > 0.f ? 1.f / l[mt][h] : 0.f;
        const int row = row_of(warp, lane, mt, h);
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt) {
          const int col = dt * 8 + (lane & 3) * 2;
          *reinterpret_cast<uint32_t*>(sO + tile::swz<kD>(row, col)) =
              tile::Elem<T>::pack(o[mt][dt][2 * h] * inv, o[mt][dt][2 * h + 1] * inv);
        }
      }
  }
};

}  // namespace flashio::kernels
