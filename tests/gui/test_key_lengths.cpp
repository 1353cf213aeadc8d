// Per-sequence key lengths in the workbench (docs/gui.md, "Per-sequence key lengths"): the panel's
// lengths file reaches flash1's and flash2's Configs (both passes), a file sim refuses is the panel's problem
// (in red, nothing stale drawn), and the path is saved, restored and parsed.
#include <catch2/catch.hpp>

#include <fstream>

#include <QLineEdit>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "gui/command_line.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/workbench_data.h"
#include "sim/row.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("the panel's lengths file reaches flash1's and flash2's Configs, forward and backward, not standard's, and a "
          "bad one is the panel's problem",
          "[gui][lengths]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const std::string good = dir.filePath("lengths.txt").toStdString(), bad = dir.filePath("bad.txt").toStdString();
  std::ofstream(good) << "32768\n100\n5000\n7\n1\n2\n3\n4\n";  // B = 8, the decode preset's
  std::ofstream(bad) << "32768\nmany\n";

  ParameterPanel panel;
  REQUIRE(panel.lengths_file_box());
  CHECK(panel.lengths_file_box()->toolTip().contains("one key length per line"));
  WorkbenchParams p = decode_preset(panel.params());
  p.lengths_file = good;
  panel.set_params(p);
  CHECK(panel.params() == p);

  const sim::Config flash2 = current_config(p, sim::Algo::flash2);
  REQUIRE(!flash2.problem.key_lengths.empty());
  CHECK(flash2.problem.key_lengths.values->size() == 8);
  CHECK(flash2.problem.key_lengths.source == good);
  CHECK(current_config(p, sim::Algo::flash1).problem.key_lengths.source == good);
  CHECK(current_config(p, sim::Algo::standard).problem.key_lengths.empty());
  WorkbenchParams fwdbwd = p;
  fwdbwd.problem.pass = sim::Pass::fwdbwd;
  CHECK(current_config(fwdbwd, sim::Algo::flash2).problem.key_lengths.source == good);

  p.algos = {sim::Algo::flash2};
  const WorkbenchData data = compute_workbench(p);
  CHECK(data.problem_error.empty());
  // The row matched at this file only.
  const ProblemKey key = problem_key(p);
  sim::Row row = sim::config_row(flash2, sim::RowSource::measured);
  CHECK(row_matches(row, key));
  row.lengths.clear();
  CHECK_FALSE(row_matches(row, key));

  for (const std::string& file : {bad, dir.filePath("missing.txt").toStdString()}) {
    WorkbenchParams wrong = p;
    wrong.lengths_file = file;
    const WorkbenchData refused = compute_workbench(wrong);
    CHECK_THAT(refused.problem_error, Catch::Contains("key lengths file"));
    CHECK(refused.block_rows.empty());
  }
  WorkbenchParams short_batch = p;
  short_batch.problem.batch = 4;  // 8 lengths for 4 sequences
  CHECK_THAT(compute_workbench(short_batch).problem_error, Catch::Contains("B = 4"));
}

TEST_CASE("the command line takes --lengths FILE and refuses a bad file in one line, and settings keep the path",
          "[gui][lengths][options][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString good = dir.filePath("l.txt");
  std::ofstream(good.toStdString()) << "10\n20\n";
  const auto ok = parse_command_line({"--lengths", good});
  INFO(ok.error);
  REQUIRE(ok.error.empty());
  CHECK(ok.line.params.lengths_file == good.toStdString());
  const auto r = parse_command_line({"--lengths", dir.filePath("missing.txt")});
  CHECK(r.error.rfind("--lengths", 0) == 0);
  CHECK(r.error.find('\n') == std::string::npos);

  WorkbenchParams p = decode_preset(WorkbenchParams{});
  p.lengths_file = good.toStdString();
  const auto back = gui::test::settings_round_trip(dir, p);
  REQUIRE(back);
  CHECK(back->lengths_file == p.lengths_file);
  CHECK(*back == p);
}
