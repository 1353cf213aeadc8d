#include "sim/config.h"

#include <functional>

#include <limits>
#include <stdexcept>

#include "sim/block_mask.h"
#include "sim/errors.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/limits.h"
#include "sim/paged_kv.h"
#include "sim/split_kv.h"
#include "sim/tiling_advisor.h"

namespace flashio::sim {

std::string to_string(TilingSource source) {
  switch (source) {
    case TilingSource::rule: return "rule";
    case TilingSource::kernel: return "kernel";
    case TilingSource::given: return "given";
    case TilingSource::best: return "best";
  }
  throw std::logic_error("TilingSource out of range");
}

std::optional<TilingSource> parse_tiling_source(std::string_view text) {
  if (text == "rule") return TilingSource::rule;
  if (text == "kernel") return TilingSource::kernel;
  if (text == "best") return TilingSource::best;
  return std::nullopt;
}

namespace {

// The built kernels' default tiling for one pass of the configuration (default_kernel: of the
// forward's family where one is asked, for its density; make_config's Config has no splits or
// page size yet, so a problem dense but for them takes the dense default).
// blocksparse runs flash2's (built_algo); standard, which has no tiles, never asks.
Tiling kernel_tiling(const Config& c, Pass pass) {
  if (const BuiltKernel* k = default_kernel(c, pass)) return k->tiling;
  const Problem& p = c.problem;
  const Algo algo = built_algo(c.algo);
  if (pass == Pass::fwd && c.kernel_impl && default_built(algo, pass, p.headdim, p.dtype))
    throw InvalidInput(Field::kernel_impl, "no default " + to_string(c.algo) + " fwd kernel on " +
                                               to_string(*c.kernel_impl) + " for d=" + std::to_string(p.headdim) +
                                               " " + to_string(p.dtype) + "; give its tiling (built: " +
                                               built_tilings_text(algo, pass) + ")");
  throw InvalidInput(Field::tiling_source, "kernel: no " + to_string(c.algo) + " " + to_string(pass) +
                                               " kernel is built for d=" + std::to_string(p.headdim) + " " +
                                               to_string(p.dtype) + " (built: " + built_tilings_text(algo, pass) + ")");
}

// The built tiling the time model predicts fastest for one pass of `c` (its tiling the rule's).
Tiling best_tiling(const Config& c, Pass pass) {
  if (const std::optional<Tiling> t = best_built_tiling(pass_config(c, pass))) return *t;
  // The forward's family (Config::kernel_impl) narrows the forward's candidates: its refusal.
  const bool of_family = pass == Pass::fwd && c.kernel_impl;
  throw InvalidInput(of_family ? Field::kernel_impl : Field::tiling_source,
                     std::string(of_family ? "" : "best: ") + "no " + to_string(c.algo) + " " + to_string(pass) +
                         " kernel" + (of_family ? " on " + to_string(*c.kernel_impl) : std::string()) +
                         " is built for d=" + std::to_string(c.problem.headdim) + " " + to_string(c.problem.dtype) +
                         " that fits M (built: " + built_tilings_text(built_algo(c.algo), pass) + ")");
}

}  // namespace

Config make_config(Algo algo, const Problem& problem, const Hardware& hw, std::optional<int64_t> sram_bytes,
                   const TilingRequest& request) {
  Config c;
  c.algo = algo;
  c.problem = problem;
  c.hw = hw;
  c.sram_bytes = sram_bytes.value_or(hw.sram_bytes);
  c.tiling = rule_tiling(algo, problem, c.sram_bytes);
  c.tiling_source = TilingSource::rule;
  c.kernel_impl = request.kernel_impl;  // before `best`, which ranks that family's tilings
  // standard attention has no tiles: it carries the rule's tiling in its rows only.
  if (request.choose == TilingSource::kernel && algo != Algo::standard) {
    c.tiling_source = TilingSource::kernel;
    settle_kernel_tiling(c);
  } else if (request.choose == TilingSource::best && algo != Algo::standard) {
    const Pass first = has_forward(problem.pass) ? Pass::fwd : Pass::bwd;
    const Config rule = c;
    c.tiling = best_tiling(rule, first);
    if (problem.pass == Pass::fwdbwd) {
      const Tiling bwd = best_tiling(rule, Pass::bwd);
      if (!(bwd == c.tiling)) c.bwd_tiling = bwd;
    }
    c.tiling_source = TilingSource::best;
  } else if (request.choose == TilingSource::given) {
    throw std::logic_error("make_config: ask for rule or kernel and give block_r / block_c");
  }
  if (request.block_r || request.block_c) {
    if (request.block_r) c.tiling.block_r = *request.block_r;
    if (request.block_c) c.tiling.block_c = *request.block_c;
    c.bwd_tiling.reset();  // a given tiling is the one both passes run
    c.tiling_source = TilingSource::given;
  }
  return c;
}

void settle_kernel_tiling(Config& c) {
  if (c.tiling_source != TilingSource::kernel || c.algo == Algo::standard) return;
  const Pass first = has_forward(c.problem.pass) ? Pass::fwd : Pass::bwd;
  c.tiling = kernel_tiling(c, first);
  c.bwd_tiling.reset();
  if (c.problem.pass == Pass::fwdbwd) {
    const Tiling bwd = kernel_tiling(c, Pass::bwd);
    if (!(bwd == c.tiling)) c.bwd_tiling = bwd;
  }
}

void apply_splits(Config& c, const std::function<int64_t(const Config&)>& choose) {
  c.splits = choose(c);
  if (c.splits > 1) {  // split: the default kernel that splits, and the count for its tiling
    settle_kernel_tiling(c);
    c.splits = choose(c);  // 1 again: that tiling, unsplit (its kernel runs that too)
  }
}

Config pass_config(const Config& config, Pass pass) {
  Config c = config;
  c.problem.pass = pass;
  if (pass == Pass::bwd && config.bwd_tiling) c.tiling = *config.bwd_tiling;
  c.bwd_tiling.reset();
  return c;
}

std::optional<Tiling> forward_tiling(const Config& config) {
  if (has_forward(config.problem.pass) ||
      (config.tiling_source != TilingSource::kernel && config.tiling_source != TilingSource::best))
    return config.tiling;
  if (const BuiltKernel* k = default_kernel(config, Pass::fwd)) return k->tiling;
  return std::nullopt;
}

void validate_page_size(int64_t page_size) {
  if (page_size < 0 || page_size % kPageSizeMultiple != 0)
    throw InvalidInput(Field::page_size, "must be 0 (a contiguous KV cache) or a positive multiple of " +
                                             std::to_string(kPageSizeMultiple) + " tokens (got " +
                                             std::to_string(page_size) + ")");
}

bool runs_dropout_instance(const Config& c, KernelKind kind) {
  switch (kind) {
    case KernelKind::flash1_fwd:
    case KernelKind::flash1_bwd:
    case KernelKind::flash2_bwd: return c.problem.dropout > 0 || pads_keys(c);
    case KernelKind::flash2_fwd: return c.problem.dropout > 0;
    default: return false;
  }
}

bool runs_kv_cache_instance(const Config& c, KernelKind kind) {
  return kind == KernelKind::flash2_fwd && (c.page_size > 0 || c.problem.varlen);
}

int64_t sequence_keys(const Config& c, int64_t b) {
  const Problem& p = c.problem;
  if (!p.key_lengths.empty()) return p.keys_of(b);
  return p.mask && takes_key_lengths(c) ? key_padding_length(b, p.batch, p.keys()) : p.keys();
}

std::vector<KeyLengthRun> key_length_runs(const Config& c) {
  std::vector<KeyLengthRun> runs;
  if (!pads_keys(c)) return runs;
  const Problem& p = c.problem;
  const bool given = !p.key_lengths.empty();
  const auto add = [&](int64_t first, int64_t keys) {
    if (static_cast<int64_t>(runs.size()) == kMaxKeyLengthRuns)
      throw InvalidInput(given ? Field::key_lengths : Field::mask,
                         given ? "the lengths change more than " + limit_text(kMaxKeyLengthRuns) +
                                     " times along the batch, the model's limit (it keeps a schedule per run of "
                                     "consecutive sequences of one length); allowed: at most that many runs"
                               : "the built-in padding lengths of B = " + std::to_string(p.batch) +
                                     " sequences take more than " + limit_text(kMaxKeyLengthRuns) +
                                     " values, the model's limit (it keeps a schedule per run of sequences of "
                                     "one length); allowed with mask: B at most " + std::to_string(kMaxKeyLengthRuns));
    runs.push_back({first, 0, keys});
  };
  if (given) {
    const std::vector<int64_t>& lengths = *p.key_lengths.values;
    for (size_t b = 0; b < lengths.size(); ++b) {
      if (b == 0 || lengths[b] != lengths[b - 1]) add(static_cast<int64_t>(b), lengths[b]);
      ++runs.back().count;
    }
    return runs;
  }
  // The mask's len_b = Nk − ⌊b·Nk / (2B)⌋ falls by whole steps: the run of q = ⌊b·Nk / (2B)⌋ ends
  // before the first b' with b'·Nk ≥ (q + 1)·2B (128-bit products: B and Nk may be large).
  const __int128 nk = p.keys(), twice_b = static_cast<__int128>(2) * p.batch;
  for (int64_t b = 0; b < p.batch;) {
    const __int128 q = static_cast<__int128>(b) * nk / twice_b;
    const auto next = static_cast<int64_t>(std::min<__int128>(((q + 1) * twice_b + nk - 1) / nk, p.batch));
    add(b, sequence_keys(c, b));
    runs.back().count = next - b;
    b = next;
  }
  return runs;
}

namespace {

// Fused dropout (docs/schedules.md, "Fused dropout"): flash1 and flash2 drop inside the kernels
// of dense tiles (kernels/flash_fwd_tile.cuh, kDropout), with causal, grouped-query attention,
// Nq != Nk and per-sequence key lengths; no instance drops over a block mask, split keys, a paged
// KV cache or a window.
void validate_fused_dropout(const Config& c) {
  if (c.algo == Algo::blocksparse)
    throw InvalidInput(Field::dropout, "fused dropout runs in flash1's and flash2's kernels of dense tiles, not over a "
                                       "block mask; allowed with blocksparse: dropout = 0");
  if (c.splits > 1)
    throw InvalidInput(Field::dropout, "fused dropout with split-KV is not built; allowed with dropout: splits = 1");
  if (c.page_size != 0)
    throw InvalidInput(Field::dropout,
                       "fused dropout over a paged KV cache is not built; allowed with dropout: page_size = 0");
  if (c.problem.windowed())
    throw InvalidInput(Field::dropout, "fused dropout with a sliding window is not built; allowed with dropout: "
                                       "no window (causal is allowed)");
}

// A varlen batch (docs/shapes.md, "Variable-length batches") runs in flash2's kernels, as
// FlashAttention-2's varlen API packs it; not split and not over pages (validate(Problem) refuses
// the problem's own conflicts: no lengths, Nk != N, the mask, dropout, a window).
void validate_varlen(const Config& c) {
  if (c.algo != Algo::flash2)
    throw InvalidInput(Field::varlen, "packs sequences as FlashAttention-2's varlen API, which flash2's kernels run (not " +
                                          to_string(c.algo) + "); allowed: algo = flash2");
  if (c.splits > 1)
    throw InvalidInput(Field::varlen, "split-KV over packed sequences is not built; allowed with varlen: splits = 1");
  if (c.page_size != 0)
    throw InvalidInput(Field::varlen, "packs K and V contiguously, not in a paged cache; allowed with varlen: "
                                      "page_size = 0");
}

}  // namespace

void validate(const Config& c) {
  validate(c.problem);
  if (c.problem.varlen) validate_varlen(c);
  if (c.sram_bytes <= 0)
    throw InvalidInput(Field::sram_bytes, "must be a positive size (got " +
                                              std::to_string(c.sram_bytes) + " B)");
  // standard attention has no tiles in SRAM: M and the tiling are carried in its rows only.
  if (c.algo != Algo::standard) validate_tiling(c.problem, c.tiling, c.sram_bytes);
  if (c.algo != Algo::standard && c.bwd_tiling) validate_tiling(c.problem, *c.bwd_tiling, c.sram_bytes);
  // Key padding (--mask): standard's mask pass; flash1 and flash2 take the built-in lengths as
  // per-sequence key lengths (takes_key_lengths), as their kernels do (kernels/attention_run.cu).
  if (c.problem.mask && c.algo == Algo::blocksparse)
    throw InvalidInput(Field::mask, "key padding runs in standard's mask pass and in flash1's and flash2's kernels, not "
                                    "over a block mask; allowed with blocksparse: mask = 0");
  if (c.problem.mask && takes_key_lengths(c)) {
    if (c.problem.causal)
      throw InvalidInput(Field::mask, "causal aligns each sequence's last query with its last key, so flash1 and flash2 "
                                      "take the built-in padding lengths (below N) without causal; allowed with " +
                                          to_string(c.algo) + ": mask = 0 or causal = 0");
    if (!c.problem.key_lengths.empty())
      throw InvalidInput(Field::mask, "the built-in padding lengths or key_lengths, not both; allowed with key lengths: "
                                      "mask = 0");
  }
  if (c.algo == Algo::blocksparse && (c.problem.kv_heads_count() != c.problem.heads || c.problem.keys() != c.problem.seqlen))
    throw InvalidInput(c.problem.keys() != c.problem.seqlen ? Field::seqlen_k : Field::kv_heads,
                       "blocksparse's block mask is defined on square attention with a K/V head per query head; "
                       "allowed with blocksparse: seqlen_k = seqlen and kv_heads = heads");
  if (c.splits < 1)
    throw InvalidInput(Field::splits, "must be at least 1 (got " + std::to_string(c.splits) + ")");
  if (c.splits > 1 && c.algo != Algo::flash2)
    throw InvalidInput(Field::splits, "only flash2's forward splits the keys; allowed with " + to_string(c.algo) +
                                          ": splits = 1");
  if (c.splits > 1) {
    const int64_t key_tiles = forward_key_tiles(c);
    if (c.splits > key_tiles)
      throw InvalidInput(Field::splits, "at most the forward's key tiles, ceil(Nk / Bc) = " + std::to_string(key_tiles) +
                                            " (got " + std::to_string(c.splits) + ")");
  }
  if (!c.problem.key_lengths.empty() && !takes_key_lengths(c))
    throw InvalidInput(Field::key_lengths,
                       c.algo == Algo::standard
                           ? "per-sequence key lengths run in flash1 and flash2; standard pads the keys with its mask "
                             "pass, the built-in lengths (mask = 1); allowed with standard: no key lengths"
                           : "per-sequence key lengths run in flash1 and flash2, not over a block mask; allowed with " +
                                 to_string(c.algo) + ": no key lengths");
  if (pads_keys(c)) (void)key_length_runs(c);  // within the model's runs (sim/limits.h)
  if (c.page_size != 0) {
    validate_page_size(c.page_size);
    if (c.algo != Algo::flash2)
      throw InvalidInput(Field::page_size, "only flash2 reads a paged KV cache; allowed with " + to_string(c.algo) +
                                               ": page_size = 0");
    if (c.problem.pass != Pass::fwd)
      throw InvalidInput(Field::page_size, "a paged KV cache is read by the forward only; allowed with pass " +
                                               to_string(c.problem.pass) + ": page_size = 0");
    // The block table's entries are int32 (sim/paged_kv.h).
    const int64_t pages = checked_mul(c.problem.batch, pages_per_sequence(c.problem.keys(), c.page_size));
    if (pages > std::numeric_limits<int32_t>::max())
      throw InvalidInput(Field::page_size, "B · ceil(Nk / P) pages must fit the block table's int32 entries (got " +
                                               std::to_string(pages) + "); allowed: a larger page size");
  }
  // A window runs in the kernels of dense tiles (kernels/key_limits.cuh): not over a block mask,
  // split keys or a KV cache, whose instances are not built with one.
  if (c.problem.windowed()) {
    const Field field = c.problem.window_left != kNoWindow ? Field::window_left : Field::window_right;
    if (c.algo == Algo::blocksparse)
      throw InvalidInput(field, "a window and a block mask together are not supported; allowed with blocksparse: no window "
                                "(a banded block mask is blocksparse's window)");
    if (c.splits > 1) throw InvalidInput(field, "a window with split-KV is not built; allowed with a window: splits = 1");
    if (c.page_size != 0 || pads_keys(c))
      throw InvalidInput(field, "a window over a KV cache (pages, per-sequence key lengths or the mask's padding) is not "
                                "built; allowed with a window: page_size = 0, no key lengths and mask = 0");
  }
  if (c.algo == Algo::blocksparse) validate_block_mask_spec(c.block_mask);
  else if (!c.block_mask.text.empty())
    throw InvalidInput(Field::block_mask, "applies to the blocksparse algorithm only");
  if (c.algo != Algo::standard && c.problem.dropout > 0) validate_fused_dropout(c);
  validate_kernel_impl(c);  // last: the variants' own refusals name their fields first
}

double convention_flops(const Config& c) {
  if (c.algo != Algo::blocksparse) return convention_flops(c.problem, key_length_runs(c));
  Problem dense = c.problem;  // blocksparse: Nq = Nk, no window (validate), one key count
  dense.causal = false;
  const double scores = static_cast<double>(dense.seqlen) * static_cast<double>(dense.seqlen);
  return convention_flops(dense) * BlockMask(c.block_mask, c.problem).convention_scores() / scores;
}

}  // namespace flashio::sim
