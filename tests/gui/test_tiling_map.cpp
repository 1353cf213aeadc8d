// The tiling map view (docs/gui.md, "Tiling map"): its cells are simulate's numbers for the
// same configuration (time and io by the closed form, dram by the L2 model), the cells it leaves
// empty are the ones sim refuses, with sim's reason; the built tilings it marks are the
// catalog's, its best cell is best_built_tiling's; measured rows land on their own cells; a
// click on a cell makes that tiling the current one everywhere; --view map opens it; and its
// 64 closed-form cells take less than 200 ms (the benchmark's target).
#include <catch2/catch.hpp>

#include <cmath>
#include <ctime>
#include <fstream>
#include <set>

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include "gui/command_line.h"
#include "gui/field_label.h"
#include "gui/parameter_panel.h"
#include "gui/tiling_map_data.h"
#include "gui/tiling_map_view.h"
#include "gui_test_support.h"
#include "sim/kernel_catalog.h"
#include "sim/simulate.h"
#include "sim/tiling_advisor.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// Sets the panel and waits until the drawn data (and so the map, when shown) is of those
// parameters. Returns the panel's parameters as it holds them (M filled in).
WorkbenchParams show_map(MainWindow& window, WorkbenchParams params) {
  if (params.sram_bytes == 0) params.sram_bytes = sim::hardware_preset(params.hw_name).sram_bytes;
  REQUIRE(window.show_view("map"));
  window.set_params(params);
  for (int k = 0; k < 120 && !(window.data() && window.data()->params == window.panel()->params()); ++k)
    test::wait_data(window, 1000);
  REQUIRE(window.data());
  REQUIRE(window.data()->params == window.panel()->params());
  REQUIRE(window.map_view()->maps().size() == map_algos(params).size() * map_passes(params).size());
  return window.panel()->params();
}

// A window showing the map of the awkward small problem N = 97, d = 40 (the panel's other
// defaults).
std::unique_ptr<MainWindow> small_map_window() {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p;
  p.problem.seqlen = 97;
  p.problem.headdim = 40;
  show_map(*window, p);
  return window;
}

// The configuration of a cell as sim's own factory makes it, not through the GUI's helpers.
sim::Config sim_config(const WorkbenchParams& p, sim::Algo algo, sim::Pass pass, sim::Tiling tiling) {
  sim::Problem problem = p.problem;
  problem.pass = pass;
  sim::TilingRequest request;
  request.block_r = tiling.block_r;
  request.block_c = tiling.block_c;
  sim::Config c = sim::make_config(algo, problem, sim::hardware_preset(p.hw_name), p.sram_bytes, request);
  if (algo == sim::Algo::blocksparse) c.block_mask.text = p.block_mask;
  return c;
}

std::optional<sim::Row> total_of(const sim::SimResult& r) {
  for (const auto& row : sim::rows_from_result(r))
    if (row.is_total()) return row;
  return std::nullopt;
}

// Every cell of every map against simulate(formula); returns the number of cells sim refused.
int check_cells_equal_sim(MainWindow& window, const WorkbenchParams& p) {
  TilingMapView* view = window.map_view();
  const auto blocks = map_blocks();
  int refused = 0;
  size_t k = 0;
  for (const sim::Algo algo : map_algos(p))
    for (const sim::Pass pass : map_passes(p)) {
      REQUIRE(k < view->maps().size());
      const TilingMap& map = view->maps()[k];
      TilingMapCanvas* canvas = view->canvases()[k];
      ++k;
      CHECK(map.algo == algo);
      CHECK(map.pass == pass);
      REQUIRE(map.cells.size() == blocks.size() * blocks.size());
      for (size_t r = 0; r < blocks.size(); ++r)
        for (size_t c = 0; c < blocks.size(); ++c) {
          const MapCell& cell = map.at(r, c);
          const sim::Tiling t{blocks[r], blocks[c]};
          INFO(sim::to_string(algo) << " " << sim::to_string(pass) << " N=" << p.problem.seqlen
                                    << " d=" << p.problem.headdim << " Br=" << t.block_r << " Bc=" << t.block_c);
          CHECK(cell.tiling == t);
          const sim::Config config = sim_config(p, algo, pass, t);
          try {
            const sim::SimResult result = sim::simulate(config, sim::CountMethod::formula);
            const auto row = total_of(result);
            REQUIRE(cell.model);
            CHECK(map.time_method == result.time_method);
            CHECK(cell.model->time_ms == row->time_ms);
            CHECK(*cell.model->io_read_bytes == static_cast<double>(result.total.io_read_bytes()));
            CHECK(*cell.model->io_write_bytes == static_cast<double>(result.total.io_write_bytes()));
            CHECK(cell.value(MapQuantity::time) == result.time_ms);
            CHECK(cell.value(MapQuantity::io) ==
                  static_cast<double>(result.total.io_read_bytes() + result.total.io_write_bytes()));
            CHECK(*cell.model->block_r == t.block_r);
            CHECK(*cell.model->block_c == t.block_c);
          } catch (const sim::InvalidInput& e) {
            ++refused;
            CHECK_FALSE(cell.model);
            CHECK(cell.reason == error_message(e));
            CHECK_FALSE(cell.value(MapQuantity::time));
            CHECK(canvas->cell_tooltip(r, c).contains(QString::fromStdString(error_message(e))));
          }
        }
    }
  return refused;
}

// The catalog's tilings for a map (blocksparse runs flash2's kernels).
// The built tilings that run the algorithm's problems (blocksparse: flash2's but the dense-only
// warp-specialised forward's, which has no block-sparse instance).
std::set<std::pair<int64_t, int64_t>> catalog_tilings(sim::Algo algo, sim::Pass pass, int64_t d, sim::DType dtype) {
  const bool dense = algo != sim::Algo::blocksparse;
  if (algo == sim::Algo::blocksparse) algo = sim::Algo::flash2;
  std::set<std::pair<int64_t, int64_t>> out;
  for (const sim::BuiltKernel& k : sim::built_kernels())
    if (k.algo == algo && k.pass == pass && k.headdim == d && k.dtype == dtype && (dense || !k.dense_only))
      out.insert({k.tiling.block_r, k.tiling.block_c});
  return out;
}

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

TEST_CASE("the tiling map's cells equal simulate's numbers for the same configuration",
          "[gui][map]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p;  // the defaults: B=64, H=16, N=1024, d=64, fp16, fwd, h200
  WorkbenchParams shown = show_map(*window, p);
  CHECK(check_cells_equal_sim(*window, shown) == 0);  // every tile fits in the H200's M at d=64
  // The H200 preset is calibrated: the time model's time, and the view says so.
  CHECK(window->map_view()->maps().front().time_method == sim::TimeMethod::model);
  CHECK(window->map_view()->time_method_text().contains("time model"));

  // Awkward shapes: N = 97, d = 40; causal, both passes, blocksparse.
  p.problem.seqlen = 97;
  p.problem.headdim = 40;
  shown = show_map(*window, p);
  check_cells_equal_sim(*window, shown);
  p.problem.causal = true;
  p.problem.pass = sim::Pass::fwdbwd;
  p.algos = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::blocksparse};
  shown = show_map(*window, p);
  CHECK(window->map_view()->maps().size() == 4);  // standard has no tiles: flash1, blocksparse × fwd, bwd
  check_cells_equal_sim(*window, shown);
  // d = 128 in bf16 at N = 1025: the largest tiles no longer fit in M.
  p = WorkbenchParams{};
  p.problem.seqlen = 1025;
  p.problem.headdim = 128;
  p.problem.dtype = sim::DType::bf16;
  shown = show_map(*window, p);
  CHECK(check_cells_equal_sim(*window, shown) > 0);

  // A preset without a calibration: the roofline's time, and the view says so.
  p.hw_name = "a100-40gb";
  p.sram_bytes = 0;
  shown = show_map(*window, p);
  check_cells_equal_sim(*window, shown);
  CHECK(window->map_view()->maps().front().time_method == sim::TimeMethod::roofline);
  CHECK(window->map_view()->time_method_text().contains("roofline"));
}

TEST_CASE("the tiling map leaves the tilings whose tiles do not fit in M empty, with sim's reason",
          "[gui][map]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p;
  p.problem.seqlen = 97;
  p.problem.headdim = 40;
  p.sram_bytes = 16384;  // 8,192 fp16 elements: (2·Br + 2·Bc)·40 fits for Br + Bc <= 102
  const WorkbenchParams shown = show_map(*window, p);
  CHECK(check_cells_equal_sim(*window, shown) > 0);
  int empty = 0, filled = 0;
  for (const TilingMap& map : window->map_view()->maps())
    for (const MapCell& cell : map.cells) {
      const bool fits = sim::tiling_fits(sim_config(shown, map.algo, map.pass, cell.tiling).problem,
                                         cell.tiling, shown.sram_bytes);
      INFO("Br=" << cell.tiling.block_r << " Bc=" << cell.tiling.block_c);
      CHECK(fits == cell.model.has_value());
      if (!fits) {
        // Named by the panel's label for the tiling, not by a command-line flag.
        CHECK(cell.reason.find(field_label(sim::Field::tiling)) != std::string::npos);
        CHECK(cell.reason.find("--") == std::string::npos);
      }
      (fits ? filled : empty)++;
    }
  CHECK(empty > 0);
  CHECK(filled > 0);
}

TEST_CASE("the tiling map marks the catalog's built tilings and outlines best_built_tiling's",
          "[gui][map]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  struct Case {
    int64_t seqlen, headdim;
    sim::DType dtype;
    sim::Pass pass;
    bool any_built;
  };
  const Case cases[] = {{1024, 64, sim::DType::fp16, sim::Pass::fwd, true},
                        {97, 64, sim::DType::fp16, sim::Pass::bwd, true},
                        {1025, 128, sim::DType::fp16, sim::Pass::fwdbwd, true},
                        {97, 40, sim::DType::fp16, sim::Pass::fwd, false}};
  for (const Case& k : cases) {
    WorkbenchParams p;
    p.problem.seqlen = k.seqlen;
    p.problem.headdim = k.headdim;
    p.problem.dtype = k.dtype;
    p.problem.pass = k.pass;
    p.algos = {sim::Algo::flash1, sim::Algo::flash2, sim::Algo::blocksparse};
    const WorkbenchParams shown = show_map(*window, p);
    for (const TilingMap& map : window->map_view()->maps()) {
      INFO(sim::to_string(map.algo) << " " << sim::to_string(map.pass) << " N=" << k.seqlen << " d=" << k.headdim);
      const auto catalog = catalog_tilings(map.algo, map.pass, k.headdim, k.dtype);
      CHECK(catalog.empty() == !k.any_built);
      std::set<std::pair<int64_t, int64_t>> marked;
      for (const MapCell& cell : map.cells)
        if (cell.built) marked.insert({cell.tiling.block_r, cell.tiling.block_c});
      CHECK(marked == catalog);  // every built tiling lies on the grid, and only those are marked
      const auto best = sim::best_built_tiling(sim_config(shown, map.algo, map.pass, {64, 64}));
      CHECK(map.best == best);
      if (best) {
        // The best cell is the built cell of least predicted time the map shows.
        const MapCell* best_cell = map.find(*best);
        REQUIRE(best_cell);
        CHECK(best_cell->built);
        for (const MapCell& cell : map.cells)
          if (cell.built && cell.model) CHECK(*cell.model->time_ms >= *best_cell->model->time_ms);
      } else {
        CHECK_FALSE(map.best_note.empty());
        CHECK(window->map_view()->note_text().contains("no best cell"));
      }
    }
  }
}

TEST_CASE("measured rows of the problem are overlaid on their own tiling's cell", "[gui][map]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p;
  p.problem.seqlen = 97;
  p.problem.headdim = 64;
  p.problem.pass = sim::Pass::fwdbwd;
  const WorkbenchParams shown = show_map(*window, p);
  auto measured = [&](sim::Algo algo, sim::Pass pass, sim::Tiling t, int64_t seqlen, double time_ms) {
    WorkbenchParams q = shown;
    q.problem.seqlen = seqlen;
    sim::Row row = *total_of(sim::simulate(sim_config(q, algo, pass, t), sim::CountMethod::formula));
    row.source = sim::RowSource::measured;
    row.time_ms = time_ms;
    row.dram_read_bytes = 3000;
    row.dram_write_bytes = 1000;
    return row;
  };
  std::vector<sim::Row> rows = {
      measured(sim::Algo::flash2, sim::Pass::fwd, {128, 64}, 97, 0.0123),
      measured(sim::Algo::flash1, sim::Pass::bwd, {64, 128}, 97, 0.0456),
      measured(sim::Algo::flash2, sim::Pass::fwd, {64, 64}, 2048, 0.5),  // another problem
  };
  sim::Row model_row = measured(sim::Algo::flash2, sim::Pass::fwd, {32, 32}, 97, 0.7);
  model_row.source = sim::RowSource::model;  // not a measurement
  rows.push_back(model_row);
  QTemporaryDir dir;
  const QString path = dir.filePath("measured.csv");
  {
    std::ofstream out(path.toStdString());
    out << sim::csv_header() << "\n";
    for (const auto& r : rows) out << sim::to_csv_line(r) << "\n";
  }
  QString error;
  REQUIRE(window->load_results_file(path, &error));
  int overlaid = 0;
  for (const TilingMap& map : window->map_view()->maps())
    for (const MapCell& cell : map.cells) {
      INFO(sim::to_string(map.algo) << " " << sim::to_string(map.pass) << " Br=" << cell.tiling.block_r
                                    << " Bc=" << cell.tiling.block_c);
      if (map.algo == sim::Algo::flash2 && map.pass == sim::Pass::fwd && cell.tiling == sim::Tiling{128, 64}) {
        REQUIRE(cell.measured.size() == 1);
        CHECK(cell.measured_value(MapQuantity::time) == 0.0123);
        CHECK(cell.measured_value(MapQuantity::dram) == 4000.0);
      } else if (map.algo == sim::Algo::flash1 && map.pass == sim::Pass::bwd &&
                 cell.tiling == sim::Tiling{64, 128}) {
        REQUIRE(cell.measured.size() == 1);
        CHECK(cell.measured_value(MapQuantity::time) == 0.0456);
      } else {
        CHECK(cell.measured.empty());
      }
      overlaid += static_cast<int>(cell.measured.size());
    }
  CHECK(overlaid == 2);
  // The tooltip gives the measured value; the rows behind the view include it.
  const TilingMap& f2 = window->map_view()->maps()[2];  // flash2 fwd (flash1 fwd, flash1 bwd first)
  REQUIRE(f2.algo == sim::Algo::flash2);
  REQUIRE(f2.pass == sim::Pass::fwd);
  CHECK(window->map_view()->canvases()[2]->cell_tooltip(5, 3).contains("measured: time 0.0123 ms"));
  int in_rows = 0;
  for (const sim::Row& r : window->map_view()->rows()) in_rows += r.source == sim::RowSource::measured;
  CHECK(in_rows == 2);
  window->clear_results();
  for (const TilingMap& map : window->map_view()->maps())
    for (const MapCell& cell : map.cells) CHECK(cell.measured.empty());
}

TEST_CASE("clicking a cell of the tiling map makes it the current tiling in every view", "[gui][map]") {
  auto window = small_map_window();
  TilingMapView* view = window->map_view();
  REQUIRE(view->maps().size() == 2);  // flash1 fwd, flash2 fwd
  TilingMapCanvas* canvas = view->canvases()[1];
  const auto blocks = map_blocks();
  // Br = 96 (row 4), Bc = 48 (column 2): not a rule tiling, not a default.
  const QPoint at = canvas->cell_rect(4, 2).center();
  REQUIRE(canvas->cell_at(at) == std::make_pair(size_t{4}, size_t{2}));
  QTest::mouseClick(canvas, Qt::LeftButton, {}, at);
  for (int k = 0; k < 120 && !(window->data()->params == window->panel()->params()); ++k)
    test::wait_data(*window, 1000);
  const WorkbenchParams now = window->panel()->params();
  CHECK(now.block_r == blocks[4]);
  CHECK(now.block_c == blocks[2]);
  REQUIRE(window->data()->params == now);
  // The other views follow: the breakdown's rows are of the clicked tiling.
  REQUIRE_FALSE(window->data()->breakdown_rows.empty());
  for (const sim::Row& r : window->data()->breakdown_rows) {
    CHECK(r.block_r == blocks[4]);
    CHECK(r.block_c == blocks[2]);
  }
  for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2})
    CHECK(current_config(now, algo).tiling == sim::Tiling{96, 48});
  CHECK(canvas->cell_tooltip(4, 2).contains("current tiling"));
  CHECK_FALSE(canvas->cell_tooltip(4, 3).contains("current tiling"));
  // The cells stay those of the problem: a tiling change moves the marker, not the numbers.
  CHECK(check_cells_equal_sim(*window, now) == 0);

  // A cell the model refuses is no tiling to choose: a click on it changes nothing.
  WorkbenchParams small = now;
  small.sram_bytes = 16384;
  show_map(*window, small);
  REQUIRE_FALSE(view->maps()[1].at(7, 7).model);
  QSignalSpy changed(window->panel(), &ParameterPanel::params_changed);
  QTest::mouseClick(view->canvases()[1], Qt::LeftButton, {}, view->canvases()[1]->cell_rect(7, 7).center());
  QApplication::processEvents();
  CHECK(changed.count() == 0);
  CHECK(window->panel()->params().block_r == 96);
}

TEST_CASE("the dram cells come from the L2 model in the background and equal simulate's", "[gui][map][cache]") {
  // Set the small problem before the defaults' data arrives, so the window's own L2 curves never
  // start on the default problem.
  auto window = test::make_window(true);
  WorkbenchParams p;
  p.problem.batch = 1;
  p.problem.heads = 1;
  p.problem.seqlen = 97;
  p.problem.headdim = 40;
  p.algos = {sim::Algo::flash2};
  const WorkbenchParams shown = show_map(*window, p);
  TilingMapView* view = window->map_view();
  // Time is shown: the L2 model has not started.
  CHECK_FALSE(view->cache_running());
  CHECK(view->cache_cells_done() == 0);
  QSignalSpy finished(view, &TilingMapView::cache_finished);
  view->set_quantity(MapQuantity::dram);
  CHECK(view->cache_running());
  for (int k = 0; k < 240 && !view->cache_done(); ++k) finished.wait(1000);
  REQUIRE(view->cache_done());
  CHECK(view->cache_cells_done() == view->cache_cells_total());
  CHECK(view->cache_cells_total() == 64);
  const TilingMap& map = view->maps().front();
  for (const MapCell& cell : map.cells) {
    INFO("Br=" << cell.tiling.block_r << " Bc=" << cell.tiling.block_c);
    const sim::SimResult r = sim::simulate(sim_config(shown, map.algo, map.pass, cell.tiling), sim::CountMethod::cache);
    REQUIRE(cell.cache);
    CHECK(cell.value(MapQuantity::dram) ==
          static_cast<double>(r.total_dram.read_bytes + r.total_dram.write_bytes));
    CHECK(*cell.cache->dram_read_bytes == static_cast<double>(r.total_dram.read_bytes));
    CHECK(cell.cache->source == sim::RowSource::cache);
  }
  CHECK(view->scale().quantity == MapQuantity::dram);
  CHECK(view->scale().valid());

  // Without the L2 model (--no-cache) the dram cells stay empty and the view says why.
  auto off = test::make_window(false);
  REQUIRE(test::wait_data(*off));
  show_map(*off, p);
  off->map_view()->set_quantity(MapQuantity::dram);
  CHECK_FALSE(off->map_view()->cache_running());
  CHECK_FALSE(off->map_view()->maps().front().cells.front().cache);
}

TEST_CASE("the colour scale is logarithmic over the values shown, labelled with units", "[gui][map]") {
  auto window = small_map_window();
  TilingMapView* view = window->map_view();
  for (const MapQuantity q : {MapQuantity::time, MapQuantity::io}) {
    view->set_quantity(q);
    const MapScale& scale = view->scale();
    double lo = 0, hi = 0;
    for (const TilingMap& map : view->maps())
      for (const MapCell& cell : map.cells)
        if (const auto v = cell.value(q)) {
          lo = lo == 0 ? *v : std::min(lo, *v);
          hi = std::max(hi, *v);
        }
    REQUIRE(scale.valid());
    CHECK(scale.lo == lo);
    CHECK(scale.hi == hi);
    CHECK(scale.position(lo) == 0.0);
    CHECK(scale.position(hi) == 1.0);
    CHECK(scale.position(std::sqrt(lo * hi)) == Approx(0.5));
    const auto ticks = view->color_bar()->tick_values();
    REQUIRE(ticks.size() >= 2);
    for (const double t : ticks) {
      CHECK(t >= lo * (1 - 1e-9));
      CHECK(t <= hi * (1 + 1e-9));
      const QString label = scale.text(t);
      INFO(label.toStdString());
      if (q == MapQuantity::time) CHECK((label.endsWith(" ms") || label.endsWith(" µs") || label.endsWith(" s")));
      else CHECK((label.endsWith(" KB") || label.endsWith(" MB") || label.endsWith(" GB") || label.endsWith(" B")));
    }
  }
}

TEST_CASE("the tiling map opens with --view map, from the command line and in the window", "[gui][map][options]") {
  const ParseResult ok = parse_command_line({"--view", "map", "--seqlen", "97", "--headdim", "40"});
  REQUIRE(ok.error.empty());
  CHECK(ok.line.view == "map");
  const ParseResult bad = parse_command_line({"--view", "maps"});
  CHECK(QString::fromStdString(bad.error).contains("map"));
  CHECK(QString::fromStdString(usage_text()).contains("map"));

  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("map"));
  CHECK(window->current_view() == window->map_view());
  CHECK(window->current_view()->view_name() == "map");

  QTemporaryDir dir;
  const QString png = dir.filePath("map.png");
  QProcess process;
  process.start(FLASHIO_GUI_EXE, {"--screenshot", png, "--no-cache", "--seqlen", "97", "--headdim", "40",
                                  "--view", "map"});
  REQUIRE(process.waitForFinished(60000));
  CHECK(process.exitCode() == 0);
  const QImage image(png);
  CHECK(image.width() > 1000);
  CHECK(image.height() > 600);
}

TEST_CASE("the tiling map exports each map and its colour bar as PNG and SVG, and its rows as CSV",
          "[gui][map][export]") {
  auto window = small_map_window();
  QApplication::processEvents();
  QTemporaryDir dir;
  const QString base = dir.filePath("map");
  QStringList written;
  QString error;
  REQUIRE(window->export_view(window->map_view(), base, &written, &error));
  const auto charts = window->map_view()->charts();
  CHECK(charts.size() == 3);  // flash1 fwd, flash2 fwd, the colour bar
  for (const auto& [name, widget] : charts) {
    const QString stem = base + "-" + name;
    const QImage image(stem + ".png");
    CHECK(image.width() == widget->width());
    CHECK(image.height() == widget->height());
    QSvgRenderer svg(stem + ".svg");
    CHECK(svg.isValid());
  }
  const auto rows = sim::read_rows_file((base + ".csv").toStdString());
  CHECK(rows.size() == window->map_view()->rows().size());
  CHECK(rows.size() == 128);
}

TEST_CASE("the tiling map's 64 closed-form cells take less than 200 ms", "[gui][map][speed]") {
  WorkbenchParams p;  // the benchmark's problem: the defaults (B=64, H=16, N=1024, d=64)
  p.sram_bytes = sim::hardware_preset(p.hw_name).sram_bytes;
  for (const auto& [n, d] : {std::pair<int64_t, int64_t>{1024, 64}, {97, 40}, {4096, 128}}) {
    p.problem.seqlen = n;
    p.problem.headdim = d;
    // The thread's CPU time, best of three, so a loaded machine does not fail it.
    double best_ms = 1e9;
    for (int k = 0; k < 3; ++k) {
      const double t0 = thread_cpu_ms();
      const TilingMap map = compute_tiling_map(p, sim::Algo::flash2, sim::Pass::fwd);
      best_ms = std::min(best_ms, thread_cpu_ms() - t0);
      REQUIRE(map.cells.size() == 64);
    }
    INFO("N=" << n << " d=" << d << ": " << best_ms << " ms");
#if defined(__SANITIZE_ADDRESS__)
    WARN("sanitizer build: " << best_ms << " ms, not held to the target");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    WARN("sanitizer build: " << best_ms << " ms, not held to the target");
#else
    CHECK(best_ms < 200.0);
#endif
#else
    CHECK(best_ms < 200.0);
#endif
  }
}
