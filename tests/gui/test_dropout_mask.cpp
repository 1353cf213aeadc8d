// Dropout and key padding in the workbench (docs/gui.md, "Dropout and key padding"): the panel's
// dropout box ("none" at 0) and key-padding mask check box reach every algorithm's Config, are
// saved, restored and parsed (--dropout P, --mask), rows of another dropout or mask stay off the
// charts, the headings name them, and whatever sim refuses (an algorithm that does not run them,
// the tiling view's trace) is shown in sim's words.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSettings>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "gui/block_size_view.h"
#include "gui/breakdown_view.h"
#include "gui/command_line.h"
#include "gui/field_label.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/tiling_view.h"
#include "gui/workbench_data.h"
#include "sim/errors.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

using test::refusal;
using test::small_params;

// The model's total rows of an algorithm in the block-size view's data.
std::vector<sim::Row> block_totals(const WorkbenchData& data, sim::Algo algo) {
  std::vector<sim::Row> rows;
  for (const PlotRow& p : data.block_rows)
    if (p.row.source == sim::RowSource::model && p.row.algo == sim::row_algo(algo) && p.row.is_total())
      rows.push_back(p.row);
  return rows;
}

bool contains(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

}  // namespace

TEST_CASE("the panel's dropout box and key-padding mask set Problem::dropout and mask on every algorithm's Config",
          "[gui][dropout][mask]") {
  ParameterPanel panel;
  QDoubleSpinBox* dropout = panel.dropout_box();
  QCheckBox* mask = panel.mask_box();
  REQUIRE(dropout);
  REQUIRE(mask);
  CHECK(dropout->minimum() == 0.0);
  CHECK(dropout->maximum() == Approx(0.99));
  CHECK(dropout->singleStep() == Approx(0.05));
  CHECK(dropout->decimals() >= 2);
  CHECK(dropout->decimals() <= 3);
  CHECK(dropout->specialValueText() == "none");
  CHECK(dropout->text() == "none");
  CHECK(dropout->toolTip().contains("probability of dropping an attention probability"));
  CHECK(dropout->toolTip().contains("separate passes over P"));
  CHECK(dropout->toolTip().contains("fuse"));
  CHECK(dropout->toolTip().contains("CUDA-core"));
  CHECK(dropout->toolTip().contains("2^-16"));
  CHECK(mask->text() == "key-padding mask (built-in lengths)");
  CHECK(mask->toolTip().contains("N - floor(b·N / (2B))"));
  CHECK(mask->toolTip().contains("separate pass"));
  CHECK(mask->toolTip().contains("key lengths file"));
  // The row's label is field_label's, so sim's refusals and the panel use one name.
  QStringList labels;
  for (QLabel* l : panel.findChildren<QLabel*>()) labels << l->text();
  CHECK(labels.contains(QString::fromStdString(std::string(field_label(sim::Field::dropout)))));
  CHECK(std::string(field_label(sim::Field::mask)) == "key-padding mask");

  CHECK(panel.params().problem.dropout == 0.0);
  CHECK_FALSE(panel.params().problem.mask);
  dropout->setValue(0.1);
  CHECK(panel.params().problem.dropout == 0.1);
  mask->setChecked(true);
  CHECK(panel.params().problem.mask);

  WorkbenchParams p = panel.params();
  p.problem.dropout = 0.15;
  p.problem.mask = false;
  panel.set_params(p);
  CHECK(dropout->value() == 0.15);
  CHECK_FALSE(mask->isChecked());
  CHECK(panel.params() == p);
  p.problem.mask = true;
  panel.set_params(p);
  CHECK(panel.params() == p);
  for (const sim::Algo algo : {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2, sim::Algo::blocksparse}) {
    const sim::Config c = current_config(p, algo);
    CHECK(c.problem.dropout == 0.15);
    CHECK(c.problem.mask);
  }
  // A dropout sim refuses as a problem never comes from the box: its range ends below 1.
  CHECK(dropout->maximum() < 1.0);
}

TEST_CASE("standard attention's numbers follow the panel's dropout and mask: their separate passes add bytes",
          "[gui][dropout][mask]") {
  WorkbenchParams p = small_params();
  p.algos = {sim::Algo::standard};
  const WorkbenchData none = compute_workbench(p);
  REQUIRE(none.problem_error.empty());
  const auto base = block_totals(none, sim::Algo::standard);
  REQUIRE_FALSE(base.empty());
  for (const bool with_mask : {false, true}) {
    WorkbenchParams q = p;
    if (with_mask) q.problem.mask = true;
    else q.problem.dropout = 0.1;
    INFO((with_mask ? "mask" : "dropout 0.1"));
    const WorkbenchData data = compute_workbench(q);
    REQUIRE(data.problem_error.empty());
    CHECK(data.skipped.empty());
    const auto rows = block_totals(data, sim::Algo::standard);
    REQUIRE_FALSE(rows.empty());
    CHECK(rows.front().dropout == q.problem.dropout);
    CHECK((rows.front().mask != 0) == with_mask);
    CHECK(*io_bytes(rows.front()) > *io_bytes(base.front()));
    // The rows equal sim's for the same Config.
    const auto direct = sim::rows_from_result(sim::simulate(current_config(q, sim::Algo::standard), sim::CountMethod::formula));
    for (const sim::Row& r : direct)
      if (r.is_total()) CHECK(*io_bytes(rows.front()) == *io_bytes(r));
  }
}

TEST_CASE("flash1 and flash2 with dropout or the mask show numbers or sim's refusal, named by the panel's label",
          "[gui][dropout][mask]") {
  struct Case {
    const char* what;
    double dropout;
    bool mask;
    bool causal;
    int64_t window_left;
  };
  for (const Case& k : {Case{"dropout 0.1", 0.1, false, false, sim::kNoWindow},
                        Case{"dropout 0.1, causal", 0.1, false, true, sim::kNoWindow},
                        Case{"dropout 0.1, window left 64", 0.1, false, false, 64},
                        Case{"key-padding mask", 0.0, true, false, sim::kNoWindow},
                        Case{"key-padding mask, dropout 0.2", 0.2, true, false, sim::kNoWindow}}) {
    WorkbenchParams p = small_params();
    p.algos = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2};
    p.problem.dropout = k.dropout;
    p.problem.mask = k.mask;
    p.problem.causal = k.causal;
    p.problem.window_left = k.window_left;
    const WorkbenchData data = compute_workbench(p);
    REQUIRE(data.problem_error.empty());
    for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
      const std::string why = refusal(p, algo);
      const auto rows = block_totals(data, algo);
      INFO(k.what << ", " << sim::to_string(algo) << ": " << (why.empty() ? "numbers" : why));
      if (why.empty()) {
        REQUIRE_FALSE(rows.empty());
        CHECK(rows.front().dropout == k.dropout);
        CHECK((rows.front().mask != 0) == k.mask);
      } else {
        // Left out with sim's own words, by the panel's labels (dropout, key-padding mask).
        CHECK(rows.empty());
        CHECK(contains(data.skipped, why));
        CHECK((why.find("dropout: ") != std::string::npos || why.find("key-padding mask: ") != std::string::npos));
      }
    }
    // Standard always runs them (its separate passes).
    CHECK_FALSE(block_totals(data, sim::Algo::standard).empty());
  }
  // What the block-size view says: the first configuration left out, in those words.
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p = small_params();
  p.problem.mask = true;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  const std::string why = refusal(p, sim::Algo::flash1);
  if (!why.empty()) {
    QString note;
    for (QLabel* l : window->block_view()->findChildren<QLabel*>())
      if (l->text().contains("left out")) note = l->text();
    INFO(note.toStdString());
    CHECK(note.contains(QString::fromStdString(why)));
  }
}

TEST_CASE("settings save and restore dropout and the mask, and odd or missing values read as none",
          "[gui][dropout][mask][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  WorkbenchParams p;
  p.problem.dropout = 0.15;
  p.problem.mask = true;
  const auto back = gui::test::settings_round_trip(dir, p);
  REQUIRE(back);
  CHECK(back->problem.dropout == 0.15);
  CHECK(back->problem.mask);
  CHECK(*back == p);
  for (const QVariant& odd : {QVariant(1.5), QVariant(-0.1), QVariant("many"), QVariant(0.1234)}) {
    QSettings s(dir.filePath("odd.ini"), QSettings::IniFormat);
    s.clear();
    s.setValue("problem/seqlen", 97);
    s.setValue("problem/dropout", odd);
    s.sync();
    const QSettings read(dir.filePath("odd.ini"), QSettings::IniFormat);
    INFO(odd.toString().toStdString());
    REQUIRE(restore_params(read));
    CHECK(restore_params(read)->problem.dropout == 0.0);
  }
  {  // settings from before the keys existed
    QSettings s(dir.filePath("old.ini"), QSettings::IniFormat);
    s.setValue("problem/seqlen", 97);
  }
  const QSettings old(dir.filePath("old.ini"), QSettings::IniFormat);
  REQUIRE(restore_params(old));
  CHECK(restore_params(old)->problem.dropout == 0.0);
  CHECK_FALSE(restore_params(old)->problem.mask);
}

TEST_CASE("the command line takes --dropout P and --mask as the runner spells them, and refuses bad values in one line",
          "[gui][dropout][mask][options]") {
  {
    const auto r = parse_command_line({"--dropout", "0.1", "--mask"});
    INFO(r.error);
    REQUIRE(r.error.empty());
    CHECK(r.line.params.problem.dropout == 0.1);
    CHECK(r.line.params.problem.mask);
    CHECK(r.line.params_given);
  }
  {
    const auto r = parse_command_line({"--dropout=0.25", "--mask=0"});
    INFO(r.error);
    REQUIRE(r.error.empty());
    CHECK(r.line.params.problem.dropout == 0.25);
    CHECK_FALSE(r.line.params.problem.mask);
  }
  CHECK(parse_command_line({"--mask=1"}).line.params.problem.mask);
  CHECK(parse_command_line({"--dropout", "0"}).line.params.problem.dropout == 0.0);
  CHECK(parse_command_line({"--dropout", "0.99"}).line.params.problem.dropout == 0.99);
  CHECK_FALSE(parse_command_line({}).line.params.problem.mask);
  CHECK(parse_command_line({}).line.params.problem.dropout == 0.0);
  struct Bad {
    QStringList args;
    std::string option;
  };
  for (const Bad& bad : {Bad{{"--dropout", "1"}, "--dropout"}, Bad{{"--dropout", "-0.1"}, "--dropout"},
                         Bad{{"--dropout", "x"}, "--dropout"}, Bad{{"--dropout", "0.1x"}, "--dropout"},
                         Bad{{"--dropout", "0.995"}, "--dropout"}, Bad{{"--dropout", "0.1234"}, "--dropout"},
                         Bad{{"--dropout", "nan"}, "--dropout"}, Bad{{"--dropout"}, "--dropout"},
                         Bad{{"--mask=2"}, "--mask"}, Bad{{"--mask=yes"}, "--mask"}}) {
    const auto e = parse_command_line(bad.args);
    INFO(bad.args.join(" ").toStdString() << " -> " << e.error);
    CHECK(e.error.rfind(bad.option, 0) == 0);
    CHECK(e.error.find('\n') == std::string::npos);
  }
  CHECK(usage_text().find("--dropout P") != std::string::npos);
  CHECK(usage_text().find("--mask") != std::string::npos);

  // The real program: status 2, one line naming the option, no file written.
  test::check_refused_in_one_line({"--dropout", "1.5"}, "--dropout");
}

TEST_CASE("a loaded row of another dropout or mask is not matched", "[gui][dropout][mask][loading]") {
  WorkbenchParams p = small_params();
  p.problem.dropout = 0.1;
  const ProblemKey key = problem_key(p);
  for (const sim::Algo algo : {sim::Algo::standard, sim::Algo::flash2}) {
    INFO(sim::to_string(algo));
    const sim::Row same = sim::config_row(current_config(p, algo), sim::RowSource::measured);
    CHECK(same.dropout == 0.1);
    CHECK(row_matches(same, key));
    // Read back from a csv file as sim writes it (9 significant digits): still the same.
    std::stringstream csv(sim::csv_header() + "\n" + sim::to_csv_line(same) + "\n");
    const auto read = sim::read_rows_csv(csv, "rows.csv");
    REQUIRE(read.size() == 1);
    CHECK(row_matches(read.front(), key));
    for (const double other : {0.0, 0.15, 0.1 + 1e-6}) {
      sim::Row r = same;
      r.dropout = other;
      INFO("row dropout " << other);
      CHECK_FALSE(row_matches(r, key));
    }
    sim::Row masked = same;
    masked.mask = 1;
    CHECK_FALSE(row_matches(masked, key));
  }
  // The panel's mask: rows without it are not matched, rows with it are.
  WorkbenchParams m = small_params();
  m.problem.mask = true;
  const ProblemKey mask_key = problem_key(m);
  const sim::Row with_mask = sim::config_row(current_config(m, sim::Algo::standard), sim::RowSource::measured);
  CHECK(with_mask.mask == 1);
  CHECK(row_matches(with_mask, mask_key));
  sim::Row without = with_mask;
  without.mask = 0;
  CHECK_FALSE(row_matches(without, mask_key));
  CHECK_FALSE(row_matches(with_mask, problem_key(small_params())));
}

TEST_CASE("the headings name dropout and the key-padding mask where the window's text appears",
          "[gui][dropout][mask][titles]") {
  CHECK(problem_options_text(sim::Problem{}).isEmpty());
  sim::Problem problem;
  problem.window_left = 8;
  problem.dropout = 0.1;
  problem.mask = true;
  CHECK(problem_options_text(problem) == ", window left 8, right none, dropout 0.1, key-padding mask");
  problem.window_left = sim::kNoWindow;
  problem.mask = false;
  CHECK(problem_options_text(problem) == ", dropout 0.1");

  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("breakdown"));
  WorkbenchParams p = small_params();
  p.algos = {sim::Algo::standard};
  p.problem.dropout = 0.1;
  p.problem.mask = true;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  const QString title = window->breakdown_view()->chart_view()->chart()->title();
  INFO(title.toStdString());
  CHECK(title.contains(", dropout 0.1"));
  CHECK(title.contains(", key-padding mask"));
  // Every point's tooltip names them too.
  REQUIRE_FALSE(window->data()->block_rows.empty());
  const QString tip = row_tooltip(window->data()->block_rows.front().row);
  CHECK(tip.contains(", dropout 0.1"));
  CHECK(tip.contains(", key-padding mask"));
  p.problem.dropout = 0.0;
  p.problem.mask = false;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  CHECK_FALSE(window->breakdown_view()->chart_view()->chart()->title().contains("dropout"));
}

TEST_CASE("the tiling view takes the panel's dropout and key padding, and shows sim's refusal where it cannot trace them",
          "[gui][dropout][mask][tiling]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const std::string lengths = dir.filePath("lengths.txt").toStdString();
  std::ofstream(lengths) << "40\n64\n";
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("tiling"));
  TilingView* view = window->tiling_view();
  view->set_teaching(sim::Algo::flash2, 64, 16, 16, 16, false);
  REQUIRE(view->error_text().isEmpty());
  const int dense_steps = view->step_count();

  struct Case {
    const char* what;
    double dropout;
    bool mask;
    std::string lengths_file;
    const char* label;  // the field sim's refusal names, by the panel's label
  };
  for (const Case& k : {Case{"dropout 0.1", 0.1, false, "", "dropout"},
                        Case{"key-padding mask", 0.0, true, "", "key-padding mask"},
                        Case{"lengths file", 0.0, false, lengths, "key lengths file"}}) {
    for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
      WorkbenchParams p = window->panel()->params();
      p.problem.batch = 2;
      p.problem.dropout = k.dropout;
      p.problem.mask = k.mask;
      p.lengths_file = k.lengths_file;
      window->set_params(p);
      REQUIRE(test::wait_data(*window));
      view->set_teaching(algo, 64, 16, 16, 16, false);
      const QString error = view->error_text();
      INFO(k.what << ", " << sim::to_string(algo) << ": " << (error.isEmpty() ? "traced" : error.toStdString()));
      if (error.isEmpty()) {
        // sim traces it: the trace is of the panel's problem, and key padding only removes tiles.
        const sim::Config& c = view->trace().config;
        CHECK(c.problem.dropout == k.dropout);
        CHECK(c.problem.mask == k.mask);
        // The lengths file reaches the Configs that read it (config_of's rule), as in the charts.
        CHECK(c.problem.key_lengths.empty() == (k.lengths_file.empty() || !sim::takes_key_lengths(c)));
        CHECK(view->step_count() <= dense_steps);
      } else {
        CHECK(error.startsWith(QString::fromUtf8(k.label) + ": "));
        CHECK(view->step_count() == 0);
      }
    }
  }
  // Back to none of them: the trace returns.
  WorkbenchParams p = window->panel()->params();
  p.problem.dropout = 0.0;
  p.problem.mask = false;
  p.lengths_file.clear();
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  CHECK(view->error_text().isEmpty());
  CHECK(view->step_count() == dense_steps);
}
