// Public interface of flashio_kernels: the CUDA attention kernels (standard, flash1, flash2),
// forward and backward, for host-only C++ callers (the profiler, `flashio bench`, the tests).
// Includers need no CUDA headers: cudaStream_t is declared below exactly as the runtime does.
//
// What each kernel reads and writes is the contract in docs/schedules.md; how the kernels are
// built (tiles, warps, shared memory) is docs/kernels.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/block_sparse_tiles.h"

// Same declaration as in <driver_types.h>; repeating an identical typedef is legal C++.
typedef struct CUstream_st* cudaStream_t;

namespace flashio::kernels {

// kernels/ depends on nothing else of ours, so it has its own vocabulary; the profiler's typed
// bridge (profiler/kernel_bridge.h) converts between it and flashio::sim's. The spellings match
// sim's ("fp16", "flash2", "fwdbwd") for messages.
enum class DType { fp16, bf16 };
enum class Algo { standard, flash1, flash2 };
enum class Pass { fwd, bwd, fwdbwd };

// Every kernel AttentionRun launches (a cuBLAS GEMM is one launch here although cuBLAS may
// split it into several kernels): the identity the profiler maps to sim::KernelKind.
enum class Launch {
  gemm_qk, mask, softmax, dropout, gemm_pv,  // standard, forward
  gemm_dv, gemm_dp, dropout_bwd, rowsum_do_o, softmax_bwd, gemm_dq, gemm_dk,  // standard, backward
  flash1_fwd, flash1_bwd,
  flash2_fwd, flash2_fwd_combine, flash2_bwd_preprocess, flash2_bwd, flash2_bwd_convert_dq,
  // flash2 over a block mask (AttentionConfig::block_mask): the same kernels' block-sparse
  // instances, the model's blocksparse_* kernels.
  blocksparse_fwd, blocksparse_bwd_preprocess, blocksparse_bwd, blocksparse_bwd_convert_dq,
};

std::string to_string(DType dtype);
std::string to_string(Algo algo);
std::string to_string(Pass pass);
std::string to_string(Launch launch);

// One compiled tiled kernel. pass is fwd or bwd (fwdbwd runs one of each).
// flash2 bwd also launches flash2_bwd_preprocess and flash2_bwd_convert_dq, which take the
// entry's block_r as their row tile; they are not listed separately.
// The kernel family, named by the matrix instruction its GEMMs run on and how its warps are
// organised (a row's `kernel_impl`; `--kernel NAME`): mma.sync m16n8k16 (one warp; sm_80 and
// later); wgmma m64nNk16 (one warpgroup, asynchronous; sm_90a), every warp loading and computing;
// wgmma_ws, warp-specialised (FlashAttention-3's structure, kernels/flash2_fwd_ws.cuh): a producer
// warp feeds TMA copies through an mbarrier pipeline and consumer warpgroups compute, in turn.
enum class MmaKind { mma_sync, wgmma, wgmma_ws };
std::string to_string(MmaKind mma);

struct KernelEntry {
  Algo algo = Algo::flash2;
  Pass pass = Pass::fwd;
  int headdim = 0;
  DType dtype = DType::fp16;
  int block_r = 0;     // Br: query rows per tile
  int block_c = 0;     // Bc: key/value rows per tile
  int threads = 0;     // threads per block
  int smem_bytes = 0;  // dynamic shared memory per block
  int stages = 1;      // buffers of the streamed tiles (2: the next tile's loads overlap this one)
  MmaKind mma = MmaKind::mma_sync;
  // The kernel runs dense attention only (causal or not, grouped-query heads, Nq ≠ Nk, a window's
  // right side): none of the padding mask, dropout, a window's left side, splits, a paged cache,
  // key lengths, varlen, a block mask (the warp-specialised forward).
  bool dense_only = false;
};

// Every tiled kernel built, in a fixed order. standard has no entries (cuBLAS + row kernels;
// any head dimension that is a multiple of 8).
const std::vector<KernelEntry>& registry();
// The entry used when a configuration asks for block_r = block_c = 0 (the fastest measured).
// Throws std::invalid_argument listing what is built when there is none.
const KernelEntry& default_entry(Algo algo, Pass pass, int headdim, DType dtype);
// Human-readable list of what is built for (algo, pass): "d=64 fp16: 64x64 64x128 ...".
std::string supported_tilings(Algo algo, Pass pass);

struct AttentionConfig;
// The kernels AttentionRun::enqueue(pass) launches for `config`, in order (docs/schedules.md's
// order). Pure C++ (kernels/launch_sequence.cpp): it needs no GPU, so the bridge to sim's kernel
// kinds is tested on any machine; enqueue checks that it launched exactly these.
std::vector<Launch> launch_sequence(const AttentionConfig& config, Pass pass);
// How many library calls `launch` makes for `config`: standard's GEMMs call cuBLAS twice when N
// is not a multiple of 8 (standard_gemm_calls, kernels/standard_layout.h), every other
// launch is one kernel launch. The profiler attributes captured launches with it.
int library_calls(const AttentionConfig& config, Launch launch);

struct AttentionConfig {
  int64_t batch = 1, heads = 1, seqlen = 128, headdim = 64;  // layout (B, H, N, d) contiguous
  // Grouped-query attention and Nq ≠ Nk (flash2 only; docs/shapes.md): kv_heads K/V heads
  // (dividing heads; 0 = heads), seqlen_k keys (0 = seqlen, which is then Nq); K, V, dK, dV are
  // (B, Hkv, Nk, d); causal aligns bottom-right. gqa_pack: the forward's blocks take a group's
  // query heads stacked (as the model's gqa_pack; the backward always does).
  int64_t kv_heads = 0, seqlen_k = 0;
  bool gqa_pack = true;
  DType dtype = DType::fp16;
  Algo algo = Algo::flash2;
  bool causal = false;
  // The key-padding mask (--mask, as in sim::Problem) with per-batch key lengths
  // len_b = Nk − ⌊b·Nk / (2B)⌋ (no mask tensor): standard runs it as a separate pass over S;
  // flash1 and flash2 as those key_lengths (below; not with causal or key_lengths of its own).
  bool mask = false;
  // Dropout with probability p on P (kernels/dropout_keep.h's rule, p rounded to a multiple of
  // 2^-16): standard's separate passes; flash1 and flash2 fuse it into their tiles, forward and
  // backward (docs/kernels.md, "Fused dropout and key padding"; not with a window, block mask,
  // splits or pages).
  double dropout = 0.0;
  // Tiling of the forward kernel; 0 × 0 = default_entry(). The backward uses the same tiling
  // unless bwd_block_r/bwd_block_c are set (the model assumes one tiling for both passes).
  int block_r = 0, block_c = 0;
  int bwd_block_r = 0, bwd_block_c = 0;
  // Split-KV (flash2's forward only; docs/kernels.md, "Split-KV"): the forward's key tiles are cut
  // into `splits` ranges, each row tile's blocks run one range and write fp32 partial results,
  // and flash2_fwd_combine merges them into O and lse. 1 = the single forward kernel; at most
  // the forward's ⌈Nk / Bc⌉ key tiles.
  int64_t splits = 1;
  // A paged KV cache (flash2's forward only; docs/kernels.md, "Paged KV cache"): K and V also
  // stored in pages of page_size tokens (a multiple of 16), (pages, Hkv, P, d), in the block table
  // sim/paged_kv.h defines, and the forward reads those. 0: contiguous. The inputs and
  // copy_inputs() stay (B, Hkv, Nk, d); the pages hold the same values.
  int64_t page_size = 0;
  // Per-sequence key lengths (flash2's forward and backward, flash1's; docs/kernels.md,
  // "KV-cache instances" and "Fused dropout and key padding"): one per sequence, each 1 … Nk
  // (causal: ≥ Nq); sequence b attends to its first key_lengths[b] keys, and the backward's dK, dV
  // of its later keys are zero. Empty: every sequence has Nk.
  std::vector<int64_t> key_lengths;
  // Variable-length batches (flash2, forward and backward; docs/kernels.md, "Variable-length
  // batches"): key_lengths are the sequences' own lengths n_b (queries and keys alike, each 1 … seqlen),
  // packed without padding: sequence b's (H, n_b, d) rows of Q, O, dO, dQ and (Hkv, n_b, d) of K, V,
  // dK, dV follow sequence b − 1's (cumulative offsets cu_b = Σ_{b' < b} n_b', as FlashAttention-2's
  // varlen API; its heads are innermost, ours outermost within a sequence), lse (H, n_b) likewise.
  // Inputs and outputs (HostInputs, HostOutputs) are in that packed layout.
  bool varlen = false;
  // A sliding window (as sim::Problem's, sim/key_band.h): query q sees keys q + o − window_left …
  // q + o + window_right, o = Nk − Nq; −1: that side unbounded. flash2 (forward and backward)
  // and standard; not with causal's own right side, splits, pages or key lengths.
  int64_t window_left = -1, window_right = -1;
  // Block-sparse FlashAttention (flash2, forward and backward; kernels/block_sparse_tiles.h): the
  // mask on blocks of T × T tokens; each pass's blocks visit only the tiles of nonzero blocks.
  // Needs Br and Bc dividing T, Hkv = H, Nk = Nq, and no splits, pages, key lengths or window.
  // Empty: dense.
  TokenBlockMask block_mask;
  // The forward's kernel family (KernelEntry::mma; `--kernel`): unset, the registered kernel of
  // the tiling (at 0 × 0 the default) that runs the configuration. A family asked for that lacks
  // the tiling or one of the configuration's variants is refused (std::invalid_argument, one
  // line naming `kernel`).
  std::optional<MmaKind> kernel;
  // The backward's kernel family (mma_sync or wgmma), as `kernel` for the backward's tiling.
  std::optional<MmaKind> bwd_kernel;
};

// K/V heads and keys of a configuration (its kv_heads, seqlen_k, or the defaults).
int64_t kv_heads_of(const AttentionConfig& config);
int64_t keys_of(const AttentionConfig& config);

// Outputs copied back to the host as float (16-bit values widened exactly). Empty when the
// pass that writes them has not run. o, dq are (B, H, Nq, d), dk, dv (B, Hkv, Nk, d).
// lse is (B, H, Nq) natural-log log-sum-exp of scale·QKᵀ;
// flash1 stores ℓ and m instead, so its lse is m + log ℓ; standard writes none.
struct HostOutputs {
  std::vector<float> o, lse, dq, dk, dv;
};
struct HostInputs {
  std::vector<float> q, k, v, dout;  // the 16-bit values the kernels saw, widened (shapes as above)
};

// Owns the device buffers of one configuration. Throws std::invalid_argument (one line naming
// the field and what is supported) for an unsupported configuration, std::runtime_error for a
// CUDA failure. Not copyable. Uses the current CUDA device.
class AttentionRun {
 public:
  explicit AttentionRun(const AttentionConfig& config);
  ~AttentionRun();
  AttentionRun(const AttentionRun&) = delete;
  AttentionRun& operator=(const AttentionRun&) = delete;

  const AttentionConfig& config() const;
  // The tiled kernels in use (algo standard: none).
  const KernelEntry* forward_entry() const;
  const KernelEntry* backward_entry() const;

  // Q, K, V, dO ← independent N(0, 1) draws from a counter-based generator keyed by seed
  // (synchronous). Forgets earlier forward outputs.
  void fill_inputs(uint64_t seed);
  // Fills the outputs of `pass` (O, LSE / ℓ, m for fwd; dQ, dK, dV for bwd) with NaN, so an
  // element a kernel fails to write shows up (synchronous).
  void poison_outputs(Pass pass);
  // Enqueues the kernels of `pass` on `stream`, in docs/schedules.md's order, and returns what
  // it launched: launch_sequence(config(), pass). bwd needs a forward enqueued since fill_inputs
  // (throws std::logic_error otherwise). Checks every launch.
  std::vector<Launch> enqueue(Pass pass, cudaStream_t stream = nullptr);

  HostOutputs copy_outputs() const;  // synchronous
  HostInputs copy_inputs() const;    // synchronous
  // The seed of dropout's keep decisions (kernels/dropout_keep.h), derived from fill_inputs'
  // seed: a reference regenerates the kernels' decisions with it.
  uint64_t dropout_seed() const;

  struct State;  // defined in the .cu files

 private:
  State* state_;
};

// True when a CUDA device is present and usable (tests exit 77 otherwise).
bool gpu_available();

}  // namespace flashio::kernels
