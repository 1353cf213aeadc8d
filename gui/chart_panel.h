// ChartPanel: one Qt Charts chart with the habits every view needs (docs/gui.md, "Charts"):
// axes whose scale and tick units follow the quantity (gui/chart_axis.h), never a value <= 0 on
// a log axis (Qt Charts drops a whole series that has one), series drawn in the style of their
// source (gui/chart_style.h), a legend below the plot that wraps and is never clipped
// (gui/chart_legend.h), tooltips that give the exact values and the row behind a point, and
// export to PNG, SVG and CSV.
#pragma once
#include <map>
#include <vector>

#include <QChartView>
#include <QColor>
#include <QPointF>
#include <QString>

#include "gui/chart_axis.h"
#include "gui/chart_legend.h"
#include "gui/chart_style.h"
#include "gui/plotted_row.h"
#include "sim/row.h"

namespace flashio::gui {

// One point of a series and what its tooltip says.
struct ChartPoint {
  double x = 0, y = 0;
  QString tip;
  sim::Row row;  // the row behind the point (exported with the chart's data)
};

// An axis of a chart: its title, what it shows (which fixes its scale and tick units), and
// where its ticks go when they should be at given values (the swept block sizes, N or M).
struct AxisSpec {
  QString title;
  AxisQuantity quantity = AxisQuantity::count;
  std::vector<double> ticks_at;
};

class ChartPanel : public QChartView {
  Q_OBJECT
 public:
  explicit ChartPanel(const QString& title, QWidget* parent = nullptr);

  // Starts a redraw: removes every series and axis.
  void clear();
  // Adds a series named `name` (its objectName too, so tests can find it) in the style of
  // `kind`. Points with x <= 0 or y <= 0 or NaN are left out (a log axis cannot show them; on
  // a linear one counts and times are positive when known). A series with no point left is
  // not added (no legend entry for nothing drawn): nullptr.
  QAbstractSeries* add_series(const QString& name, SeriesKind kind, const QColor& color,
                              std::vector<ChartPoint> points);
  // A vertical marker line at x (e.g. the Saha–Ye crossover M = d²), drawn across the y range.
  void add_marker(const QString& name, double x, const QColor& color);
  // Ends a redraw: builds the axes over the data (scale by quantity, ticks with units) and
  // the legend from the series drawn.
  void finish(const AxisSpec& x, const AxisSpec& y);

  // A legend for series that add_series did not make (the Breakdown view's bar sets).
  void set_legend(std::vector<LegendEntry> entries);
  ChartLegend* legend_widget() const { return legend_; }

  QAbstractSeries* series_named(const QString& name) const;
  const std::vector<ChartPoint>& points_of(const QAbstractSeries* series) const;
  bool x_is_log() const { return x_log_; }
  bool y_is_log() const { return y_log_; }
  const std::vector<AxisTick>& x_ticks() const { return x_ticks_; }
  const std::vector<AxisTick>& y_ticks() const { return y_ticks_; }
  // The axes that draw the ticks and their labels (null before finish()).
  QCategoryAxis* x_label_axis() const { return x_labels_; }
  QCategoryAxis* y_label_axis() const { return y_labels_; }
  // The tooltip of a series' point: the series, x and y exactly and in units, and the row.
  QString tip_text(const QAbstractSeries* series, size_t index) const;
  // The rows behind every point, in series order (the chart's data for CSV export).
  std::vector<sim::Row> rows() const;  // The same with the x each is drawn at, labelled in the x axis's units (the table's
  // "drawn at" column).
  std::vector<PlottedRow> plotted_rows() const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void show_tip(QAbstractSeries* series, const QPointF& at, bool entered);
  void layout_legend();

  std::map<const QAbstractSeries*, std::vector<ChartPoint>> points_;
  std::vector<std::pair<QString, std::pair<double, QColor>>> markers_;
  std::vector<QAbstractSeries*> order_;
  bool x_log_ = false, y_log_ = false;
  AxisSpec x_spec_;
  AxisQuantity x_quantity_ = AxisQuantity::count, y_quantity_ = AxisQuantity::count;
  std::vector<AxisTick> x_ticks_, y_ticks_;
  QCategoryAxis* x_labels_ = nullptr;
  QCategoryAxis* y_labels_ = nullptr;
  ChartLegend* legend_;
  bool laying_out_ = false, relayout_ = false;
};

// The legend entry that draws `series` as the chart does (its pen, marker shape, fill).
LegendEntry legend_entry_of(const QAbstractSeries* series);

// Renders a chart (any widget) to a PNG or an SVG file; a failure leaves no partial file.
bool export_png(QWidget* widget, const QString& path);
bool export_svg(QWidget* widget, const QString& path, const QString& title);

// Writes rows as CSV in sim's row schema (sim/row.h: csv_header, to_csv_line). Writes a temporary
// file and renames it, so a failure leaves no partial file.
bool write_rows_csv(const std::vector<sim::Row>& rows, const QString& path, QString* error);

}  // namespace flashio::gui
