#include "gui/chart_panel.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <QChart>
#include <QCursor>
#include <QFile>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPen>
#include <QSaveFile>
#include <QScatterSeries>
#include <QSvgGenerator>
#include <QToolTip>
#include <QValueAxis>

namespace flashio::gui {

QColor algo_color(sim::RowAlgo algo) {
  switch (algo) {
    case sim::RowAlgo::standard: return QColor(0xd6, 0x27, 0x28);
    case sim::RowAlgo::flash1: return QColor(0x1f, 0x77, 0xb4);
    case sim::RowAlgo::flash2: return QColor(0x2c, 0xa0, 0x2c);
    case sim::RowAlgo::blocksparse: return QColor(0x94, 0x67, 0xbd);
    case sim::RowAlgo::torch_flash:
    case sim::RowAlgo::torch_cudnn:
    case sim::RowAlgo::torch_efficient:
    case sim::RowAlgo::torch_math: return QColor(0xff, 0x7f, 0x0e);
    case sim::RowAlgo::compulsory:
    case sim::RowAlgo::theorem2:
    case sim::RowAlgo::saha_ye:
    case sim::RowAlgo::standard_theta: break;
  }
  return QColor(0x7f, 0x7f, 0x7f);
}

ChartPanel::ChartPanel(const QString& title, QWidget* parent) : QChartView(parent) {
  // The chart QChartView made for itself: it lives in the view's scene and is deleted with the
  // view. A chart of our own given to setChart would take its place, and Qt releases the one it
  // replaces without deleting it (QChartView::setChart, Qt 6), so every panel leaked one.
  QChart* chart = this->chart();
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->legend()->setShowToolTips(true);
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->setBackgroundRoundness(0);
  QFont title_font = chart->titleFont();
  title_font.setBold(true);
  chart->setTitleFont(title_font);
  setRenderHint(QPainter::Antialiasing);
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
}

QAbstractSeries* ChartPanel::add_series(const QString& name, SeriesKind kind, const QColor& color,
                                        std::vector<ChartPoint> points) {
  // Keep only points a log axis can show; finish() decides whether the axes are logarithmic,
  // and a linear axis loses nothing here because counts and times are positive when known.
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const ChartPoint& p) {
                                return !std::isfinite(p.x) || !std::isfinite(p.y) || p.x <= 0 ||
                                       p.y <= 0;
                              }),
               points.end());
  std::sort(points.begin(), points.end(),
            [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
  QXYSeries* series = nullptr;
  if (kind == SeriesKind::points || kind == SeriesKind::squares) {
    auto* scatter = new QScatterSeries();
    scatter->setMarkerSize(kind == SeriesKind::points ? 10 : 9);
    if (kind == SeriesKind::squares) scatter->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    scatter->setColor(color);
    scatter->setBorderColor(color.darker(150));
    series = scatter;
  } else {
    auto* line = new QLineSeries();
    QPen pen(color);
    pen.setWidthF(kind == SeriesKind::line || kind == SeriesKind::dashdot ? 2.2 : 1.6);
    if (kind == SeriesKind::dashed) pen.setStyle(Qt::DashLine);
    if (kind == SeriesKind::dotted) pen.setStyle(Qt::DotLine);
    if (kind == SeriesKind::dashdot) pen.setStyle(Qt::DashDotLine);
    line->setPen(pen);
    line->setPointsVisible(kind == SeriesKind::line);
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

void ChartPanel::finish(const QString& x_title, const QString& y_title, bool x_log, bool y_log,
                        double decades_for_log) {
  double x_min = std::numeric_limits<double>::max(), x_max = 0;
  double y_min = std::numeric_limits<double>::max(), y_max = 0;
  for (const auto& [series, pts] : points_)
    for (const auto& p : pts) {
      x_min = std::min(x_min, p.x); x_max = std::max(x_max, p.x);
      y_min = std::min(y_min, p.y); y_max = std::max(y_max, p.y);
    }
  for (const auto& m : markers_) {
    x_min = std::min(x_min, m.second.first);
    x_max = std::max(x_max, m.second.first);
  }
  const bool empty = x_max <= 0 || y_max <= 0;
  if (empty) { x_min = 1; x_max = 2; y_min = 1; y_max = 2; }
  x_log_ = x_log && x_max / x_min >= decades_for_log;
  y_log_ = y_log && y_max / y_min >= decades_for_log;

  // Marker lines span the y range; added after the data so the range is known. A linear
  // axis starts at 0 (counts are positive), and a flat series gets room around it.
  double y_lo = y_log_ ? y_min / 1.5 : 0.0;
  double y_hi = y_log_ ? y_max * 1.5 : y_max * 1.08;
  if (y_log_ && y_hi / y_lo < 4) { y_lo = y_min / 2; y_hi = y_max * 2; }
  for (const auto& [name, where] : markers_) {
    auto* line = new QLineSeries();
    QPen pen(where.second);
    pen.setWidthF(1.5);
    pen.setStyle(Qt::DashDotLine);
    line->setPen(pen);
    line->setName(name);
    line->setObjectName(name);
    line->append(where.first, y_lo);
    line->append(where.first, y_hi);
    chart()->addSeries(line);
  }

  auto make_axis = [](bool log, double lo, double hi, const QString& title) -> QAbstractAxis* {
    if (log) {
      auto* axis = new QLogValueAxis();
      axis->setBase(lo > 0 && hi / lo < 100 ? 2.0 : 10.0);
      axis->setRange(lo, hi);
      axis->setLabelFormat(hi >= 1e5 ? "%.0e" : "%g");
      axis->setMinorTickCount(-1);
      axis->setTitleText(title);
      return axis;
    }
    auto* axis = new QValueAxis();
    axis->setRange(lo, hi);
    axis->setLabelFormat(hi >= 1e5 ? "%.2e" : "%g");
    axis->setTitleText(title);
    return axis;
  };
  const double x_lo = x_log_ ? x_min / 1.25 : std::min(0.0, x_min);
  const double x_hi = x_log_ ? x_max * 1.25 : x_max * 1.05;
  QAbstractAxis* x_axis = make_axis(x_log_, x_lo, x_hi, x_title);
  QAbstractAxis* y_axis = make_axis(y_log_, y_lo, y_hi, y_title);
  chart()->addAxis(x_axis, Qt::AlignBottom);
  chart()->addAxis(y_axis, Qt::AlignLeft);
  for (QAbstractSeries* s : chart()->series()) {
    s->attachAxis(x_axis);
    s->attachAxis(y_axis);
  }
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

void ChartPanel::show_tip(QAbstractSeries* series, const QPointF& at, bool entered) {
  if (!entered) {
    QToolTip::hideText();
    return;
  }
  const auto& pts = points_of(series);
  if (pts.empty()) return;
  // The nearest point on screen, so a hover on a line names the point closest to the cursor.
  const QPointF at_px = chart()->mapToPosition(at, series);
  const ChartPoint* best = nullptr;
  double best_d = std::numeric_limits<double>::max();
  for (const auto& p : pts) {
    const QPointF px = chart()->mapToPosition(QPointF(p.x, p.y), series);
    const double dist = std::hypot(px.x() - at_px.x(), px.y() - at_px.y());
    if (dist < best_d) { best_d = dist; best = &p; }
  }
  if (best) QToolTip::showText(QCursor::pos(), series->name() + "\n" + best->tip, this);
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
