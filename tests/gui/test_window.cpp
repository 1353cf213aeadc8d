// Sliding windows in the workbench (docs/gui.md, "Sliding windows"): the panel's window-left and
// window-right boxes (none at −1) reach every algorithm's Config, are saved, restored and parsed,
// rows of another window stay off the charts, and the tiling view skips the tiles outside the band
// and traces the windowed softmax exactly.
#include <catch2/catch.hpp>

#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "gui/command_line.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/tiling_view.h"
#include "gui/workbench_data.h"
#include "sim/row.h"
#include "sim/schedule.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("the panel round-trips a window, none at the boxes' lowest value, and every algorithm's Config gets it",
          "[gui][window]") {
  ParameterPanel panel;
  for (QSpinBox* box : {panel.window_left_box(), panel.window_right_box()}) {
    REQUIRE(box);
    CHECK(box->minimum() == -1);
    CHECK(box->specialValueText() == "none");
    CHECK(box->toolTip().contains("skipped"));
  }
  CHECK(panel.params().problem.window_left == sim::kNoWindow);
  CHECK(panel.params().problem.window_right == sim::kNoWindow);
  WorkbenchParams p = panel.params();
  p.problem.window_left = 256;
  p.problem.window_right = 0;
  panel.set_params(p);
  CHECK(panel.window_left_box()->value() == 256);
  CHECK(panel.params() == p);
  for (const sim::Algo algo : {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2}) {
    const sim::Config c = current_config(p, algo);
    CHECK(c.problem.window_left == 256);
    CHECK(c.problem.window_right == 0);
  }
  // Causal with a right side of its own is refused with the field's label.
  p.problem.causal = true;
  p.algos = {sim::Algo::flash2};
  CHECK_THAT(compute_workbench(p).problem_error, Catch::Contains("window right"));
}

TEST_CASE("the command line parses --window-left and --window-right, none among them, and rejects others in one line",
          "[gui][window][options]") {
  const auto r = parse_command_line({"--window-left", "256", "--window-right", "0"});
  INFO(r.error);
  REQUIRE(r.error.empty());
  CHECK(r.line.params.problem.window_left == 256);
  CHECK(r.line.params.problem.window_right == 0);
  CHECK(parse_command_line({"--window-left=none"}).line.params.problem.window_left == sim::kNoWindow);
  for (const QStringList& bad : {QStringList{"--window-left", "-3"}, QStringList{"--window-right", "x"}}) {
    const auto e = parse_command_line(bad);
    INFO(bad.join(" ").toStdString() << " -> " << e.error);
    CHECK(e.error.rfind("--window-", 0) == 0);
    CHECK(e.error.find('\n') == std::string::npos);
  }
  CHECK(usage_text().find("--window-left") != std::string::npos);
}

TEST_CASE("settings save and restore the window, and odd settings read none", "[gui][window][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  WorkbenchParams p;
  p.problem.window_left = 127;
  p.problem.window_right = 16;
  const auto back = gui::test::settings_round_trip(dir, p);
  REQUIRE(back);
  CHECK(*back == p);
  {
    QSettings s(dir.filePath("odd.ini"), QSettings::IniFormat);
    s.setValue("problem/seqlen", 97);
    s.setValue("problem/window_left", -7);
  }
  const QSettings odd(dir.filePath("odd.ini"), QSettings::IniFormat);
  REQUIRE(restore_params(odd));
  CHECK(restore_params(odd)->problem.window_left == sim::kNoWindow);
}

TEST_CASE("a row of another window is not matched", "[gui][window][loading]") {
  WorkbenchParams p;
  p.problem.window_left = 64;
  const ProblemKey key = problem_key(p);
  const sim::Row same = sim::config_row(current_config(p, sim::Algo::flash2), sim::RowSource::measured);
  CHECK(row_matches(same, key));
  sim::Row other = same;
  other.window_left = sim::kNoWindow;
  CHECK_FALSE(row_matches(other, key));
}

TEST_CASE("the tiling view takes the panel's window: its steps are the band's tiles and its trace matches the "
          "windowed reference",
          "[gui][window][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("tiling"));
  WorkbenchParams p = window->panel()->params();
  p.problem.window_left = 8;
  p.problem.window_right = 4;
  window->panel()->set_params(p);
  REQUIRE(test::wait_data(*window));
  TilingView* view = window->tiling_view();
  view->set_teaching(sim::Algo::flash2, 64, 64, 8, 8, false);
  REQUIRE(view->error_text().isEmpty());
  const sim::Config& c = view->trace().config;
  CHECK(c.problem.window_left == 8);
  CHECK(c.problem.window_right == 4);
  const sim::TileFilter filter(c);
  const sim::TileGrid& g = filter.grid();
  int64_t visited = 0;
  for (int64_t i = 0; i < g.tr; ++i)
    for (int64_t j = 0; j < g.tc; ++j) visited += filter.visits(i, j);
  CHECK(visited < g.tr * g.tc);
  CHECK(view->step_count() == visited);
  CHECK(view->trace().output_error < 1e-12);
}
