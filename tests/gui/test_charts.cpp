// How the charts draw (docs/gui.md, "Charts"): legends list exactly the series drawn and are
// never cut off, on screen or in an exported PNG; ticks carry units and sit at the swept
// values; an axis's scale follows its quantity, not the data; no two series of a chart look
// alike; the Breakdown view's colours stand out from the white background and from each other.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <tuple>

#include <QApplication>
#include <QBarSet>
#include <QImage>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QTemporaryDir>

#include "gui/block_size_view.h"
#include "gui/breakdown_view.h"
#include "gui/chart_panel.h"
#include "gui/parameter_panel.h"
#include "gui/scaling_view.h"
#include "gui/size_text.h"
#include "gui_test_support.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// A measured total row for `algo` at `tiling`, with values unlike the model's.
sim::Row measured_row(const WorkbenchParams& params, sim::Algo algo, sim::Tiling tiling, double scale,
                      bool with_flops) {
  sim::Config config = current_config(params, algo);
  if (algo != sim::Algo::standard) config.tiling = tiling;
  sim::Row row;
  for (const auto& r : sim::rows_from_result(sim::simulate(config, sim::CountMethod::formula)))
    if (r.is_total()) row = r;
  row.source = sim::RowSource::measured;
  row.io_read_bytes = *row.io_read_bytes * scale;
  row.dram_read_bytes = *row.io_read_bytes * 0.4;
  row.dram_write_bytes = *row.io_write_bytes * 0.9;
  row.time_ms = 0.037 * scale;
  if (!with_flops) row.flops_tensor.reset();
  return row;
}

// A small problem (N = 300, d = 40) whose L2-model curves arrive in seconds, with measured
// rows loaded for all three algorithms (flash1's without FLOPs): the most legend entries the
// block-size view draws.
std::unique_ptr<MainWindow> crowded_window(const QTemporaryDir& dir) {
  auto window = test::make_window(/*cache=*/true);
  WorkbenchParams p;
  p.problem.batch = 1;
  p.problem.heads = 2;
  p.problem.seqlen = 300;
  p.problem.headdim = 40;
  p.algos = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2};
  p.sweep_min = 16;
  p.sweep_max = 128;
  p.sram_bytes = sim::hardware_preset(p.hw_name).sram_bytes;
  window->set_params(p);
  QSignalSpy cache(window.get(), &MainWindow::cache_ready_signal);
  for (int k = 0; k < 200 && !(window->cache_ready() && window->data() && window->data()->params == p); ++k)
    cache.wait(1000);
  REQUIRE(window->cache_ready());
  const QString path = dir.filePath("measured.csv");
  std::string text = sim::csv_header() + "\n";
  text += sim::to_csv_line(measured_row(p, sim::Algo::standard, {}, 1.1, true)) + "\n";
  text += sim::to_csv_line(measured_row(p, sim::Algo::flash1, {40, 32}, 1.3, false)) + "\n";
  text += sim::to_csv_line(measured_row(p, sim::Algo::flash2, {64, 40}, 1.2, true)) + "\n";
  std::ofstream(path.toStdString()) << text;
  QString error;
  REQUIRE(window->load_results_file(path, &error));
  QApplication::processEvents();
  return window;
}

std::vector<ChartPanel*> block_charts(MainWindow& w) {
  return {w.block_view()->flops_chart(), w.block_view()->bytes_chart(), w.block_view()->time_chart()};
}

bool ends_with_unit(const QString& label, const QStringList& units) {
  for (const QString& u : units)
    if (label.endsWith(" " + u)) return true;
  return false;
}

}  // namespace

TEST_CASE("the legend lists exactly the series drawn, each with a point, and no empty series",
          "[gui][charts][legend]") {
  QTemporaryDir dir;
  auto window = crowded_window(dir);
  ChartPanel* flops = window->block_view()->flops_chart();
  // flash1's measured row has no FLOPs: its measured FLOP series would be empty, so it is absent.
  CHECK(flops->series_named("flops measured flash1") == nullptr);
  CHECK(flops->series_named("flops measured flash2") != nullptr);
  CHECK(window->block_view()->bytes_chart()->series_named("dram L2 model flash1") != nullptr);
  for (const QString view : {"block", "scaling"}) {
    REQUIRE(window->show_view(view));
    QApplication::processEvents();
    for (ChartPanel* panel : window->findChildren<ChartPanel*>()) {
      if (!panel->isVisible() || panel->chart()->series().isEmpty()) continue;
      INFO(panel->chart()->title().toStdString());
      const auto& entries = panel->legend_widget()->entries();
      const auto series = panel->chart()->series();
      REQUIRE(entries.size() == static_cast<size_t>(series.size()));
      for (int i = 0; i < series.size(); ++i) {
        INFO(series[i]->name().toStdString());
        CHECK(entries[static_cast<size_t>(i)].name == series[i]->name());
        CHECK_FALSE(test::points(series[i]).isEmpty());
      }
    }
  }
}

TEST_CASE("legends are never cut off, on screen or in an exported PNG", "[gui][charts][legend]") {
  QTemporaryDir dir;
  auto window = crowded_window(dir);
  int checked = 0;
  for (const QString view : {"block", "scaling", "breakdown"}) {
    REQUIRE(window->show_view(view));
    QApplication::processEvents();
    const QString base = dir.filePath(view);
    REQUIRE(window->export_view(window->current_view(), base, nullptr, nullptr));
    for (const auto& [name, widget] : window->current_view()->charts()) {
      auto* panel = qobject_cast<ChartPanel*>(widget);
      REQUIRE(panel != nullptr);
      ChartLegend* legend = panel->legend_widget();
      INFO(name.toStdString() << ", " << legend->entries().size() << " entries");
      REQUIRE_FALSE(legend->entries().empty());
      CHECK(legend->isVisible());
      // The legend has the height its entries need at its width, lies inside the panel, and
      // the chart ends above it.
      CHECK(legend->height() >= legend->heightForWidth(legend->width()));
      CHECK(panel->rect().contains(legend->geometry()));
      CHECK(panel->chart()->size().height() <= legend->y() + 1);
      // Every entry lies inside the legend at its full width (no name elided).
      const auto rects = legend->entry_rects(legend->width());
      for (size_t i = 0; i < rects.size(); ++i) {
        INFO(legend->entries()[i].name.toStdString());
        CHECK(legend->rect().contains(rects[i]));
        CHECK(rects[i].width() >= legend->entry_width(legend->entries()[i]));
      }
      // The panel itself is inside the window, not pushed past its bottom.
      const QRect in_window(panel->mapTo(window.get(), QPoint(0, 0)), panel->size());
      CHECK(window->rect().contains(in_window));
      // In the exported PNG, the last entry's name is drawn (dark pixels in its text area).
      const QImage image(base + "-" + name + ".png");
      REQUIRE(image.height() == panel->height());
      const QRect last = rects.back().translated(legend->pos());
      int dark = 0;
      for (int y = last.top(); y <= last.bottom(); ++y)
        for (int x = last.left() + 46; x <= last.right(); ++x)
          if (qGray(image.pixel(x, y)) < 128) ++dark;
      CHECK(dark > 20);
      ++checked;
    }
  }
  CHECK(checked == 6);  // three block-size charts, two scaling charts, the breakdown
}

TEST_CASE("the legend draws each series' own line style and marker", "[gui][charts][legend]") {
  QTemporaryDir dir;
  auto window = crowded_window(dir);
  ChartPanel* bytes = window->block_view()->bytes_chart();
  const auto& entries = bytes->legend_widget()->entries();
  const auto series = bytes->chart()->series();
  REQUIRE(entries.size() == static_cast<size_t>(series.size()));
  for (int i = 0; i < series.size(); ++i) {
    const LegendEntry& e = entries[static_cast<size_t>(i)];
    INFO(e.name.toStdString());
    if (auto* line = qobject_cast<QLineSeries*>(series[i])) {
      CHECK(e.sample == LegendEntry::Sample::line);
      CHECK(e.pen.style() == line->pen().style());
      CHECK(e.pen.color() == line->pen().color());
      CHECK(e.pen.widthF() == line->pen().widthF());
    } else if (auto* scatter = qobject_cast<QScatterSeries*>(series[i])) {
      CHECK(e.sample == (scatter->markerShape() == QScatterSeries::MarkerShapeRectangle
                             ? LegendEntry::Sample::square
                             : LegendEntry::Sample::circle));
      CHECK(e.brush.color() == scatter->color());
    }
  }
  // What is painted: along the sample's middle row a solid line has no gap, a dashed bound and a
  // dash-dot L2-model line have gaps of background.
  ChartLegend* legend = bytes->legend_widget();
  const QImage image = legend->grab().toImage();
  auto gaps = [&](const QString& name) {
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].name == name) {
        const QRect r = legend->entry_rects(legend->width())[i];
        int white = 0;
        for (int x = r.left() + 1; x < r.left() + 39; ++x)
          if (qGray(image.pixel(x, r.center().y())) > 240) ++white;
        return white;
      }
    return -1;
  };
  CHECK(gaps("io model flash2") == 0);
  CHECK(gaps("bound compulsory") >= 4);
  CHECK(gaps("dram L2 model flash2") >= 4);
}

TEST_CASE("no two series of a chart share both colour and style", "[gui][charts][style]") {
  QTemporaryDir dir;
  auto window = crowded_window(dir);
  for (const QString view : {"block", "scaling"}) {
    REQUIRE(window->show_view(view));
    QApplication::processEvents();
    for (ChartPanel* panel : window->findChildren<ChartPanel*>()) {
      INFO(panel->chart()->title().toStdString());
      std::set<std::tuple<QRgb, int, int>> seen;  // colour, pen style (lines) or -1 - marker shape
      for (QAbstractSeries* s : panel->chart()->series()) {
        INFO(s->name().toStdString());
        std::tuple<QRgb, int, int> key;
        if (auto* line = qobject_cast<QLineSeries*>(s))
          key = {line->pen().color().rgb(), static_cast<int>(line->pen().style()), 0};
        else if (auto* scatter = qobject_cast<QScatterSeries*>(s))
          key = {scatter->color().rgb(), -1, static_cast<int>(scatter->markerShape())};
        CHECK(seen.insert(key).second);
      }
    }
  }
  // The colours the issue found shared: each bound its own, none an algorithm's, and the
  // Saha–Ye bound not the M = d² marker's.
  const std::vector<sim::RowAlgo> bounds = {sim::RowAlgo::compulsory, sim::RowAlgo::theorem2,
                                            sim::RowAlgo::saha_ye, sim::RowAlgo::standard_theta};
  const std::vector<sim::RowAlgo> algos = {sim::RowAlgo::standard, sim::RowAlgo::flash1,
                                           sim::RowAlgo::flash2, sim::RowAlgo::blocksparse,
                                           sim::RowAlgo::torch_flash};
  std::vector<QColor> all;
  for (auto b : bounds) all.push_back(bound_color(b));
  for (auto a : algos) all.push_back(algo_color(a));
  all.push_back(crossover_marker_color());
  all.push_back(current_sram_marker_color());
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) {
      INFO(all[i].name().toStdString() << " vs " << all[j].name().toStdString());
      CHECK(delta_e76(all[i], all[j]) >= 15);
    }
}

TEST_CASE("tick labels carry units and the block-size ticks are the swept block sizes",
          "[gui][charts][axes]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p = window->panel()->params();
  p.problem.seqlen = 97;
  p.problem.headdim = 40;
  p.sweep_min = 24;  // not a power of two: 24, 48, 96, 192
  p.sweep_max = 200;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  QApplication::processEvents();
  for (ChartPanel* panel : block_charts(*window)) {
    INFO(panel->chart()->title().toStdString());
    std::vector<double> at;
    for (const auto& t : panel->x_ticks()) at.push_back(t.value);
    CHECK(at == std::vector<double>{24, 48, 96, 192});
    // What is drawn: the labelled axis shows these labels at these values (log10 on a log axis).
    const QStringList labels = panel->x_label_axis()->categoriesLabels();
    REQUIRE(labels.size() == 4);
    for (int i = 0; i < 4; ++i) {
      CHECK(labels[i] == panel->x_ticks()[static_cast<size_t>(i)].label);
      CHECK(panel->x_label_axis()->endValue(labels[i]) == Approx(std::log10(at[static_cast<size_t>(i)])));
    }
    CHECK(labels[3] == "192");
  }
  auto check_units = [](ChartPanel* panel, const QStringList& units) {
    INFO(panel->chart()->title().toStdString());
    REQUIRE(panel->y_ticks().size() >= 3);
    for (const auto& t : panel->y_ticks()) {
      INFO(t.label.toStdString());
      CHECK(ends_with_unit(t.label, units));
    }
    CHECK(panel->y_label_axis()->categoriesLabels().size() == static_cast<int>(panel->y_ticks().size()));
  };
  check_units(window->block_view()->flops_chart(), {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"});
  check_units(window->block_view()->bytes_chart(), {"B", "KB", "MB", "GB", "TB"});
  check_units(window->block_view()->time_chart(), {"ns", "µs", "ms", "s"});
  REQUIRE(window->show_view("scaling"));
  QApplication::processEvents();
  ChartPanel* sram = window->scaling_view()->sram_chart();
  check_units(sram, {"B", "KB", "MB", "GB", "TB"});
  for (const auto& t : sram->x_ticks()) {
    INFO(t.label.toStdString());
    CHECK(ends_with_unit(t.label, {"B", "KiB", "MiB"}));
    // At one of the swept M.
    const auto swept = scaling_sram_bytes(p);
    CHECK(std::find(swept.begin(), swept.end(), static_cast<int64_t>(t.value)) != swept.end());
  }
  REQUIRE(window->show_view("breakdown"));
  QApplication::processEvents();
  // The breakdown's axis is the breakdown panel's last labelled axis.
  const auto axes = window->breakdown_view()->chart_view()->chart()->axes(Qt::Vertical);
  REQUIRE_FALSE(axes.isEmpty());
  auto* labelled = qobject_cast<QCategoryAxis*>(axes.back());
  REQUIRE(labelled != nullptr);
  REQUIRE(labelled->categoriesLabels().size() >= 3);
  for (const QString& l : labelled->categoriesLabels()) CHECK(ends_with_unit(l, {"B", "KB", "MB", "GB"}));
}

TEST_CASE("an axis's scale follows its quantity, not the data", "[gui][charts][axes]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  auto check = [&] {
    BlockSizeView* v = window->block_view();
    CHECK(v->bytes_chart()->y_is_log());
    CHECK(v->time_chart()->y_is_log());
    CHECK(v->bytes_chart()->x_is_log());
    CHECK_FALSE(v->flops_chart()->y_is_log());
    // The FLOP axis is fitted to the data: it starts above 0, within a fifth of the curves'
    // span below their lowest point, so curves a few per cent apart fill the plot.
    double lo = 1e300, hi = 0;
    for (QAbstractSeries* s : v->flops_chart()->chart()->series())
      for (const QPointF& pt : test::points(s)) {
        lo = std::min(lo, pt.y());
        hi = std::max(hi, pt.y());
      }
    auto* axis = v->flops_chart()->y_label_axis();
    REQUIRE(axis != nullptr);
    CHECK(axis->min() > 0);
    CHECK(axis->min() >= lo - 0.2 * (hi - lo));
    CHECK(axis->max() <= hi + 0.2 * (hi - lo));
    for (QAbstractSeries* s : v->bytes_chart()->chart()->series()) {
      bool log_axis = false;
      for (auto* a : s->attachedAxes())
        if (a->orientation() == Qt::Vertical) log_axis = qobject_cast<QLogValueAxis*>(a) != nullptr;
      CHECK(log_axis);
    }
  };
  check();
  // Other data, the same scales: a tiny awkward problem (N = 97, d = 40) and a large one.
  window->panel()->headdim_box()->setValue(40);
  REQUIRE(test::wait_data(*window));
  window->panel()->seqlen_box()->setValue(97);
  REQUIRE(test::wait_data(*window));
  check();
  window->panel()->seqlen_box()->setValue(8192);
  REQUIRE(test::wait_data(*window));
  check();

  // A flat series of bytes (5 to 6, not a decade) is still on a log axis, with ticks to read.
  ChartPanel panel("flat");
  panel.add_series("flat", SeriesKind::model, Qt::black, {{1, 5, {}, {}}, {2, 6, {}, {}}});
  panel.finish({"x", AxisQuantity::count, {1, 2}}, {"bytes", AxisQuantity::bytes, {}});
  CHECK(panel.y_is_log());
  CHECK(panel.y_ticks().size() >= 3);
}

TEST_CASE("Breakdown colours stand out from white and from each other", "[gui][charts][breakdown]") {
  // The measures themselves, on colours with known values.
  CHECK(contrast_ratio(Qt::black, Qt::white) == Approx(21.0));
  CHECK(contrast_ratio(Qt::white, Qt::white) == Approx(1.0));
  CHECK(delta_e76(Qt::black, Qt::white) == Approx(100.0).margin(0.01));
  for (int i = 0; i < sim::kTensorCount; ++i) {
    const QColor a = tensor_color(static_cast<sim::Tensor>(i));
    INFO(sim::to_string(static_cast<sim::Tensor>(i)) << " " << a.name().toStdString());
    CHECK(contrast_ratio(a, Qt::white) >= 3.0);  // WCAG 2.1 non-text contrast
    for (int j = i + 1; j < sim::kTensorCount; ++j) {
      const QColor b = tensor_color(static_cast<sim::Tensor>(j));
      INFO("vs " << sim::to_string(static_cast<sim::Tensor>(j)) << " " << b.name().toStdString());
      CHECK(delta_e76(a, b) >= 30.0);
    }
  }
  // The bars drawn use them, and the legend lists each bar set with its fill.
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p = window->panel()->params();
  p.problem.pass = sim::Pass::fwdbwd;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("breakdown"));
  QApplication::processEvents();
  ChartPanel* chart = window->breakdown_view()->chart_view();
  REQUIRE(chart->chart()->series().size() == 1);
  auto* bars = qobject_cast<QAbstractBarSeries*>(chart->chart()->series().front());
  REQUIRE(bars != nullptr);
  const auto& entries = chart->legend_widget()->entries();
  REQUIRE(entries.size() == static_cast<size_t>(bars->barSets().size()));
  CHECK(bars->barSets().size() >= 10);
  std::set<QRgb> colours;
  for (int k = 0; k < bars->barSets().size(); ++k) {
    QBarSet* set = bars->barSets()[k];
    INFO(set->label().toStdString());
    CHECK(entries[static_cast<size_t>(k)].name == set->label());
    CHECK(entries[static_cast<size_t>(k)].brush.color() == set->color());
    CHECK(contrast_ratio(set->color(), Qt::white) >= 3.0);
    colours.insert(set->color().rgb());
  }
  CHECK(colours.size() == static_cast<size_t>(bars->barSets().size()));
}

TEST_CASE("a point's tooltip gives x and y exactly and in units", "[gui][charts][tooltip]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  ChartPanel* bytes = window->block_view()->bytes_chart();
  QAbstractSeries* io = bytes->series_named("io model flash2");
  REQUIRE(io != nullptr);
  const auto& pts = bytes->points_of(io);
  REQUIRE(pts.size() >= 2);
  const QString tip = bytes->tip_text(io, 1);
  INFO(tip.toStdString());
  CHECK(tip.startsWith("io model flash2\n"));
  CHECK(tip.contains("x = " + format_exact(pts[1].x)));
  CHECK(tip.contains("y = " + format_exact(pts[1].y) + " (" + format_bytes_short(pts[1].y, 6) + ")"));
  ChartPanel* time = window->block_view()->time_chart();
  QAbstractSeries* t = time->series_named("time model flash1");
  REQUIRE(t != nullptr);
  CHECK(time->tip_text(t, 0).contains(format_time_ms_short(time->points_of(t)[0].y, 6)));
}

TEST_CASE("tick formatters pick the unit and drop trailing zeros", "[gui][charts][units]") {
  CHECK(format_bytes_short(1.5e9) == "1.5 GB");
  CHECK(format_bytes_short(999) == "999 B");
  CHECK(format_bytes_short(2e8) == "200 MB");
  CHECK(format_bytes_short(1234567, 4) == "1.235 MB");
  CHECK(format_bytes_binary_short(65536) == "64 KiB");
  CHECK(format_bytes_binary_short(232448) == "227 KiB");
  CHECK(format_bytes_binary_short(1536) == "1.5 KiB");
  CHECK(format_flops_short(7.93e10) == "79.3 GFLOP");
  CHECK(format_flops_short(1.17e12) == "1.17 TFLOP");
  CHECK(format_time_ms_short(0.25) == "250 µs");
  CHECK(format_time_ms_short(2.0) == "2 ms");
  CHECK(format_time_ms_short(1500) == "1.5 s");
  CHECK(format_time_ms_short(4.2e-5) == "42 ns");
  // Ticks a hair apart on a linear FLOP axis still get labels of their own.
  const auto ticks = axis_ticks(AxisQuantity::flops, 1.00001e11, 1.00005e11);
  REQUIRE(ticks.size() >= 3);
  std::set<QString> labels;
  for (const auto& t : ticks) labels.insert(t.label);
  CHECK(labels.size() == ticks.size());
  // On a log axis over four decades: 1-2-5 steps, at most eight ticks.
  const auto log = axis_ticks(AxisQuantity::bytes, 3e7, 4e11);
  CHECK(log.size() <= 8);
  CHECK(log.size() >= 3);
}
