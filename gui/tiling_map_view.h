// Tiling map view (docs/gui.md, "Tiling map"): for the panel's problem, one Br × Bc heat map per
// tiled algorithm and pass of predicted time, io or dram (gui/tiling_map_data.h: sim's numbers
// for each cell), on one logarithmic colour scale with a labelled colour bar; the tilings of the
// built kernels marked, the fastest built one outlined, the current tiling dashed, measured rows
// loaded from results files overlaid on their cells. A click on a cell makes its tiling the
// current one (the view emits tiling_clicked; the main window sets the panel's Br and Bc, so
// every view follows). The closed-form cells are computed when the view is drawn (64 per map,
// fast); the L2 model's dram cells, which take seconds each, in a thread pool of the view's own,
// cell by cell, with progress and cancel, when the dram quantity is shown.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <QFutureWatcher>
#include <QThreadPool>
#include <QWidget>

#include "gui/tiling_map_data.h"
#include "gui/workbench_view.h"

class QComboBox;
class QGridLayout;
class QLabel;
class QProgressBar;
class QPushButton;

namespace flashio::gui {

// The colour scale every map of the view shares: logarithmic from the smallest to the largest
// positive value shown (model and measured), and the unit its labels use.
struct MapScale {
  MapQuantity quantity = MapQuantity::time;
  double lo = 0, hi = 0;  // in the quantity's own unit (ms, bytes); valid when 0 < lo <= hi
  QString unit;           // "µs", "ms", "s"; "B", "KB", "MB", "GB"
  double per_unit = 1;    // value / per_unit is the value in `unit`

  bool valid() const { return lo > 0 && hi >= lo; }
  QColor color(double value) const;   // the colour of a value (clamped to the range)
  double position(double value) const;  // 0 … 1 along the log scale
  QString short_text(double value) const;  // three digits in `unit`, for inside a cell
  QString text(double value) const;        // with its unit, for the colour bar's ticks
};

// One heat map: rows Br, columns Bc (map_blocks()), drawn from a TilingMap the view owns.
class TilingMapCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit TilingMapCanvas(QWidget* parent = nullptr);
  void set_state(const TilingMap* map, const MapScale* scale, std::optional<sim::Tiling> current);
  const TilingMap* map() const { return map_; }

  // Where a cell is drawn, and the cell under a point (for tests and the mouse).
  QRect cell_rect(size_t r, size_t c) const;
  std::optional<std::pair<size_t, size_t>> cell_at(const QPoint& point) const;
  QString cell_tooltip(size_t r, size_t c) const;
  QSize sizeHint() const override { return {460, 440}; }

 Q_SIGNALS:
  void cell_clicked(qint64 block_r, qint64 block_c);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Geometry {
    int left = 0, top = 0, cell = 0;
  };
  Geometry geometry() const;

  const TilingMap* map_ = nullptr;
  const MapScale* scale_ = nullptr;
  std::optional<sim::Tiling> current_;
};

// The colour bar: the scale's gradient with ticks at 1, 2 and 5 of each decade, labelled in
// the scale's unit.
class TilingMapColorBar : public QWidget {
  Q_OBJECT
 public:
  explicit TilingMapColorBar(QWidget* parent = nullptr);
  void set_scale(const MapScale* scale, const QString& title);
  // The values the bar labels.
  std::vector<double> tick_values() const;
  QSize sizeHint() const override { return {520, 58}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  const MapScale* scale_ = nullptr;
  QString title_;
};

class TilingMapView : public WorkbenchView {
  Q_OBJECT
 public:
  explicit TilingMapView(QWidget* parent = nullptr);
  ~TilingMapView() override;
  QString view_name() const override { return QStringLiteral("map"); }
  std::vector<std::pair<QString, QWidget*>> charts() override;
  std::vector<sim::Row> rows() const override;
  void redraw(const ViewInputs& inputs) override;

  // Whether the dram cells may start the L2 model (off with --no-cache).
  void set_cache_enabled(bool enabled);
  void set_quantity(MapQuantity quantity);
  MapQuantity quantity() const { return quantity_; }

  const std::vector<TilingMap>& maps() const { return maps_; }
  const std::vector<TilingMapCanvas*>& canvases() const { return canvases_; }
  const MapScale& scale() const { return scale_; }
  TilingMapColorBar* color_bar() const { return bar_; }
  QString time_method_text() const;
  QString note_text() const;
  // The L2 model's cells: done of total for the current maps, and whether all are done.
  int cache_cells_done() const { return cache_done_cells_; }
  int cache_cells_total() const { return cache_total_cells_; }
  bool cache_done() const { return cache_complete_; }
  bool cache_running() const { return cache_watcher_.isRunning() && !cache_watcher_.isCanceled(); }
  void cancel_cache();

 Q_SIGNALS:
  // A cell was clicked: make Br × Bc the current tiling.
  void tiling_clicked(qint64 block_r, qint64 block_c);
  void cells_drawn();     // the closed-form cells (and measured overlays) are drawn
  void cache_finished();  // every dram cell of the current maps has its L2-model value

 private:
  struct TaggedCell {
    uint64_t generation = 0;
    CacheCell cell;
  };
  void rebuild_canvases();
  void update_scale();
  void refresh();
  void maybe_start_cache();
  void on_cache_result(int index);
  void on_cache_done();
  void show_cache_status();

  QComboBox* quantity_box_;
  QLabel* time_label_;
  QLabel* cache_label_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  TilingMapColorBar* bar_;
  QLabel* legend_;
  QLabel* note_;
  QWidget* grid_host_;
  QGridLayout* grid_;
  std::vector<TilingMapCanvas*> canvases_;
  size_t canvas_passes_ = 0;  // maps per column of the grid the canvases are laid out in

  MapQuantity quantity_ = MapQuantity::time;
  MapScale scale_;
  WorkbenchParams params_;
  std::optional<WorkbenchParams> key_;  // map_key of the params the maps were computed for
  std::vector<TilingMap> maps_;
  bool cache_enabled_ = true;
  bool cache_complete_ = false;
  int cache_done_cells_ = 0, cache_total_cells_ = 0;
  uint64_t generation_ = 0;  // bumped whenever the maps are recomputed
  QFutureWatcher<TaggedCell> cache_watcher_;
  // One thread: a replay cannot be interrupted inside a cell, and must not hold up the main
  // window's own L2 curves more than one core's worth.
  QThreadPool cache_pool_;
};

}  // namespace flashio::gui
