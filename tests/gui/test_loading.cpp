// Results files as a user loads them: every shipped file in experiments/results (flashio
// compare output and rows alike) adds measured points, each at its own tiling's x and only on a
// curve that sweeps that tiling; standard's one measurement is one point.
#include <catch2/catch.hpp>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "gui/block_size_view.h"
#include "gui/chart_panel.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui_test_support.h"
#include "sim/row.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// The panel's parameters for a loaded row's problem (its tiling as the current one).
WorkbenchParams params_for(const WorkbenchParams& base, const sim::Row& row) {
  WorkbenchParams p = base;
  p.problem.batch = row.batch;
  p.problem.heads = row.heads;
  p.problem.seqlen = row.seqlen;
  p.problem.headdim = row.headdim;
  p.problem.kv_heads = row.kv_heads;  // resolved by sim's reader: equal to heads when not grouped
  p.problem.seqlen_k = row.seqlen_k;
  p.gqa_pack = row.gqa_pack != 0;
  p.problem.dtype = row.dtype;
  p.problem.causal = row.causal != 0;
  p.problem.window_left = row.window_left;
  p.problem.window_right = row.window_right;
  p.problem.pass = row.pass;
  if (row.sram_bytes) p.sram_bytes = *row.sram_bytes;
  return p;
}

}  // namespace

TEST_CASE("every shipped result file loads and adds measured points at their own tilings", "[gui][loading]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  const QDir dir(FLASHIO_RESULTS_DIR);
  const QStringList files = dir.entryList({"*.csv"}, QDir::Files);
  REQUIRE(files.size() >= 4);
  int placed = 0;  // files whose flash2 row was found at its own tiling
  for (const QString& name : files) {
    INFO(name.toStdString());
    window->clear_results();
    QString error;
    REQUIRE(window->load_results_file(dir.filePath(name), &error));
    // A measured flash2 total of the file whose tiling the outer sweep draws (flash2 sweeps Br,
    // Bc = min(B, d) at the rule's shape): set the panel to its problem and find its point.
    const std::vector<sim::Row> rows = sim::read_rows_file(dir.filePath(name).toStdString());
    const sim::Row* chosen = nullptr;
    for (const sim::Row& r : rows)
      if (r.source == sim::RowSource::measured && r.is_total() && r.algo == sim::RowAlgo::flash2 && r.time_ms &&
          r.block_r && r.block_c && r.mask == 0 && r.dropout == 0 && r.pass != sim::Pass::fwdbwd) {
        chosen = &r;
        break;
      }
    if (!chosen) continue;  // a file without such a row (h200_speed.csv's peers) still loaded
    WorkbenchParams p = params_for(window->panel()->params(), *chosen);
    p.shape = SweepShape::block_r;
    p.block_c = *chosen->block_c;
    p.block_r = *chosen->block_r;
    p.sweep_min = *chosen->block_r;
    p.sweep_max = *chosen->block_r * 2;
    window->set_params(p);
    REQUIRE(test::wait_data(*window));
    QAbstractSeries* series = nullptr;
    for (auto& [chart_name, widget] : window->block_view()->charts())
      if (auto* chart = qobject_cast<ChartPanel*>(widget))
        if (auto* s = chart->series_named("time measured flash2")) series = s;
    REQUIRE(series != nullptr);
    bool found = false;
    for (const QPointF& pt : test::points(series))
      found = found || (pt.x() == static_cast<double>(*chosen->block_r) && std::abs(pt.y() - *chosen->time_ms) < 1e-9 * *chosen->time_ms);
    CHECK(found);
    placed += found;
  }
  CHECK(placed >= 3);  // the compare outputs (validation, holdout, time, development) have flash2 rows
}

TEST_CASE("a measured row is drawn only on the curve that sweeps its tiling, and standard's once",
          "[gui][loading]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  const WorkbenchParams p = window->panel()->params();  // outer shape: flash2 sweeps Br, Bc = min(B, d = 64)
  REQUIRE(p.shape == SweepShape::outer);
  REQUIRE(p.problem.headdim == 64);
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString path = dir.filePath("measured.csv");
  {
    QFile f(path);
    REQUIRE(f.open(QIODevice::WriteOnly));
    std::string text = sim::csv_header() + "\n";
    auto row = [&](sim::RowAlgo algo, int64_t br, int64_t bc, double time_ms) {
      sim::Row r;
      r.source = sim::RowSource::measured;
      r.algo = algo;
      r.pass = p.problem.pass;
      r.batch = p.problem.batch, r.heads = p.problem.heads, r.seqlen = p.problem.seqlen, r.headdim = p.problem.headdim;
      r.dtype = p.problem.dtype;
      r.sram_bytes = effective_sram_bytes(p);
      r.block_r = br, r.block_c = bc;
      r.hw = "h200";
      r.time_ms = time_ms;
      text += sim::to_csv_line(r) + "\n";
    };
    row(sim::RowAlgo::flash2, 128, 64, 1.25);   // on flash2's curve at x = 128
    row(sim::RowAlgo::flash2, 128, 128, 2.5);   // not: the curve's x = 128 is 128 x 64
    row(sim::RowAlgo::standard, 454, 64, 3.75); // standard: one point
    f.write(text.c_str());
  }
  QString error;
  REQUIRE(window->load_results_file(path, &error));
  QApplication::processEvents();
  const auto series_points = [&](const QString& name) {
    for (auto& [chart_name, widget] : window->block_view()->charts())
      if (auto* chart = qobject_cast<ChartPanel*>(widget))
        if (auto* s = chart->series_named(name)) return test::points(s);
    return QList<QPointF>{};
  };
  const QList<QPointF> flash2 = series_points("time measured flash2");
  REQUIRE(flash2.size() == 1);
  CHECK(flash2.front() == QPointF(128, 1.25));
  const QList<QPointF> standard = series_points("time measured standard");
  REQUIRE(standard.size() == 1);  // once, not at every x
  CHECK(standard.front().y() == 3.75);
}
