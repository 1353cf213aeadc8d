#include "gui/breakdown_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QPercentBarSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QVBoxLayout>

#include "gui/chart_panel.h"
#include "gui/row_text.h"
#include "gui/size_text.h"

namespace flashio::gui {
namespace {

// A bar's algorithm, and "padded" on flash2's padded-layout bar beside the packed one.
QString bar_name(const BreakdownBar& bar) {
  const QString algo = QString::fromStdString(sim::to_string(bar.algo));
  return bar.padded ? algo + QStringLiteral(" padded") : algo;
}

double bar_bytes(const BreakdownBar& bar) {
  return static_cast<double>(bar.counts.io_read_bytes() + bar.counts.io_write_bytes());
}

}  // namespace

BreakdownView::BreakdownView(QWidget* parent) : WorkbenchView(parent) {
  view_ = new ChartPanel(QString());
  percent_ = new QCheckBox("show each bar as shares of its total (%)");
  connect(percent_, &QCheckBox::toggled, this, [this] { rebuild(); });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_, 1);
  layout->addWidget(percent_);
}

std::vector<std::pair<QString, QWidget*>> BreakdownView::charts() {
  return {{"breakdown", view_}};
}

std::vector<sim::Row> BreakdownView::rows() const {
  return inputs_.data ? inputs_.data->breakdown_rows : std::vector<sim::Row>{};
}

void BreakdownView::redraw(const ViewInputs& inputs) {
  inputs_ = inputs;
  rebuild();
  Q_EMIT rows_changed();
}

void BreakdownView::rebuild() {
  QChart* chart = view_->chart();
  view_->clear();
  if (!inputs_.data) {
    view_->set_legend({});
    return;
  }
  const WorkbenchData& data = *inputs_.data;
  const auto& p = data.params.problem;
  if (!data.problem_error.empty())
    chart->setTitle(QStringLiteral("Bytes per tensor: cannot compute this problem: %1")
                        .arg(QString::fromStdString(data.problem_error)));
  else
    chart->setTitle(QStringLiteral("Bytes per tensor, %1 %2%3, %4%5%6 (read + write)")
                        .arg(shape_text(p), QString::fromStdString(sim::to_string(p.dtype)),
                             p.causal ? " causal" : "", QString::fromStdString(sim::to_string(p.pass)),
                             packing_text(p.heads, p.kv_heads, data.params.gqa_pack), problem_options_text(data.params)));
  QAbstractBarSeries* series = percent_->isChecked()
                                   ? static_cast<QAbstractBarSeries*>(new QPercentBarSeries())
                                   : static_cast<QAbstractBarSeries*>(new QStackedBarSeries());
  QStringList categories;
  for (const auto& bar : data.breakdown) {
    const QString algo = bar_name(bar);
    QString tiling = QStringLiteral("tiling ignored");
    if (bar.algo != sim::Algo::standard)
      for (const auto& row : data.breakdown_rows)
        if (row.algo == sim::row_algo(bar.algo) && row.is_total() && row.block_r && row.block_c) {
          tiling = QStringLiteral("Br×Bc %1×%2").arg(*row.block_r).arg(*row.block_c);
          break;
        }
    const double bytes = bar_bytes(bar);
    // The padded layout's bar says what it costs over the packed one (flash2's other bar, of the
    // same tiling).
    for (const auto& packed : data.breakdown)
      if (bar.padded && !packed.padded && packed.algo == bar.algo && bar_bytes(packed) > 0)
        tiling = QStringLiteral("%1× packed").arg(bytes / bar_bytes(packed), 0, 'f', 2);
    categories << QStringLiteral("%1: %2 (%3)").arg(algo, format_bytes_decimal(bytes), tiling);
  }
  double max_total = 0;
  std::vector<LegendEntry> legend;
  for (int ti = 0; ti < sim::kTensorCount; ++ti) {
    const auto tensor = static_cast<sim::Tensor>(ti);
    bool any = false;
    for (const auto& bar : data.breakdown) {
      const auto& b = bar.counts.of(tensor);
      any = any || b.read_bytes + b.write_bytes > 0;
    }
    if (!any) continue;
    auto* set = new QBarSet(QString::fromStdString(sim::to_string(tensor)));
    set->setColor(tensor_color(tensor));
    // Outlined in its own colour: a white outline would turn a segment of a pixel or two
    // (ℓ, m, LSE beside the N × N matrices) white.
    set->setPen(QPen(tensor_color(tensor), 1));
    legend.push_back({set->label(), LegendEntry::Sample::bar, QPen(tensor_color(tensor).darker(130)),
                      QBrush(tensor_color(tensor)), false});
    for (const auto& bar : data.breakdown) {
      const auto& b = bar.counts.of(tensor);
      set->append(static_cast<double>(b.read_bytes + b.write_bytes));
    }
    connect(set, &QBarSet::hovered, this, [this, set, tensor](bool on, int index) {
      if (!on || !inputs_.data || index < 0 ||
          index >= static_cast<int>(inputs_.data->breakdown.size())) {
        QToolTip::hideText();
        return;
      }
      const auto& bar = inputs_.data->breakdown[static_cast<size_t>(index)];
      const auto& b = bar.counts.of(tensor);
      QToolTip::showText(QCursor::pos(),
                         QStringLiteral("%1, tensor %2\nread %3 B (%4)\nwrite %5 B (%6)")
                             .arg(bar_name(bar), set->label(),
                                  format_exact(static_cast<double>(b.read_bytes)),
                                  format_bytes_decimal(static_cast<double>(b.read_bytes)),
                                  format_exact(static_cast<double>(b.write_bytes)),
                                  format_bytes_decimal(static_cast<double>(b.write_bytes))),
                         view_);
    });
    series->append(set);
  }
  for (const auto& bar : data.breakdown) max_total = std::max(max_total, bar_bytes(bar));
  chart->addSeries(series);
  auto* x_axis = new QBarCategoryAxis();
  x_axis->append(categories);
  chart->addAxis(x_axis, Qt::AlignBottom);
  series->attachAxis(x_axis);
  const AxisQuantity q = percent_->isChecked() ? AxisQuantity::percent : AxisQuantity::stacked_bytes;
  const auto [lo, hi] = axis_range(q, 0, max_total);
  QAbstractAxis* y_axis = add_axis(chart, Qt::AlignLeft, q,
                                   percent_->isChecked() ? QStringLiteral("share of the algorithm's bytes")
                                                         : QStringLiteral("bytes read + written"),
                                   lo, hi, axis_ticks(q, lo, hi));
  series->attachAxis(y_axis);
  view_->set_legend(std::move(legend));
}

}  // namespace flashio::gui
