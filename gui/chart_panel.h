// ChartPanel: one Qt Charts chart with the habits every view needs: log axes only for ranges
// that span decades and never a value <= 0 on them (Qt Charts drops a whole series that has
// one), tooltips that give the exact row behind a point, and export to PNG, SVG and CSV.
#pragma once
#include <map>
#include <vector>

#include <QChartView>
#include <QColor>
#include <QPointF>
#include <QString>

#include "sim/row.h"

namespace flashio::gui {

enum class SeriesKind { line, dashed, dotted, dashdot, points, squares };

// One point of a series and what its tooltip says.
struct ChartPoint {
  double x = 0, y = 0;
  QString tip;
  sim::Row row;  // the row behind the point (exported with the chart's data)
};

class ChartPanel : public QChartView {
  Q_OBJECT
 public:
  explicit ChartPanel(const QString& title, QWidget* parent = nullptr);

  // Starts a redraw: removes every series and axis.
  void clear();
  // Adds a series named `name` (its objectName too, so tests can find it). Points with x <= 0
  // or y <= 0 are left out when that axis may become logarithmic; NaN are always left out.
  QAbstractSeries* add_series(const QString& name, SeriesKind kind, const QColor& color,
                              std::vector<ChartPoint> points);
  // A vertical marker line at x (e.g. the Saha–Ye crossover M = d²), drawn across the y range.
  void add_marker(const QString& name, double x, const QColor& color);
  // Ends a redraw: builds the axes over the data. An axis is logarithmic when asked and every
  // value on it is positive and the range spans at least `decades_for_log` (10× by default).
  void finish(const QString& x_title, const QString& y_title, bool x_log, bool y_log,
              double decades_for_log = 10.0);

  QAbstractSeries* series_named(const QString& name) const;
  const std::vector<ChartPoint>& points_of(const QAbstractSeries* series) const;
  bool x_is_log() const { return x_log_; }
  bool y_is_log() const { return y_log_; }
  // The rows behind every point, in series order (the chart's data for CSV export).
  std::vector<sim::Row> rows() const;


 private:
  void show_tip(QAbstractSeries* series, const QPointF& at, bool entered);

  std::map<const QAbstractSeries*, std::vector<ChartPoint>> points_;
  std::vector<std::pair<QString, std::pair<double, QColor>>> markers_;
  std::vector<QAbstractSeries*> order_;
  bool x_log_ = false, y_log_ = false;
};

// The standard colour of an algorithm (and of its bound, measured and L2 curves); every peer
// (PyTorch backend) shares one colour, bounds are grey.
QColor algo_color(sim::RowAlgo algo);

// Renders a chart (any widget) to a PNG or an SVG file; a failure leaves no partial file.
bool export_png(QWidget* widget, const QString& path);
bool export_svg(QWidget* widget, const QString& path, const QString& title);

// Writes rows as CSV in sim's row schema (sim/row.h: csv_header, to_csv_line). Writes a temporary
// file and renames it, so a failure leaves no partial file.
bool write_rows_csv(const std::vector<sim::Row>& rows, const QString& path, QString* error);

}  // namespace flashio::gui
