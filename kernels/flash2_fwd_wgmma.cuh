// flash2_fwd on Hopper's warpgroup mma (wgmma, sm_90a): the same schedule as flash2_fwd.cuh
// (docs/schedules.md, "flash2": one block per row tile i, grid (Tr, H or Hkv, B), Q_i read once, K_j
// and V_j streamed in ascending j through a two-stage cp.async pipeline, O_i and lse_i written
// once), so the model's counts are the same; only the arithmetic differs. Each warpgroup (4
// warps) owns 64 rows of the Br = 128 tile:
//   S = Q Kᵀ   wgmma with Q and K read from shared memory (d/16 instructions of 64 × Bc × 16);
//   softmax    on the S accumulators, in FwdTile's code (its layout is m16n8's, warp by warp);
//   O += P V   P's fragments from registers, V from shared memory as an N-major operand,
//              issued one 16-key slice at a time as soon as that slice's exponentials are done,
//              so the SFU works while the tensor cores run.
// wgmma is asynchronous and needs no ldmatrix fragments of K and V in registers, which is what
// limited the mma.sync kernel at d = 128 (docs/kernels.md, "Speed").
#pragma once
#include "kernels/flash2_fwd.cuh"
#include "kernels/flash_fwd_tile.cuh"
#include "kernels/launch.h"
#include "kernels/wgmma.cuh"

namespace flashio::kernels {

template <typename T, int kD, int kBr, int kBc>
struct Flash2FwdWgmma {
  static_assert(kBr == 128 && (kBc == 64 || kBc == 128) && (kD == 64 || kD == 128),
                "wgmma forward: Br = 128 (two warpgroups), Bc 64 or 128, d 64 or 128");
  static constexpr int kWarps = kBr / 16;  // 16 rows per warp, 64 per warpgroup
  using Tile = FwdTile<T, kD, kBr, kBc, kWarps>;
  static_assert(Tile::kMT == 1, "one 16-row slice per warp");
  static constexpr int kThreads = Tile::kThreads;
  // Q tile + two stages of K and V tiles, plus room to align them to 1024 B (swizzle atoms).
  static constexpr int kSmemBytes = (kBr * kD + 4 * kBc * kD) * 2 + 1024;
  static constexpr int kStages = 2;  // K, V double-buffered
  static constexpr MmaKind kMma = MmaKind::wgmma;
  static_assert(kBc * kD * 2 >= kBr * 4, "lse staging must fit in one K stage");
  // Resident blocks per SM the register allocation must allow: at d = 64, S, O and P's
  // fragments of a 128 × 64 tile take 80 registers, so two 8-warp blocks fit.
  static constexpr int kMinBlocks = kD == 64 && kBc == 64 ? 2 : 1;
};

// kStacked, kSplit, kPaged, kWindow, kSparse, kDropout: as flash2_fwd_kernel's (stacked rows; one split of the key tiles, writing
// partial results: docs/kernels.md, "Split-KV"; a paged KV cache), each an instance of its own.
template <typename T, int kD, int kBr, int kBc, bool kStacked, bool kSplit, bool kPaged = false, bool kWindow = false,
          bool kSparse = false, bool kDropout = false>
__global__ void __launch_bounds__(Flash2FwdWgmma<T, kD, kBr, kBc>::kThreads, Flash2FwdWgmma<T, kD, kBr, kBc>::kMinBlocks)
    flash2_fwd_wgmma_kernel(const FlashParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = Flash2FwdWgmma<T, kD, kBr, kBc>;
  using Tile = typename K::Tile;
  constexpr int kThreads = K::kThreads;
  using QLayout = wg::AtomSwizzled<kBr>;
  using KVLayout = wg::AtomSwizzled<kBc>;
  extern __shared__ uint4 smem_raw[];
  // Swizzle atoms must start on 1024-byte boundaries of the shared window.
  const uint32_t raw = tile::smem_addr(smem_raw);
  T* sQ = reinterpret_cast<T*>(reinterpret_cast<char*>(smem_raw) + (((raw + 1023) & ~1023u) - raw));
  T* sK = sQ + kBr * kD;
  T* sV = sK + 2 * kBc * kD;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int warpgroup = warp / 4;
  constexpr bool kPackable = kPaged && !kSplit && !kDropout;  // as flash2_fwd_kernel's
  const Flash2FwdRowTile<T, kD, kBr, kBc, kStacked, kSplit, kPaged, kWindow, kSparse, kPackable> t(p);
  if constexpr (kPackable)
    if (t.rows <= 0) return;  // a row tile past its (variable-length) sequence's rows (flash2_fwd_kernel)
  const int nk = t.nk, rows = t.rows, j_last = t.j_last;
  const T *q = t.q, *k = t.k, *v = t.v;
  const int* const key_tiles = t.key_tiles(p);
  const float scale_log2 = p.scale * tile::kLog2e;

  if (!kSplit || j_last >= 0) {  // an empty split copies nothing, an empty sparse row tile Q_i (flash2_fwd_kernel)
    tile::load_tile_async<kBr, kD, kThreads, T, QLayout>(sQ, q, rows, tid);
    if (!kSparse || j_last >= 0) {
      const int k_row = (kSparse ? __ldg(key_tiles) : 0) * kBc;
      load_kv_tiles<kBc, kD, kThreads, T, KVLayout, kPaged>(sK, sV, k, v, k_row, min(kBc, nk - k_row), tid, t, p);
    }
    tile::cp_async_commit();
  }
  if (j_last >= 1) {
    const int k_row = (kSparse ? __ldg(key_tiles + 1) : 1) * kBc;
    const int cols = min(kBc, nk - k_row);
    load_kv_tiles<kBc, kD, kThreads, T, KVLayout, kPaged>(sK + kBc * kD, sV + kBc * kD, k, v, k_row, cols, tid, t, p);
    tile::cp_async_commit();
  }

  // Descriptor offsets. Q and K are K-major operands (k = d along a row): a 16-wide k step is
  // 32 B inside a 64-wide panel, a new panel every 4 steps. V is the N-major B of P V: a
  // 16-key step is 16 rows (2 KiB); its d panels are kBc rows apart.
  constexpr uint32_t kAtomBytes = 1024;
  const T* q_wg = sQ + warpgroup * 64 * 64;  // this warpgroup's 64 rows in each panel

  Tile acc;
  acc.init();
  const typename Tile::Dropout drop = flash2_fwd_dropout<kDropout, Tile>(p, t, warp, lane);
  float s[1][Tile::kNT][4];
  float(&s_flat)[kBc / 2] = reinterpret_cast<float(&)[kBc / 2]>(s);
  float(&o_flat)[kD / 2] = reinterpret_cast<float(&)[kD / 2]>(acc.o);
  for (int j = 0; j <= j_last; ++j) {
    const int stage = j & 1;
    wait_for_kv_tile(j, j_last);
    wg::fence_proxy_async();  // this thread's cp.async writes, before wgmma reads them
    __syncthreads();
    if (j >= 1 && j < j_last) {
      const int k_row = (kSparse ? __ldg(key_tiles + j + 1) : j + 1) * kBc;
      const int cols = min(kBc, nk - k_row);
      load_kv_tiles<kBc, kD, kThreads, T, KVLayout, kPaged>(sK + (stage ^ 1) * kBc * kD, sV + (stage ^ 1) * kBc * kD, k,
                                                             v, k_row, cols, tid, t, p);
      tile::cp_async_commit();
    }
    const T* sKs = sK + stage * kBc * kD;
    const T* sVs = sV + stage * kBc * kD;

    // S = Q Kᵀ (the first step overwrites S: scale_d = 0).
    const int k_row0 = (kSparse ? __ldg(key_tiles + j) : j) * kBc;
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const uint64_t qd = wg::sw128_desc(q_wg + (kk / 4) * (kBr * 64) + (kk % 4) * 16, 16, kAtomBytes);
      const uint64_t kd = wg::sw128_desc(sKs + (kk / 4) * (kBc * 64) + (kk % 4) * 16, 16, kAtomBytes);
      wg::wgmma_ss<T, kBc>(s_flat, qd, kd, kk > 0);
    }
    wg::commit();
    // kDropout: Z while the tensor cores run S (it depends on no data).
    uint32_t kept[Tile::kKeptWords] = {};
    if constexpr (kDropout) Tile::dropout_bits(drop, k_row0, lane, kept);
    wg::wait<0>();

    if (t.lim.partial(rows, k_row0, kBc)) Tile::mask_scores(s, t.lim, k_row0, warp, lane);
    float m_use[1][2];
    acc.update_max(s, scale_log2, m_use);

    float sum[1][2][2] = {{{0.f, 0.f}, {0.f, 0.f}}};
    // One fragment array per key slice: an issued wgmma reads its A registers until the wait.
    uint32_t a[kBc / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      Tile::template exp_to_a<kDropout>(s, 0, kk, m_use, scale_log2, sum, a[kk], kept);
      wg::fence();  // a[kk] (and, at kk = 0, the rescaled O) written since the last wgmma
      wg::wgmma_rs_tn<T, kD>(o_flat, a[kk], wg::sw128_desc(sVs + kk * 16 * 64, kBc * 128, kAtomBytes));
    }
    wg::commit();
    acc.add_sums(sum);
    wg::wait<0>();  // O complete before the next rescale, and V's stage free for the prefetch
  }
  if constexpr (kSparse)  // an empty block-sparse row tile: its Q_i copy before O is staged over it
    if (j_last < 0) tile::cp_async_wait<0>();
  if constexpr (kDropout) acc.scale_output(p.dropout_scale);
  if constexpr (kSplit) {
    flash2_fwd_split_epilogue<kD>(acc, p, t, warp, lane);
  } else {
    __syncthreads();  // the epilogue stages O over Q and lse over K, which other warps may still read
    flash2_fwd_epilogue<kBr, kD, kThreads>(acc, sQ, sK, p, t, warp, lane, tid);
  }
#endif
}

template <typename T, int kD, int kBr, int kBc>
FlashImpl flash2_fwd_wgmma_impl(DType dtype) {
  using K = Flash2FwdWgmma<T, kD, kBr, kBc>;
  return FlashImpl{KernelEntry{Algo::flash2, Pass::fwd, kD, dtype, kBr, kBc, K::kThreads, K::kSmemBytes, K::kStages, K::kMma},
                   &launch_flash2_fwd<K, kBr, flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, false, false>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, true, false>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, false, true>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, true, true>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, true, false, true>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, true, true, true>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, true, false, false, true>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, false, false, false, false, true>,
                                      flash2_fwd_wgmma_kernel<T, kD, kBr, kBc, true, false, true, false, false, true>,
                                      launch_flash2_fwd_combine<T, kD>>};
}

}  // namespace flashio::kernels
