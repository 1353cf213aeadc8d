// Config: one configuration the model (or a kernel) runs: algorithm, problem, hardware, M and
// tiling. The CLI sweeps produce lists of these; every row's key columns come from one.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/block_mask.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_kind.h"
#include "sim/problem.h"
#include "sim/tensor.h"
#include "sim/tiling.h"

namespace flashio::sim {

// Where a configuration's tiling came from.
enum class TilingSource {
  rule,    // the paper's rule from M (rule_tiling), the model's default
  kernel,  // the built kernels' default for the pass (sim/kernel_catalog.h), what the GPU runs
  given,   // Br and/or Bc given by the user (the other, if not given, from the rule)
  best,    // the built tiling the time model predicts fastest for each pass (sim/tiling_advisor.h)
};
std::string to_string(TilingSource source);
std::optional<TilingSource> parse_tiling_source(std::string_view text);  // "rule", "kernel", "best"

// What the caller asks of the tiling: how to choose it, and the parts given outright.
struct TilingRequest {
  TilingSource choose = TilingSource::rule;  // rule, kernel or best
  std::optional<int64_t> block_r, block_c;   // given parts override the choice
  // The forward kernel's family (Config::kernel_impl, which make_config sets from it): `best`
  // chooses among that family's kernels; `kernel` takes the default tiling whatever it is.
  std::optional<MmaKind> kernel_impl;
};

struct Config {
  Algo algo = Algo::flash2;
  Problem problem;
  Hardware hw;             // hw.name is the `hw` key column
  int64_t sram_bytes = 0;  // M in bytes; the preset's hw.sram_bytes by default
  Tiling tiling;           // the forward's (and, unless bwd_tiling is set, the backward's)
  TilingSource tiling_source = TilingSource::rule;
  // The backward kernels' tiling when it differs from the forward's: only TilingSource::kernel
  // and best set it, where the built kernels' defaults differ per pass. Rows carry `tiling` as their key
  // (as measured rows carry the forward kernel's), so a fwdbwd prediction joins the profile.
  std::optional<Tiling> bwd_tiling;
  BlockMaskSpec block_mask;  // blocksparse only
  // Grouped-query attention (docs/shapes.md): whether a kernel whose output is per query head
  // (the forward; standard's gemm_qk, gemm_pv, gemm_dp, gemm_dq) gives each thread block rows of
  // all g query heads of a K/V head's group, so that a K/V tile is read once for the group (1),
  // or the rows of one query head, each head reading its group's K/V (0). The kernels whose
  // output is per K/V head (dK, dV) always take the group's rows and sum over it on chip. No
  // effect without grouping (Hkv = H).
  bool gqa_pack = true;
  // Split-KV (docs/shapes.md, "Split-KV"): flash2's forward splits each row tile's key tiles into
  // S chunks of ⌈Tc / S⌉ tiles, each run by a thread block of its own that writes its partial O
  // and lse (fp32, o_accum and lse_accum), which the combine kernel merges. 1: no split (one
  // kernel, as without this option). At most Tc = ⌈Nk / Bc⌉.
  int64_t splits = 1;
  // A paged KV cache (docs/shapes.md, "Paged KV cache"; sim/paged_kv.h): K and V in pages of
  // page_size tokens reached through a block table, which flash2's forward reads for each K/V
  // tile (the entries of the pages the tile touches). 0: the contiguous layout. A multiple of
  // kPageSizeMultiple; the forward only (a cache is read by inference).
  int64_t page_size = 0;
  // The family of the forward's built kernel (sim/kernel_choice.h; `--kernel`, a row's
  // kernel_impl): the entry of that family at the forward's tiling, which validate refuses when
  // none is built or it does not run the configuration. nullopt: the first entry of the tiling that
  // runs it (as the kernels pick). The family is the forward's only: the backward runs its own
  // tiling's entry (sim/kernel_choice.h, built_kernel; wgmma at its default tiling of a dense
  // problem, else mma_sync), and a backward alone still runs the forward first (forward_tiling).
  std::optional<MmaKind> kernel_impl;
};

// Whether the configuration reads a KV cache of its own layout, so that Config::page_size
// applies: flash2's forward pass (`--pass fwd`); every other algorithm and pass reads whole
// contiguous K and V. (Per-sequence key lengths run in more: takes_key_lengths.)
inline bool reads_kv_cache(const Config& config) {
  return config.algo == Algo::flash2 && config.problem.pass == Pass::fwd;
}
// Throws InvalidInput (Field::page_size) unless `page_size` is 0 (contiguous) or a positive
// multiple of kPageSizeMultiple (sim/paged_kv.h): the one check the front ends' parsers call too.
void validate_page_size(int64_t page_size);

// Per-sequence key lengths (docs/shapes.md, "Per-sequence key lengths"): flash1 and flash2 run
// them, forward and backward (sequence b attends to its first Nk_b keys, causal bottom-right in
// them), given (Problem::key_lengths) or, with Problem::mask, the mask's built-in padding lengths
// key_padding_length(b, B, Nk) (sim/problem.h), as the kernels build them (kernels/attention_run.cu).
// standard's mask is a pass of its own over every score: its sequences keep Nk keys here.
inline bool takes_key_lengths(const Config& config) {
  return config.algo == Algo::flash1 || config.algo == Algo::flash2;
}
// Whether some sequence may have fewer than Nk keys: key lengths given, or the mask's padding in
// flash1 or flash2.
inline bool pads_keys(const Config& config) {
  return !config.problem.key_lengths.empty() || (config.problem.mask && takes_key_lengths(config));
}
// Whether kernel `kind` of the configuration runs its instance for fused dropout and key padding
// (BuiltKernel::dropout_registers): flash1's kernels and flash2's backward run it whenever dropout
// or key lengths are given (kernels/flash1.cuh, flash2_bwd.cuh: FlashParams::seqlens_k set, even
// with every length Nk), flash2's forward with dropout (with key lengths alone its KV-cache one).
bool runs_dropout_instance(const Config& config, KernelKind kind);
// Whether the models take, for kernel `kind`, the registers of flash2's forward KV-cache instance
// (kPaged: BuiltKernel::paged_registers, paged_split_registers): over a paged cache, and over a
// varlen batch's packed sequences (kernels/flash2_fwd.cuh reads their offsets there). Per-sequence
// key lengths alone run it too, but the models keep the dense instance's registers there, so that
// lengths all Nk predict exactly the time without them (docs/shapes.md, "Per-sequence key lengths").
bool runs_kv_cache_instance(const Config& config, KernelKind kind);
// Sequence b's keys as the configuration runs it: the one rule every model function of the tiled
// algorithms reads (Nk without padding).
int64_t sequence_keys(const Config& config, int64_t b);
// The batch in runs of consecutive sequences of one key length, in batch order, by sequence_keys;
// empty when !pads_keys. O(runs), not O(B), for the mask's lengths (B may be huge). Throws
// InvalidInput (Field::key_lengths, or Field::mask for the mask's) past kMaxKeyLengthRuns runs
// (sim/limits.h).
std::vector<KeyLengthRun> key_length_runs(const Config& config);
// The configuration one sequence of `keys` keys runs (per-sequence key lengths): Nk = keys, no
// lengths and no padding mask; in a varlen batch (Problem::varlen) a sequence of that length alone,
// Nq = Nk = keys (docs/shapes.md, "Variable-length batches").
inline Config with_keys(const Config& config, int64_t keys) {
  Config c = config;
  if (c.problem.varlen) c.problem.seqlen = keys;
  c.problem.seqlen_k = keys;
  c.problem.key_lengths = {};
  c.problem.mask = false;
  c.problem.varlen = false;
  return c;
}

// The tensor sizes the configuration implies beyond its problem (sim/tensor.h).
inline TensorLayout tensor_layout(const Config& config) { return {config.splits, config.page_size}; }

// The one way to make a Config: M from the hardware unless given; the tiling as requested
// (docs/architecture.md, "Config"). Throws InvalidInput when TilingSource::kernel finds no built
// kernel for the configuration (naming what is built). Does not validate the rest (validate()).
Config make_config(Algo algo, const Problem& problem, const Hardware& hw,
                   std::optional<int64_t> sram_bytes = std::nullopt, const TilingRequest& tiling = {});

// After splits, a page size or a block mask are set on a Config made with TilingSource::kernel:
// its tilings again the default kernels' for the configuration as it now is (a dense-only
// default, the warp-specialised forward, does not run splits or a paged cache; its variants'
// default then does). Nothing changes for the other tiling sources.
void settle_kernel_tiling(Config& config);
// Sets config.splits to choose(config); where that splits (> 1) and the tiling is the default
// kernels', the tiling settles on the splitting default (settle_kernel_tiling) and the count is
// chosen again for it. The one way the runner and the GUI set splits after make_config.
void apply_splits(Config& config, const std::function<int64_t(const Config&)>& choose);

// The config of one pass of `config` (fwd or bwd): its tiling is that pass's (bwd_tiling for bwd).
Config pass_config(const Config& config, Pass pass);

// The tiling of the forward kernel that runs for `config`: its tiling where its pass has a
// forward; for a backward alone, the forward the GPU runs first (untimed, for O and lse): the
// built kernels' default forward where the tiling was chosen (TilingSource::kernel or best),
// the backward's tiling otherwise (both passes run a given or rule tiling). nullopt where that
// default is not built. The one rule profiler/kernel_bridge.cpp runs the kernels by.
std::optional<Tiling> forward_tiling(const Config& config);

// Throws InvalidInput for a problem, M or tiling that cannot exist.
void validate(const Config& config);

// The FLOP convention of the configuration (sim/problem.h, convention_flops): the problem's over
// its sequences' keys (key_length_runs: the mask's padding too for flash1 and flash2), and for
// blocksparse the scores its block mask keeps (BlockMask::convention_scores) in place of Nq·Nk, so
// that TFLOP/s counts the work the mask asks for.
double convention_flops(const Config& config);

}  // namespace flashio::sim
