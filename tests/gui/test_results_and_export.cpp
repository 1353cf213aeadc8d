// Loading measured rows, a malformed results file, and exporting charts and data.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include <fstream>

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QSvgRenderer>
#include <QTemporaryDir>

#include "gui/block_size_view.h"
#include "gui/chart_panel.h"
#include "gui/parameter_panel.h"
#include "gui/rows_model.h"
#include "gui/scaling_view.h"
#include "gui_test_support.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// A measured row as `flashio profile` writes it: the model's key columns, with measured
// values that differ from the model's (so a test cannot pass by drawing the model twice).
sim::Row measured_row(const WorkbenchParams& params, sim::Algo algo, sim::Tiling tiling,
                      double io, double dram, double time_ms) {
  sim::Config config = current_config(params, algo);
  config.tiling = tiling;
  sim::Row row;
  for (const auto& r : sim::rows_from_result(sim::simulate(config, sim::CountMethod::formula)))
    if (r.is_total()) row = r;
  row.source = sim::RowSource::measured;
  row.io_read_bytes = io * 0.75;
  row.io_write_bytes = io * 0.25;
  row.dram_read_bytes = dram * 0.5;
  row.dram_write_bytes = dram * 0.5;
  row.time_ms = time_ms;
  return row;
}

void write_file(const QString& path, const std::string& text) {
  std::ofstream out(path.toStdString());
  out << text;
}

}  // namespace

TEST_CASE("loading a results file adds the measured points where their tiling lies",
          "[gui][results]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  const WorkbenchParams params = window->panel()->params();
  QTemporaryDir dir;
  const QString path = dir.filePath("measured.csv");
  // flash2 at Br = 128, Bc = 64 (x = 128 under the outer shape) and Br = 32 (x = 32); a row
  // of another problem (N = 2048) that must not be drawn.
  WorkbenchParams other = params;
  other.problem.seqlen = 2048;
  std::string text = sim::csv_header() + "\n";
  text += sim::to_csv_line(measured_row(params, sim::Algo::flash2, {128, 64}, 3.0e9, 4.1e8, 0.61)) + "\n";
  text += sim::to_csv_line(measured_row(params, sim::Algo::flash2, {32, 32}, 9.0e9, 4.3e8, 1.37)) + "\n";
  text += sim::to_csv_line(measured_row(other, sim::Algo::flash2, {64, 64}, 7.0e9, 9.9e8, 2.0)) + "\n";
  write_file(path, text);

  QString error;
  REQUIRE(window->load_results_file(path, &error));
  CHECK(error.isEmpty());
  BlockSizeView* view = window->block_view();
  const auto io = test::points(view->bytes_chart()->series_named("io measured flash2"));
  const auto dram = test::points(view->bytes_chart()->series_named("dram measured flash2"));
  const auto time = test::points(view->time_chart()->series_named("time measured flash2"));
  REQUIRE(io.size() == 2);
  CHECK(io[0] == QPointF(32, 9.0e9));
  CHECK(io[1] == QPointF(128, 3.0e9));
  REQUIRE(dram.size() == 2);
  CHECK(dram[1] == QPointF(128, 4.1e8));
  REQUIRE(time.size() == 2);
  CHECK(time[0] == QPointF(32, 1.37));
  // No measured series for an algorithm with no rows.
  CHECK(view->bytes_chart()->series_named("io measured flash1") == nullptr);

  // The measured points survive a recompute, and leave when the problem no longer matches.
  window->panel()->seqlen_box()->setValue(2048);
  REQUIRE(test::wait_data(*window));
  const auto io2048 = test::points(window->block_view()->bytes_chart()->series_named("io measured flash2"));
  REQUIRE(io2048.size() == 1);
  CHECK(io2048[0] == QPointF(64, 7.0e9));
}

TEST_CASE("a malformed results file gives a message naming the line, not a crash",
          "[gui][results]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  QTemporaryDir dir;
  const WorkbenchParams params = window->panel()->params();
  const std::string good =
      sim::to_csv_line(measured_row(params, sim::Algo::flash2, {128, 64}, 3.0e9, 4.1e8, 0.61));

  SECTION("a number that is not a number on line 3") {
    std::string bad = good;
    const auto comma = bad.rfind(',');
    bad = bad.substr(0, comma) + ",twelve";
    write_file(dir.filePath("bad.csv"), sim::csv_header() + "\n" + good + "\n" + bad + "\n");
    QString error;
    CHECK_FALSE(window->load_results_file(dir.filePath("bad.csv"), &error));
    INFO(error.toStdString());
    CHECK(error.contains("bad.csv:3:"));  // file and line, as sim::read_rows_csv names them
  }
  SECTION("a line with fewer fields than the header (line 4)") {
    write_file(dir.filePath("short.csv"),
               sim::csv_header() + "\n" + good + "\n" + good + "\nmeasured,flash2\n");
    QString error;
    CHECK_FALSE(window->load_results_file(dir.filePath("short.csv"), &error));
    INFO(error.toStdString());
    CHECK(error.contains("short.csv:4:"));
  }
  SECTION("a header without the source column (line 1)") {
    write_file(dir.filePath("header.csv"), "algo,seqlen\nflash2,1024\n");
    QString error;
    CHECK_FALSE(window->load_results_file(dir.filePath("header.csv"), &error));
    INFO(error.toStdString());
    CHECK(error.contains("header.csv:1:"));
  }
  SECTION("a missing file") {
    QString error;
    CHECK_FALSE(window->load_results_file(dir.filePath("absent.csv"), &error));
    CHECK_FALSE(error.isEmpty());
  }
  // Nothing was loaded, and the window still draws.
  CHECK(window->block_view()->bytes_chart()->series_named("io measured flash2") == nullptr);
  window->panel()->seqlen_box()->setValue(512);
  REQUIRE(test::wait_data(*window));
}

TEST_CASE("export writes a valid PNG and SVG of every chart and the data as row-schema CSV",
          "[gui][export]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  QTemporaryDir dir;
  for (const QString view : {"block", "scaling", "breakdown", "tiling"}) {
    REQUIRE(window->show_view(view));
    QApplication::processEvents();
    const QString base = dir.filePath(view);
    QStringList written;
    QString error;
    INFO(view.toStdString());
    REQUIRE(window->export_view(window->current_view(), base, &written, &error));
    CHECK(error.isEmpty());
    for (const auto& [name, widget] : window->current_view()->charts()) {
      const QString stem = base + "-" + name;
      QFile png(stem + ".png");
      REQUIRE(png.open(QIODevice::ReadOnly));
      CHECK(png.read(8) == QByteArray("\x89PNG\r\n\x1a\n", 8));
      const QImage image(stem + ".png");
      CHECK(image.width() == widget->width());
      CHECK(image.height() == widget->height());
      QSvgRenderer svg(stem + ".svg");
      CHECK(svg.isValid());
      CHECK(svg.viewBox().width() == widget->width());  // the chart's own size, in pixels
    }
    // The CSV reads back through sim's reader, row for row.
    const auto rows = sim::read_rows_file((base + ".csv").toStdString());
    CHECK(rows.size() == window->current_view()->rows().size());
    CHECK_FALSE(rows.empty());
  }
}

TEST_CASE("the table behind the charts holds the current view's rows, each distinct row once (standard and "
          "the bounds are drawn flat across the sweep, the same row at every x)",
          "[gui][table]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  for (const char* name : {"scaling", "block"}) {
    INFO(name);
    REQUIRE(window->show_view(name));
    QApplication::processEvents();
    std::set<std::string> view_rows, table_rows;
    for (const sim::Row& r : window->current_view()->rows()) view_rows.insert(sim::to_csv_line(r));
    for (const sim::Row& r : window->rows_model()->rows()) table_rows.insert(sim::to_csv_line(r));
    CHECK(table_rows == view_rows);
    CHECK(window->rows_model()->rows().size() == table_rows.size());  // no row twice
    CHECK(window->rows_model()->columnCount() == 1 + static_cast<int>(sim::row_columns().size()));
    CHECK(window->rows_model()->headerData(0, Qt::Horizontal, Qt::DisplayRole).toString() == "drawn at");
  }
  // The one standard row of the block-size view is drawn at every swept block size: its
  // "drawn at" lists them all.
  REQUIRE(window->show_view("block"));
  QApplication::processEvents();
  const RowsModel* model = window->rows_model();
  for (int k = 0; k < model->rowCount(); ++k) {
    const sim::Row& r = model->rows()[static_cast<size_t>(k)];
    if (r.source == sim::RowSource::model && r.algo == sim::RowAlgo::standard && r.is_total()) {
      const QString at = model->drawn_at(k);
      INFO(at.toStdString());
      for (const int64_t b : sweep_blocks(window->panel()->params()))
        CHECK(at.contains(QString::number(b)));
    }
  }
  // The block-size view draws standard at each of its x (once with the time model's time, once
  // with the roofline's): the table has each once.
  REQUIRE(window->show_view("block"));
  QApplication::processEvents();
  const auto standard_totals = [](const std::vector<sim::Row>& rows) {
    int n = 0;
    for (const sim::Row& r : rows)
      n += r.source == sim::RowSource::model && r.algo == sim::RowAlgo::standard && r.is_total();
    return n;
  };
  CHECK(standard_totals(window->current_view()->rows()) > 2);
  CHECK(standard_totals(window->rows_model()->rows()) == 2);
}
