// Lists and inclusive ranges of option values, the sweep syntax of experiments/README.md
// ("Lists and ranges"): a comma-separated list of items, each a value or a range
//   lo:hi:xK   lo, lo·K, lo·K², ... while ≤ hi   (multiplies; K an integer ≥ 2)
//   lo:hi:S    lo, lo+S, lo+2S, ... while ≤ hi   (adds; S > 0; "+S" also accepted)
//   lo:hi      the same with S = 1
// Ranges are inclusive: hi is part of the list when a step lands on it. Repeated values are
// kept once, in first-seen order, so a sweep never has two identical configurations.
// Every function throws UsageError naming `option` (e.g. "--seqlen") and the allowed syntax.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/byte_size.h"

namespace flashio::cli {

// The most values one option may expand to (a guard against "1:1000000000" typos).
constexpr int64_t kMaxListValues = 1'000'000;

// Integers: "512,1024,4096", "16:512:x2", "1000:4000:1000".
std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text);

// Sizes in bytes: plain bytes ("232448", "232448B"), 1024-based KiB, MiB, GiB and 1000-based
// KB (or kB), MB, GB; a decimal value is allowed when it names whole bytes ("1.5KiB"). Ranges
// take sizes at both ends and for an additive step ("64KiB:256KiB:x2", "100KB:200KB:20KB").
int64_t parse_size_bytes(const std::string& option, const std::string& text);
std::vector<int64_t> parse_size_list(const std::string& option, const std::string& text);

// Reals: "0,0.1,0.2" or "0:0.3:0.1" (additive steps only; hi included within rounding).
std::vector<double> parse_real_list(const std::string& option, const std::string& text);

// Switches: "1", "0", "0,1" (also true/false, yes/no, on/off).
std::vector<int> parse_switch_list(const std::string& option, const std::string& text);

// Names (algorithms, presets, block-mask specs): comma-separated, trimmed, none empty.
std::vector<std::string> parse_name_list(const std::string& option, const std::string& text);

// Bytes are printed by sim's formatters (sim/byte_size.h), the same as the GUI's: "1.50 GB"
// (traffic, 1000-based) and "227 KiB" (an SRAM size in the unit that divides it exactly).
using sim::format_bytes;
using sim::format_size;
// "68.7 GFLOP", "1.2 TFLOP".
std::string format_flops(double flops);

}  // namespace flashio::cli
