#include "gui/size_text.h"

#include <array>
#include <cctype>
#include <cmath>
#include <utility>

#include <QLocale>

#include "sim/byte_size.h"

namespace flashio::gui {

std::optional<int64_t> parse_size_bytes(const std::string& text) {
  const auto bytes = sim::parse_byte_size(text).bytes;
  if (bytes && *bytes <= 0) return std::nullopt;
  return bytes;
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
