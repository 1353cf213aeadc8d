#include "gui/size_text.h"

#include <array>
#include <cctype>
#include <cmath>
#include <utility>

#include <QLocale>

namespace flashio::gui {

std::optional<int64_t> parse_size_bytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  const int64_t number = std::stoll(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  for (auto& ch : suffix) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::array<std::pair<const char*, int64_t>, 8> units = {{
      {"", 1}, {"b", 1}, {"kib", 1024}, {"mib", 1024 * 1024}, {"kb", 1000}, {"mb", 1000 * 1000},
      {"k", 1024}, {"m", 1024 * 1024}}};
  for (const auto& [name, factor] : units)
    if (suffix == name) {
      if (number <= 0) return std::nullopt;
      return number * factor;
    }
  return std::nullopt;
}

namespace {
QString format_scaled(double bytes, double base, const std::array<const char*, 5>& names) {
  int unit = 0;
  double value = bytes;
  while (std::abs(value) >= base && unit + 1 < static_cast<int>(names.size())) {
    value /= base;
    ++unit;
  }
  if (unit == 0) return QStringLiteral("%1 %2").arg(value, 0, 'f', 0).arg(names[0]);
  const int decimals = std::abs(value) >= 100 ? 0 : std::abs(value) >= 10 ? 1 : 2;
  return QStringLiteral("%1 %2").arg(value, 0, 'f', decimals).arg(names[unit]);
}
}  // namespace

QString format_bytes_binary(double bytes) {
  return format_scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB"});
}

QString format_bytes_decimal(double bytes) {
  return format_scaled(bytes, 1000.0, {"B", "KB", "MB", "GB", "TB"});
}

QString format_exact(double value) {
  if (std::abs(value) < 9.0e15 && value == std::floor(value))
    return QLocale(QLocale::English).toString(static_cast<qlonglong>(value));
  return QLocale(QLocale::English).toString(value, 'g', 10);
}

}  // namespace flashio::gui
