// Internal to flashio_kernels: the arguments every tiled kernel takes, the table of compiled
// kernels behind registry(), and the one CUDA error check.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention.h"

namespace flashio::kernels {

// Throws std::runtime_error naming the call, file and line; used on every CUDA call and after
// every launch (cudaGetLastError), so no failure passes silently.
inline void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error: ") + what + " failed at " + file + ":" +
                             std::to_string(line) + ": " + cudaGetErrorString(status));
  }
}
#define FLASHIO_CUDA_CHECK(call) ::flashio::kernels::check_cuda((call), #call, __FILE__, __LINE__)
#define FLASHIO_LAUNCH_CHECK(name) \
  ::flashio::kernels::check_cuda(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)

// Raises kKernel's dynamic shared-memory limit to `bytes` (above 48 KiB a kernel must opt in),
// once per kernel: on its first launch.
template <auto kKernel>
void opt_in_dynamic_smem(int bytes) {
  static bool done = false;
  if (!done) {
    FLASHIO_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kKernel),
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    done = true;
  }
}

// Pointers are device pointers; 16-bit tensors are contiguous: Q, O, dO, dQ (B, H, Nq, d), K, V,
// dK, dV (B, Hkv, Nk, d). Statistics (lse, ℓ, m, delta) are fp32 with a per-(b, h) stride of
// stats_stride ≥ Nq floats, a multiple of 32, so each head's statistics start on a 128-byte line
// and stores fill whole sectors. Query head h reads K/V head h / (H / Hkv) (docs/shapes.md).
struct FlashParams {
  int batch = 0, heads = 0, seqlen = 0;  // seqlen: Nq
  int kv_heads = 0, seqlen_k = 0;        // Hkv (divides H), Nk
  int causal_offset = 0;                 // Nk − Nq: query q sees keys ≤ q + offset (bottom-right)
  // flash2's forward: a block takes the rows of a K/V head's group, the g = H / Hkv query heads
  // stacked (g·Nq rows; grid (⌈g·Nq / Br⌉, Hkv, B)), instead of one query head's (grid
  // (⌈Nq / Br⌉, H, B)). The backward always takes a group's rows (sim/config.h, gqa_pack).
  bool group_rows = false;
  int stats_stride = 0;
  bool causal = false;
  float scale = 0.f;  // 1/√d, folded into the exponent (times log2 e)
  // forward
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;      // flash2
  float* row_sum = nullptr;  // flash1: ℓ
  float* row_max = nullptr;  // flash1: m (natural-log units of scale·S)
  // flash1: running O, fp32, normalised (Algorithm 1, line 12). flash2 with splits > 1: the
  // splits' partial outputs, fp32 [S][B][H][Nq][d], each normalised by its split's row sum.
  float* o_accum = nullptr;
  // backward
  const void* dout = nullptr;
  float* delta = nullptr;     // flash2: rowsum(dO ∘ O)
  float* dq_accum = nullptr;  // fp32
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // flash2's split-KV (docs/kernels.md, "Split-KV"): key splits of the forward (1: no split) and the
  // splits' natural-log lse, fp32 [S][B][H][Nq] (no padding; −inf for a split a row does not see).
  // Last, so that the other fields keep their offsets in the kernels' parameter block (their
  // loads, and with them ptxas's allocation, stay as they were).
  int splits = 1;
  float* lse_accum = nullptr;
  // A paged KV cache (docs/kernels.md, "Paged KV cache"; sim/paged_kv.h), the forward only: k and v
  // are (pages, Hkv, P, d) and sequence b's key j lies in page block_table[b·pages_per_seq + j / P].
  // null: k and v are (B, Hkv, Nk, d).
  const int* block_table = nullptr;
  int page_size = 0, pages_per_seq = 0;
  // Per-sequence key lengths (docs/kernels.md, "KV-cache instances"), the forward only: sequence b
  // attends to its first seqlens_k[b] keys of the seqlen_k-key cache. null: every sequence seqlen_k.
  const int* seqlens_k = nullptr;
  // A sliding window (docs/kernels.md, "Sliding windows"; sim/key_band.h): its right side R is
  // causal with causal_offset = Nk − Nq + R; its left side L, here, runs the window instances
  // (kernels/key_limits.cuh, kWindow): query q sees keys ≥ q + window_lo, window_lo = Nk − Nq − L.
  bool window_left = false;
  int window_lo = 0;
  // Block-sparse (docs/kernels.md, "Block-sparse kernels"; kernels/block_sparse_tiles.h): the
  // forward's row tile i visits column tiles fwd_tiles[fwd_tile_offsets[i] .. [i + 1]), the
  // backward's column tile j the row tiles bwd_tiles[bwd_tile_offsets[j] .. [j + 1]), ascending,
  // each tile whole (inside one nonzero mask block). null: dense.
  const int* fwd_tile_offsets = nullptr;
  const int* fwd_tiles = nullptr;
  const int* bwd_tile_offsets = nullptr;
  const int* bwd_tiles = nullptr;
  // Fused dropout (docs/kernels.md, "Fused dropout"; the rule: kernels/dropout_keep.h), flash1 and
  // flash2, forward and backward: the keep threshold round(p·2^16) (0: no dropout, the instances
  // without it run), the seed of the row keys, and 1 / (1 − p) for the kept probabilities.
  uint32_t dropout_threshold = 0;
  uint64_t dropout_seed = 0;
  float dropout_scale = 1.f;
  // Variable-length batches (docs/kernels.md, "Variable-length batches"): sequence b's n_b =
  // cu_seqlens[b + 1] − cu_seqlens[b] queries and keys, packed (AttentionConfig::varlen): its query
  // head h's rows start at row H·cu_seqlens[b] + h·n_b of Q, O, dO, dq_accum, lse and delta, its K/V
  // head's at Hkv·cu_seqlens[b] + kvh·n_b of K, V, dK, dV; seqlen = seqlen_k = the longest n_b (the
  // grids' bound) and seqlens_k = the n_b, so that the KV-cache forward and the kDropout backward
  // instances run it (the only ones that read this; a block past its sequence's rows exits).
  // null: the padded layout.
  const int* cu_seqlens = nullptr;
};

using LaunchFn = void (*)(const FlashParams&, cudaStream_t);

struct FlashImpl {
  KernelEntry entry;
  LaunchFn launch = nullptr;
};

// Filled by the instance files (one per algorithm, pass and head dimension, so that nvcc
// compiles them in parallel); registry.cpp concatenates them.
void append_flash2_fwd_d64(std::vector<FlashImpl>& out);
void append_flash2_fwd_d128(std::vector<FlashImpl>& out);
void append_flash2_fwd_ws(std::vector<FlashImpl>& out);  // after the others: unasked, a tiling's earlier kernel runs
void append_flash2_bwd_d64(std::vector<FlashImpl>& out);
void append_flash2_bwd_d128(std::vector<FlashImpl>& out);
void append_flash2_bwd_wgmma(std::vector<FlashImpl>& out);  // after the others, as the ws forward
void append_flash1_fwd_d64(std::vector<FlashImpl>& out);
void append_flash1_fwd_d128(std::vector<FlashImpl>& out);
void append_flash1_bwd_d64(std::vector<FlashImpl>& out);
void append_flash1_bwd_d128(std::vector<FlashImpl>& out);

const std::vector<FlashImpl>& flash_impls();
// The implementation for (algo, pass, d, dtype, Br, Bc) of the given family (any when unset; the
// first registered of the tiling that runs the problem), or an exception listing what exists.
// dense: the problem has none of the variants a dense-only kernel (KernelEntry::dense_only)
// lacks (runs_only_dense).
const FlashImpl& find_impl(Algo algo, Pass pass, int headdim, DType dtype, int block_r, int block_c,
                           std::optional<MmaKind> family = std::nullopt, bool dense = true);
bool runs_only_dense(const AttentionConfig& config);

}  // namespace flashio::kernels
