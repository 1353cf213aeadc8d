// The sweep: every problem and tiling option holds a list (experiments/README.md, "Lists and
// ranges"), and the runner visits the cartesian product of the lists, algorithm innermost so that
// the algorithms of one problem sit side by side in the output.
#pragma once
#include <cstdint>
#include <functional>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/config.h"
#include "sim/time_model.h"
#include "sim/hardware.h"
#include "sim/simulate.h"
#include "sim/types.h"

namespace flashio::cli {

namespace po = boost::program_options;

// The values an option takes when it is not given (the paper's GPT-2 medium example for
// simulate: B=64, H=16, N=1024, d=64, fp16 on an H200). Each subcommand chooses its own.
struct SweepDefaults {
  std::string algo = "standard,flash1,flash2";
  std::string pass = "fwd";
  std::string batch = "64";
  std::string heads = "16";
  std::string seqlen = "1024";
  std::string headdim = "64";
  std::string dtype = "fp16";
  std::string hw = "h200";
  std::string count = "formula";
  std::string sram;     // empty: the hardware preset's shared memory per block
  std::string block_r;  // empty: chosen by `tiling`
  std::string block_c;
  // How an open tiling is chosen: "rule" (the paper's rule from M: the model's default) or
  // "kernel" (the built kernels' default for the pass: bench and profile run these).
  std::string tiling = "rule";
  // How time is predicted: "" (the time model where the hardware is calibrated, the roofline
  // elsewhere: sim::default_time_method), "model" or "roofline".
  std::string time;
};

inline constexpr int64_t kAutoSplits = 0, kBestSplits = -1;

// The parsed lists. Empty sram / block_r / block_c mean "derive per configuration".
struct SweepSpec {
  std::vector<sim::Algo> algos;
  std::vector<sim::Pass> passes;
  std::vector<int64_t> batches, heads, seqlens, headdims;
  // Grouped-query attention and Nq ≠ Nk (docs/shapes.md): empty kv_heads / seqlens_k mean "the
  // same as heads / seqlen" (0 in sim::Problem); gqa_packs 0 or 1.
  std::vector<int64_t> kv_heads, seqlens_k;
  std::vector<int> gqa_packs;
  // Split-KV's key splits (sim/config.h, splits); kAutoSplits and kBestSplits stand for `auto`
  // and `best` (sim/split_kv.h), resolved per configuration.
  std::vector<int64_t> splits;
  // A paged KV cache's page sizes (sim/config.h, page_size; 0 = contiguous).
  std::vector<int64_t> page_sizes;
  // Per-sequence key lengths (sim/problem.h), one entry per --lengths file; one empty entry
  // (every sequence --seqlen-k keys) without the option.
  std::vector<sim::KeyLengths> key_lengths;
  // Whether the lengths' sequences are packed without padding (sim/problem.h, varlen), 0 or 1.
  std::vector<int> varlens;
  std::vector<sim::DType> dtypes;
  std::vector<int> causals, masks;  // 0 or 1
  // A sliding window's sides (sim/problem.h, window_left and window_right; sim::kNoWindow = none).
  std::vector<int64_t> window_lefts, window_rights;
  std::vector<double> dropouts;
  std::vector<std::string> block_masks;  // "" = dense
  std::vector<int64_t> sram_bytes, block_rs, block_cs;
  // The forward kernel's families (sim/config.h, Config::kernel_impl); one nullopt entry (the
  // tiling's first kernel that runs the configuration) without --kernel.
  std::vector<std::optional<sim::MmaKind>> kernels{std::nullopt};
  std::vector<sim::Hardware> hardware;
  sim::CountMethod count = sim::CountMethod::formula;
  sim::TilingSource tiling = sim::TilingSource::rule;  // rule or kernel
  std::optional<sim::TimeMethod> time;                 // nullopt: sim::default_time_method

  // Number of configurations in the product (before any is found not to fit).
  int64_t size() const;
};

// The most configurations one sweep may have.
constexpr int64_t kMaxSweepConfigs = 100'000'000;

// Registers --algo, --pass, --batch, ..., --hw, --count (no defaults in Boost: the command
// line must win over --config, and absence is told from a given value).
void add_sweep_options(po::options_description& options, const SweepDefaults& defaults);

// Parses and checks every list (names, positive sizes, known presets) and the sweep's size
// (at most max_configs). Throws UsageError.
SweepSpec read_sweep(const po::variables_map& options, const SweepDefaults& defaults,
                     int64_t max_configs = kMaxSweepConfigs);

// The configuration at one point of the product (sim::make_config): M from the hardware and the
// tiling by `spec.tiling` where the sweep leaves them open. Does not check that the tiling fits;
// throws sim::InvalidInput where --tiling kernel finds no built kernel (a skipped config).
struct SweepPoint {
  size_t algo = 0, pass = 0, batch = 0, heads = 0, seqlen = 0, headdim = 0, dtype = 0,
         causal = 0, mask = 0, dropout = 0, block_mask = 0, sram = 0, block_r = 0, block_c = 0,
         hw = 0, kv_heads = 0, seqlen_k = 0, gqa_pack = 0, splits = 0, page_size = 0, window_left = 0, window_right = 0, key_lengths = 0, varlen = 0,
         kernel = 0;
};
sim::Config make_sweep_config(const SweepSpec& spec, const SweepPoint& point);

// What a sweep skipped: configurations that cannot exist (a tiling that does not fit in M,
// M < d, --dropout with a FlashAttention algorithm) or cannot be counted (--count execute
// beyond its size), which sim::validate and sim::simulate report with sim::InvalidInput.
struct SweepStats {
  int64_t visited = 0;
  int64_t skipped = 0;
  std::string first_skip_reason;
};

// Calls visit() for every configuration in order. A sim::InvalidInput thrown by visit counts
// the configuration as skipped. Afterwards: throws UsageError (the model's one-line reason)
// when the sweep was a single configuration that cannot exist, or when none could; otherwise
// prints one summary line about the skipped ones on `err`. Progress goes to `err` when
// `progress` is set (stderr is a terminal).
SweepStats run_sweep(const SweepSpec& spec, const std::function<void(const sim::Config&)>& visit,
                     std::ostream& err, bool progress, const std::string& what = "configurations");

}  // namespace flashio::cli
