// The forward step shared by flash1 and flash2: for one visited tile (i, j), S = Q_i K_jᵀ on
// tensor cores, the online-softmax update of the running max m and sum ℓ (paper Algorithm 1,
// lines 9–11, in FlashAttention-2's form: O kept unnormalised in fp32 registers) and
// O += P̃ V_j. Warps split the Br rows; each warp owns kMT 16-row slices.
#pragma once
#include <cmath>

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
  static_assert(kMT >= 1 && kBr % (16 * kWarps) == 0, "Br must split into 16-row warp slices");
  static_assert(kBc % 16 == 0 && kD % 16 == 0, "Bc and d must be multiples of 16");

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

  // One visited tile. q_row0/k_row0: global row of the tile's first query/key; masked: the
  // tile crosses N or the causal diagonal, so scores are checked element by element.
  __device__ __forceinline__ void step(const T* sQ, const T* sK, const T* sV, int q_row0, int k_row0, int n,
                                       bool causal, bool masked, float scale_log2, int warp, int lane) {
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

    if (masked) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = q_row0 + row_of(warp, lane, mt, e >> 1);
            const int col = k_row0 + nt * 8 + (lane & 3) * 2 + (e & 1);
            if (col >= n || (causal && col > row)) s[mt][nt][e] = -INFINITY;
          }
    }

    // Online softmax (FlashAttention-2, Algorithm 1 lines 8–10): new max, rescale the running
    // sum and output by 2^(m_old − m_new), add this tile's probabilities. O is rescaled only
    // when some row of the warp has a new max (warp-uniform branch): after the first few
    // tiles the running max rarely moves, and the rescale is 4·d/8 multiplies per row pair.
    float alpha[kMT][2];
    bool max_moved = false;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
        mx = tile::quad_max(mx) * scale_log2;
        const float m_new = fmaxf(m[mt][h], mx);
        // A row with no visible key yet keeps m = −inf; use 0 so exponents stay −inf, not NaN.
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        alpha[mt][h] = tile::exp2_approx(m[mt][h] - m_use);
        max_moved = max_moved || m_new != m[mt][h];
        m[mt][h] = m_new;
        float row_sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float p = tile::exp2_approx(fmaf(s[mt][nt][2 * h + e], scale_log2, -m_use));
            s[mt][nt][2 * h + e] = p;
            row_sum += p;
          }
        }
        l[mt][h] = l[mt][h] * alpha[mt][h] + row_sum;
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

    // O += P V: P from registers (C layout of S is the A layout), V tile is [key][d].
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) tile::acc_to_a<T>(a[mt], s[mt][2 * kk], s[mt][2 * kk + 1]);
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
