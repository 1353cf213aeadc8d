#include "experiments/value_list.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>
#include <string_view>

#include "experiments/usage_error.h"
#include "sim/byte_size.h"
#include "sim/trim.h"

namespace flashio::cli {
namespace {

const char* kRangeSyntax = "a list like 512,1024 or a range lo:hi:xK (multiply) or lo:hi:S (add)";

using sim::trim;

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(trim(s.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

[[noreturn]] void fail(const std::string& option, std::string_view text, const std::string& why) {
  throw UsageError(option + " '" + std::string(text) + "': " + why);
}

bool parse_whole_int(std::string_view s, int64_t& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool parse_whole_real(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty() && std::isfinite(out);
}

// Keeps the first occurrence of every value, in order.
template <typename T>
void append_unique(std::vector<T>& values, std::unordered_set<T>& seen, T v, const std::string& option,
                   std::string_view text) {
  if (seen.insert(v).second) values.push_back(v);
  if (static_cast<int64_t>(values.size()) > kMaxListValues)
    fail(option, text, "expands to more than " + std::to_string(kMaxListValues) + " values");
}

// Expands the items of an integer-valued list; `parse_value` turns one token into a value.
template <typename ParseValue>
std::vector<int64_t> expand_int_items(const std::string& option, const std::string& text,
                                      ParseValue parse_value) {
  std::vector<int64_t> values;
  std::unordered_set<int64_t> seen;  // a million values in a range: hashing, not a tree
  if (trim(text).empty()) fail(option, text, "empty; expected " + std::string(kRangeSyntax));
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) fail(option, text, "empty item; expected " + std::string(kRangeSyntax));
    const auto fields = split(item, ':');
    if (fields.size() == 1) {
      append_unique(values, seen, parse_value(fields[0]), option, text);
      continue;
    }
    if (fields.size() > 3)
      fail(option, item, "a range has at most three fields; expected " + std::string(kRangeSyntax));
    const int64_t lo = parse_value(fields[0]);
    const int64_t hi = parse_value(fields[1]);
    if (lo > hi) fail(option, item, "range start is above its end");
    std::string_view step_text = fields.size() == 3 ? fields[2] : std::string_view("1");
    if (!step_text.empty() && (step_text.front() == 'x' || step_text.front() == 'X')) {
      int64_t factor = 0;
      if (!parse_whole_int(step_text.substr(1), factor) || factor < 2)
        fail(option, item, "a multiplying step is xK with an integer K >= 2");
      if (lo <= 0) fail(option, item, "a multiplying range must start above 0");
      for (int64_t v = lo; v <= hi;) {
        append_unique(values, seen, v, option, text);
        if (v > hi / factor) break;  // the next value passes hi (or would overflow)
        v *= factor;
      }
    } else {
      const int64_t step = parse_value(step_text);
      if (step <= 0) fail(option, item, "an adding step must be above 0");
      // hi − lo in unsigned arithmetic: it can pass 2^63 (lo < 0 < hi) but never 2^64.
      const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
      if (span / static_cast<uint64_t>(step) + 1 > static_cast<uint64_t>(kMaxListValues))
        fail(option, item, "expands to more than " + std::to_string(kMaxListValues) + " values");
      for (int64_t v = lo;; v += step) {
        append_unique(values, seen, v, option, text);
        if (static_cast<uint64_t>(hi) - static_cast<uint64_t>(v) < static_cast<uint64_t>(step)) break;  // v + step > hi
      }
    }
  }
  return values;
}

}  // namespace

std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text) {
  return expand_int_items(option, text, [&](std::string_view token) {
    int64_t v = 0;
    if (!parse_whole_int(token, v))
      fail(option, token, "not an integer; expected " + std::string(kRangeSyntax));
    return v;
  });
}

int64_t parse_size_bytes(const std::string& option, const std::string& text) {
  const sim::ByteSizeParse parsed = sim::parse_byte_size(text);
  if (!parsed.bytes) fail(option, trim(text), parsed.error);
  return *parsed.bytes;
}

std::vector<int64_t> parse_size_list(const std::string& option, const std::string& text) {
  return expand_int_items(option, text, [&](std::string_view token) {
    return parse_size_bytes(option, std::string(token));
  });
}

std::vector<double> parse_real_list(const std::string& option, const std::string& text) {
  std::vector<double> values;
  std::unordered_set<double> seen;
  if (trim(text).empty()) fail(option, text, "empty; expected a list like 0,0.1 or a range 0:0.3:0.1");
  auto real = [&](std::string_view token) {
    double v = 0;
    if (!parse_whole_real(token, v))
      fail(option, token, "not a number; expected a list like 0,0.1 or a range 0:0.3:0.1");
    return v;
  };
  for (std::string_view item : split(text, ',')) {
    const auto fields = split(item, ':');
    if (fields.size() == 1) {
      append_unique(values, seen, real(fields[0]), option, text);
      continue;
    }
    if (fields.size() != 3) fail(option, item, "a range of reals is lo:hi:S with S > 0");
    const double lo = real(fields[0]), hi = real(fields[1]), step = real(fields[2]);
    if (lo > hi) fail(option, item, "range start is above its end");
    if (!(step > 0)) fail(option, item, "an adding step must be above 0");
    // Inclusive within rounding: 0:0.3:0.1 ends at 0.3 although 3 × 0.1 ≠ 0.3 in binary.
    const double steps = std::floor((hi - lo) / step + 1e-9);
    if (steps + 1 > static_cast<double>(kMaxListValues))
      fail(option, item, "expands to more than " + std::to_string(kMaxListValues) + " values");
    for (int64_t k = 0; k <= static_cast<int64_t>(steps); ++k)
      append_unique(values, seen, lo + static_cast<double>(k) * step, option, text);
  }
  return values;
}

std::vector<int> parse_switch_list(const std::string& option, const std::string& text) {
  std::vector<int> values;
  std::unordered_set<int> seen;
  for (std::string_view item : split(text, ',')) {
    int v = 0;
    if (item == "1" || item == "true" || item == "yes" || item == "on") {
      v = 1;
    } else if (item == "0" || item == "false" || item == "no" || item == "off") {
      v = 0;
    } else {
      fail(option, text, "a switch takes 0 or 1 (or 0,1 to sweep both)");
    }
    append_unique(values, seen, v, option, text);
  }
  return values;
}

std::vector<std::string> parse_name_list(const std::string& option, const std::string& text) {
  std::vector<std::string> values;
  std::unordered_set<std::string> seen;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) fail(option, text, "empty item in the list");
    append_unique(values, seen, std::string(item), option, text);
  }
  return values;
}

// Three significant digits without exponent notation: "1.23", "12.3", "123".
static std::string three_digits(double v) {
  char buf[48];
  const double a = std::abs(v);
  std::snprintf(buf, sizeof buf, a >= 99.95 ? "%.0f" : a >= 9.995 ? "%.1f" : "%.2f", v);
  return buf;
}

std::string format_flops(double flops) {
  static const char* kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  int unit = 0;
  double v = flops;
  while (std::abs(v) >= 1000.0 && unit < 5) {
    v /= 1000.0;
    ++unit;
  }
  return (unit == 0 ? std::to_string(static_cast<int64_t>(v)) : three_digits(v)) + " " +
         kUnits[unit];
}

}  // namespace flashio::cli
