#include "gui/tiling_map_view.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/chart_axis.h"
#include "gui/row_text.h"
#include "gui/size_text.h"
#include "sim/kernel_catalog.h"

namespace flashio::gui {
namespace {

// The colour ramp, low to high: dark blue, teal, green, yellow (dark for the fast and the
// small, light for the slow and the large), interpolated linearly in RGB between the stops.
const QColor kRamp[] = {QColor(38, 30, 110), QColor(30, 105, 160), QColor(40, 160, 130),
                        QColor(150, 200, 70), QColor(250, 230, 90)};
constexpr int kRampStops = static_cast<int>(sizeof(kRamp) / sizeof(kRamp[0]));

QColor ramp(double t) {
  t = std::clamp(t, 0.0, 1.0) * (kRampStops - 1);
  const int k = std::min(static_cast<int>(t), kRampStops - 2);
  const double f = t - k;
  const QColor& a = kRamp[k];
  const QColor& b = kRamp[k + 1];
  return QColor::fromRgbF(static_cast<float>(a.redF() + f * (b.redF() - a.redF())),
                          static_cast<float>(a.greenF() + f * (b.greenF() - a.greenF())),
                          static_cast<float>(a.blueF() + f * (b.blueF() - a.blueF())));
}

QColor text_on(const QColor& fill) { return fill.lightnessF() > 0.55 ? Qt::black : Qt::white; }

const QColor kBest(220, 20, 120);   // the best built tiling's outline
const QColor kEmpty(225, 225, 225);  // a cell the model refuses (hatched)

QString quantity_title(MapQuantity q) {
  switch (q) {
    case MapQuantity::time: return "predicted time";
    case MapQuantity::io: return "io: bytes read + written between SRAM and L2/HBM (closed form)";
    case MapQuantity::dram: return "dram: bytes read + written to DRAM (L2 model)";
  }
  return {};
}

QString exact_bytes(double bytes) {
  return QStringLiteral("%1 B (%2)").arg(format_exact(bytes), format_bytes_decimal(bytes));
}

// The current tiling as every other view uses it: the panel's Br and Bc, the rule's where they
// are 0 (current_config).
std::optional<sim::Tiling> current_config_tiling(const WorkbenchParams& params, sim::Algo algo) {
  try {
    return current_config(params, algo).tiling;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

QString pass_text(const TilingMap& map) {
  return QString::fromStdString(sim::to_string(map.algo) + " " + sim::to_string(map.pass));
}

}  // namespace

// --- MapScale ---------------------------------------------------------------------------------

double MapScale::position(double value) const {
  if (!valid() || value <= 0) return 0;
  if (hi == lo) return 0.5;
  return std::clamp(std::log(value / lo) / std::log(hi / lo), 0.0, 1.0);
}

QColor MapScale::color(double value) const { return ramp(position(value)); }

QString MapScale::short_text(double value) const { return QString::number(value / per_unit, 'g', 3); }

// The charts' axis quantity of a map quantity: the same units and tick rules (gui/chart_axis.h).
AxisQuantity axis_quantity(MapQuantity quantity) {
  return quantity == MapQuantity::time ? AxisQuantity::time_ms : AxisQuantity::bytes;
}

QString MapScale::text(double value) const { return tick_label(axis_quantity(quantity), value); }

// --- TilingMapCanvas --------------------------------------------------------------------------

TilingMapCanvas::TilingMapCanvas(QWidget* parent) : QWidget(parent) {
  setMinimumSize(260, 250);
  setMouseTracking(true);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
}

void TilingMapCanvas::set_state(const TilingMap* map, const MapScale* scale,
                                std::optional<sim::Tiling> current) {
  map_ = map;
  scale_ = scale;
  current_ = current;
  update();
}

TilingMapCanvas::Geometry TilingMapCanvas::geometry() const {
  const int n = static_cast<int>(map_blocks().size());
  Geometry g;
  g.left = 58;
  g.top = 46;
  g.cell = std::max(8, std::min((width() - g.left - 8) / n, (height() - g.top - 8) / n));
  return g;
}

QRect TilingMapCanvas::cell_rect(size_t r, size_t c) const {
  const Geometry g = geometry();
  return {g.left + static_cast<int>(c) * g.cell, g.top + static_cast<int>(r) * g.cell, g.cell, g.cell};
}

std::optional<std::pair<size_t, size_t>> TilingMapCanvas::cell_at(const QPoint& point) const {
  const size_t n = map_blocks().size();
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c)
      if (cell_rect(r, c).contains(point)) return std::make_pair(r, c);
  return std::nullopt;
}

QString TilingMapCanvas::cell_tooltip(size_t r, size_t c) const {
  if (!map_) return {};
  const MapCell& cell = map_->at(r, c);
  QString text = QStringLiteral("%1, Br × Bc = %2 × %3").arg(pass_text(*map_)).arg(cell.tiling.block_r).arg(cell.tiling.block_c);
  if (!cell.model) return text + "\nno value: " + QString::fromStdString(cell.reason);
  const sim::Row& row = *cell.model;
  const QString method = map_->time_method == sim::TimeMethod::model ? "time model" : "roofline";
  if (row.time_ms) text += QStringLiteral("\ntime = %1 ms (%2)").arg(*row.time_ms, 0, 'g', 8).arg(method);
  if (const auto io = io_bytes(row))
    text += QStringLiteral("\nio = %1\n  read %2, written %3")
                .arg(exact_bytes(*io), format_exact(*row.io_read_bytes), format_exact(*row.io_write_bytes));
  if (cell.cache) {
    if (const auto dram = dram_bytes(*cell.cache))
      text += QStringLiteral("\ndram = %1 (L2 model)\n  read %2, written %3")
                  .arg(exact_bytes(*dram), format_exact(*cell.cache->dram_read_bytes),
                       format_exact(*cell.cache->dram_write_bytes));
    if (cell.cache->time_ms)
      text += QStringLiteral("\ntime over the L2 model's dram = %1 ms").arg(*cell.cache->time_ms, 0, 'g', 8);
  } else if (!cell.cache_reason.empty()) {
    text += "\ndram: the L2 model refuses: " + QString::fromStdString(cell.cache_reason);
  } else {
    text += "\ndram: not computed (the L2 model runs when dram is shown)";
  }
  if (cell.built) text += "\nbuilt: a CUDA kernel of this tiling exists (sim/kernel_catalog.h)";
  if (map_->best && *map_->best == cell.tiling)
    text += "\nbest: the fastest built tiling the time model predicts (sim::best_built_tiling)";
  if (current_ && *current_ == cell.tiling) text += "\ncurrent tiling";
  for (const sim::Row& m : cell.measured) {
    text += "\nmeasured:";
    if (m.time_ms) text += QStringLiteral(" time %1 ms").arg(*m.time_ms, 0, 'g', 8);
    if (const auto io = io_bytes(m)) text += " io " + exact_bytes(*io);
    if (const auto dram = dram_bytes(m)) text += " dram " + exact_bytes(*dram);
    if (!m.hw.empty()) text += " on " + QString::fromStdString(m.hw);
  }
  return text;
}

void TilingMapCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, true);
  if (!map_ || !scale_) return;
  const auto blocks = map_blocks();
  const size_t n = blocks.size();
  const Geometry g = geometry();
  const QRect grid(g.left, g.top, g.cell * static_cast<int>(n), g.cell * static_cast<int>(n));

  QFont title_font = font();
  title_font.setBold(true);
  p.setFont(title_font);
  p.setPen(palette().color(QPalette::Text));
  QString title = pass_text(*map_);
  if (map_->best) title += QStringLiteral("   best built %1 × %2").arg(map_->best->block_r).arg(map_->best->block_c);
  p.drawText(QRect(g.left, 2, width() - g.left, 18), Qt::AlignLeft | Qt::AlignVCenter, title);

  QFont small = font();
  small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.8));
  p.setFont(small);
  p.drawText(QRect(g.left, 20, grid.width(), 12), Qt::AlignCenter, "Bc (rows of K, V per tile) →");
  for (size_t c = 0; c < n; ++c)
    p.drawText(QRect(g.left + static_cast<int>(c) * g.cell, 32, g.cell, 13), Qt::AlignCenter,
               QString::number(blocks[c]));
  for (size_t r = 0; r < n; ++r)
    p.drawText(QRect(g.left - 30, g.top + static_cast<int>(r) * g.cell, 27, g.cell),
               Qt::AlignRight | Qt::AlignVCenter, QString::number(blocks[r]));
  p.save();
  p.translate(12, g.top + grid.height() / 2);
  p.rotate(-90);
  p.drawText(QRect(-grid.height() / 2, -8, grid.height(), 16), Qt::AlignCenter, "Br (rows of Q, O) ↓");
  p.restore();

  const MapQuantity q = scale_->quantity;
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) {
      const MapCell& cell = map_->at(r, c);
      const QRect rect = cell_rect(r, c).adjusted(0, 0, -1, -1);
      const auto value = cell.value(q);
      if (!cell.model) {
        p.fillRect(rect, kEmpty);
        p.fillRect(rect, QBrush(QColor(170, 170, 170), Qt::BDiagPattern));
        continue;
      }
      const QColor fill = value && scale_->valid() ? scale_->color(*value) : QColor(245, 245, 245);
      p.fillRect(rect, fill);
      if (const auto measured = cell.measured_value(q); measured && scale_->valid()) {
        // The measured value fills the cell's lower-right triangle, on the same scale.
        QPainterPath tri;
        tri.moveTo(rect.right(), rect.top() + rect.height() * 0.45);
        tri.lineTo(rect.right(), rect.bottom());
        tri.lineTo(rect.left() + rect.width() * 0.45, rect.bottom());
        tri.closeSubpath();
        p.fillPath(tri, scale_->color(*measured));
        // Edged in the cell's text colour, so it shows where the two colours are alike.
        p.setPen(QPen(text_on(fill), 1.5));
        p.drawPath(tri);
      }
      p.setPen(text_on(fill));
      p.drawText(rect, Qt::AlignCenter, value ? scale_->short_text(*value) : QStringLiteral("…"));
      if (cell.built) {
        p.setPen(QPen(Qt::black, 1));
        p.setBrush(Qt::white);
        const int dot = std::max(4, g.cell / 7);
        p.drawEllipse(QRect(rect.left() + 3, rect.top() + 3, dot, dot));
        p.setBrush(Qt::NoBrush);
      }
    }
  p.setPen(QPen(QColor(120, 120, 120), 1));
  p.drawRect(grid.adjusted(0, 0, -1, -1));
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) {
      const MapCell& cell = map_->at(r, c);
      const QRect rect = cell_rect(r, c);
      if (current_ && *current_ == cell.tiling) {
        p.setPen(QPen(Qt::black, 2, Qt::DashLine));
        p.drawRect(rect.adjusted(3, 3, -4, -4));
      }
      if (map_->best && *map_->best == cell.tiling) {
        p.setPen(QPen(kBest, 3));
        p.drawRect(rect.adjusted(1, 1, -2, -2));
      }
    }
}

void TilingMapCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !map_) return QWidget::mouseReleaseEvent(event);
  const auto at = cell_at(event->position().toPoint());
  // A cell the model refuses is no tiling to choose (its tooltip says why).
  if (!at || !map_->at(at->first, at->second).model) return;
  const sim::Tiling t = map_->at(at->first, at->second).tiling;
  Q_EMIT cell_clicked(t.block_r, t.block_c);
}

bool TilingMapCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    if (const auto at = cell_at(help->pos()))
      QToolTip::showText(help->globalPos(), cell_tooltip(at->first, at->second), this, cell_rect(at->first, at->second));
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

// --- TilingMapColorBar ------------------------------------------------------------------------

TilingMapColorBar::TilingMapColorBar(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(58);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
}

void TilingMapColorBar::set_scale(const MapScale* scale, const QString& title) {
  scale_ = scale;
  title_ = title;
  update();
}

std::vector<double> TilingMapColorBar::tick_values() const {
  std::vector<double> ticks;
  if (!scale_ || !scale_->valid()) return ticks;
  // The charts' log ticks over the scale (1-2-5 per decade, denser over a narrow range).
  for (const AxisTick& t : axis_ticks(axis_quantity(scale_->quantity), scale_->lo, scale_->hi)) ticks.push_back(t.value);
  if (ticks.size() < 2) ticks = scale_->hi > scale_->lo ? std::vector<double>{scale_->lo, scale_->hi} : std::vector<double>{scale_->lo};
  return ticks;
}

void TilingMapColorBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setPen(palette().color(QPalette::Text));
  const QRect bar(10, 20, std::max(50, width() - 20), 14);
  p.drawText(QRect(10, 2, width() - 20, 16), Qt::AlignLeft | Qt::AlignVCenter,
             title_ + (scale_ && scale_->valid() ? QStringLiteral(" — log scale, cells in %1").arg(scale_->unit)
                                                 : QStringLiteral(" — no values yet")));
  if (!scale_ || !scale_->valid()) return;
  QLinearGradient gradient(bar.topLeft(), bar.topRight());
  for (int k = 0; k < kRampStops; ++k) gradient.setColorAt(static_cast<double>(k) / (kRampStops - 1), kRamp[k]);
  p.fillRect(bar, gradient);
  p.drawRect(bar.adjusted(0, 0, -1, -1));
  QFont small = font();
  small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.85));
  p.setFont(small);
  for (const double v : tick_values()) {
    const int x = bar.left() + static_cast<int>(std::lround(scale_->position(v) * (bar.width() - 1)));
    p.drawLine(x, bar.bottom(), x, bar.bottom() + 4);
    const QString label = scale_->text(v);
    const int w = p.fontMetrics().horizontalAdvance(label);
    const int left = std::clamp(x - w / 2, 0, std::max(0, width() - w));
    p.drawText(QRect(left, bar.bottom() + 5, w + 2, 16), Qt::AlignLeft | Qt::AlignTop, label);
  }
}

// --- TilingMapView ----------------------------------------------------------------------------

TilingMapView::TilingMapView(QWidget* parent) : WorkbenchView(parent) {
  quantity_box_ = new QComboBox();
  quantity_box_->addItem("time (predicted)", static_cast<int>(MapQuantity::time));
  quantity_box_->addItem("io (closed form)", static_cast<int>(MapQuantity::io));
  quantity_box_->addItem("dram (L2 model)", static_cast<int>(MapQuantity::dram));
  quantity_box_->setToolTip("What the cells show; dram starts the L2 model (seconds per cell)");
  time_label_ = new QLabel();
  cache_label_ = new QLabel();
  progress_ = new QProgressBar();
  progress_->setMaximumWidth(200);
  progress_->setFormat("L2 model %v/%m");
  progress_->setVisible(false);
  cancel_ = new QPushButton("Cancel");
  cancel_->setVisible(false);
  auto* top = new QHBoxLayout();
  top->addWidget(new QLabel("cells:"));
  top->addWidget(quantity_box_);
  top->addWidget(time_label_, 1);
  top->addWidget(cache_label_);
  top->addWidget(progress_);
  top->addWidget(cancel_);

  bar_ = new TilingMapColorBar();
  legend_ = new QLabel(
      "○ dot: a built CUDA kernel of this tiling   ▭ thick magenta outline: the fastest built tiling "
      "(sim::best_built_tiling)   ┅ dashed: the current tiling   ◢ lower-right triangle: measured "
      "(loaded results), same colour scale   hatched: the model refuses this tiling (tooltip says "
      "why)   click a cell to make it the current tiling");
  legend_->setWordWrap(true);
  note_ = new QLabel();
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  grid_host_ = new QWidget();
  grid_ = new QGridLayout(grid_host_);
  grid_->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea();
  scroll->setWidget(grid_host_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(bar_);
  layout->addWidget(scroll, 1);
  layout->addWidget(legend_);
  layout->addWidget(note_);

  cache_pool_.setMaxThreadCount(1);
  connect(quantity_box_, &QComboBox::currentIndexChanged, this, [this] {
    quantity_ = static_cast<MapQuantity>(quantity_box_->currentData().toInt());
    refresh();
    maybe_start_cache();
  });
  connect(cancel_, &QPushButton::clicked, this, &TilingMapView::cancel_cache);
  connect(&cache_watcher_, &QFutureWatcher<TaggedCell>::resultReadyAt, this, &TilingMapView::on_cache_result);
  connect(&cache_watcher_, &QFutureWatcher<TaggedCell>::finished, this, &TilingMapView::on_cache_done);
  connect(&cache_watcher_, &QFutureWatcher<TaggedCell>::progressRangeChanged, progress_, &QProgressBar::setRange);
  connect(&cache_watcher_, &QFutureWatcher<TaggedCell>::progressValueChanged, progress_, &QProgressBar::setValue);
}

TilingMapView::~TilingMapView() {
  cache_watcher_.cancel();
  cache_pool_.waitForDone();  // the cell in flight finishes (sim has no cancel hook)
}

void TilingMapView::set_cache_enabled(bool enabled) {
  cache_enabled_ = enabled;
  if (!enabled) cancel_cache();
  show_cache_status();
}

void TilingMapView::set_quantity(MapQuantity quantity) {
  quantity_box_->setCurrentIndex(quantity_box_->findData(static_cast<int>(quantity)));
}

QString TilingMapView::time_method_text() const { return time_label_->text(); }
QString TilingMapView::note_text() const { return note_->text(); }

std::vector<std::pair<QString, QWidget*>> TilingMapView::charts() {
  std::vector<std::pair<QString, QWidget*>> out;
  for (TilingMapCanvas* canvas : canvases_)
    if (const TilingMap* map = canvas->map())
      out.emplace_back(QString::fromStdString("map-" + sim::to_string(map->algo) + "-" + sim::to_string(map->pass)),
                       canvas);
  out.emplace_back("map-scale", bar_);
  return out;
}

std::vector<sim::Row> TilingMapView::rows() const {
  std::vector<sim::Row> rows;
  for (const TilingMap& map : maps_)
    for (const MapCell& cell : map.cells) {
      if (cell.model) rows.push_back(*cell.model);
      if (cell.cache) rows.push_back(*cell.cache);
      for (const sim::Row& m : cell.measured) rows.push_back(m);
    }
  return rows;
}

void TilingMapView::redraw(const ViewInputs& inputs) {
  if (!inputs.data) return;
  params_ = inputs.data->params;
  const WorkbenchParams key = map_key(params_);
  if (!key_ || !(*key_ == key)) {
    cancel_cache();  // not waited for: the replay in flight finishes in the view's pool
    ++generation_;
    maps_ = compute_tiling_maps(params_);
    key_ = key;
    cache_complete_ = false;
    cache_done_cells_ = 0;
    cache_total_cells_ = static_cast<int>(cache_cell_order(maps_).size());
    rebuild_canvases();
  }
  if (inputs.loaded_rows) attach_measured(maps_, params_, *inputs.loaded_rows);
  refresh();
  maybe_start_cache();
  Q_EMIT rows_changed();
  Q_EMIT cells_drawn();
}

void TilingMapView::rebuild_canvases() {
  const size_t passes = map_passes(params_).size();
  // Reuse the canvases when the layout is the same (a change of N or M keeps it).
  if (canvases_.size() != maps_.size() || canvas_passes_ != passes) {
    canvas_passes_ = passes;
    for (TilingMapCanvas* c : canvases_) {
      // Its map is gone: it must not paint from it before it is deleted.
      c->set_state(nullptr, nullptr, std::nullopt);
      c->hide();
      grid_->removeWidget(c);
      c->deleteLater();
    }
    canvases_.clear();
    for (size_t k = 0; k < maps_.size(); ++k) {
      auto* canvas = new TilingMapCanvas();
      connect(canvas, &TilingMapCanvas::cell_clicked, this, &TilingMapView::tiling_clicked);
      // Maps are laid out algorithms across, passes down.
      grid_->addWidget(canvas, static_cast<int>(k % passes), static_cast<int>(k / passes));
      canvases_.push_back(canvas);
    }
  }
}

void TilingMapView::update_scale() {
  scale_ = MapScale{};
  scale_.quantity = quantity_;
  double lo = 0, hi = 0;
  auto take = [&](std::optional<double> v) {
    if (!v || !(*v > 0) || !std::isfinite(*v)) return;
    lo = lo == 0 ? *v : std::min(lo, *v);
    hi = std::max(hi, *v);
  };
  for (const TilingMap& map : maps_)
    for (const MapCell& cell : map.cells) {
      if (!cell.model) continue;
      take(cell.value(quantity_));
      take(cell.measured_value(quantity_));
    }
  scale_.lo = lo;
  scale_.hi = hi;
  if (quantity_ == MapQuantity::time) {
    if (hi < 1.0) scale_.unit = "µs", scale_.per_unit = 1e-3;
    else if (hi < 1e3) scale_.unit = "ms", scale_.per_unit = 1;
    else scale_.unit = "s", scale_.per_unit = 1e3;
  } else {
    // The decimal units of sim::format_bytes (the runner's tables), chosen by the largest.
    if (hi >= 1e9) scale_.unit = "GB", scale_.per_unit = 1e9;
    else if (hi >= 1e6) scale_.unit = "MB", scale_.per_unit = 1e6;
    else if (hi >= 1e3) scale_.unit = "KB", scale_.per_unit = 1e3;
    else scale_.unit = "B", scale_.per_unit = 1;
  }
}

void TilingMapView::refresh() {
  update_scale();
  std::vector<std::optional<sim::Tiling>> current;
  for (size_t k = 0; k < maps_.size() && k < canvases_.size(); ++k) {
    canvases_[k]->set_state(&maps_[k], &scale_, current_config_tiling(params_, maps_[k].algo));
  }
  QString title = quantity_title(quantity_);
  if (quantity_ == MapQuantity::time && !maps_.empty())
    title += maps_.front().time_method == sim::TimeMethod::model ? " (time model)" : " (roofline)";
  bar_->set_scale(&scale_, title);

  if (maps_.empty()) {
    time_label_->setText({});
  } else if (maps_.front().time_method == sim::TimeMethod::model) {
    time_label_->setText(QStringLiteral("time: the calibrated time model (sim/time_model.h) of %1")
                             .arg(QString::fromStdString(params_.hw_name)));
  } else {
    time_label_->setText(QStringLiteral("time: the roofline (sim/roofline.h): %1 has no calibration")
                             .arg(QString::fromStdString(params_.hw_name)));
  }
  // One line per kind of note, naming the maps it concerns, so the maps keep the room.
  QStringList notes;
  if (maps_.empty()) notes << "No tiled algorithm selected: standard attention has no tiles to choose.";
  std::vector<std::pair<QString, QStringList>> grouped;  // a note and the maps it concerns
  auto add = [&grouped](const QString& note, const QString& what) {
    for (auto& [n, list] : grouped)
      if (n == note) {
        if (!list.contains(what)) list << what;
        return;
      }
    grouped.push_back({note, {what}});
  };
  for (const TilingMap& map : maps_) {
    if (!map.note.empty()) add("every tiling refused: " + QString::fromStdString(map.note), pass_text(map));
    if (!map.best) add("no best cell: " + QString::fromStdString(map.best_note), pass_text(map));
    if (const auto now = current_config_tiling(params_, map.algo); now && !map.find(*now))
      add("the current tiling lies off the grid",
          QStringLiteral("%1 %2 × %3").arg(QString::fromStdString(sim::to_string(map.algo)))
              .arg(now->block_r).arg(now->block_c));
    int measured = 0;
    for (const MapCell& cell : map.cells) measured += static_cast<int>(cell.measured.size());
    if (measured > 0) add("measured rows overlaid", QStringLiteral("%1: %2").arg(pass_text(map)).arg(measured));
  }
  for (const auto& [note, list] : grouped) notes << note + " — " + list.join(", ");
  note_->setText(notes.join("\n"));
  show_cache_status();
}

void TilingMapView::maybe_start_cache() {
  // A cancelled run may still be finishing its cell in the pool; a new one queues behind it.
  if (!cache_enabled_ || quantity_ != MapQuantity::dram || cache_complete_ ||
      (cache_watcher_.isRunning() && !cache_watcher_.isCanceled()) || maps_.empty())
    return;
  // The cells still without an L2-model value (a cancelled run resumes where it stopped).
  std::vector<std::pair<size_t, size_t>> todo;
  for (const auto& [m, c] : cache_cell_order(maps_))
    if (!maps_[m].cells[c].cache && maps_[m].cells[c].cache_reason.empty()) todo.emplace_back(m, c);
  if (todo.empty()) {
    cache_complete_ = true;
    show_cache_status();
    Q_EMIT cache_finished();
    return;
  }
  const auto maps = std::make_shared<const std::vector<TilingMap>>(maps_);
  const WorkbenchParams params = params_;
  const uint64_t generation = generation_;
  progress_->setRange(0, cache_total_cells_);
  progress_->setValue(cache_done_cells_);
  const int already = cache_done_cells_, total = cache_total_cells_;
  cache_watcher_.setFuture(QtConcurrent::run(
      &cache_pool_, [maps, params, generation, todo, already, total](QPromise<TaggedCell>& promise) {
        promise.setProgressRange(0, total);
        int done = already;
        for (const auto& [m, c] : todo) {
          if (promise.isCanceled()) return;
          promise.addResult(TaggedCell{generation, compute_cache_cell(params, (*maps)[m], m, c)});
          promise.setProgressValue(++done);
        }
      }));
  show_cache_status();
}

void TilingMapView::on_cache_result(int index) {
  const TaggedCell tagged = cache_watcher_.resultAt(index);
  if (tagged.generation != generation_) return;  // a cell of maps since recomputed
  const CacheCell& c = tagged.cell;
  MapCell& cell = maps_[c.map].cells[c.cell];
  cell.cache = c.row;
  cell.cache_reason = c.row ? std::string{} : c.reason;
  ++cache_done_cells_;
  if (quantity_ == MapQuantity::dram) {
    update_scale();
    for (TilingMapCanvas* canvas : canvases_) canvas->update();
    bar_->update();
  }
  show_cache_status();
}

void TilingMapView::on_cache_done() {
  if (!cache_watcher_.isCanceled() && cache_done_cells_ >= cache_total_cells_) {
    cache_complete_ = true;
    Q_EMIT rows_changed();
    Q_EMIT cache_finished();
  }
  show_cache_status();
}

void TilingMapView::cancel_cache() {
  if (cache_watcher_.isRunning()) cache_watcher_.cancel();
  show_cache_status();
}

void TilingMapView::show_cache_status() {
  const bool running = cache_watcher_.isRunning() && !cache_watcher_.isCanceled();
  progress_->setVisible(running);
  cancel_->setVisible(running);
  if (!cache_enabled_) cache_label_->setText("L2 model off (--no-cache): no dram cells");
  else if (cache_complete_) cache_label_->setText(QStringLiteral("L2 model: %1 cells").arg(cache_total_cells_));
  else if (running) cache_label_->setText("L2 model running:");
  else if (cache_done_cells_ > 0)
    cache_label_->setText(QStringLiteral("L2 model stopped at %1 of %2 cells (show dram to resume)")
                              .arg(cache_done_cells_).arg(cache_total_cells_));
  else cache_label_->setText("dram: the L2 model runs when dram is shown");
}

}  // namespace flashio::gui
