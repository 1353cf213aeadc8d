// Variable-length batches in the workbench (docs/gui.md, "Packed sequences (varlen)"): the panel's
// "packed (varlen)" box beside the key lengths file is greyed out without a file, sets
// Problem::varlen on every algorithm's Config (sim runs flash2's and refuses the others'), packs
// the file's sequences without padding (io below the padded layout's for ragged lengths, equal for
// lengths all N), is saved, restored and parsed (--varlen), takes part in row matching and the
// headings, and whatever sim refuses reaches the user as one message.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>

#include <QCheckBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
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

const sim::Algo kAllAlgos[] = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2, sim::Algo::blocksparse};

// A lengths file of `lengths`, one a line, in `dir`.
std::string lengths_file(const QTemporaryDir& dir, const QString& name, const std::vector<int64_t>& lengths) {
  const std::string path = dir.filePath(name).toStdString();
  std::ofstream out(path);
  for (const int64_t n : lengths) out << n << "\n";
  return path;
}

// Three sequences of awkward lengths (1, 17, 1000) padded to N = 1024; a sweep every tiling of
// which fits M, so each block-size job is sim's to accept or refuse.
WorkbenchParams ragged_params(const std::string& file) {
  WorkbenchParams p = test::small_params(3, 2, 1024);
  p.algos = {sim::Algo::flash2};
  p.lengths_file = file;
  return p;
}

// flash2's model totals of the block-size view, by x.
std::map<double, sim::Row> flash2_totals(const WorkbenchData& data) {
  std::map<double, sim::Row> rows;
  for (const PlotRow& p : data.block_rows)
    if (p.row.source == sim::RowSource::model && p.row.algo == sim::RowAlgo::flash2 && p.row.is_total())
      rows.emplace(p.x, p.row);
  return rows;
}

QString label_text(QWidget* root, const QString& part) {
  for (QLabel* l : root->findChildren<QLabel*>())
    if (l->text().contains(part)) return l->text();
  return {};
}

}  // namespace

TEST_CASE("the packed (varlen) box is greyed out without a lengths file, enabled with one, and says what it does",
          "[gui][varlen]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const std::string file = lengths_file(dir, "l.txt", {1, 17, 1000});
  ParameterPanel panel;
  QCheckBox* box = panel.varlen_box();
  REQUIRE(box);
  CHECK(box->text() == "packed (varlen)");
  // sim's refusals name the field by the box's own words.
  CHECK(std::string(field_label(sim::Field::varlen)) == box->text().toStdString());
  CHECK_FALSE(box->isChecked());
  CHECK_FALSE(box->isEnabled());
  CHECK(box->toolTip().contains("Greyed out: give a key lengths file first"));
  CHECK_FALSE(panel.params().varlen);

  // Typed into the lengths box, as a person would: the box is enabled at once.
  panel.lengths_file_box()->setText(QString::fromStdString(file));
  CHECK(box->isEnabled());
  const QString tip = box->toolTip();
  CHECK_FALSE(tip.contains("Greyed out"));
  CHECK(tip.contains("without padding"));
  CHECK(tip.contains("FlashAttention-2's varlen API"));
  CHECK(tip.contains("Unticked: the padded (B, H, N, d) layout"));
  CHECK(tip.contains("key padding"));
  CHECK(tip.contains("flash2 only"));
  panel.lengths_file_box()->setText("  ");
  CHECK_FALSE(box->isEnabled());

  WorkbenchParams p = panel.params();  // the panel's own M and sweep, so that params() compares equal
  p.problem.batch = 3;
  p.lengths_file = file;
  panel.set_params(p);
  CHECK(box->isEnabled());
  QSignalSpy changed(&panel, &ParameterPanel::params_changed);
  box->setChecked(true);
  CHECK(changed.count() == 1);
  CHECK(panel.params().varlen);
  p.varlen = true;
  CHECK(panel.params() == p);
  CHECK(panel.problem_error_text().isEmpty());

  // The lengths file cleared: greyed out, the tick kept (as packing keeps its own where Hkv = H),
  // packing nothing.
  p.lengths_file.clear();
  panel.set_params(p);
  CHECK_FALSE(box->isEnabled());
  CHECK(box->isChecked());
  CHECK(panel.params().varlen);
  CHECK_FALSE(packs_sequences(panel.params()));
  CHECK(panel.problem_error_text().isEmpty());
  for (const sim::Algo algo : kAllAlgos) CHECK_FALSE(current_config(panel.params(), algo).problem.varlen);
}

TEST_CASE("packed sets Problem::varlen on every Config, and flash2's packed io is below the padded layout's for ragged "
          "lengths and equal for lengths all N",
          "[gui][varlen]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const std::string ragged = lengths_file(dir, "ragged.txt", {1, 17, 1000});
  const std::string full = lengths_file(dir, "full.txt", {1024, 1024, 1024});

  WorkbenchParams padded = ragged_params(ragged);
  WorkbenchParams packed = padded;
  packed.varlen = true;
  for (const sim::Algo algo : kAllAlgos) {
    INFO(sim::to_string(algo));
    CHECK_FALSE(current_config(padded, algo).problem.varlen);
    const sim::Config c = current_config(packed, algo);
    CHECK(c.problem.varlen);
    REQUIRE_FALSE(c.problem.key_lengths.empty());
    CHECK(*c.problem.key_lengths.values == std::vector<int64_t>{1, 17, 1000});
    CHECK(c.splits == 1);
  }
  // "auto" splits keep one split over packed sequences (sim::auto_splits).
  WorkbenchParams auto_splits = packed;
  auto_splits.splits = 0;
  CHECK(current_config(auto_splits, sim::Algo::flash2).splits == 1);

  for (const sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd, sim::Pass::fwdbwd}) {
    for (const std::string& file : {ragged, full}) {
      const bool all_n = file == full;
      INFO(sim::to_string(pass) << (all_n ? ", lengths all N" : ", lengths 1, 17, 1000"));
      WorkbenchParams a = padded, b = packed;
      a.problem.pass = b.problem.pass = pass;
      a.lengths_file = b.lengths_file = file;
      const WorkbenchData padded_data = compute_workbench(a), packed_data = compute_workbench(b);
      REQUIRE(padded_data.problem_error.empty());
      REQUIRE(packed_data.problem_error.empty());
      CHECK(packed_data.skipped.empty());
      const auto pad_rows = flash2_totals(padded_data), pack_rows = flash2_totals(packed_data);
      REQUIRE(pack_rows.size() == 4);  // B = 16, 32, 64, 128
      REQUIRE(pad_rows.size() == pack_rows.size());
      for (const auto& [x, row] : pack_rows) {
        INFO("B = " << x);
        CHECK(row.varlen == 1);
        CHECK(pad_rows.at(x).varlen == 0);
        CHECK(row.lengths == file);
        const double packed_io = *io_bytes(row), padded_io = *io_bytes(pad_rows.at(x));
        if (all_n) CHECK(packed_io == padded_io);
        else CHECK(packed_io < padded_io);
      }
      // The rows are sim's for the same Config (the GUI counts nothing itself).
      const auto direct = sim::rows_from_result(sim::simulate(current_config(b, sim::Algo::flash2), sim::CountMethod::formula));
      const auto total = [](const std::vector<sim::Row>& rows, int varlen) {
        return std::find_if(rows.begin(), rows.end(), [varlen](const sim::Row& r) { return r.is_total() && r.varlen == varlen; });
      };
      REQUIRE(total(direct, 1) != direct.end());
      REQUIRE(total(packed_data.breakdown_rows, 1) != packed_data.breakdown_rows.end());
      CHECK(*io_bytes(*total(packed_data.breakdown_rows, 1)) == *io_bytes(*total(direct, 1)));
      // and the padded layout's rows beside them (varlen 0), in the Rows dock and the CSV export.
      REQUIRE(total(packed_data.breakdown_rows, 0) != packed_data.breakdown_rows.end());
      CHECK(*io_bytes(*total(packed_data.breakdown_rows, 0)) == *io_bytes(*total(padded_data.breakdown_rows, 0)));
      // The breakdown: flash2 packed, then its padded layout (the box unticked) beside it.
      REQUIRE(packed_data.breakdown.size() == 2);
      CHECK_FALSE(packed_data.breakdown[0].padded);
      CHECK(packed_data.breakdown[1].padded);
      REQUIRE(padded_data.breakdown.size() == 1);
      const auto bytes = [](const BreakdownBar& bar) { return bar.counts.io_read_bytes() + bar.counts.io_write_bytes(); };
      CHECK(bytes(packed_data.breakdown[1]) == bytes(padded_data.breakdown[0]));
      if (all_n) CHECK(bytes(packed_data.breakdown[0]) == bytes(padded_data.breakdown[0]));
      else CHECK(bytes(packed_data.breakdown[0]) < bytes(padded_data.breakdown[0]));
    }
  }

  // The other algorithms do not run packed sequences: left out with sim's reason, as the mask
  // leaves out blocksparse.
  WorkbenchParams every = packed;
  every.algos = {kAllAlgos[0], kAllAlgos[1], kAllAlgos[2], kAllAlgos[3]};
  const WorkbenchData data = compute_workbench(every);
  REQUIRE(data.problem_error.empty());
  for (const sim::Algo algo : {sim::Algo::standard, sim::Algo::flash1, sim::Algo::blocksparse}) {
    INFO(sim::to_string(algo));
    const std::string why = test::refusal(every, algo);
    CHECK(why.rfind(sim::to_string(algo) + ": packed (varlen): ", 0) == 0);
    CHECK(why.find("allowed: algo = flash2") != std::string::npos);
    CHECK(std::find(data.skipped.begin(), data.skipped.end(), why) != data.skipped.end());
    for (const PlotRow& r : data.block_rows) CHECK(r.row.algo != sim::row_algo(algo));
  }
  CHECK(flash2_totals(data).size() == 4);
}

TEST_CASE("settings keep the packed box, and settings from before it restore the padded layout",
          "[gui][varlen][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  WorkbenchParams p = ragged_params(lengths_file(dir, "l.txt", {1, 17, 1000}));
  p.varlen = true;
  const auto back = gui::test::settings_round_trip(dir, p);
  REQUIRE(back);
  CHECK(back->varlen);
  CHECK(*back == p);
  p.varlen = false;
  CHECK(gui::test::settings_round_trip(dir, p)->varlen == false);
  {
    QSettings s(dir.filePath("old.ini"), QSettings::IniFormat);
    s.setValue("problem/seqlen", 97);
  }
  const QSettings old(dir.filePath("old.ini"), QSettings::IniFormat);
  REQUIRE(restore_params(old));
  CHECK_FALSE(restore_params(old)->varlen);
}

TEST_CASE("the command line takes --varlen as the runner spells it, and refuses it in one line where sim does",
          "[gui][varlen][options]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString file = QString::fromStdString(lengths_file(dir, "l.txt", {1, 17, 1000}));
  {
    const auto r = parse_command_line({"--lengths", file, "--batch", "3", "--varlen"});
    INFO(r.error);
    REQUIRE(r.error.empty());
    CHECK(r.line.params.varlen);
    CHECK(r.line.params_given);
    CHECK(packs_sequences(r.line.params));
  }
  CHECK(parse_command_line({"--varlen=1", "--lengths", file}).line.params.varlen);
  CHECK_FALSE(parse_command_line({"--lengths", file, "--varlen=0"}).line.params.varlen);
  CHECK_FALSE(parse_command_line({"--lengths", file}).line.params.varlen);
  struct Bad {
    QStringList args;
    std::string starts, contains;
  };
  for (const Bad& bad : {Bad{{"--varlen"}, "--varlen", "--lengths FILE"},
                         Bad{{"--varlen=2", "--lengths", file, "--batch", "3"}, "--varlen", "=0 / =1"},
                         Bad{{"--lengths", file, "--batch", "3", "--varlen", "--dropout", "0.1"}, "--varlen: ", "dropout = 0"},
                         Bad{{"--lengths", file, "--batch", "3", "--varlen", "--mask"}, "--varlen: ", "mask = 0"},
                         Bad{{"--lengths", file, "--batch", "3", "--varlen", "--seqlen-k", "2048"}, "--varlen: ", "seqlen_k = seqlen"},
                         Bad{{"--lengths", file, "--batch", "3", "--varlen", "--window-left", "64"}, "--varlen: ", "window"},
                         Bad{{"--lengths", file, "--batch", "3", "--varlen", "--splits", "4"}, "--varlen: ", "splits = 1"}}) {
    const auto e = parse_command_line(bad.args);
    INFO(bad.args.join(" ").toStdString() << " -> " << e.error);
    CHECK(e.error.rfind(bad.starts, 0) == 0);
    CHECK(e.error.find(bad.contains) != std::string::npos);
    CHECK(e.error.find('\n') == std::string::npos);
  }
  CHECK(usage_text().find("[--varlen]") != std::string::npos);
  CHECK(usage_text().find("--varlen: pack the --lengths FILE's sequences") != std::string::npos);

  // The real program: refused with status 2, one line and no file; accepted, it renders.
  test::check_refused_in_one_line({"--lengths", file, "--batch", "3", "--varlen", "--dropout", "0.1"}, "--varlen: ");
  test::check_refused_in_one_line({"--varlen"}, "--lengths FILE");
  const QString png = dir.filePath("shot.png");
  QProcess shot;
  shot.start(FLASHIO_GUI_EXE, {"--screenshot", png, "--view", "breakdown", "--lengths", file, "--batch", "3",
                               "--heads", "2", "--varlen"});
  REQUIRE(shot.waitForFinished(120000));
  INFO(QString::fromLocal8Bit(shot.readAllStandardError()).toStdString());
  CHECK(shot.exitCode() == 0);
  CHECK(QFile::exists(png));
}

TEST_CASE("a loaded row is matched at the panel's packing only", "[gui][varlen][loading]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  WorkbenchParams padded = ragged_params(lengths_file(dir, "l.txt", {1, 17, 1000}));
  WorkbenchParams packed = padded;
  packed.varlen = true;
  const sim::Row row = sim::config_row(current_config(packed, sim::Algo::flash2), sim::RowSource::measured);
  CHECK(row.varlen == 1);
  CHECK(row_matches(row, problem_key(packed)));
  CHECK_FALSE(row_matches(row, problem_key(padded)));
  sim::Row unpacked = row;
  unpacked.varlen = 0;
  CHECK(row_matches(unpacked, problem_key(padded)));
  CHECK_FALSE(row_matches(unpacked, problem_key(packed)));
  // Ticked without a lengths file packs nothing: rows of the padded layout match.
  WorkbenchParams no_file = packed;
  no_file.lengths_file.clear();
  const sim::Row plain = sim::config_row(current_config(no_file, sim::Algo::flash2), sim::RowSource::measured);
  CHECK(plain.varlen == 0);
  CHECK(row_matches(plain, problem_key(no_file)));
}

TEST_CASE("the headings say packed, and the breakdown shows the padded layout's bytes beside the packed ones",
          "[gui][varlen][titles]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  WorkbenchParams p = ragged_params(lengths_file(dir, "l.txt", {1, 17, 1000}));
  CHECK_FALSE(problem_options_text(p).contains("packed"));
  p.varlen = true;
  CHECK(problem_options_text(p) == ", packed (varlen)");
  WorkbenchParams causal = p;
  causal.problem.causal = true;
  CHECK(problem_options_text(causal) == ", packed (varlen)");  // causal is said apart, as always
  WorkbenchParams no_file = p;
  no_file.lengths_file.clear();
  CHECK(problem_options_text(no_file).isEmpty());  // ticked without a file packs nothing

  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("breakdown"));
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  const QString title = window->breakdown_view()->chart_view()->chart()->title();
  INFO(title.toStdString());
  CHECK(title.contains(", packed (varlen)"));
  const auto data = window->data();
  REQUIRE(data->breakdown.size() == 2);
  // The Rows dock lists both layouts' rows, and every tooltip says which.
  bool packed_row = false, padded_row = false;
  for (const sim::Row& r : window->breakdown_view()->rows()) {
    if (!r.is_total()) continue;
    (r.varlen ? packed_row : padded_row) = true;
    CHECK(row_tooltip(r).contains(", packed (varlen)") == (r.varlen != 0));
  }
  CHECK(packed_row);
  CHECK(padded_row);
  REQUIRE_FALSE(data->block_rows.empty());
  CHECK(row_tooltip(data->block_rows.front().row).contains(", packed (varlen)"));

  p.varlen = false;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  CHECK_FALSE(window->breakdown_view()->chart_view()->chart()->title().contains("packed"));
  CHECK(window->data()->breakdown.size() == 1);
}

TEST_CASE("what sim refuses with packed sequences reaches the user as one message, and nothing stale is drawn",
          "[gui][varlen][errors]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const std::string file = lengths_file(dir, "l.txt", {1, 17, 1000});
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams good = ragged_params(file);
  good.varlen = true;
  window->set_params(good);
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->data()->problem_error.empty());
  REQUIRE_FALSE(window->data()->block_rows.empty());

  struct Case {
    const char* what;
    void (*change)(WorkbenchParams&);
    const char* allowed;
  };
  for (const Case& k : {Case{"dropout 0.1", [](WorkbenchParams& p) { p.problem.dropout = 0.1; }, "dropout = 0"},
                        Case{"the mask", [](WorkbenchParams& p) { p.problem.mask = true; }, "mask = 0"},
                        Case{"window left 64", [](WorkbenchParams& p) { p.problem.window_left = 64; }, "no window"},
                        Case{"Nk 2048", [](WorkbenchParams& p) { p.problem.seqlen_k = 2048; }, "seqlen_k = seqlen"},
                        Case{"splits 4", [](WorkbenchParams& p) { p.splits = 4; }, "splits = 1"},
                        Case{"page size 16", [](WorkbenchParams& p) { p.page_size = 16; }, "page_size = 0"},
                        Case{"a length above N", [](WorkbenchParams& p) { p.problem.seqlen = 512; }, "1 to N = 512"}}) {
    INFO(k.what);
    WorkbenchParams p = good;
    k.change(p);
    window->set_params(p);
    REQUIRE(test::wait_data(*window));
    const std::string why = window->data()->problem_error;
    INFO(why);
    CHECK(why.find(k.allowed) != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
    // One message: the panel's red line, the status bar and the block-size view's note say it.
    CHECK(window->panel()->problem_error_text().toStdString() == why);
    CHECK(label_text(window->block_view(), "cannot compute this problem").contains(QString::fromStdString(why)));
    CHECK(label_text(window.get(), "cannot compute this problem: ").contains(QString::fromStdString(why)));
    CHECK(window->data()->block_rows.empty());
    CHECK(window->data()->breakdown.empty());
  }
  // Unticked, dropout over the padded layout (key padding) is flash2's to compute.
  WorkbenchParams dropout = good;
  dropout.problem.dropout = 0.1;
  dropout.varlen = false;
  CHECK(compute_workbench(dropout).problem_error.empty());
  window->set_params(good);
  REQUIRE(test::wait_data(*window));
  CHECK(window->data()->problem_error.empty());
  CHECK(window->panel()->problem_error_text().isEmpty());
  CHECK_FALSE(window->data()->block_rows.empty());

  // The tiling view traces one head: sim refuses packed sequences there, in its own words.
  REQUIRE(window->show_view("tiling"));
  TilingView* view = window->tiling_view();
  for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
    view->set_teaching(algo, 64, 16, 16, 16, false);
    INFO(sim::to_string(algo) << ": " << view->error_text().toStdString());
    CHECK(view->error_text().startsWith("packed (varlen): "));
    CHECK(view->step_count() == 0);
  }
  WorkbenchParams unticked = good;
  unticked.varlen = false;
  window->set_params(unticked);
  REQUIRE(test::wait_data(*window));
  // Unticked, the refusal is the lengths file's (explain traces no key lengths), as before.
  CHECK_FALSE(view->error_text().startsWith("packed (varlen): "));
}
