#include "gui/chart_legend.h"

#include <algorithm>

#include <QPainter>
#include <QPainterPath>

namespace flashio::gui {
namespace {

// Long enough that a dash-dot pattern at the series' width shows at least one full period.
constexpr int kSampleWidth = 40;
constexpr int kSampleGap = 6;
constexpr int kEntrySpacing = 16;
constexpr int kMargin = 4;

}  // namespace

ChartLegend::ChartLegend(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  setAutoFillBackground(true);
  QPalette pal = palette();
  pal.setColor(QPalette::Window, Qt::white);
  pal.setColor(QPalette::WindowText, Qt::black);
  setPalette(pal);
}

void ChartLegend::set_entries(std::vector<LegendEntry> entries) {
  entries_ = std::move(entries);
  QStringList names;
  for (const auto& e : entries_) names << e.name;
  setToolTip(names.join('\n'));
  updateGeometry();
  update();
}

int ChartLegend::row_height() const { return std::max(fontMetrics().height(), 12) + 4; }

int ChartLegend::entry_width(const LegendEntry& entry) const {
  // The text's advance and its ink, whichever is wider, plus a pixel of slack: shaped text
  // (ligatures such as "fl") can measure a little narrower than it paints.
  const QFontMetrics fm = fontMetrics();
  const int text = std::max(fm.horizontalAdvance(entry.name), fm.boundingRect(entry.name).width());
  return kSampleWidth + kSampleGap + text + 2;
}

std::vector<QRect> ChartLegend::entry_rects(int width) const {
  std::vector<QRect> rects;
  const int h = row_height();
  int x = kMargin, y = kMargin;
  for (const auto& e : entries_) {
    const int w = entry_width(e);
    // Wrap unless the entry is the first of its row (an entry wider than the legend then
    // gets a row of its own; its name is elided when painted, never its sample).
    if (x > kMargin && x + w > width - kMargin) {
      x = kMargin;
      y += h;
    }
    rects.emplace_back(x, y, std::min(w, std::max(width - kMargin - x, kSampleWidth)), h);
    x += w + kEntrySpacing;
  }
  return rects;
}

int ChartLegend::heightForWidth(int width) const {
  if (entries_.empty()) return 0;
  const auto rects = entry_rects(width);
  return rects.back().bottom() + 1 + kMargin;
}

QSize ChartLegend::sizeHint() const {
  const int w = parentWidget() ? parentWidget()->width() : 600;
  return {w, heightForWidth(w)};
}

QSize ChartLegend::minimumSizeHint() const {
  int widest = 0;
  for (const auto& e : entries_) widest = std::max(widest, entry_width(e));
  return {std::min(widest + 2 * kMargin, 300), entries_.empty() ? 0 : row_height() + 2 * kMargin};
}

void ChartLegend::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const auto rects = entry_rects(width());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const LegendEntry& e = entries_[i];
    const QRect r = rects[i];
    const int cy = r.center().y();
    const QRect sample(r.left(), r.top() + 2, kSampleWidth, r.height() - 4);
    switch (e.sample) {
      case LegendEntry::Sample::line:
        painter.setPen(e.pen);
        painter.drawLine(QPointF(sample.left(), cy + 0.5), QPointF(sample.right(), cy + 0.5));
        if (e.points) {
          painter.setBrush(e.pen.color());
          painter.setPen(Qt::NoPen);
          painter.drawEllipse(QPointF(sample.center().x(), cy + 0.5), 3, 3);
        }
        break;
      case LegendEntry::Sample::circle:
      case LegendEntry::Sample::square: {
        painter.setPen(e.pen);
        painter.setBrush(e.brush);
        const QRectF box(sample.center().x() - 4.5, cy - 4, 9, 9);
        if (e.sample == LegendEntry::Sample::circle) painter.drawEllipse(box);
        else painter.drawRect(box);
        break;
      }
      case LegendEntry::Sample::bar:
        painter.setPen(e.pen);
        painter.setBrush(e.brush);
        painter.drawRect(QRectF(sample.left() + 8, sample.top(), kSampleWidth - 16, sample.height()));
        break;
    }
    painter.setPen(palette().color(QPalette::WindowText));
    const QRect text(r.left() + kSampleWidth + kSampleGap, r.top(),
                     std::max(0, r.width() - kSampleWidth - kSampleGap), r.height());
    // Elided only when one entry is wider than the whole legend.
    const bool fits = r.width() >= entry_width(e);
    painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
                     fits ? e.name : fontMetrics().elidedText(e.name, Qt::ElideRight, text.width()));
  }
}

}  // namespace flashio::gui
