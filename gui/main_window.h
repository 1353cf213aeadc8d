// MainWindow: the parameter panel on the left, the views in tabs, the rows behind the current
// view in a table below. Every parameter change recomputes off the GUI thread (QtConcurrent):
// the closed-form data first (drawn at once), then the L2-model curves (sim::replay_cache),
// which take longer, with progress and cancel in the status bar.
#pragma once
#include <memory>
#include <vector>

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QMainWindow>
#include <QThreadPool>

#include "gui/workbench_data.h"
#include "gui/workbench_view.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableView;

namespace flashio::gui {

class BlockSizeView;
class BreakdownView;
class ParameterPanel;
class RowsModel;
class ScalingView;
class TilingView;
class TilingMapView;  // tiling map view

struct WindowOptions {
  bool use_settings = true;  // restore and save QSettings (off for tests and screenshots)
  bool cache_curves = true;  // compute the L2-model curves after the closed form
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const WindowOptions& options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  ParameterPanel* panel() const { return panel_; }
  BlockSizeView* block_view() const { return block_; }
  ScalingView* scaling_view() const { return scaling_; }
  BreakdownView* breakdown_view() const { return breakdown_; }
  TilingView* tiling_view() const { return tiling_; }
  TilingMapView* map_view() const { return map_; }  // tiling map view
  RowsModel* rows_model() const { return rows_model_; }
  WorkbenchView* current_view() const;
  // --view NAME; false for an unknown name.
  bool show_view(const QString& name);

  void set_params(const WorkbenchParams& params);
  // Adds the rows of a results CSV (flashio profile's). On a malformed file, leaves the loaded
  // rows as they were and returns false with sim's message, which names the line.
  bool load_results_file(const QString& path, QString* error);
  void clear_results();
  // Writes BASE-<chart>.png and .svg for every chart of the view and BASE.csv of its rows.
  bool export_view(WorkbenchView* view, const QString& base, QStringList* written, QString* error);

  std::shared_ptr<const WorkbenchData> data() const { return inputs_.data; }
  bool cache_ready() const { return inputs_.cache_rows != nullptr; }
  // The L2 model's curves: configurations replayed and to replay (0, 0 when none is running).
  std::pair<int, int> cache_progress() const;
  double last_compute_ms() const { return last_compute_ms_; }
  double last_redraw_ms() const { return last_redraw_ms_; }

 Q_SIGNALS:
  void data_ready();   // closed-form data drawn
  void cache_ready_signal();  // L2-model curves drawn

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void recompute();
  void on_data_finished();
  void start_cache();
  void on_cache_finished();
  void cancel_work();
  void redraw_all();
  void update_table();
  void save_settings();
  void restore_settings();
  void build_menus();

  WindowOptions options_;
  ParameterPanel* panel_;
  QTabWidget* tabs_;
  BlockSizeView* block_;
  ScalingView* scaling_;
  BreakdownView* breakdown_;
  TilingView* tiling_;
  TilingMapView* map_;  // tiling map view
  std::vector<WorkbenchView*> views_;
  std::vector<WorkbenchView*> dirty_;  // views whose data changed while not shown
  RowsModel* rows_model_;
  QTableView* table_;
  QLabel* status_;
  QProgressBar* progress_;
  QPushButton* cancel_;

  ViewInputs inputs_;
  QFutureWatcher<WorkbenchData> data_watcher_;
  QFutureWatcher<std::vector<PlotRow>> cache_watcher_;
  // The L2 replays run in a pool of their own: a replay cancelled mid-configuration finishes
  // that configuration first, and must never hold up the closed form of the next change.
  QThreadPool cache_pool_;
  QElapsedTimer change_timer_;
  double last_compute_ms_ = 0, last_redraw_ms_ = 0;
  bool pending_ = false;
};

// The L2-model rows of the block-size sweep (source=cache totals, x = block size): the
// replay of every configuration the closed-form sweep drew. Calls progress between
// configurations; returns early (incomplete) when it returns false.
std::vector<PlotRow> compute_cache_rows(const WorkbenchData& data, const ProgressFn& progress);

}  // namespace flashio::gui
