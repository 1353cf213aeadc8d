#include "gui/main_window.h"

#include <algorithm>
#include <exception>
#include <map>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/block_size_view.h"
#include "gui/breakdown_view.h"
#include "gui/chart_panel.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/rows_model.h"
#include "gui/scaling_view.h"
#include "gui/tiling_view.h"
#include "gui/tiling_map_view.h"
#include "sim/cache_replay.h"
#include "sim/parallel_for.h"

namespace flashio::gui {

std::vector<PlotRow> compute_cache_rows(const WorkbenchData& data, const ProgressFn& progress) {
  // One job per configuration the closed-form sweep drew; standard ignores the tiling, so it is
  // replayed once and drawn across the sweep.
  struct Job {
    double x = 0;
    sim::Config config;
    int replay = -1;  // index of the replay whose rows this x draws
  };
  std::vector<Job> jobs;
  std::vector<int> replays;  // jobs that run a replay
  int standard_replay = -1;
  for (const auto& p : data.block_rows) {
    if (p.row.source != sim::RowSource::model) continue;
    const auto algo = sim::model_algo(p.row.algo);
    if (!algo || !p.row.block_r || !p.row.block_c) continue;
    Job job{p.x, current_config(data.params, *algo), -1};
    job.config.tiling = {*p.row.block_r, *p.row.block_c};
    if (*algo == sim::Algo::standard && standard_replay >= 0) {
      job.replay = standard_replay;
    } else {
      job.replay = static_cast<int>(replays.size());
      replays.push_back(static_cast<int>(jobs.size()));
      if (*algo == sim::Algo::standard) standard_replay = job.replay;
    }
    jobs.push_back(std::move(job));
  }
  // The replays are independent: they run on every core (each its own L2 model); a replay under
  // way when cancelled finishes first.
  const int total = static_cast<int>(replays.size());
  std::vector<std::vector<sim::Row>> results(replays.size());
  const bool complete = sim::parallel_for(total, [&](int k) {
    try {
      // The L2 model's dram bytes, and the time the time model (or, without a calibration, the
      // roofline) gives over them: source=cache rows.
      for (auto& row : sim::rows_from_result(sim::simulate(jobs[static_cast<size_t>(replays[static_cast<size_t>(k)])].config,
                                                           sim::CountMethod::cache)))
        if (row.is_total()) results[static_cast<size_t>(k)].push_back(std::move(row));
    } catch (const std::exception&) {
      // The closed form accepted this configuration, so the replay does too; nothing to draw.
    }
  }, progress);
  std::vector<PlotRow> out;
  if (!complete) return out;  // cancelled: the caller discards it
  for (const Job& job : jobs)
    for (const sim::Row& row : results[static_cast<size_t>(job.replay)]) out.push_back({job.x, row});
  return out;
}

MainWindow::MainWindow(const WindowOptions& options, QWidget* parent)
    : QMainWindow(parent), options_(options) {
  setWindowTitle("flashio — why FlashAttention is fast");
  panel_ = new ParameterPanel();
  auto* scroll = new QScrollArea();
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  // As wide as the panel's widest row (H beside Hkv, N beside Nk) and a vertical scroll bar,
  // so the panel never scrolls sideways; 300 px at least.
  scroll->setMinimumWidth(std::max(300, panel_->minimumSizeHint().width() + 2 * scroll->frameWidth() +
                                            scroll->verticalScrollBar()->sizeHint().width()));
  auto* panel_dock = new QDockWidget("Parameters");
  panel_dock->setObjectName("parameters");
  panel_dock->setWidget(scroll);
  panel_dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, panel_dock);
  // The parameters take the window's whole height (the rows dock stops beside them), so the
  // panel's last row, the tiling, is on screen at the default size.
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);

  block_ = new BlockSizeView();
  scaling_ = new ScalingView();
  breakdown_ = new BreakdownView();
  tiling_ = new TilingView();
  map_ = new TilingMapView();  // tiling map view
  views_ = {block_, scaling_, breakdown_, tiling_, map_};
  tabs_ = new QTabWidget();
  tabs_->addTab(block_, "Block size");
  tabs_->addTab(scaling_, "Scaling");
  tabs_->addTab(breakdown_, "Breakdown");
  tabs_->addTab(tiling_, "Tiling (teaching)");
  // Tiling map view: its dram cells follow --no-cache; a click on a cell sets the panel's Br and
  // Bc (the panel's public set_params), so every view follows.
  tabs_->addTab(map_, "Tiling map");
  map_->set_cache_enabled(options_.cache_curves);
  connect(map_, &TilingMapView::tiling_clicked, this, [this](qint64 block_r, qint64 block_c) {
    WorkbenchParams p = panel_->params();
    p.block_r = block_r;
    p.block_c = block_c;
    set_params(p);
  });
  setCentralWidget(tabs_);

  cache_pool_.setMaxThreadCount(1);
  rows_model_ = new RowsModel(this);
  table_ = new QTableView();
  table_->setModel(rows_model_);
  // Fixed widths: measuring every cell on each change would cost more than the redraw.
  table_->horizontalHeader()->setDefaultSectionSize(96);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->verticalHeader()->setDefaultSectionSize(20);
  auto* table_dock = new QDockWidget("Rows behind the charts");
  table_dock->setObjectName("rows");
  table_dock->setWidget(table_);
  addDockWidget(Qt::BottomDockWidgetArea, table_dock);

  status_ = new QLabel();
  progress_ = new QProgressBar();
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  cancel_ = new QPushButton("Cancel");
  cancel_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    cache_watcher_.cancel();
    data_watcher_.cancel();
    progress_->setVisible(false);
    cancel_->setVisible(false);
    // The L2-model curves will not come: the views stop saying they are being computed.
    if (inputs_.cache_pending) {
      inputs_.cache_pending = false;
      if (inputs_.data) redraw_all();
    }
    status_->setText("cancelled: the L2-model curves were not computed (change a parameter to start again)");
  });

  build_menus();
  connect(panel_, &ParameterPanel::params_changed, this, &MainWindow::recompute);
  connect(&data_watcher_, &QFutureWatcher<WorkbenchData>::finished, this,
          &MainWindow::on_data_finished);
  connect(&cache_watcher_, &QFutureWatcher<std::vector<PlotRow>>::finished, this,
          &MainWindow::on_cache_finished);
  connect(&cache_watcher_, &QFutureWatcher<std::vector<PlotRow>>::progressValueChanged, this,
          [this](int v) { progress_->setValue(v); });
  connect(&cache_watcher_, &QFutureWatcher<std::vector<PlotRow>>::progressRangeChanged, this,
          [this](int lo, int hi) { progress_->setRange(lo, hi); });
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    // Views not on screen are redrawn when shown: a change redraws only what is visible.
    if (std::find(dirty_.begin(), dirty_.end(), current_view()) != dirty_.end()) {
      dirty_.erase(std::find(dirty_.begin(), dirty_.end(), current_view()));
      current_view()->redraw(inputs_);
    }
    update_table();
  });
  for (WorkbenchView* v : views_)
    connect(v, &WorkbenchView::rows_changed, this, [this, v] {
      if (v == current_view()) update_table();
    });

  inputs_.loaded_rows = std::make_shared<const std::vector<sim::Row>>();
  resize(1500, 950);
  if (options_.use_settings) restore_settings();
  recompute();
}

MainWindow::~MainWindow() { cancel_work(); }

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu("&File");
  QAction* load = file->addAction("&Load results (rows, compare or json)…");
  load->setShortcut(QKeySequence::Open);
  connect(load, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Load results (flashio rows CSV, compare output, or --format json)",
                                                      {}, "Results (*.csv *.json);;All files (*)");
    if (path.isEmpty()) return;
    QString error;
    if (!load_results_file(path, &error)) QMessageBox::warning(this, "Cannot load results", error);
  });
  QAction* clear = file->addAction("&Clear loaded results");
  connect(clear, &QAction::triggered, this, &MainWindow::clear_results);
  QAction* exp = file->addAction("&Export current view (PNG, SVG, CSV)…");
  exp->setShortcut(QKeySequence("Ctrl+E"));
  connect(exp, &QAction::triggered, this, [this] {
    const QString base = QFileDialog::getSaveFileName(
        this, "Export: charts as BASE-<chart>.png/.svg, data as BASE.csv", current_view()->view_name(),
        "Base name (*)");
    if (base.isEmpty()) return;
    QStringList written;
    QString error;
    if (!export_view(current_view(), base, &written, &error))
      QMessageBox::warning(this, "Export failed", error);
    else
      status_->setText("wrote " + written.join(", "));
  });
  file->addSeparator();
  QAction* quit = file->addAction("&Quit");
  quit->setShortcut(QKeySequence::Quit);
  connect(quit, &QAction::triggered, this, &QWidget::close);
  QMenu* view = menuBar()->addMenu("&View");
  for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
}

WorkbenchView* MainWindow::current_view() const {
  return static_cast<WorkbenchView*>(tabs_->currentWidget());
}

bool MainWindow::show_view(const QString& name) {
  for (WorkbenchView* v : views_)
    if (v->view_name() == name) {
      tabs_->setCurrentWidget(v);
      return true;
    }
  return false;
}

void MainWindow::set_params(const WorkbenchParams& params) { panel_->set_params(params); }

std::pair<int, int> MainWindow::cache_progress() const {
  if (!cache_watcher_.isRunning()) return {0, 0};
  return {cache_watcher_.progressValue(), cache_watcher_.progressMaximum()};
}

void MainWindow::cancel_work() {
  data_watcher_.cancel();
  cache_watcher_.cancel();
  data_watcher_.waitForFinished();
  cache_pool_.waitForDone();  // every replay, including ones no watcher follows any more
}

void MainWindow::recompute() {
  change_timer_.start();
  if (data_watcher_.isRunning()) {
    // Let the running closed-form sweep finish (it is short) and start again from there.
    pending_ = true;  // the running sweep is short: let it finish, then compare parameters
    return;
  }
  cache_watcher_.cancel();
  pending_ = false;
  const WorkbenchParams params = panel_->params();
  status_->setText("computing…");
  data_watcher_.setFuture(QtConcurrent::run([params](QPromise<WorkbenchData>& promise) {
    WorkbenchData data = compute_workbench(params, [&promise](int, int) {
      return !promise.isCanceled();
    });
    if (!promise.isCanceled()) promise.addResult(std::move(data));
  }));
}

void MainWindow::on_data_finished() {
  const bool has_result = data_watcher_.future().resultCount() > 0;
  // A change that arrived while this ran, but left the parameters as they were computed
  // (e.g. set_params with the same values), needs no second run.
  if (pending_ && has_result && data_watcher_.result().params == panel_->params()) pending_ = false;
  if (pending_ || data_watcher_.isCanceled() || !has_result) {
    if (pending_) recompute();
    return;
  }
  last_compute_ms_ = static_cast<double>(change_timer_.nsecsElapsed()) / 1e6;
  inputs_.data = std::make_shared<const WorkbenchData>(data_watcher_.result());
  inputs_.cache_rows = nullptr;
  inputs_.cache_pending = options_.cache_curves;
  QElapsedTimer redraw;
  redraw.start();
  redraw_all();
  last_redraw_ms_ = static_cast<double>(redraw.nsecsElapsed()) / 1e6;
  const double total_ms = static_cast<double>(change_timer_.nsecsElapsed()) / 1e6;
  if (!inputs_.data->problem_error.empty())
    status_->setText(QStringLiteral("cannot compute this problem: %1").arg(QString::fromStdString(inputs_.data->problem_error)));
  else
    status_->setText(QStringLiteral("closed form: %1 configurations, change to redraw %2 ms")
                         .arg(inputs_.data->block_rows.size() + inputs_.data->seqlen_rows.size() +
                              inputs_.data->sram_rows.size())
                         .arg(total_ms, 0, 'f', 1));
  Q_EMIT data_ready();
  if (options_.cache_curves) start_cache();
}

void MainWindow::start_cache() {
  cache_watcher_.cancel();  // not waited for: the GUI thread never blocks on a replay
  const auto data = inputs_.data;
  progress_->setVisible(true);
  cancel_->setVisible(true);
  progress_->setFormat("L2 model %v/%m");
  cache_watcher_.setFuture(QtConcurrent::run(&cache_pool_, [data](QPromise<std::vector<PlotRow>>& promise) {
    auto rows = compute_cache_rows(*data, [&promise](int done, int total) {
      promise.setProgressRange(0, total);
      promise.setProgressValue(done);
      return !promise.isCanceled();
    });
    if (!promise.isCanceled()) promise.addResult(std::move(rows));
  }));
}

void MainWindow::on_cache_finished() {
  progress_->setVisible(false);
  cancel_->setVisible(false);
  if (cache_watcher_.isCanceled() || cache_watcher_.future().resultCount() == 0) return;
  inputs_.cache_rows = std::make_shared<const std::vector<PlotRow>>(cache_watcher_.result());
  inputs_.cache_pending = false;
  if (current_view() == block_) block_->redraw(inputs_);
  else if (std::find(dirty_.begin(), dirty_.end(), block_) == dirty_.end()) dirty_.push_back(block_);
  Q_EMIT cache_ready_signal();
}

void MainWindow::redraw_all() {
  dirty_.clear();
  for (WorkbenchView* v : views_)
    if (v == current_view()) v->redraw(inputs_);
    else dirty_.push_back(v);
}

void MainWindow::update_table() {
  if (WorkbenchView* v = current_view()) rows_model_->set_rows(v->plotted_rows());
}

bool MainWindow::load_results_file(const QString& path, QString* error) {
  try {
    auto rows = sim::read_rows_file(path.toStdString());
    auto all = std::make_shared<std::vector<sim::Row>>(*inputs_.loaded_rows);
    const size_t added = rows.size();
    for (auto& r : rows) all->push_back(std::move(r));
    inputs_.loaded_rows = all;
    if (inputs_.data) redraw_all();
    status_->setText(QStringLiteral("loaded %1 rows from %2").arg(added).arg(QFileInfo(path).fileName()));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

void MainWindow::clear_results() {
  inputs_.loaded_rows = std::make_shared<const std::vector<sim::Row>>();
  if (inputs_.data) redraw_all();
}

bool MainWindow::export_view(WorkbenchView* view, const QString& base, QStringList* written,
                             QString* error) {
  for (const auto& [name, widget] : view->charts()) {
    const QString stem = base + "-" + name;
    if (!export_png(widget, stem + ".png") ||
        !export_svg(widget, stem + ".svg", name)) {
      if (error) *error = "cannot write " + stem + ".png/.svg";
      return false;
    }
    if (written) *written << stem + ".png" << stem + ".svg";
  }
  if (!write_rows_csv(view->rows(), base + ".csv", error)) return false;
  if (written) *written << base + ".csv";
  return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (options_.use_settings) save_settings();
  cancel_work();
  event->accept();
}

void MainWindow::save_settings() {
  QSettings s("flashio", "flashio-gui");
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  s.setValue("window/view", current_view()->view_name());
  save_params(s, panel_->params());
}

void MainWindow::restore_settings() {
  QSettings s("flashio", "flashio-gui");
  const std::optional<WorkbenchParams> p = restore_params(s);
  if (!p) return;
  {
    const QSignalBlocker block(panel_);
    panel_->set_params(*p);
  }
  restoreGeometry(s.value("window/geometry").toByteArray());
  restoreState(s.value("window/state").toByteArray());
  show_view(s.value("window/view", "block").toString());
}

}  // namespace flashio::gui
