#include "gui/block_size_view.h"

#include <map>
#include <set>

#include <QSplitter>
#include <QVBoxLayout>

#include "gui/row_text.h"

namespace flashio::gui {
namespace {

using Value = std::optional<double> (*)(const sim::Row&);
// Every FLOP the schedule executes: tensor-core products plus the online softmax's exp and
// CUDA-core work, which grow as blocks shrink (more rescaling passes).
std::optional<double> all_flops(const sim::Row& r) {
  if (!r.flops_tensor || !r.flops_exp || !r.flops_other) return std::nullopt;
  return *r.flops_tensor + *r.flops_exp + *r.flops_other;
}
std::optional<double> convention_flops(const sim::Row& r) { return r.flops; }
std::optional<double> time_of(const sim::Row& r) { return r.time_ms; }

std::vector<ChartPoint> points_of(const std::vector<PlotRow>& rows, sim::RowSource source,
                                  sim::RowAlgo algo, Value value) {
  std::vector<ChartPoint> points;
  std::set<double> seen;
  for (const auto& p : rows) {
    if (p.row.source != source || p.row.algo != algo) continue;
    const auto v = value(p.row);
    if (!v || !seen.insert(p.x).second) continue;
    points.push_back({p.x, *v, row_tooltip(p.row), p.row});
  }
  return points;
}

QString x_title(const WorkbenchParams& params) {
  switch (params.shape) {
    case SweepShape::outer: return "block size B, rows (flash1: Bc = B; flash2: Br = B; other min(B, d))";
    case SweepShape::square: return "block size B, rows (Br = Bc = B)";
    case SweepShape::block_c: return "block size Bc, rows (Br fixed)";
    case SweepShape::block_r: return "block size Br, rows (Bc fixed)";
  }
  return "block size";
}

}  // namespace

BlockSizeView::BlockSizeView(QWidget* parent) : WorkbenchView(parent) {
  flops_ = new ChartPanel("FLOPs the schedule executes (tensor + exp + other)");
  bytes_ = new ChartPanel("Bytes moved: io (SRAM ↔ L2/HBM), dram (after the L2)");
  time_ = new ChartPanel("Runtime: time model, roofline and measured");
  note_ = new QLabel();
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(flops_);
  split->addWidget(bytes_);
  split->addWidget(time_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setStretchFactor(2, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split, 1);
  layout->addWidget(note_);
}

std::vector<std::pair<QString, QWidget*>> BlockSizeView::charts() {
  return {{"block-flops", flops_}, {"block-bytes", bytes_}, {"block-time", time_}};
}

std::vector<sim::Row> BlockSizeView::rows() const {
  std::vector<sim::Row> rows;
  for (const ChartPanel* c : {flops_, bytes_, time_})
    for (auto& r : c->rows()) rows.push_back(r);
  return rows;
}

std::vector<PlottedRow> BlockSizeView::plotted_rows() const {
  std::vector<PlottedRow> rows;
  for (const ChartPanel* c : {flops_, bytes_, time_})
    for (auto& r : c->plotted_rows()) rows.push_back(std::move(r));
  return rows;
}

void BlockSizeView::redraw(const ViewInputs& inputs) {
  if (!inputs.data) return;
  const WorkbenchData& data = *inputs.data;
  const WorkbenchParams& params = data.params;
  for (ChartPanel* c : {flops_, bytes_, time_}) c->clear();

  const ProblemKey key = problem_key(params);
  // Measured rows of this problem, drawn at the x their tiling has under the sweep shape.
  std::map<sim::Algo, std::vector<PlotRow>> measured;
  int off_curve = 0;  // measured rows whose tiling the sweep does not draw
  if (inputs.loaded_rows)
    for (const sim::Row& row : *inputs.loaded_rows) {
      const auto algo = sim::model_algo(row.algo);
      if (!algo || !params.shows(*algo) || !row_matches(row, key) ||
          row.source == sim::RowSource::model || row.source == sim::RowSource::bound ||
          !row.block_r || !row.block_c)
        continue;
      // A measured row is drawn where the sweep draws its own tiling, and only there: a
      // 128 x 128 run does not belong on the curve through 64 x 128 (the tiling map shows every
      // tiling's cell). Standard has no tiling: its one measurement is one point.
      if (*algo == sim::Algo::standard) {
        measured[*algo].push_back({0.0, row});
        continue;
      }
      const sim::Tiling tiling{*row.block_r, *row.block_c};
      const int64_t x = swept_block(params, *algo, tiling);
      if (!(sweep_tiling(params, *algo, x) == tiling)) {
        ++off_curve;
        continue;
      }
      measured[*algo].push_back({static_cast<double>(x), row});
    }

  // Bounds depend on M, not on the tiling: flat dashed lines across the sweep, in the order of
  // their labels, each in its own colour.
  std::map<std::string, sim::RowAlgo> bounds;
  for (const auto& p : data.block_rows)
    if (p.row.source == sim::RowSource::bound) bounds.emplace(sim::to_string(p.row.algo), p.row.algo);
  for (const auto& [label, b] : bounds)
    bytes_->add_series("bound " + QString::fromStdString(label), SeriesKind::bound, bound_color(b),
                       points_of(data.block_rows, sim::RowSource::bound, b, &io_bytes));

  bool first = true;
  for (const sim::Algo algo : params.algos) {
    const sim::RowAlgo name = sim::row_algo(algo);
    const QString qname = QString::fromStdString(sim::to_string(algo));
    const QColor color = algo_color(name);
    constexpr sim::RowSource model = sim::RowSource::model, cache = sim::RowSource::cache;
    flops_->add_series("flops model " + qname, SeriesKind::model, color,
                       points_of(data.block_rows, model, name, &all_flops));
    if (first) {
      // The convention's formula as sim/problem.h states it: 4·B·H·Nq·Nk·d where Nk ≠ N.
      const bool square = params.problem.keys() == params.problem.seqlen;
      flops_->add_series(square ? "flops convention 4BHN²d" : "flops convention 4BH·N·Nk·d",
                         SeriesKind::roofline, convention_color(),
                         points_of(data.block_rows, model, name, &convention_flops));
      first = false;
    }
    bytes_->add_series("io model " + qname, SeriesKind::model, color,
                       points_of(data.block_rows, model, name, &io_bytes));
    // The rows' time is the calibrated time model's where the hardware has a calibration
    // (sim/time_model.h), the roofline's otherwise; the roofline is drawn beside the model.
    const bool calibrated = !data.block_roofline_rows.empty();
    time_->add_series((calibrated ? "time model " : "time roofline ") + qname, SeriesKind::model, color,
                      points_of(data.block_rows, model, name, &time_of));
    if (calibrated)
      time_->add_series("time roofline " + qname, SeriesKind::roofline, color,
                        points_of(data.block_roofline_rows, model, name, &time_of));
    if (inputs.cache_rows) {
      bytes_->add_series("dram L2 model " + qname, SeriesKind::l2_model, color,
                         points_of(*inputs.cache_rows, cache, name, &dram_bytes));
      time_->add_series((calibrated ? "time model, L2 dram " : "time roofline, L2 dram ") + qname, SeriesKind::l2_model, color,
                        points_of(*inputs.cache_rows, cache, name, &time_of));
    }
    if (auto it = measured.find(algo); it != measured.end()) {
      // Standard ignores the tiling: its measured value is one point, at the sweep's first x
      // (its model line runs flat across the sweep).
      std::vector<PlotRow> at = it->second;
      if (algo == sim::Algo::standard && !sweep_blocks(params).empty())
        for (auto& p : at) p.x = static_cast<double>(sweep_blocks(params).front());
      auto pts = [&](Value v) {
        std::vector<ChartPoint> out;
        for (const auto& p : at)
          if (auto y = v(p.row)) out.push_back({p.x, *y, row_tooltip(p.row), p.row});
        return out;
      };
      flops_->add_series("flops measured " + qname, SeriesKind::measured, color, pts(&all_flops));
      bytes_->add_series("io measured " + qname, SeriesKind::measured, color, pts(&io_bytes));
      bytes_->add_series("dram measured " + qname, SeriesKind::measured_dram, color,
                         pts(&dram_bytes));
      time_->add_series("time measured " + qname, SeriesKind::measured, color, pts(&time_of));
    }
  }
  // Ticks at the swept block sizes, on every chart of the view.
  std::vector<double> swept;
  for (const int64_t b : sweep_blocks(params)) swept.push_back(static_cast<double>(b));
  const AxisSpec x{x_title(params), AxisQuantity::count, swept};
  flops_->finish(x, {"FLOPs", AxisQuantity::flops, {}});
  bytes_->finish(x, {"bytes moved", AxisQuantity::bytes, {}});
  time_->finish(x, {"runtime", AxisQuantity::time_ms, {}});

  QStringList notes;
  if (!data.problem_error.empty()) {
    // Nothing was computed: the reason is the whole note (the L2 model has nothing to replay).
    note_->setText(QStringLiteral("cannot compute this problem: %1").arg(QString::fromStdString(data.problem_error)));
    Q_EMIT rows_changed();
    return;
  }
  for (const auto& [algo, limit] : data.block_fit_limit)
    if (algo != sim::Algo::standard)
      notes << (limit > 0 ? QStringLiteral("%1 tiles fit in M up to B = %2")
                                .arg(QString::fromStdString(sim::to_string(algo)))
                                .arg(limit)
                          : QStringLiteral("%1: no swept tiling fits in M")
                                .arg(QString::fromStdString(sim::to_string(algo))));
  notes << (inputs.cache_rows      ? QStringLiteral("L2-model curves (dash-dot): sim::replay_cache")
            : inputs.cache_pending ? QStringLiteral("L2-model curves: computing…")
                                   : QStringLiteral("L2-model curves: off"));
  if (!data.skipped.empty())
    notes << QStringLiteral("left out: %1").arg(QString::fromStdString(data.skipped.front()));
  if (off_curve > 0)
    notes << QStringLiteral("%1 measured row%2 at tilings these curves do not sweep (the tiling map shows them)")
                 .arg(off_curve).arg(off_curve == 1 ? "" : "s");
  note_->setText(notes.join(QStringLiteral(" · ")));
  Q_EMIT rows_changed();
}

}  // namespace flashio::gui
