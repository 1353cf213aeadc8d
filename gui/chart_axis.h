// Chart axes (docs/gui.md, "Charts"): the scale follows the quantity on the axis, never the data
// (bytes, times, block sizes, N and M always logarithmic; FLOPs linear over the data's range,
// so curves a few per cent apart do not collapse into one band at the top of a 0-based axis;
// stacked bars linear from 0), and tick labels carry their unit (B … GB, ns … s, FLOP …
// TFLOP, KiB for M).
//
// One way to put units on ticks: the series keep their numbers as they are (bytes, ms, FLOPs;
// tooltips, tests and CSV export read them unchanged) and are attached to a value axis that
// only maps them (hidden), while a QCategoryAxis over the same range draws the labelled ticks
// and the grid (Qt's value axes take only a printf format, which cannot change units). On a log
// scale the category axis runs over log10 of the range, where QLogValueAxis maps linearly, so
// its ticks land on the values they name.
#pragma once
#include <vector>

#include <QChart>
#include <QCategoryAxis>
#include <QString>

namespace flashio::gui {

enum class AxisQuantity {
  count,          // block sizes, N: plain numbers (the title names what is counted)
  bytes,          // traffic, 1000-based (B, KB, MB, GB), as the runner prints it
  sram_bytes,     // M, 1024-based (B, KiB, MiB), as the presets are given
  flops,          // FLOP, kFLOP … TFLOP
  time_ms,        // values in ms, labelled ns … s
  stacked_bytes,  // stacked bars of bytes: heights add, so linear from 0
  percent,        // shares of a bar, 0 … 100 %
};

enum class AxisScale { log, linear_fitted, linear_from_zero };
AxisScale axis_scale(AxisQuantity quantity);

struct AxisTick {
  double value = 0;
  QString label;
};

// The label of `value` with `digits` significant digits ("1.5 GB", "250 µs", "1,024").
QString tick_label(AxisQuantity quantity, double value, int digits = 3);

// The axis range for data in [data_min, data_max] (positive on a log scale), with room around it.
std::pair<double, double> axis_range(AxisQuantity quantity, double data_min, double data_max);

// Ticks over [lo, hi]: at `at` (e.g. the swept block sizes) when given, every k-th of them when
// more than `max_count`; otherwise 1-2-5 steps per decade on a log scale (sparser or denser so
// there are 3 … max_count), round steps on a linear one. Labels are made unique by adding
// significant digits.
std::vector<AxisTick> axis_ticks(AxisQuantity quantity, double lo, double hi,
                                 const std::vector<double>& at = {}, int max_count = 8);

// Adds an axis for `quantity` over [lo, hi] to `chart` on `side`, with `ticks` labelled, and
// returns the axis series must attach to (the hidden mapping axis on a log scale, the labelled
// axis itself on a linear one). `labels` receives the labelled axis.
QAbstractAxis* add_axis(QChart* chart, Qt::Alignment side, AxisQuantity quantity,
                        const QString& title, double lo, double hi,
                        const std::vector<AxisTick>& ticks, QCategoryAxis** labels = nullptr);

}  // namespace flashio::gui
