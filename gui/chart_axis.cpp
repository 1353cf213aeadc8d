#include "gui/chart_axis.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QLocale>
#include <QLogValueAxis>
#include <QValueAxis>

#include "gui/size_text.h"

namespace flashio::gui {

AxisScale axis_scale(AxisQuantity quantity) {
  switch (quantity) {
    case AxisQuantity::count:
    case AxisQuantity::bytes:
    case AxisQuantity::sram_bytes:
    case AxisQuantity::time_ms: return AxisScale::log;
    case AxisQuantity::flops: return AxisScale::linear_fitted;
    case AxisQuantity::stacked_bytes:
    case AxisQuantity::percent: return AxisScale::linear_from_zero;
  }
  return AxisScale::log;
}

QString tick_label(AxisQuantity quantity, double value, int digits) {
  switch (quantity) {
    case AxisQuantity::count:
      if (value == std::floor(value) && std::abs(value) < 9.0e15)
        return QLocale(QLocale::English).toString(static_cast<qlonglong>(value));
      return QString::number(value, 'g', digits);
    case AxisQuantity::bytes:
    case AxisQuantity::stacked_bytes: return format_bytes_short(value, digits);
    case AxisQuantity::sram_bytes: return format_bytes_binary_short(value, digits);
    case AxisQuantity::flops: return format_flops_short(value, digits);
    case AxisQuantity::time_ms: return format_time_ms_short(value, digits);
    case AxisQuantity::percent: return QString::number(value, 'g', digits) + QStringLiteral(" %");
  }
  return QString::number(value, 'g', digits);
}

std::pair<double, double> axis_range(AxisQuantity quantity, double data_min, double data_max) {
  switch (axis_scale(quantity)) {
    case AxisScale::log: {
      if (!(data_min > 0) || !(data_max >= data_min)) return {1, 10};
      double lo = data_min / 1.3, hi = data_max * 1.3;
      if (hi / lo < 3) {  // a flat series: a factor of 3 around it, so ticks can be placed
        const double mid = std::sqrt(data_min * data_max);
        lo = mid / std::sqrt(3.0);
        hi = mid * std::sqrt(3.0);
      }
      return {lo, hi};
    }
    case AxisScale::linear_fitted: {
      if (!(data_max >= data_min)) return {0, 1};
      double span = data_max - data_min;
      if (span <= std::abs(data_max) * 1e-9) span = std::max(std::abs(data_max) * 0.1, 1.0);
      return {data_min - 0.08 * span, data_max + 0.08 * span};
    }
    case AxisScale::linear_from_zero:
      if (quantity == AxisQuantity::percent) return {0, 100};
      return {0, data_max > 0 ? data_max * 1.05 : 1};
  }
  return {data_min, data_max};
}

namespace {

// Round steps over [lo, hi]: 1, 2, 2.5 or 5 × 10^k, about `target` ticks.
std::vector<double> linear_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo)) return ticks;
  const double raw = (hi - lo) / target;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  double step = decade * 10;
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * decade >= raw) {
      step = m * decade;
      break;
    }
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi * (1 + 1e-12); k += 1)
    ticks.push_back(std::abs(k) < 1e-9 ? 0.0 : k * step);
  return ticks;
}

// Mantissas × 10^k inside [lo, hi], every `every`-th decade.
std::vector<double> decade_ticks(double lo, double hi, const std::vector<double>& mantissas,
                                 int every = 1) {
  std::vector<double> ticks;
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  for (int e = first; e <= last; ++e) {
    if ((e % every + every) % every != 0) continue;
    for (const double m : mantissas) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12)) ticks.push_back(v);
    }
  }
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi, int max_count) {
  auto ticks = decade_ticks(lo, hi, {1, 2, 5});
  for (int every = 1; ticks.size() > static_cast<size_t>(max_count); ++every)
    ticks = decade_ticks(lo, hi, {1}, every);
  if (ticks.size() < 3) ticks = decade_ticks(lo, hi, {1, 1.5, 2, 3, 5, 7});
  if (ticks.size() < 3) ticks = linear_ticks(lo, hi, 5);
  return ticks;
}

}  // namespace

std::vector<AxisTick> axis_ticks(AxisQuantity quantity, double lo, double hi,
                                 const std::vector<double>& at, int max_count) {
  std::vector<double> values;
  if (!at.empty()) {
    std::vector<double> inside;
    for (const double v : at)
      if (v >= lo && v <= hi) inside.push_back(v);
    std::sort(inside.begin(), inside.end());
    inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
    const size_t every = (inside.size() + static_cast<size_t>(max_count) - 1) / static_cast<size_t>(max_count);
    for (size_t i = 0; i < inside.size(); i += std::max<size_t>(every, 1)) values.push_back(inside[i]);
  } else if (axis_scale(quantity) == AxisScale::log) {
    values = log_ticks(lo, hi, max_count);
  } else {
    values = linear_ticks(lo, hi, 5);
  }
  // The fewest significant digits (3 at least) that give every tick its own label.
  std::vector<AxisTick> ticks;
  for (int digits = 3; digits <= 12; ++digits) {
    ticks.clear();
    std::set<QString> seen;
    bool unique = true;
    for (const double v : values) {
      ticks.push_back({v, tick_label(quantity, v, digits)});
      unique = unique && seen.insert(ticks.back().label).second;
    }
    if (unique) break;
  }
  return ticks;
}

QAbstractAxis* add_axis(QChart* chart, Qt::Alignment side, AxisQuantity quantity,
                        const QString& title, double lo, double hi,
                        const std::vector<AxisTick>& ticks, QCategoryAxis** labels) {
  const bool log = axis_scale(quantity) == AxisScale::log;
  auto position = [log](double v) { return log ? std::log10(v) : v; };
  auto* labelled = new QCategoryAxis();
  labelled->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  labelled->setRange(position(lo), position(hi));
  labelled->setStartValue(position(lo));
  for (const AxisTick& t : ticks)
    if (t.value >= lo && t.value <= hi) labelled->append(t.label, position(t.value));
  labelled->setTitleText(title);
  labelled->setGridLineVisible(true);
  QAbstractAxis* mapping = labelled;
  if (log) {
    auto* axis = new QLogValueAxis();
    axis->setBase(10);
    axis->setRange(lo, hi);
    axis->setVisible(false);
    mapping = axis;
    chart->addAxis(axis, side);
  }
  chart->addAxis(labelled, side);
  if (labels) *labels = labelled;
  return mapping;
}

}  // namespace flashio::gui
