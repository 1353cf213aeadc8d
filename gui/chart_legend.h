// ChartLegend: the legend of a ChartPanel, drawn as a widget below the plot (docs/gui.md,
// "Charts"). Each entry shows a short sample drawn with the series' own pen (so solid, dotted,
// dash-dot and dashed lines look as they do on the plot), its point marker (circle, square) or
// its bar's fill, and the series' name. Entries flow left to right and wrap into rows; the
// panel gives the legend the height it needs for its width, so no entry is ever cut off, on
// screen or in an exported PNG or SVG.
//
// Why not Qt's own legend: in Qt 6.4 QLegend lays its markers out in one row or column and
// clips what does not fit (the entries past the chart's height were lost), and its markers
// draw a colour box, or with MarkerShapeFromSeries a line too short to show a dash pattern.
#pragma once
#include <vector>

#include <QBrush>
#include <QPen>
#include <QString>
#include <QWidget>

namespace flashio::gui {

struct LegendEntry {
  enum class Sample { line, circle, square, bar };
  QString name;
  Sample sample = Sample::line;
  QPen pen;           // the line (or marker outline) as the series draws it
  QBrush brush;       // marker or bar fill
  bool points = false;  // a line whose points are drawn: a dot in the middle of the sample
};

class ChartLegend : public QWidget {
  Q_OBJECT
 public:
  explicit ChartLegend(QWidget* parent = nullptr);

  void set_entries(std::vector<LegendEntry> entries);
  const std::vector<LegendEntry>& entries() const { return entries_; }

  // The width an entry needs to show its sample and its whole name.
  int entry_width(const LegendEntry& entry) const;
  // Where each entry lies when the legend is `width` pixels wide (rows wrap as needed).
  std::vector<QRect> entry_rects(int width) const;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  int row_height() const;

  std::vector<LegendEntry> entries_;
};

}  // namespace flashio::gui
