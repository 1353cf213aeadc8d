#include "gui/workbench_params.h"

#include <algorithm>
#include <cmath>

#include "sim/errors.h"
#include "sim/key_lengths_file.h"
#include "sim/split_kv.h"

namespace flashio::gui {

std::string to_string(SweepShape shape) {
  switch (shape) {
    case SweepShape::outer: return "outer";
    case SweepShape::square: return "square";
    case SweepShape::block_c: return "block-c";
    case SweepShape::block_r: return "block-r";
  }
  return "outer";
}

std::optional<SweepShape> parse_sweep_shape(const std::string& text) {
  for (auto s : {SweepShape::outer, SweepShape::square, SweepShape::block_c, SweepShape::block_r})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

bool WorkbenchParams::shows(sim::Algo algo) const {
  return std::find(algos.begin(), algos.end(), algo) != algos.end();
}

bool WorkbenchParams::operator==(const WorkbenchParams& o) const {
  const sim::Problem& a = problem;
  const sim::Problem& b = o.problem;
  return a.batch == b.batch && a.heads == b.heads && a.seqlen == b.seqlen &&
         a.kv_heads == b.kv_heads && a.seqlen_k == b.seqlen_k && gqa_pack == o.gqa_pack &&
         splits == o.splits && page_size == o.page_size && lengths_file == o.lengths_file && varlen == o.varlen &&
         a.headdim == b.headdim && a.dtype == b.dtype && a.causal == b.causal &&
         a.window_left == b.window_left && a.window_right == b.window_right &&
         a.mask == b.mask && a.dropout == b.dropout && a.pass == b.pass && hw_name == o.hw_name &&
         sram_bytes == o.sram_bytes && algos == o.algos && block_mask == o.block_mask &&
         block_r == o.block_r && block_c == o.block_c && kernel_impl == o.kernel_impl && sweep_min == o.sweep_min &&
         sweep_max == o.sweep_max && shape == o.shape;
}

bool packs_sequences(const WorkbenchParams& params) { return params.varlen && !params.lengths_file.empty(); }

void validate_panel_problem(const WorkbenchParams& params) {
  sim::validate(params.problem);
  // A page size sim refuses (not a multiple of 16, too many pages), a lengths file it cannot read
  // or whose lengths do not fit the problem, and packing them where it cannot (dropout, the mask, a
  // window, Nk != N, split-KV, a page size): every flash2 forward Config would carry them.
  if (params.page_size != 0 || !params.lengths_file.empty()) {
    try {
      sim::validate(current_config(params, sim::Algo::flash2));
    } catch (const sim::InvalidInput& invalid) {
      const auto field = invalid.field();
      if (field == sim::Field::page_size || field == sim::Field::key_lengths || field == sim::Field::varlen) throw;
    }
  }
}

bool is_panel_dropout(double p) {
  if (!(p >= 0.0 && p <= kMaxDropout)) return false;  // NaN too
  const double scaled = p * std::pow(10.0, kDropoutDecimals);
  return std::abs(scaled - std::round(scaled)) < 1e-6;
}

bool same_dropout(double a, double b) { return (a > 0) == (b > 0) && std::abs(a - b) <= 1e-9; }

WorkbenchParams decode_preset(const WorkbenchParams& params) {
  WorkbenchParams p = params;
  p.problem.batch = 8;
  p.problem.heads = 32;
  p.problem.kv_heads = 8;
  p.problem.seqlen = 1;
  p.problem.seqlen_k = 32768;
  p.problem.headdim = 128;
  return p;
}

int64_t resolved_splits(const sim::Config& config, int64_t requested) {
  if (config.algo != sim::Algo::flash2 || !sim::has_forward(config.problem.pass)) return 1;
  if (config.tiling.block_c <= 0) return 1;
  if (requested <= 0) requested = sim::auto_splits(config);
  return std::clamp<int64_t>(requested, 1, std::max<int64_t>(sim::forward_key_tiles(config), 1));
}

bool applies_kernel_impl(sim::Algo algo, sim::Pass pass) { return algo != sim::Algo::standard && sim::has_forward(pass); }

sim::Hardware hardware_of(const WorkbenchParams& params) {
  return sim::hardware_preset(params.hw_name);
}

int64_t effective_sram_bytes(const WorkbenchParams& params) {
  return params.sram_bytes > 0 ? params.sram_bytes : hardware_of(params).sram_bytes;
}

sim::Config config_of(const WorkbenchParams& params, sim::Algo algo, int64_t sram_bytes,
                      const sim::TilingRequest& tiling) {
  sim::TilingRequest request = tiling;
  if (applies_kernel_impl(algo, params.problem.pass)) request.kernel_impl = params.kernel_impl;
  sim::Config config = sim::make_config(algo, params.problem, hardware_of(params), sram_bytes, request);
  if (algo == sim::Algo::blocksparse) config.block_mask.text = params.block_mask;
  config.gqa_pack = params.gqa_pack;
  // Packed sequences on every algorithm's Config (sim refuses all but flash2's), set before the
  // splits: "auto" keeps one split over packed sequences (sim::auto_splits).
  const bool packed = packs_sequences(params);
  config.problem.varlen = packed;
  sim::apply_splits(config, [&](const sim::Config& k) { return resolved_splits(k, params.splits); });
  // The page size for the Configs that read a KV cache (sim::reads_kv_cache); the lengths file for
  // those that take per-sequence key lengths (sim::takes_key_lengths: flash1 and flash2, both
  // passes), and for every Config that packs them (the sequences are then the batch); the others
  // read whole contiguous K and V.
  if (sim::reads_kv_cache(config)) {
    config.page_size = params.page_size;
    sim::settle_kernel_tiling(config);  // a paged cache: the default kernel that reads one
  }
  if ((packed || sim::takes_key_lengths(config)) && !params.lengths_file.empty())
    config.problem.key_lengths = sim::read_key_lengths(params.lengths_file);
  return config;
}

sim::Config current_config(const WorkbenchParams& params, sim::Algo algo) {
  sim::TilingRequest tiling;
  if (params.block_r > 0) tiling.block_r = params.block_r;
  if (params.block_c > 0) tiling.block_c = params.block_c;
  return config_of(params, algo, effective_sram_bytes(params), tiling);
}

std::vector<int64_t> sweep_blocks(const WorkbenchParams& params) {
  std::vector<int64_t> blocks;
  for (int64_t b = std::max<int64_t>(params.sweep_min, 1); b <= params.sweep_max; b *= 2)
    blocks.push_back(b);
  return blocks;
}

sim::Tiling sweep_tiling(const WorkbenchParams& params, sim::Algo algo, int64_t block) {
  const sim::Tiling current = current_config(params, algo).tiling;
  const int64_t d = params.problem.headdim;
  switch (params.shape) {
    case SweepShape::outer:
      // flash1 (Algorithm 1) makes Tc passes over Q and O, so its outer block is Bc; flash2
      // and blocksparse make Tr passes over K and V, so theirs is Br (docs/paper.md).
      if (algo == sim::Algo::flash1) return {std::min(block, d), block};
      return {block, std::min(block, d)};
    case SweepShape::square: return {block, block};
    case SweepShape::block_c: return {current.block_r, block};
    case SweepShape::block_r: return {block, current.block_c};
  }
  return current;
}

int64_t swept_block(const WorkbenchParams& params, sim::Algo algo, const sim::Tiling& tiling) {
  switch (params.shape) {
    case SweepShape::outer:
      return algo == sim::Algo::flash1 ? tiling.block_c : tiling.block_r;
    case SweepShape::square: return std::max(tiling.block_r, tiling.block_c);
    case SweepShape::block_c: return tiling.block_c;
    case SweepShape::block_r: return tiling.block_r;
  }
  return tiling.block_c;
}

}  // namespace flashio::gui
