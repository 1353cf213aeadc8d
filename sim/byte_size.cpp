#include "sim/byte_size.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace flashio::sim {
namespace {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

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
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value))
    return {std::nullopt, std::string("expected ") + kByteSizeSyntax};
  const double bytes = value * scale;
  if (bytes > 9.0e18) return {std::nullopt, "too large"};
  const double rounded = std::round(bytes);
  if (std::abs(bytes - rounded) > 1e-6 * std::max(1.0, bytes))
    return {std::nullopt, "is not a whole number of bytes"};
  return {static_cast<int64_t>(rounded), ""};
}

}  // namespace flashio::sim
