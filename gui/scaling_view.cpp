#include "gui/scaling_view.h"

#include <map>

#include <QHBoxLayout>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/row_text.h"
#include "gui/size_text.h"

namespace flashio::gui {
namespace {

std::vector<ChartPoint> io_series(const std::vector<PlotRow>& rows, sim::RowSource source,
                                  sim::RowAlgo algo) {
  std::vector<ChartPoint> points;
  for (const auto& p : rows)
    if (p.row.source == source && p.row.algo == algo)
      if (auto io = io_bytes(p.row)) points.push_back({p.x, *io, row_tooltip(p.row), p.row});
  return points;
}

// The sequence chart's title and x axis: N, or Nk at the panel's N where Nk ≠ N (a decoding
// problem's bytes grow with its cache length, not with its one query).
QString seqlen_title(const WorkbenchParams& params) {
  if (!scaling_sweeps_keys(params))
    return QStringLiteral("io against sequence length N (rule tiling at the current M)");
  return QStringLiteral("io against key length Nk at N = %1 (rule tiling at the current M)").arg(params.problem.seqlen);
}

QString seqlen_axis_title(const WorkbenchParams& params) {
  return scaling_sweeps_keys(params) ? QStringLiteral("key length Nk (keys per head)")
                                     : QStringLiteral("sequence length N (tokens)");
}

QString fit_line(const SlopeFit& fit, double theory, const QString& over) {
  if (fit.points == 0)
    return QStringLiteral("%1: too few points to fit").arg(QString::fromStdString(sim::to_string(fit.algo)));
  return QStringLiteral("<b>%1</b>: fitted slope <b>%2</b> over %3 (%4 points); Theorem 2: %5")
      .arg(QString::fromStdString(sim::to_string(fit.algo)))
      .arg(fit.slope, 0, 'f', 3)
      .arg(over)
      .arg(fit.points)
      .arg(theory);
}

}  // namespace

ScalingView::ScalingView(QWidget* parent) : WorkbenchView(parent) {
  seqlen_ = new ChartPanel(seqlen_title(WorkbenchParams{}));
  sram_ = new ChartPanel("io against SRAM size M (rule tiling at each M)");
  fits_ = new QLabel();
  fits_->setWordWrap(true);
  fits_->setTextFormat(Qt::RichText);
  fits_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(seqlen_);
  split->addWidget(sram_);
  // The third chart, io and time against split-KV's S: two panels stacked (a ChartPanel has one
  // y quantity), shown for decode-like problems only (scaling_shows_splits).
  splits_ = new ChartPanel("flash2 io against split-KV splits S (panel's tiling)");
  splits_time_ = new ChartPanel("flash2 predicted time against split-KV splits S");
  auto* column = new QSplitter(Qt::Vertical);
  column->addWidget(splits_);
  column->addWidget(splits_time_);
  splits_column_ = column;
  splits_column_->setVisible(false);
  split->addWidget(column);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split, 1);
  layout->addWidget(fits_);
}

std::vector<std::pair<QString, QWidget*>> ScalingView::charts() {
  std::vector<std::pair<QString, QWidget*>> charts = {{"scaling-seqlen", seqlen_}, {"scaling-sram", sram_}};
  if (!splits_column_->isHidden()) {  // the S charts only where drawn (decode-like problems)
    charts.emplace_back("scaling-splits", splits_);
    charts.emplace_back("scaling-splits-time", splits_time_);
  }
  return charts;
}

std::vector<sim::Row> ScalingView::rows() const {
  auto rows = seqlen_->rows();
  for (auto& r : sram_->rows()) rows.push_back(r);
  for (auto& r : splits_->rows()) rows.push_back(r);
  return rows;
}

std::vector<PlottedRow> ScalingView::plotted_rows() const {
  auto rows = seqlen_->plotted_rows();
  for (auto& r : sram_->plotted_rows()) rows.push_back(std::move(r));
  for (auto& r : splits_->plotted_rows()) rows.push_back(std::move(r));
  return rows;
}

void ScalingView::redraw(const ViewInputs& inputs) {
  if (!inputs.data) return;
  const WorkbenchData& data = *inputs.data;
  const bool keys = scaling_sweeps_keys(data.params);
  seqlen_->clear();
  sram_->clear();
  splits_->clear();
  splits_time_->clear();
  seqlen_->chart()->setTitle(seqlen_title(data.params));
  for (const sim::Algo algo : data.params.algos) {
    const sim::RowAlgo name = sim::row_algo(algo);
    const QString qname = QString::fromStdString(sim::to_string(algo));
    seqlen_->add_series("io model " + qname, SeriesKind::model, algo_color(name),
                        io_series(data.seqlen_rows, sim::RowSource::model, name));
    sram_->add_series("io model " + qname, SeriesKind::model, algo_color(name),
                      io_series(data.sram_rows, sim::RowSource::model, name));
  }
  // The bounds, in the order of their labels.
  std::map<std::string, sim::RowAlgo> bounds;
  for (const auto& p : data.sram_rows)
    if (p.row.source == sim::RowSource::bound) bounds.emplace(sim::to_string(p.row.algo), p.row.algo);
  for (const auto& [label, b] : bounds)
    if (b != sim::RowAlgo::standard_theta)  // flat in M and far above; its shape is the N chart's business
      sram_->add_series("bound " + QString::fromStdString(label), SeriesKind::bound, bound_color(b),
                        io_series(data.sram_rows, sim::RowSource::bound, b));
  const int64_t e = sim::element_bytes(data.params.problem.dtype);
  const int64_t d = data.params.problem.headdim;
  sram_->add_marker(QStringLiteral("M = d² = %1 el. (Saha–Ye)").arg(d * d),
                    data.crossover_sram_bytes, crossover_marker_color());
  sram_->add_marker(QStringLiteral("current M = %1").arg(format_bytes_binary(
                        static_cast<double>(effective_sram_bytes(data.params)))),
                    static_cast<double>(effective_sram_bytes(data.params)), current_sram_marker_color());
  if (keys)  // where the panel's problem lies on the Nk sweep (its Nk need not be a swept value)
    seqlen_->add_marker(QStringLiteral("current Nk = %1").arg(data.params.problem.keys()),
                        static_cast<double>(data.params.problem.keys()), current_sram_marker_color());
  // Ticks at the swept N and M.
  std::vector<double> seqlens, srams;
  for (const int64_t n : scaling_seqlens(data.params)) seqlens.push_back(static_cast<double>(n));
  for (const int64_t m : scaling_sram_bytes(data.params)) srams.push_back(static_cast<double>(m));
  seqlen_->finish({seqlen_axis_title(data.params), AxisQuantity::count, seqlens},
                  {"io bytes", AxisQuantity::bytes, {}});
  sram_->finish({QStringLiteral("SRAM size M (%1 B per element)").arg(e), AxisQuantity::sram_bytes, srams},
                {"io bytes", AxisQuantity::bytes, {}});

  // Split-KV: flash2's io and time against S, where the problem is decode-like.
  std::vector<double> splits;
  for (const int64_t s : scaling_splits(data.params)) splits.push_back(static_cast<double>(s));
  const bool show_splits = !splits.empty() && !data.splits_rows.empty();
  splits_column_->setVisible(show_splits);
  if (show_splits) {
    const sim::RowAlgo name = sim::row_algo(sim::Algo::flash2);
    splits_->add_series("io model flash2", SeriesKind::model, algo_color(name),
                        io_series(data.splits_rows, sim::RowSource::model, name));
    std::vector<ChartPoint> times;
    for (const auto& p : data.splits_rows)
      if (p.row.source == sim::RowSource::model && p.row.algo == name && p.row.time_ms)
        times.push_back({p.x, *p.row.time_ms, row_tooltip(p.row), p.row});
    splits_time_->add_series("time model flash2", SeriesKind::model, algo_color(name), std::move(times));
    const int64_t current = resolved_splits(current_config(data.params, sim::Algo::flash2), data.params.splits);
    splits_->add_marker(QStringLiteral("current S = %1").arg(current), static_cast<double>(current),
                        current_sram_marker_color());
  }
  splits_->finish({"split-KV splits S", AxisQuantity::count, splits}, {"io bytes", AxisQuantity::bytes, {}});
  splits_time_->finish({"split-KV splits S", AxisQuantity::count, splits},
                       {"predicted time", AxisQuantity::time_ms, {}});

  QStringList lines;
  if (!data.problem_error.empty())
    lines << QStringLiteral("cannot compute this problem: %1").arg(QString::fromStdString(data.problem_error).toHtmlEscaped());
  // At a fixed N, Theorem 2's Nq·Nk·d²/M (and standard's Nq·d + Nq·Nk) grow as Nk: slope 1.
  for (const auto& f : data.seqlen_fits)
    lines << fit_line(f, keys ? 1 : 2, QStringLiteral("%1 = %2..%3").arg(keys ? "Nk" : "N").arg(f.x_from).arg(f.x_to)) +
                 (f.algo != sim::Algo::standard ? QString()
                  : keys ? QStringLiteral(" (standard: Θ(Nd + N·Nk), also 1)")
                         : QStringLiteral(" (standard: Θ(Nd + N²), also 2)"));
  for (const auto& f : data.sram_fits)
    lines << fit_line(f, -1, QStringLiteral("M = %1..%2")
                                 .arg(format_bytes_binary(f.x_from), format_bytes_binary(f.x_to))) +
                 (f.algo == sim::Algo::standard ? QStringLiteral(" (standard does not depend on M: 0)")
                                       : QString());
  fits_->setText(lines.join("<br>"));
  Q_EMIT rows_changed();
}

}  // namespace flashio::gui
