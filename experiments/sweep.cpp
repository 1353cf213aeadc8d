#include "experiments/sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "sim/block_mask.h"
#include "sim/errors.h"
#include "sim/key_lengths_file.h"
#include "sim/paged_kv.h"
#include "sim/split_kv.h"
#include "sim/tiling.h"

namespace flashio::cli {
namespace {

std::string given_or(const po::variables_map& vm, const char* name, const std::string& fallback) {
  return vm.count(name) ? vm[name].as<std::string>() : fallback;
}

std::vector<int64_t> positive_ints(const std::string& option, const std::string& text,
                                   bool sizes = false) {
  auto values = sizes ? parse_size_list(option, text) : parse_int_list(option, text);
  for (int64_t v : values)
    if (v <= 0)
      throw UsageError(option + " must be " + (sizes ? "a size above 0 bytes" : "positive integers") +
                       " (got " + std::to_string(v) + ")");
  return values;
}

template <typename T, typename Parse>
std::vector<T> named(const std::string& option, const std::string& text, Parse parse,
                     const std::string& allowed) {
  std::vector<T> values;
  for (const std::string& name : parse_name_list(option, text)) {
    const auto v = parse(name);
    if (!v) throw UsageError(option + " '" + name + "' is unknown; allowed: " + allowed);
    values.push_back(*v);
  }
  return values;
}

sim::CountMethod parse_count(const std::string& text) {
  if (text == "formula") return sim::CountMethod::formula;
  if (text == "walk") return sim::CountMethod::walk;
  if (text == "execute") return sim::CountMethod::execute;
  if (text == "cache") return sim::CountMethod::cache;
  throw UsageError("--count '" + text +
                   "' is unknown; allowed: formula, walk, execute, cache (one of them)");
}

// --splits: positive integers (lists and ranges), `auto` and `best`, which stand as 0 and −1 until
// each configuration resolves them (sim/split_kv.h).
std::vector<int64_t> split_counts(const std::string& text) {
  std::vector<int64_t> out;
  for (const std::string& item : parse_name_list("--splits", text)) {
    std::vector<int64_t> values{item == "auto" ? kAutoSplits : kBestSplits};
    if (item != "auto" && item != "best") {
      values = parse_int_list("--splits", item);
      for (int64_t v : values)
        if (v <= 0) throw UsageError("--splits must be positive integers, auto or best (got " + std::to_string(v) + ")");
    }
    for (int64_t v : values)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// --page-size: 0 (contiguous) or positive multiples of sim::kPageSizeMultiple (lists and ranges),
// checked here rather than skipped per configuration.
std::vector<int64_t> page_sizes(const std::string& text) {
  std::vector<int64_t> out;
  for (int64_t v : parse_int_list("--page-size", text)) {
    try {
      sim::validate_page_size(v);
    } catch (const sim::InvalidInput& e) {
      throw UsageError(usage_message(e));
    }
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// --window-left, --window-right: keys >= 0 (lists and ranges) or `none` (sim::kNoWindow, unbounded).
std::vector<int64_t> window_sides(const std::string& option, const std::string& text) {
  std::vector<int64_t> out;
  for (const std::string& item : parse_name_list(option, text)) {
    std::vector<int64_t> values{sim::kNoWindow};
    if (item != "none") {
      values = parse_int_list(option, item);
      for (int64_t v : values)
        if (v < 0) throw UsageError(option + " must be numbers of keys >= 0 or none (got " + std::to_string(v) + ")");
    }
    for (int64_t v : values)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

template <typename T>
int64_t size_or_one(const std::vector<T>& v) {
  return v.empty() ? 1 : static_cast<int64_t>(v.size());
}

}  // namespace

int64_t SweepSpec::size() const {
  const int64_t sizes[] = {size_or_one(algos),      size_or_one(passes),      size_or_one(batches),
                           size_or_one(heads),      size_or_one(seqlens),     size_or_one(headdims),
                           size_or_one(dtypes),     size_or_one(causals),     size_or_one(masks),
                           size_or_one(dropouts),   size_or_one(block_masks), size_or_one(sram_bytes),
                           size_or_one(block_rs),   size_or_one(block_cs),    size_or_one(hardware),
                           size_or_one(kv_heads),   size_or_one(seqlens_k),   size_or_one(gqa_packs),
                           size_or_one(splits),     size_or_one(page_sizes),  size_or_one(key_lengths),
                           size_or_one(window_lefts), size_or_one(window_rights), size_or_one(varlens),
                           size_or_one(kernels)};
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (n > kMaxSweepConfigs / s) return kMaxSweepConfigs + 1;
    n *= s;
  }
  return n;
}

void add_sweep_options(po::options_description& options, const SweepDefaults& d) {
  auto text = [](const std::string& help, const std::string& fallback) {
    return fallback.empty() ? help : help + " [" + fallback + "]";
  };
  options.add_options()
      ("algo", po::value<std::string>(),
       text("algorithms: standard, flash1, flash2, blocksparse (list)", d.algo).c_str())
      ("pass", po::value<std::string>(), text("fwd, bwd, fwdbwd (list)", d.pass).c_str())
      ("batch", po::value<std::string>(), text("B, batch size (list or range)", d.batch).c_str())
      ("heads", po::value<std::string>(), text("H, heads (list or range)", d.heads).c_str())
      ("kv-heads", po::value<std::string>(),
       "Hkv, K/V heads, each shared by H/Hkv query heads (grouped-query attention; 1 = multi-query; "
       "must divide --heads) (list or range) [--heads]")
      ("seqlen", po::value<std::string>(), text("N, sequence length: queries per head (list or range)", d.seqlen).c_str())
      ("seqlen-k", po::value<std::string>(),
       "Nk, keys per head when not N (causal is then aligned bottom-right: query i sees keys "
       "j <= i + Nk - N) (list or range) [--seqlen]")
      ("gqa-pack", po::value<std::string>()->implicit_value("1"),
       "with --kv-heads < --heads: 1 gives each thread block the rows of all query heads of a group, "
       "so a K/V tile is read once for them; 0 one query head's rows, each head reading its group's "
       "K/V (a switch; --gqa-pack=0,1 sweeps both) [1]")
      ("splits", po::value<std::string>(),
       "flash2's forward with split-KV: each row tile's key tiles in S chunks, each a thread block of "
       "its own writing fp32 partial results, merged by a combine kernel; auto: FlashAttention's "
       "heuristic (the fewest splits reaching 85 % of the best wave efficiency, at most 128); best: the "
       "count the time model predicts fastest (list or range, auto and best among them) [1]")
      ("lengths", po::value<std::string>(),
       "flash1 and flash2, forward and backward, over sequences of their own key lengths (a KV cache, "
       "key padding): FILE holds one key length per line, one line per sequence (B of them, each 1 to "
       "--seqlen-k, the cache's keys); causal aligns each sequence's last query with its last key; "
       "not with standard (its --mask pads); with --varlen each sequence's own length n_b (list of files) "
       "[every sequence --seqlen-k]")
      ("varlen", po::value<std::string>()->implicit_value("1"),
       "a variable-length batch (flash2, FlashAttention-2's varlen API): the --lengths sequences packed "
       "without padding, sequence b with n_b queries and keys (1 to --seqlen, the longest sizing the grids); "
       "0: the padded (B, H, N, d) layout with those key lengths, so --varlen=0,1 puts the padded and "
       "the packed rows side by side, the padding's cost their difference (causal and --kv-heads allowed; "
       "not with --seqlen-k other than --seqlen, --mask, --dropout, a window, --splits or --page-size) "
       "(a switch) [0]")
      ("page-size", po::value<std::string>(),
       "flash2's forward over a paged KV cache: K and V in pages of P tokens (a multiple of 16) found "
       "through a block table, whose entries each K/V tile reads; 0: contiguous (list or range) [0]")
      ("headdim", po::value<std::string>(), text("d, head dimension (list or range)", d.headdim).c_str())
      ("dtype", po::value<std::string>(), text("fp16, bf16, fp32 (list)", d.dtype).c_str())
      ("causal", po::value<std::string>()->implicit_value("1"),
       "causal mask (a switch; --causal=0,1 sweeps both; the same attention as --window-right 0) [0]")
      ("window-left", po::value<std::string>(),
       "sliding window: query i sees keys j >= i + Nk - N - L, so each query its L keys before its own "
       "position and tiles wholly outside the band are skipped; none: unbounded (list or range, none among them) [none]")
      ("window-right", po::value<std::string>(),
       "sliding window: query i sees keys j <= i + Nk - N + R (0: causal; not with --causal) "
       "(list or range, none among them) [none]")
      ("mask", po::value<std::string>()->implicit_value("1"),
       "key padding, sequence b keeping its first Nk - floor(b*Nk/(2B)) keys: standard a separate mask pass "
       "over S; flash1 and flash2 those key lengths, as --lengths (not with causal or --lengths) (a switch; "
       "--mask=0,1 sweeps) [0]")
      ("dropout", po::value<std::string>(),
       "dropout probability on P when > 0, rounded to a multiple of 2^-16: standard a separate pass over P, "
       "flash1 and flash2 fused into their tiles (not with a window, block mask, splits or pages) "
       "(list or range) [0]")
      ("block-mask", po::value<std::string>(),
       "blocksparse, on blocks of T x T tokens (T = 128 unless the mask ends in @T): banded:W, "
       "random:DENSITY[:SEED] or a file of ceil(N/T) lines of 0/1 (list) [dense]")
      ("sram", po::value<std::string>(),
       "M: shared memory per thread block; bytes, KiB/MiB (1024), KB/MB (1000) (list or range) "
       "[the --hw preset's]")
      ("block-r", po::value<std::string>(),
       "Br, rows of Q per tile (list or range) [chosen by --tiling]")
      ("block-c", po::value<std::string>(),
       "Bc, rows of K, V per tile (list or range) [chosen by --tiling]")
      ("kernel", po::value<std::string>(),
       "the forward kernel's family: mma_sync, wgmma (Hopper's warpgroup mma) or wgmma_ws (warp-specialised, "
       "FlashAttention-3's structure; dense attention only: not with --mask, --dropout, --window-left, --splits, "
       "--page-size, --lengths, --varlen or a block mask): the built kernel of that family at the forward's "
       "tiling, refused where there is none (flash1's are mma_sync; standard has none); the backward runs its "
       "tiling's kernel (wgmma at its default tiling for dense attention, else mma_sync), and --pass bwd runs "
       "that family's forward first (list) [the tiling's first kernel that "
       "runs the problem]")
      ("tiling", po::value<std::string>(),
       text("how an open tiling is chosen: rule (the paper's rule from M), best (the built tiling the "
            "calibrated time model predicts fastest, flashio tune) or kernel (the built "
            "CUDA kernels' default for each pass, what bench and profile run); --block-r and "
            "--block-c override it",
            d.tiling).c_str())
      ("hw", po::value<std::string>(),
       text("hardware: a100-40gb, h100-sxm, h200, or a file of key = value lines (list)", d.hw).c_str())
      ("count", po::value<std::string>(),
       text("how to count: formula (closed form), walk (the schedule), execute (run it, small "
            "shapes), cache (walk + the L2 model's dram bytes; rows source=cache)",
            d.count).c_str())
      ("time", po::value<std::string>(),
       text("how time is predicted: model (the calibrated time model, docs/time_model.md) or "
            "roofline (the paper's); by default the model where the hardware carries a "
            "calibration, the roofline elsewhere",
            d.time.empty() ? std::string("model where calibrated") : d.time).c_str());
}

SweepSpec read_sweep(const po::variables_map& vm, const SweepDefaults& d, int64_t max_configs) {
  SweepSpec s;
  s.algos = named<sim::Algo>("--algo", given_or(vm, "algo", d.algo), sim::parse_algo,
                             sim::allowed_algos());
  s.passes = named<sim::Pass>("--pass", given_or(vm, "pass", d.pass), sim::parse_pass,
                              sim::allowed_passes());
  s.batches = positive_ints("--batch", given_or(vm, "batch", d.batch));
  s.heads = positive_ints("--heads", given_or(vm, "heads", d.heads));
  s.seqlens = positive_ints("--seqlen", given_or(vm, "seqlen", d.seqlen));
  if (vm.count("kv-heads")) s.kv_heads = positive_ints("--kv-heads", vm["kv-heads"].as<std::string>());
  if (vm.count("seqlen-k")) s.seqlens_k = positive_ints("--seqlen-k", vm["seqlen-k"].as<std::string>());
  s.gqa_packs = parse_switch_list("--gqa-pack", given_or(vm, "gqa-pack", "1"));
  s.splits = split_counts(given_or(vm, "splits", "1"));
  s.page_sizes = page_sizes(given_or(vm, "page-size", "0"));
  s.key_lengths = {sim::KeyLengths{}};
  if (vm.count("lengths")) {
    s.key_lengths.clear();
    for (const std::string& path : parse_name_list("--lengths", vm["lengths"].as<std::string>())) {
      try {
        s.key_lengths.push_back(sim::read_key_lengths(path));
      } catch (const sim::InvalidInput& e) {
        throw UsageError(usage_message(e));
      }
    }
  }
  s.headdims = positive_ints("--headdim", given_or(vm, "headdim", d.headdim));
  s.dtypes = named<sim::DType>("--dtype", given_or(vm, "dtype", d.dtype), sim::parse_dtype,
                               sim::allowed_dtypes());
  s.varlens = parse_switch_list("--varlen", given_or(vm, "varlen", "0"));
  s.causals = parse_switch_list("--causal", given_or(vm, "causal", "0"));
  s.window_lefts = window_sides("--window-left", given_or(vm, "window-left", "none"));
  s.window_rights = window_sides("--window-right", given_or(vm, "window-right", "none"));
  s.masks = parse_switch_list("--mask", given_or(vm, "mask", "0"));
  s.dropouts = parse_real_list("--dropout", given_or(vm, "dropout", "0"));
  for (double p : s.dropouts)
    if (!(p >= 0.0 && p < 1.0))
      throw UsageError("--dropout must be probabilities in [0, 1) (got " + std::to_string(p) + ")");
  if (vm.count("block-mask")) {
    for (const std::string& spec : parse_name_list("--block-mask", vm["block-mask"].as<std::string>())) {
      const std::string text = (spec == "dense") ? "" : spec;
      sim::validate_block_mask_spec(sim::BlockMaskSpec{text});
      s.block_masks.push_back(text);
    }
  } else {
    s.block_masks.push_back("");
  }
  // Only blocksparse reads a mask; the sweep pairs a mask with the other algorithms' rows not at
  // all, so a mask without blocksparse would be silently ignored.
  const bool masked = std::any_of(s.block_masks.begin(), s.block_masks.end(),
                                  [](const std::string& m) { return !m.empty(); });
  if (masked && std::find(s.algos.begin(), s.algos.end(), sim::Algo::blocksparse) == s.algos.end())
    throw UsageError("--block-mask applies to --algo blocksparse only, and --algo '" +
                     given_or(vm, "algo", d.algo) + "' has no blocksparse; add it or drop --block-mask");
  const std::string sram = given_or(vm, "sram", d.sram);
  if (!sram.empty()) s.sram_bytes = positive_ints("--sram", sram, /*sizes=*/true);
  const std::string block_r = given_or(vm, "block-r", d.block_r);
  if (!block_r.empty()) s.block_rs = positive_ints("--block-r", block_r);
  const std::string block_c = given_or(vm, "block-c", d.block_c);
  if (!block_c.empty()) s.block_cs = positive_ints("--block-c", block_c);
  if (vm.count("kernel")) {
    s.kernels.clear();
    for (sim::MmaKind k : named<sim::MmaKind>("--kernel", vm["kernel"].as<std::string>(), sim::parse_mma_kind,
                                              sim::allowed_mma_kinds()))
      if (std::find(s.kernels.begin(), s.kernels.end(), k) == s.kernels.end()) s.kernels.push_back(k);
  }
  for (const std::string& name : parse_name_list("--hw", given_or(vm, "hw", d.hw)))
    s.hardware.push_back(sim::resolve_hardware(name));  // throws InvalidInput naming --hw
  s.count = parse_count(given_or(vm, "count", d.count));
  if (const std::string time = given_or(vm, "time", d.time); !time.empty()) {
    s.time = sim::parse_time_method(time);
    if (!s.time) throw UsageError("--time '" + time + "' is unknown; allowed: model, roofline");
    if (*s.time == sim::TimeMethod::model)
      for (const sim::Hardware& hw : s.hardware) {
        // Checked here on a small configuration of this hardware, so that a missing figure is
        // one line before the sweep, not a skip per configuration.
        sim::require_calibration(hw);
      }
  }
  const std::string tiling = given_or(vm, "tiling", d.tiling);
  const auto source = sim::parse_tiling_source(tiling);
  if (!source) throw UsageError("--tiling '" + tiling + "' is unknown; allowed: rule, kernel, best");
  s.tiling = *source;
  // M chooses no kernel's tiling: where the kernels' tilings are the default, --sram alone
  // would be silently ignored by the GPU run.
  if (s.tiling == sim::TilingSource::kernel && !vm.count("tiling") && vm.count("sram") && s.block_rs.empty() &&
      s.block_cs.empty())
    throw UsageError("--sram does not choose the tiling the kernels run (the default here is --tiling kernel, "
                     "the built kernels' defaults); add --tiling rule to run the paper's rule's tiling for that "
                     "M, or give --block-r and --block-c");
  if (s.size() > max_configs)
    throw UsageError("the sweep has more than " + std::to_string(max_configs) +
                     " configurations; narrow a list or a range");
  return s;
}

sim::Config make_sweep_config(const SweepSpec& s, const SweepPoint& at) {
  sim::Problem p;
  p.batch = s.batches[at.batch];
  p.heads = s.heads[at.heads];
  p.seqlen = s.seqlens[at.seqlen];
  if (!s.kv_heads.empty()) p.kv_heads = s.kv_heads[at.kv_heads];
  if (!s.seqlens_k.empty()) p.seqlen_k = s.seqlens_k[at.seqlen_k];
  p.headdim = s.headdims[at.headdim];
  p.dtype = s.dtypes[at.dtype];
  p.causal = s.causals[at.causal] != 0;
  p.window_left = s.window_lefts[at.window_left];
  p.window_right = s.window_rights[at.window_right];
  p.mask = s.masks[at.mask] != 0;
  p.dropout = s.dropouts[at.dropout];
  p.pass = s.passes[at.pass];
  p.key_lengths = s.key_lengths[at.key_lengths];
  p.varlen = s.varlens[at.varlen] != 0;
  const sim::Algo algo = s.algos[at.algo];
  std::optional<int64_t> sram;
  if (!s.sram_bytes.empty()) sram = s.sram_bytes[at.sram];
  // One of Br, Bc given: the other still comes from the --tiling choice.
  sim::TilingRequest tiling{s.tiling, std::nullopt, std::nullopt, s.kernels[at.kernel]};
  if (!s.block_rs.empty()) tiling.block_r = s.block_rs[at.block_r];
  if (!s.block_cs.empty()) tiling.block_c = s.block_cs[at.block_c];
  sim::Config c = sim::make_config(algo, p, s.hardware[at.hw], sram, tiling);
  if (algo == sim::Algo::blocksparse) c.block_mask = sim::BlockMaskSpec{s.block_masks[at.block_mask]};
  c.gqa_pack = s.gqa_packs[at.gqa_pack] != 0;
  c.page_size = s.page_sizes[at.page_size];
  const int64_t splits = s.splits[at.splits];
  sim::settle_kernel_tiling(c);  // a paged cache: the default kernel that reads one
  sim::apply_splits(c, [splits](const sim::Config& k) {
    return splits == kAutoSplits ? sim::auto_splits(k) : splits == kBestSplits ? sim::best_splits(k) : splits;
  });
  return c;
}

SweepStats run_sweep(const SweepSpec& s, const std::function<void(const sim::Config&)>& visit,
                     std::ostream& err, bool progress, const std::string& what) {
  SweepStats stats;
  const int64_t total = s.size();
  // The odometer: digit k runs over list k; the last digit (algo) turns fastest.
  SweepPoint at;
  size_t* digits[] = {&at.hw,     &at.pass,   &at.dtype,   &at.batch,      &at.heads,   &at.kv_heads,
                      &at.headdim, &at.seqlen, &at.seqlen_k, &at.causal,  &at.window_left, &at.window_right, &at.mask,       &at.dropout,
                      &at.sram,   &at.block_r, &at.block_c, &at.kernel, &at.block_mask, &at.gqa_pack, &at.key_lengths,
                      &at.varlen, &at.page_size, &at.splits, &at.algo};
  const size_t limits[] = {s.hardware.size(),  s.passes.size(),
                           s.dtypes.size(),    s.batches.size(),
                           s.heads.size(),     std::max<size_t>(1, s.kv_heads.size()),
                           s.headdims.size(),
                           s.seqlens.size(),   std::max<size_t>(1, s.seqlens_k.size()),
                           s.causals.size(), s.window_lefts.size(), s.window_rights.size(),
                           s.masks.size(),     s.dropouts.size(),
                           std::max<size_t>(1, s.sram_bytes.size()),
                           std::max<size_t>(1, s.block_rs.size()),
                           std::max<size_t>(1, s.block_cs.size()),
                           s.kernels.size(),
                           s.block_masks.size(), s.gqa_packs.size(), s.key_lengths.size(), s.varlens.size(),
                           s.page_sizes.size(),
                           s.splits.size(), s.algos.size()};
  constexpr int kDigits = sizeof(limits) / sizeof(limits[0]);
  using Clock = std::chrono::steady_clock;
  auto last_report = Clock::now();
  int64_t index = 0;
  int64_t not_applicable = 0;  // a block mask with an algorithm that has none: not a new config
  // Split counts: the two fastest digits are splits and algo, so each point of the others spans
  // splits × algos consecutive indices; `auto` and `best` resolve per configuration and may name
  // a count already visited there (then not a new config), and a split count above 1 applies to
  // flash2 only when the sweep also runs other algorithms (as a page size and a varlen batch do;
  // key lengths, to flash1 and flash2; a kernel family, to the algorithms with tiled kernels).
  const int64_t split_span = static_cast<int64_t>(s.splits.size() * s.algos.size());
  const auto sweeps = [&](sim::Algo a) { return std::find(s.algos.begin(), s.algos.end(), a) != s.algos.end(); };
  const bool sweeps_flash2 = sweeps(sim::Algo::flash2), sweeps_flash = sweeps_flash2 || sweeps(sim::Algo::flash1);
  const bool sweeps_tiled = sweeps_flash || sweeps(sim::Algo::blocksparse);
  std::set<std::pair<int64_t, size_t>> splits_seen;  // (resolved splits, algo) at this point
  for (bool done = total == 0; !done; ++index) {
    if (index % split_span == 0) splits_seen.clear();
    const sim::Algo algo = s.algos[at.algo];
    const bool split_elsewhere =
        (sweeps_flash2 && algo != sim::Algo::flash2 &&
         (s.splits[at.splits] > 1 || s.page_sizes[at.page_size] > 0 || s.varlens[at.varlen] != 0)) ||
        (sweeps_flash && algo != sim::Algo::flash1 && algo != sim::Algo::flash2 && !s.key_lengths[at.key_lengths].empty()) ||
        (sweeps_tiled && algo == sim::Algo::standard && s.kernels[at.kernel]);
    if ((at.block_mask > 0 && s.algos[at.algo] != sim::Algo::blocksparse) || split_elsewhere) {
      ++not_applicable;
    } else {
      try {
        const sim::Config c = make_sweep_config(s, at);
        if (!splits_seen.insert({c.splits, at.algo}).second) {
          ++not_applicable;
        } else {
          visit(c);
          ++stats.visited;
        }
      } catch (const sim::InvalidInput& e) {
        if (stats.skipped == 0) stats.first_skip_reason = usage_message(e);
        ++stats.skipped;
      }
    }
    if (progress && (index & 63) == 0 && Clock::now() - last_report > std::chrono::milliseconds(200)) {
      last_report = Clock::now();
      err << "\rflashio: " << index + 1 << " / " << total << " " << what << std::flush;
    }
    int k = kDigits - 1;
    for (; k >= 0; --k) {
      if (++*digits[k] < limits[k]) break;
      *digits[k] = 0;
    }
    done = k < 0;
  }
  if (progress) err << "\r\033[K" << std::flush;
  const int64_t considered = total - not_applicable;
  if (stats.visited == 0 && stats.skipped > 0) {
    if (considered == 1) throw UsageError(stats.first_skip_reason);
    throw UsageError("none of the " + std::to_string(considered) + " " + what +
                     " can run; the first: " + stats.first_skip_reason);
  }
  if (stats.skipped > 0)
    err << "flashio: skipped " << stats.skipped << " of " << considered << " " << what
        << " that cannot run (first: " << stats.first_skip_reason << ")\n";
  return stats;
}

}  // namespace flashio::cli
