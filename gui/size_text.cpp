#include "gui/size_text.h"

#include <cmath>

#include <QLocale>

#include "sim/byte_size.h"

namespace flashio::gui {

std::optional<int64_t> parse_size_bytes(const std::string& text) {
  const auto bytes = sim::parse_byte_size(text).bytes;
  if (bytes && *bytes <= 0) return std::nullopt;
  return bytes;
}

QString format_bytes_binary(double bytes) {
  return QString::fromStdString(sim::format_bytes_binary(bytes));
}

QString format_bytes_decimal(double bytes) {
  return QString::fromStdString(sim::format_bytes(bytes));
}

QString format_exact(double value) {
  if (std::abs(value) < 9.0e15 && value == std::floor(value))
    return QLocale(QLocale::English).toString(static_cast<qlonglong>(value));
  return QLocale(QLocale::English).toString(value, 'g', 10);
}

}  // namespace flashio::gui
