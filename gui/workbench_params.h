// WorkbenchParams: everything the parameter panel sets, and the sim Configs it stands for.
// The GUI never invents counts: every number on screen comes from a Config built here and
// handed to sim (simulate, bounds, build_schedule).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/tiling.h"

namespace flashio::gui {

// How the block-size view turns its x value B into a tiling Br × Bc.
enum class SweepShape {
  outer,    // the algorithm's outer (pass-counting) block is B, the other min(B, d): the
            // paper's rule shape (flash1 sweeps Bc, flash2 sweeps Br)
  square,   // Br = Bc = B
  block_c,  // Bc = B, Br fixed (explicit Br, or the rule's)
  block_r,  // Br = B, Bc fixed (explicit Bc, or the rule's)
};
std::string to_string(SweepShape shape);
std::optional<SweepShape> parse_sweep_shape(const std::string& text);

struct WorkbenchParams {
  // The problem, kv_heads and seqlen_k included (0: the same as heads / seqlen, as the panel's
  // "= H" and "= N" say), and the window, dropout and the key-padding mask: Problem fields, so
  // every algorithm's Config carries them and sim refuses what an algorithm does not run.
  sim::Problem problem;
  // sim::Config::gqa_pack: with Hkv < H, a forward thread block takes the rows of all query
  // heads of a K/V head's group (docs/shapes.md). A Config field, not a Problem one, so it is
  // carried here and set on every Config by config_of.
  bool gqa_pack = true;
  // sim::Config::splits (split-KV, docs/shapes.md): flash2's forward splits each row tile's key
  // tiles into S chunks merged by a combine kernel. 0 means "auto" (sim::auto_splits, resolved
  // per Config). config_of sets it on flash2's forward Configs only, clamped to their key tiles.
  int64_t splits = 1;
  // sim::Config::page_size (a paged KV cache, docs/shapes.md): K and V in pages of P tokens read
  // through a block table; 0: contiguous. config_of sets it on the Configs that read a KV cache
  // (sim::reads_kv_cache: flash2's forward; the panel's tooltip says so).
  int64_t page_size = 0;
  // Per-sequence key lengths (docs/shapes.md): the file of one key length per sequence, read by
  // config_of for flash1's and flash2's Configs (sim::takes_key_lengths; sim::read_key_lengths; a bad file throws
  // sim::InvalidInput naming Field::key_lengths); empty: every sequence Nk keys.
  std::string lengths_file;
  // sim::Problem::varlen (docs/shapes.md, "Variable-length batches"): the lengths file's sequences
  // packed without padding, sequence b with n_b = its length queries and keys, as FlashAttention-2's
  // varlen API; false: the padded (B, H, N, d) layout, the lengths being key padding. Only with a
  // lengths file (packs_sequences; the panel greys the box out without one). config_of sets it on
  // every algorithm's Config, so sim refuses those that do not run it (flash2 alone does).
  bool varlen = false;
  std::string hw_name = "h200";
  int64_t sram_bytes = 0;  // M in bytes; 0 means the hardware preset's
  std::vector<sim::Algo> algos = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2};
  std::string block_mask = "banded:2";  // blocksparse only (sim/block_mask.h)
  int64_t block_r = 0;  // explicit Br; 0 means the rule's (sim/tiling.h rule_tiling)
  int64_t block_c = 0;  // explicit Bc; 0 means the rule's
  // sim::Config::kernel_impl (sim/kernel_choice.h): the forward kernel's family (the panel's
  // "kernel" combo beside the tiling); nullopt ("default"): the tiling's first built kernel that
  // runs the problem. config_of sets it on the Configs of the tiled algorithms whose pass runs a
  // forward (applies_kernel_impl), so sim refuses a tiling without a kernel of that family there.
  std::optional<sim::MmaKind> kernel_impl;
  int64_t sweep_min = 16;   // block-size view: B from sweep_min to sweep_max, doubling
  int64_t sweep_max = 512;
  SweepShape shape = SweepShape::outer;

  bool shows(sim::Algo algo) const;
  // Field by field (sim::Problem has no operator==).
  bool operator==(const WorkbenchParams& other) const;
};

// Whether the panel's Configs pack the lengths file's sequences: varlen ticked and a lengths file
// given (without one there is nothing to pack, and the box is greyed out).
bool packs_sequences(const WorkbenchParams& params);

// sim's refusal of the panel's problem as a whole, thrown as sim::InvalidInput: sim::validate of
// the problem, then what every flash2 Config of the panel carries (a page size, the lengths file
// and its packing; flash2's forward Config, as current_config builds it, is the one checked). The
// block-size view's note, the status bar and the panel's red line say it; no view computes then.
void validate_panel_problem(const WorkbenchParams& params);

// The panel's dropout box (sim::Problem::dropout): 0 ("none") to kMaxDropout in
// kDropoutDecimals decimals. The command line and the settings take only what the box holds
// (is_panel_dropout), so a value given there is the one the panel shows and the views compute.
inline constexpr double kMaxDropout = 0.99;
inline constexpr int kDropoutDecimals = 3;
bool is_panel_dropout(double p);

// Whether a loaded row's dropout is the panel's: both none (0), or both dropping with the same p
// as rows print it (sim's rows write 9 significant digits).
bool same_dropout(double a, double b);

// The decoding preset (the panel's "decode" button): one new token per sequence against a
// 32,768-token K/V cache with grouped-query heads, Llama-3-8B's shape: B = 8, H = 32, Hkv = 8,
// N = 1, Nk = 32,768, d = 128. Everything else (dtype, pass, causal, packing, hardware, M,
// algorithms, blocks) is kept from `params`.
WorkbenchParams decode_preset(const WorkbenchParams& params);

// The split count a Config of `config`'s problem and tiling gets from `requested` (0: auto,
// sim::auto_splits): 1 for every algorithm but flash2 and for a pass without a forward; at most
// the Config's key tiles ⌈Nk / Bc⌉ (a tiling with fewer key tiles than asked runs one split per
// tile, rather than refusing; the panel's tooltip says so). `config.splits` is ignored.
int64_t resolved_splits(const sim::Config& config, int64_t requested);

// Whether the panel's kernel family applies to a Config: one of an algorithm with tiled kernels
// (not standard, which has none) whose pass runs a forward (the family is the forward kernel's;
// the backward's is not asked for: wgmma at its default tiling for a dense problem, else mma_sync,
// and a backward alone keeps the kernels' own choice).
bool applies_kernel_impl(sim::Algo algo, sim::Pass pass);

// The hardware preset (throws sim::InvalidInput for an unknown name).
sim::Hardware hardware_of(const WorkbenchParams& params);
int64_t effective_sram_bytes(const WorkbenchParams& params);

// The panel's configuration for an algorithm (sim::make_config, the one factory, plus gqa_pack,
// the splits, the page size, the lengths file, varlen and the kernel family as the fields above say),
// with M and the tiling as asked: by default the panel's M and its tiling (explicit Br/Bc where given, the
// rule's otherwise). Not validated (a tiling may not fit; callers validate).
sim::Config config_of(const WorkbenchParams& params, sim::Algo algo, int64_t sram_bytes,
                      const sim::TilingRequest& tiling);
sim::Config current_config(const WorkbenchParams& params, sim::Algo algo);

// The block sizes of the block-size view's x axis: sweep_min, doubling, up to sweep_max.
std::vector<int64_t> sweep_blocks(const WorkbenchParams& params);
// The tiling at x = block for an algorithm under the sweep shape.
sim::Tiling sweep_tiling(const WorkbenchParams& params, sim::Algo algo, int64_t block);
// The x coordinate of a tiling under the sweep shape (where a measured row is drawn).
int64_t swept_block(const WorkbenchParams& params, sim::Algo algo, const sim::Tiling& tiling);

}  // namespace flashio::gui
