#include "gui/size_text.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

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

namespace {

// `value` with `digits` significant digits (all its integer digits at least), no trailing zeros.
QString significant(double value, int digits) {
  if (value == 0) return QStringLiteral("0");
  const int integer_digits = std::max(1, static_cast<int>(std::floor(std::log10(std::abs(value)))) + 1);
  QString text = QString::number(value, 'f', std::max(0, digits - integer_digits));
  if (text.contains('.')) {
    while (text.endsWith('0')) text.chop(1);
    if (text.endsWith('.')) text.chop(1);
  }
  return text;
}

// The largest unit the value reaches (the first unit for values below every other).
QString scaled(double value, double base, std::initializer_list<const char*> names, int digits) {
  double unit = 1, next = 1;
  const char* name = *names.begin();
  for (const char* n : names) {
    if (n != *names.begin() && std::abs(value) < next) break;
    name = n;
    unit = next;
    next *= base;
  }
  return significant(value / unit, digits) + QStringLiteral(" ") + QString::fromUtf8(name);
}

}  // namespace

QString format_bytes_short(double bytes, int digits) {
  return scaled(bytes, 1000.0, {"B", "KB", "MB", "GB", "TB", "PB"}, digits);
}

QString format_bytes_binary_short(double bytes, int digits) {
  return scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"}, digits);
}

QString format_flops_short(double flops, int digits) {
  return scaled(flops, 1000.0, {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"}, digits);
}

QString format_time_ms_short(double time_ms, int digits) {
  // From nanoseconds up, in steps of 1000; seconds are the last unit.
  return scaled(time_ms * 1e6, 1000.0, {"ns", "µs", "ms", "s"}, digits);
}

QString format_exact(double value) {
  if (std::abs(value) < 9.0e15 && value == std::floor(value))
    return QLocale(QLocale::English).toString(static_cast<qlonglong>(value));
  return QLocale(QLocale::English).toString(value, 'g', 10);
}

}  // namespace flashio::gui
