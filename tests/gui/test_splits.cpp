// Split-KV in the workbench (docs/gui.md, "Grouped-query attention and Nq ≠ Nk"): the panel's
// splits box (0: auto) reaches flash2's forward Configs only, resolved per Config (auto:
// sim::auto_splits; clamped to ⌈Nk / Bc⌉), is saved, restored and parsed, keeps rows of another
// split count off the charts, and the scaling view draws flash2's io and time against S for
// decode-like problems, every number from sim::simulate.
#include <catch2/catch.hpp>

#include <memory>

#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "gui/chart_panel.h"
#include "gui/command_line.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/scaling_view.h"
#include "gui/workbench_data.h"
#include "sim/row.h"
#include "sim/simulate.h"
#include "sim/split_kv.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("the panel round-trips splits, auto at 0, and Configs get them resolved", "[gui][splits]") {
  ParameterPanel panel;
  QSpinBox* box = panel.splits_box();
  REQUIRE(box);
  CHECK(box->minimum() == 0);
  CHECK(box->maximum() == 128);
  CHECK(box->specialValueText() == "auto");
  CHECK(box->toolTip().contains("combine kernel"));
  CHECK(panel.params().splits == 1);  // the default: no split

  WorkbenchParams p = decode_preset(panel.params());  // M as the panel spells it
  p.splits = 7;
  panel.set_params(p);
  CHECK(box->value() == 7);
  CHECK(panel.params() == p);
  box->setValue(0);
  CHECK(panel.params().splits == 0);

  // flash2's forward gets S; other algorithms and the backward keep 1.
  CHECK(current_config(p, sim::Algo::flash2).splits == 7);
  CHECK(current_config(p, sim::Algo::flash1).splits == 1);
  CHECK(current_config(p, sim::Algo::standard).splits == 1);
  WorkbenchParams bwd = p;
  bwd.problem.pass = sim::Pass::bwd;
  CHECK(current_config(bwd, sim::Algo::flash2).splits == 1);

  // auto: sim::auto_splits of the Config (decoding: few blocks, so more than one split).
  p.splits = 0;
  sim::Config unsplit = current_config(p, sim::Algo::flash2);
  const int64_t chosen = unsplit.splits;
  unsplit.splits = 1;
  CHECK(chosen == sim::auto_splits(unsplit));
  CHECK(chosen > 1);
  sim::validate(current_config(p, sim::Algo::flash2));

  // More splits than key tiles: clamped to ⌈Nk / Bc⌉, so the Config is one sim accepts.
  WorkbenchParams few = p;
  few.problem.seqlen_k = 300;
  few.splits = 128;
  const sim::Config clamped = current_config(few, sim::Algo::flash2);
  CHECK(clamped.splits == (300 + clamped.tiling.block_c - 1) / clamped.tiling.block_c);
  sim::validate(clamped);
}

TEST_CASE("the command line parses --splits N|auto and rejects others in one line", "[gui][splits][options]") {
  const auto n = parse_command_line({"--splits", "16"});
  INFO(n.error);
  REQUIRE(n.error.empty());
  CHECK(n.line.params_given);
  CHECK(n.line.params.splits == 16);
  const auto a = parse_command_line({"--splits=auto"});
  REQUIRE(a.error.empty());
  CHECK(a.line.params.splits == 0);
  for (const QStringList& bad : {QStringList{"--splits", "0"}, QStringList{"--splits", "129"},
                                 QStringList{"--splits", "four"}, QStringList{"--splits=-2"},
                                 QStringList{"--splits"}}) {
    const auto r = parse_command_line(bad);
    INFO(bad.join(" ").toStdString() << " -> " << r.error);
    CHECK(r.error.rfind("--splits", 0) == 0);
    CHECK(r.error.find('\n') == std::string::npos);
  }
  CHECK(usage_text().find("--splits") != std::string::npos);
}

TEST_CASE("settings save and restore splits, and older settings read 1", "[gui][splits][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  for (int64_t splits : {int64_t{1}, int64_t{0}, int64_t{5}, int64_t{128}}) {
    WorkbenchParams p = decode_preset(WorkbenchParams{});
    p.splits = splits;
    const auto back = gui::test::settings_round_trip(dir, p);
    REQUIRE(back);
    CHECK(back->splits == splits);
    CHECK(*back == p);
  }
  {
    QSettings s(dir.filePath("old.ini"), QSettings::IniFormat);
    s.setValue("problem/seqlen", 97);
  }
  const QSettings old(dir.filePath("old.ini"), QSettings::IniFormat);
  REQUIRE(restore_params(old));
  CHECK(restore_params(old)->splits == 1);
}

TEST_CASE("the scaling view's S chart: x up to min(128, Tc), io and time from sim::simulate",
          "[gui][splits][scaling]") {
  WorkbenchParams p = decode_preset(WorkbenchParams{});  // N 1, Nk 32,768
  p.algos = {sim::Algo::flash1, sim::Algo::flash2};
  REQUIRE(scaling_shows_splits(p));
  const sim::Config base = current_config(p, sim::Algo::flash2);
  const int64_t tc = sim::forward_key_tiles(base);
  std::vector<int64_t> expected;
  for (int64_t s = 1; s <= std::min<int64_t>(128, tc); s *= 2) expected.push_back(s);
  CHECK(scaling_splits(p) == expected);
  CHECK(expected.back() == 128);  // Tc = 32,768 / Bc is well above 128

  const WorkbenchData data = compute_workbench(p);
  REQUIRE(data.problem_error.empty());
  std::vector<double> xs;
  for (const PlotRow& r : data.splits_rows) {
    if (!r.row.is_total() || r.row.source != sim::RowSource::model) continue;
    xs.push_back(r.x);
    CHECK(r.row.algo == sim::RowAlgo::flash2);
    CHECK(r.row.splits == static_cast<int64_t>(r.x));
    sim::Config c = base;
    c.splits = static_cast<int64_t>(r.x);
    const sim::SimResult result = sim::simulate(c, sim::CountMethod::formula);
    for (const sim::Row& want : sim::rows_from_result(result)) {
      if (!want.is_total()) continue;
      CHECK(r.row.io_read_bytes == want.io_read_bytes);
      CHECK(r.row.io_write_bytes == want.io_write_bytes);
      CHECK(r.row.time_ms == want.time_ms);
    }
  }
  REQUIRE(xs.size() == expected.size());
  for (size_t k = 0; k < xs.size(); ++k) CHECK(xs[k] == static_cast<double>(expected[k]));

  ScalingView view;
  view.redraw({std::make_shared<const WorkbenchData>(data), nullptr, nullptr, false});
  CHECK(view.splits_chart()->isVisibleTo(&view));
  const QAbstractSeries* io = view.splits_chart()->series_named("io model flash2");
  REQUIRE(io);
  const auto& points = view.splits_chart()->points_of(io);
  REQUIRE(points.size() == expected.size());
  for (size_t k = 0; k < points.size(); ++k) {
    CHECK(points[k].x == static_cast<double>(expected[k]));
    CHECK(points[k].y == *io_bytes(data.splits_rows[k].row));
  }
  REQUIRE(view.splits_time_chart()->series_named("time model flash2"));
  bool named = false;
  for (const auto& [name, widget] : view.charts()) named = named || name == "scaling-splits";
  CHECK(named);

  // A square training problem: no S chart.
  WorkbenchParams square;
  square.algos = {sim::Algo::flash2};
  CHECK_FALSE(scaling_shows_splits(square));
  CHECK(scaling_splits(square).empty());
  const WorkbenchData square_data = compute_workbench(square);
  CHECK(square_data.splits_rows.empty());
  view.redraw({std::make_shared<const WorkbenchData>(square_data), nullptr, nullptr, false});
  CHECK_FALSE(view.splits_chart()->isVisibleTo(&view));
}

TEST_CASE("a flash2 row of another split count is not matched", "[gui][splits][loading]") {
  WorkbenchParams p = decode_preset(WorkbenchParams{});
  p.splits = 4;
  const ProblemKey key = problem_key(p);
  const sim::Row same = sim::config_row(current_config(p, sim::Algo::flash2), sim::RowSource::measured);
  REQUIRE(same.splits == 4);
  CHECK(row_matches(same, key));
  sim::Row other = same;
  other.splits = 1;
  CHECK_FALSE(row_matches(other, key));
  other.splits = 8;
  CHECK_FALSE(row_matches(other, key));
  // Other algorithms run one split whatever the panel asks.
  const sim::Row flash1 = sim::config_row(current_config(p, sim::Algo::flash1), sim::RowSource::measured);
  CHECK(flash1.splits == 1);
  CHECK(row_matches(flash1, key));
  // auto: the row's split count must be what auto_splits picks for its tiling.
  p.splits = 0;
  const ProblemKey auto_key = problem_key(p);
  const sim::Row picked = sim::config_row(current_config(p, sim::Algo::flash2), sim::RowSource::measured);
  CHECK(row_matches(picked, auto_key));
  sim::Row unsplit = picked;
  unsplit.splits = 1;
  CHECK_FALSE(row_matches(unsplit, auto_key));
}
