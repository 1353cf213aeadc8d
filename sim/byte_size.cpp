#include "sim/byte_size.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/trim.h"

namespace flashio::sim {

ByteSizeParse parse_byte_size(std::string_view text_in) {
  const std::string_view text = trim(text_in);
  struct Unit {
    const char* suffix;
    double bytes;
  };
  // Longest suffixes first, so "KiB" is not read as "B".
  static const Unit kUnits[] = {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                                {"KB", 1e3},     {"kB", 1e3},        {"MB", 1e6},
                                {"GB", 1e9},     {"B", 1.0}};
  double scale = 1.0;
  std::string_view number = text;
  for (const Unit& u : kUnits) {
    const std::string_view suffix(u.suffix);
    if (number.size() >= suffix.size() && number.substr(number.size() - suffix.size()) == suffix) {
      number = trim(number.substr(0, number.size() - suffix.size()));
      scale = u.bytes;
      break;
    }
  }
  if (!number.empty() && number.front() == '+') number.remove_prefix(1);
  // A whole number times a whole unit is exact in integers (a double holds 53 bits: 2^53 + 1
  // would be read as 2^53); beyond 64 bits it is too large, not wrapped.
  int64_t whole = 0;
  if (const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), whole);
      !number.empty() && end == number.data() + number.size() &&
      (ec == std::errc() || ec == std::errc::result_out_of_range)) {
    int64_t bytes = 0;
    if (ec == std::errc::result_out_of_range ||
        __builtin_mul_overflow(whole, static_cast<int64_t>(scale), &bytes) || bytes > 9'000'000'000'000'000'000 ||
        bytes < -9'000'000'000'000'000'000)
      return {std::nullopt, "too large (at most 9e18 bytes)"};
    return {bytes, ""};
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value))
    return {std::nullopt, std::string("expected ") + kByteSizeSyntax};
  const double bytes = value * scale;
  if (!(std::abs(bytes) <= 9.0e18)) return {std::nullopt, "too large (at most 9e18 bytes)"};  // a cast beyond 2^63 is undefined
  const double rounded = std::round(bytes);
  if (std::abs(bytes - rounded) > 1e-6 * std::max(1.0, bytes))
    return {std::nullopt, "is not a whole number of bytes"};
  return {static_cast<int64_t>(rounded), ""};
}

namespace {

// Divides by `base` while the value reaches it, then prints three significant digits.
std::string format_scaled(double bytes, double base, const char* const (&names)[6]) {
  int unit = 0;
  double v = bytes;
  while (std::abs(v) >= base && unit < 5) {
    v /= base;
    ++unit;
  }
  char number[48];
  if (unit == 0) {
    std::snprintf(number, sizeof number, "%.0f", v);  // whole bytes
  } else {
    // "1.23", "12.3", "123": no exponent notation.
    const double a = std::abs(v);
    std::snprintf(number, sizeof number, a >= 99.95 ? "%.0f" : a >= 9.995 ? "%.1f" : "%.2f", v);
  }
  return std::string(number) + " " + names[unit];
}

}  // namespace

std::string format_bytes(double bytes) {
  static const char* const kNames[6] = {"B", "KB", "MB", "GB", "TB", "PB"};
  return format_scaled(bytes, 1000.0, kNames);
}

std::string format_bytes_binary(double bytes) {
  static const char* const kNames[6] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return format_scaled(bytes, 1024.0, kNames);
}

std::string format_size(int64_t bytes) {
  struct Unit {
    int64_t bytes;
    const char* name;
  };
  static const Unit kUnits[] = {{1LL << 30, "GiB"}, {1000000000, "GB"}, {1LL << 20, "MiB"},
                                {1000000, "MB"},    {1024, "KiB"},      {1000, "KB"}};
  for (const Unit& u : kUnits)
    if (bytes >= u.bytes && bytes % u.bytes == 0)
      return std::to_string(bytes / u.bytes) + " " + u.name;
  return std::to_string(bytes) + " B";
}

}  // namespace flashio::sim
