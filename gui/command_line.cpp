#include "gui/command_line.h"

#include <algorithm>
#include <sstream>

#include "experiments/option_name.h"
#include "gui/size_text.h"
#include "sim/key_lengths_file.h"
#include "sim/errors.h"
#include "sim/hardware.h"

namespace flashio::gui {
namespace {

// Options that take a value, and the switches; names as the runner spells them.
const std::vector<std::string> kValueOptions = {
    "algo", "batch", "heads", "kv-heads", "seqlen", "seqlen-k", "headdim", "dtype", "pass",
    "gqa-pack", "splits", "page-size", "lengths", "window-left", "window-right", "dropout", "sram", "block-r", "block-c", "kernel", "hw", "results", "view", "screenshot", "block-mask",
    "sweep", "shape", "tiling-step"};
const std::vector<std::string> kSwitches = {"causal", "mask", "varlen", "help", "no-cache"};

// `also`: what else the option takes, named in the message (", or auto").
int64_t positive(const std::string& option, const std::string& text, int64_t max, const std::string& also = "") {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v <= 0 || v > max)
    throw sim::InvalidInput("--" + option + " must be a positive integer up to " + std::to_string(max) + also +
                            ", not '" + text + "'");
  return v;
}

// --dropout P: a probability, as the runner's --dropout takes it (one value here), and one the
// panel's box holds (0 to 0.99 in three decimals), so the views compute what was asked.
double dropout_probability(const std::string& text) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !is_panel_dropout(v)) {
    std::ostringstream message;
    message << "--dropout must be a probability from 0 to " << kMaxDropout << " with at most " << kDropoutDecimals
            << " decimals (0: none), not '" << text << "'";
    throw sim::InvalidInput(message.str());
  }
  return v;
}

}  // namespace

std::string usage_text() {
  return "usage: flashio-gui [--algo LIST] [--batch B] [--heads H] [--seqlen N] [--headdim D]\n"
         "  [--kv-heads HKV] [--seqlen-k NK] [--gqa-pack 0|1] [--splits S|auto] [--page-size P]\n"
         "  [--lengths FILE] [--varlen] [--window-left L|none] [--window-right R|none]\n"
         "  [--dropout P] [--mask] [--dtype fp16|bf16|fp32] [--pass fwd|bwd|fwdbwd] [--causal]\n"
         "  [--sram SIZE] [--block-r BR] [--block-c BC] [--kernel mma_sync|wgmma|wgmma_ws]\n"
         "  [--hw PRESET] [--block-mask SPEC]\n"
         "  [--sweep MIN:MAX] [--shape outer|square|block-c|block-r] [--results FILE]... [--view NAME]\n"
         "  [--screenshot FILE.png] [--tiling-step K] [--no-cache]\n"
         "  --view NAME: block, scaling, breakdown, tiling (teaching) or map (tiling map)\n"
         "  --kv-heads: K/V heads, dividing --heads (1: multi-query); --seqlen-k: keys per head\n"
         "  (--seqlen is then the queries; causal needs NK >= N); --gqa-pack: whether a forward\n"
         "  block takes a K/V group's query heads, 0 or 1 (default 1; given alone, 1)\n"
         "  --splits: flash2's forward split-KV splits, 1 to 128 (at most ceil(NK / BC) are run)\n"
         "  or auto (FlashAttention's heuristic); default 1\n"
         "  --page-size: flash2's forward over a paged KV cache, pages of P tokens (a multiple of\n"
         "  16 up to 4096); 0: contiguous, the default\n"
         "  --lengths: flash2's forward over sequences of their own key lengths, FILE holding one\n"
         "  per line, one line per sequence\n"
         "  --window-left, --window-right: a sliding window, query i seeing keys\n"
         "  i + NK - N - L ... i + NK - N + R; none (the default): that side unbounded\n"
         "  --dropout: the probability of dropping an attention probability, 0 to 0.99 (0, the\n"
         "  default: none); standard runs it as separate passes, flash1 and flash2 fuse it\n"
         "  --mask: the key-padding mask, sequence b keeping its first N - floor(b*N/(2B)) keys\n"
         "  (--mask=0 / =1 as for --causal)\n"
         "  --varlen: pack the --lengths FILE's sequences without padding (FlashAttention-2's\n"
         "  varlen API: sequence b has n_b queries and keys; flash2 only); --varlen=0 (the\n"
         "  default) is the padded layout with those key lengths; needs --lengths\n"
         "  --kernel: the forward kernel's family at each tiling (the panel's kernel combo; default:\n"
         "  each tiling's first built kernel); wgmma_ws runs dense attention only\n";
}

ParseResult parse_command_line(const QStringList& arguments) {
  ParseResult result;
  CommandLine& cl = result.line;
  WorkbenchParams& p = cl.params;
  try {
    for (int k = 0; k < arguments.size(); ++k) {
      std::string arg = arguments[k].toStdString();
      if (arg.rfind("--", 0) != 0)
        throw sim::InvalidInput("unexpected argument '" + arg + "'; options start with --");
      std::string name = arg.substr(2), value;
      bool has_value = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      const bool is_switch = std::find(kSwitches.begin(), kSwitches.end(), name) != kSwitches.end();
      const bool takes_value =
          std::find(kValueOptions.begin(), kValueOptions.end(), name) != kValueOptions.end();
      if (!is_switch && !takes_value) {
        std::string allowed;
        for (const auto& o : kValueOptions) allowed += (allowed.empty() ? "--" : ", --") + o;
        for (const auto& o : kSwitches) allowed += ", --" + o;
        throw sim::InvalidInput("unknown option --" + name + "; allowed: " + allowed);
      }
      // --gqa-pack alone is 1, as the runner's switch is; a value may follow it as for any option.
      const bool alone = name == "gqa-pack" && !has_value &&
                         (k + 1 >= arguments.size() || arguments[k + 1].startsWith("--"));
      if (takes_value && !has_value && !alone) {
        if (k + 1 >= arguments.size()) throw sim::InvalidInput("--" + name + " needs a value");
        value = arguments[++k].toStdString();
      }
      if (name == "help") cl.help = true;
      else if (name == "no-cache") cl.no_cache = true;
      else if (name == "causal") {
        if (has_value && value != "0" && value != "1")
          throw sim::InvalidInput("--causal takes no value, or =0 / =1 (one configuration)");
        p.problem.causal = !has_value || value == "1";
        cl.params_given = true;
      } else if (name == "mask") {  // the runner's --mask: a switch
        if (has_value && value != "0" && value != "1")
          throw sim::InvalidInput("--mask takes no value, or =0 / =1 (one configuration)");
        p.problem.mask = !has_value || value == "1";
        cl.params_given = true;
      } else if (name == "varlen") {  // the runner's --varlen: a switch
        if (has_value && value != "0" && value != "1")
          throw sim::InvalidInput("--varlen takes no value, or =0 / =1 (one configuration)");
        p.varlen = !has_value || value == "1";
        cl.params_given = true;
      } else if (name == "dropout") {
        p.problem.dropout = dropout_probability(value);
        cl.params_given = true;
      } else if (name == "algo") {
        p.algos.clear();
        std::stringstream ss(value);
        std::string item;
        while (std::getline(ss, item, ',')) {
          auto algo = sim::parse_algo(item);
          if (!algo)
            throw sim::InvalidInput("--algo '" + item + "' is not one of " + sim::allowed_algos());
          p.algos.push_back(*algo);
        }
        if (p.algos.empty()) throw sim::InvalidInput("--algo needs one or more of " + sim::allowed_algos());
        cl.params_given = true;
      } else if (name == "batch") { p.problem.batch = positive(name, value, 1 << 20); cl.params_given = true; }
      else if (name == "heads") { p.problem.heads = positive(name, value, 1 << 16); cl.params_given = true; }
      else if (name == "seqlen") { p.problem.seqlen = positive(name, value, 1 << 20); cl.params_given = true; }
      else if (name == "kv-heads") { p.problem.kv_heads = positive(name, value, 1 << 16); cl.params_given = true; }
      else if (name == "seqlen-k") { p.problem.seqlen_k = positive(name, value, 1 << 20); cl.params_given = true; }
      else if (name == "gqa-pack") {
        if (!alone && value != "0" && value != "1")
          throw sim::InvalidInput("--gqa-pack takes 0 or 1 (one configuration), not '" + value + "'");
        p.gqa_pack = alone || value == "1";
        cl.params_given = true;
      }
      else if (name == "splits") {  // 0 stands for auto (WorkbenchParams::splits)
        p.splits = value == "auto" ? 0 : positive(name, value, 128, ", or auto");
        cl.params_given = true;
      }
      else if (name == "window-left" || name == "window-right") {  // none: sim::kNoWindow
        const int64_t side = value == "none" ? sim::kNoWindow : value == "0" ? 0 : positive(name, value, 1 << 20, ", 0 or none");
        (name == "window-left" ? p.problem.window_left : p.problem.window_right) = side;
        cl.params_given = true;
      }
      else if (name == "page-size") {  // 0: contiguous (WorkbenchParams::page_size)
        p.page_size = value == "0" ? 0 : positive(name, value, 4096, ", or 0");
        try {
          sim::validate_page_size(p.page_size);
        } catch (const sim::InvalidInput& e) {
          throw sim::InvalidInput("--page-size: " + e.problem());
        }
        cl.params_given = true;
      }
      else if (name == "headdim") { p.problem.headdim = positive(name, value, 1024); cl.params_given = true; }
      else if (name == "block-r") { p.block_r = positive(name, value, 65536); cl.params_given = true; }
      else if (name == "block-c") { p.block_c = positive(name, value, 65536); cl.params_given = true; }
      else if (name == "kernel") {
        p.kernel_impl = sim::parse_mma_kind(value);
        if (!p.kernel_impl)
          throw sim::InvalidInput("--kernel '" + value + "' is not one of " + sim::allowed_mma_kinds());
        cl.params_given = true;
      }
      else if (name == "tiling-step") cl.tiling_step = static_cast<int>(positive(name, value, 1 << 20)) - 1;
      else if (name == "dtype") {
        auto t = sim::parse_dtype(value);
        if (!t) throw sim::InvalidInput("--dtype '" + value + "' is not one of " + sim::allowed_dtypes());
        p.problem.dtype = *t;
        cl.params_given = true;
      } else if (name == "pass") {
        auto t = sim::parse_pass(value);
        if (!t) throw sim::InvalidInput("--pass '" + value + "' is not one of " + sim::allowed_passes());
        p.problem.pass = *t;
        cl.params_given = true;
      } else if (name == "sram") {
        auto bytes = parse_size_bytes(value);
        if (!bytes || *bytes > (int64_t{1} << 30))
          throw sim::InvalidInput("--sram '" + value +
                                  "' is not a size up to 1 GiB: a number of bytes, or with KiB, "
                                  "MiB (1024-based) or KB, MB (1000-based)");
        p.sram_bytes = *bytes;
        cl.params_given = true;
      } else if (name == "hw") {
        if (!sim::is_hardware_preset(value)) {
          std::string names;
          for (const auto& n : sim::hardware_preset_names()) names += (names.empty() ? "" : ", ") + n;
          throw sim::InvalidInput("--hw '" + value + "' is not a preset: " + names);
        }
        p.hw_name = value;
        cl.params_given = true;
      } else if (name == "lengths") {
        try {
          (void)sim::read_key_lengths(value);
        } catch (const sim::InvalidInput& e) {
          throw sim::InvalidInput("--lengths: " + e.problem());
        }
        p.lengths_file = value;
        cl.params_given = true;
      } else if (name == "block-mask") {
        p.block_mask = value;
        try {
          sim::validate_block_mask_spec({value});
        } catch (const sim::InvalidInput& e) {
          // Typed on the command line: named by the option, not by the panel's label.
          throw sim::InvalidInput("--block-mask: " + e.problem());
        }
        cl.params_given = true;
      } else if (name == "sweep") {
        const auto colon = value.find(':');
        if (colon == std::string::npos)
          throw sim::InvalidInput("--sweep takes MIN:MAX block sizes (e.g. 16:512), not '" + value + "'");
        p.sweep_min = positive(name, value.substr(0, colon), 65536);
        p.sweep_max = positive(name, value.substr(colon + 1), 65536);
        if (p.sweep_max < p.sweep_min)
          throw sim::InvalidInput("--sweep MIN:MAX needs MIN <= MAX, not '" + value + "'");
        cl.params_given = true;
      } else if (name == "shape") {
        auto s = parse_sweep_shape(value);
        if (!s) throw sim::InvalidInput("--shape '" + value + "' is not one of outer, square, block-c, block-r");
        p.shape = *s;
        cl.params_given = true;
      } else if (name == "results") cl.results_paths << QString::fromStdString(value);
      else if (name == "view") {
        if (value != "block" && value != "scaling" && value != "breakdown" && value != "tiling" &&
            value != "map")
          throw sim::InvalidInput("--view '" + value + "' is not one of block, scaling, breakdown, tiling, map");
        cl.view = QString::fromStdString(value);
      } else if (name == "screenshot") {
        if (value.empty()) throw sim::InvalidInput("--screenshot needs a file name (.png)");
        cl.screenshot_path = QString::fromStdString(value);
      }
    }
    if (p.varlen && p.lengths_file.empty())
      throw sim::InvalidInput("--varlen packs the sequences of a lengths file without padding, so it needs "
                              "--lengths FILE");
    if (cl.params_given) {
      try {
        validate_panel_problem(p);
      } catch (const sim::InvalidInput& e) {
        if (!e.field()) throw;
        // A page size or lengths that do not fit the problem are the window's to show (the panel's
        // problem), as a file that reads is taken here; packing refused (--varlen with dropout, the
        // mask, a window, --seqlen-k, splits, a page size) is refused, as the problem itself is.
        if (e.field() != sim::Field::page_size && e.field() != sim::Field::key_lengths)
          // named by the option that sets the field, as every other message here is
          throw sim::InvalidInput(std::string(cli::option_name(*e.field())) + ": " + e.problem());
      }
    }
  } catch (const sim::InvalidInput& e) {
    result.error = e.what();
  }
  return result;
}

}  // namespace flashio::gui
