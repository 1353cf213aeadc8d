#include "gui/chart_panel.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <QChart>
#include <QCursor>
#include <QFile>
#include <QLineSeries>
#include <QPainter>
#include <QPen>
#include <QSaveFile>
#include <QScatterSeries>
#include <QSvgGenerator>
#include <QToolTip>

#include "gui/size_text.h"

namespace flashio::gui {

ChartPanel::ChartPanel(const QString& title, QWidget* parent) : QChartView(parent) {
  // The chart QChartView made for itself: it lives in the view's scene and is deleted with the
  // view. A chart of our own given to setChart would take its place, and Qt releases the one it
  // replaces without deleting it (QChartView::setChart, Qt 6), so every panel leaked one.
  QChart* chart = this->chart();
  chart->setTitle(title);
  chart->legend()->hide();  // ChartLegend draws the legend (gui/chart_legend.h says why)
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->setBackgroundRoundness(0);
  QFont title_font = chart->titleFont();
  title_font.setBold(true);
  chart->setTitleFont(title_font);
  setRenderHint(QPainter::Antialiasing);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // The legend is a child of the panel in a margin below the viewport: grab() and render()
  // (PNG and SVG export) draw it with the chart.
  legend_ = new ChartLegend(this);
  legend_->hide();
  setMinimumHeight(180);
}

void ChartPanel::clear() {
  chart()->removeAllSeries();
  for (QAbstractAxis* axis : chart()->axes()) {
    chart()->removeAxis(axis);
    delete axis;
  }
  points_.clear();
  markers_.clear();
  order_.clear();
  x_ticks_.clear();
  y_ticks_.clear();
  x_labels_ = y_labels_ = nullptr;
}

QAbstractSeries* ChartPanel::add_series(const QString& name, SeriesKind kind, const QColor& color,
                                        std::vector<ChartPoint> points) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const ChartPoint& p) {
                                return !std::isfinite(p.x) || !std::isfinite(p.y) || p.x <= 0 ||
                                       p.y <= 0;
                              }),
               points.end());
  if (points.empty()) return nullptr;
  std::sort(points.begin(), points.end(),
            [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
  QXYSeries* series = nullptr;
  if (is_point_kind(kind)) {
    auto* scatter = new QScatterSeries();
    scatter->setMarkerSize(kind == SeriesKind::measured ? 10 : 9);
    scatter->setMarkerShape(kind == SeriesKind::measured ? QScatterSeries::MarkerShapeCircle
                                                         : QScatterSeries::MarkerShapeRectangle);
    scatter->setColor(color);
    scatter->setBorderColor(color.darker(150));
    series = scatter;
  } else {
    auto* line = new QLineSeries();
    line->setPen(series_pen(kind, color));
    line->setPointsVisible(kind == SeriesKind::model);
    series = line;
  }
  series->setName(name);
  series->setObjectName(name);
  QList<QPointF> qpoints;
  qpoints.reserve(static_cast<qsizetype>(points.size()));
  for (const auto& p : points) qpoints.append(QPointF(p.x, p.y));
  series->replace(qpoints);
  connect(series, &QXYSeries::hovered, this,
          [this, series](const QPointF& at, bool entered) { show_tip(series, at, entered); });
  points_[series] = std::move(points);
  order_.push_back(series);
  chart()->addSeries(series);
  return series;
}

void ChartPanel::add_marker(const QString& name, double x, const QColor& color) {
  markers_.push_back({name, {x, color}});
}

void ChartPanel::finish(const AxisSpec& x, const AxisSpec& y) {
  x_spec_ = x;
  double x_min = std::numeric_limits<double>::max(), x_max = 0;
  double y_min = std::numeric_limits<double>::max(), y_max = 0;
  for (const auto& [series, pts] : points_)
    for (const auto& p : pts) {
      x_min = std::min(x_min, p.x); x_max = std::max(x_max, p.x);
      y_min = std::min(y_min, p.y); y_max = std::max(y_max, p.y);
    }
  for (const auto& m : markers_)
    if (m.second.first > 0) {
      x_min = std::min(x_min, m.second.first);
      x_max = std::max(x_max, m.second.first);
    }
  for (const double t : x.ticks_at)
    if (t > 0) {
      x_min = std::min(x_min, t);
      x_max = std::max(x_max, t);
    }
  if (x_max <= 0) x_min = x_max = 0;
  if (y_max <= 0) y_min = y_max = 0;
  x_quantity_ = x.quantity;
  y_quantity_ = y.quantity;
  x_log_ = axis_scale(x.quantity) == AxisScale::log;
  y_log_ = axis_scale(y.quantity) == AxisScale::log;
  const auto [x_lo, x_hi] = axis_range(x.quantity, x_min, x_max);
  const auto [y_lo, y_hi] = axis_range(y.quantity, y_min, y_max);

  // Marker lines span the y axis; added after the data so the range is known.
  for (const auto& [name, where] : markers_) {
    if (!(where.first > 0)) continue;
    auto* line = new QLineSeries();
    line->setPen(series_pen(SeriesKind::marker, where.second));
    line->setName(name);
    line->setObjectName(name);
    line->append(where.first, y_lo);
    line->append(where.first, y_hi);
    chart()->addSeries(line);
  }

  x_ticks_ = axis_ticks(x.quantity, x_lo, x_hi, x.ticks_at);
  y_ticks_ = axis_ticks(y.quantity, y_lo, y_hi, y.ticks_at);
  QAbstractAxis* x_axis =
      add_axis(chart(), Qt::AlignBottom, x.quantity, x.title, x_lo, x_hi, x_ticks_, &x_labels_);
  QAbstractAxis* y_axis =
      add_axis(chart(), Qt::AlignLeft, y.quantity, y.title, y_lo, y_hi, y_ticks_, &y_labels_);
  std::vector<LegendEntry> entries;
  for (QAbstractSeries* s : chart()->series()) {
    s->attachAxis(x_axis);
    s->attachAxis(y_axis);
    entries.push_back(legend_entry_of(s));
  }
  set_legend(std::move(entries));
}

void ChartPanel::set_legend(std::vector<LegendEntry> entries) {
  legend_->set_entries(std::move(entries));
  layout_legend();
}

void ChartPanel::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);
  layout_legend();
}

void ChartPanel::layout_legend() {
  // Setting the minimum height or the margins can resize the panel at once, which calls this
  // again from resizeEvent: then lay out once more with the new size.
  if (laying_out_) {
    relayout_ = true;
    return;
  }
  laying_out_ = true;
  do {
    relayout_ = false;
    const int frame = frameWidth();
    const int w = std::max(0, width() - 2 * frame);
    const int h = legend_->heightForWidth(w);
    // The plot keeps 140 px above the legend; layouts (the views' splitters) grant the rest.
    setMinimumHeight(h + 140);
    setViewportMargins(0, 0, 0, h);
    legend_->setGeometry(frame, height() - frame - h, w, h);
    legend_->setVisible(h > 0);
    // QChartView sizes its chart to the whole widget; the chart gets the viewport above the
    // legend instead.
    chart()->resize(viewport()->size());
    setSceneRect(QRectF(QPointF(0, 0), viewport()->size()));
  } while (relayout_);
  laying_out_ = false;
}

LegendEntry legend_entry_of(const QAbstractSeries* series) {
  LegendEntry e;
  e.name = series->name();
  if (const auto* scatter = qobject_cast<const QScatterSeries*>(series)) {
    e.sample = scatter->markerShape() == QScatterSeries::MarkerShapeRectangle
                   ? LegendEntry::Sample::square
                   : LegendEntry::Sample::circle;
    e.pen = QPen(scatter->borderColor());
    e.brush = QBrush(scatter->color());
  } else if (const auto* line = qobject_cast<const QLineSeries*>(series)) {
    e.sample = LegendEntry::Sample::line;
    e.pen = line->pen();
    e.points = line->pointsVisible();
  }
  return e;
}

QAbstractSeries* ChartPanel::series_named(const QString& name) const {
  for (QAbstractSeries* s : chart()->series())
    if (s->objectName() == name) return s;
  return nullptr;
}

const std::vector<ChartPoint>& ChartPanel::points_of(const QAbstractSeries* series) const {
  static const std::vector<ChartPoint> none;
  auto it = points_.find(series);
  return it == points_.end() ? none : it->second;
}

std::vector<sim::Row> ChartPanel::rows() const {
  std::vector<sim::Row> rows;
  for (const QAbstractSeries* s : order_)
    for (const auto& p : points_of(s)) rows.push_back(p.row);
  return rows;
}

std::vector<PlottedRow> ChartPanel::plotted_rows() const {
  std::vector<PlottedRow> rows;
  for (const QAbstractSeries* s : order_)
    for (const auto& p : points_of(s)) rows.push_back({x_spec_.title, tick_label(x_spec_.quantity, p.x, 6), p.x, p.row});
  return rows;
}

QString ChartPanel::tip_text(const QAbstractSeries* series, size_t index) const {
  const auto& pts = points_of(series);
  if (index >= pts.size()) return {};
  const ChartPoint& p = pts[index];
  // Exact digits, then the value in the axis's unit at full precision.
  auto value = [](AxisQuantity q, double v) {
    return QStringLiteral("%1 (%2)").arg(format_exact(v), tick_label(q, v, 6));
  };
  QString text = QStringLiteral("%1\nx = %2\ny = %3")
                     .arg(series->name(), value(x_quantity_, p.x), value(y_quantity_, p.y));
  if (!p.tip.isEmpty()) text += "\n" + p.tip;
  return text;
}

void ChartPanel::show_tip(QAbstractSeries* series, const QPointF& at, bool entered) {
  if (!entered) {
    QToolTip::hideText();
    return;
  }
  const auto& pts = points_of(series);
  if (pts.empty()) return;
  // The nearest point on screen, so a hover on a line names the point closest to the cursor.
  const QPointF at_px = chart()->mapToPosition(at, series);
  size_t best = 0;
  double best_d = std::numeric_limits<double>::max();
  for (size_t i = 0; i < pts.size(); ++i) {
    const QPointF px = chart()->mapToPosition(QPointF(pts[i].x, pts[i].y), series);
    const double dist = std::hypot(px.x() - at_px.x(), px.y() - at_px.y());
    if (dist < best_d) { best_d = dist; best = i; }
  }
  QToolTip::showText(QCursor::pos(), tip_text(series, best), this);
}

bool export_png(QWidget* widget, const QString& path) {
  const QPixmap pixmap = widget->grab();
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  if (!pixmap.save(&file, "PNG")) {
    file.cancelWriting();
    return false;
  }
  return file.commit();
}

bool export_svg(QWidget* widget, const QString& path, const QString& title) {
  const QSize size = widget->size();
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  QSvgGenerator generator;
  generator.setOutputDevice(&file);
  generator.setSize(size);
  generator.setViewBox(QRect(QPoint(0, 0), size));
  generator.setTitle(title);
  generator.setDescription(QStringLiteral("flashio-gui chart"));
  QPainter painter;
  if (!painter.begin(&generator)) {
    file.cancelWriting();
    return false;
  }
  widget->render(&painter);
  painter.end();
  return file.commit();
}

bool write_rows_csv(const std::vector<sim::Row>& rows, const QString& path, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = file.errorString();
    return false;
  }
  std::string text = sim::csv_header() + "\n";
  for (const auto& row : rows) text += sim::to_csv_line(row) + "\n";
  file.write(text.data(), static_cast<qint64>(text.size()));
  if (!file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

}  // namespace flashio::gui
