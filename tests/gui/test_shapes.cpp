// The shapes people serve in the workbench (docs/shapes.md): K/V heads Hkv, keys Nk and packing
// set in the panel or on the command line reach every Config the GUI builds, are saved and
// restored, keep loaded rows of other shapes off the charts, and a problem sim refuses is named
// by the panel's labels with no numbers left on screen. Awkward values (H 12 with Hkv 3, Nk
// 1000, N 97) beside round ones (the decoding preset's 32 / 8 heads, Nk 32,768).
#include <catch2/catch.hpp>

#include <set>

#include <QApplication>
#include <QCategoryAxis>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>

#include "gui/block_size_view.h"
#include "gui/breakdown_view.h"
#include "gui/chart_panel.h"
#include "gui/command_line.h"
#include "gui/field_label.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/scaling_view.h"
#include "gui/tiling_map_data.h"
#include "gui/tiling_map_view.h"
#include "gui/tiling_view.h"
#include "gui/workbench_data.h"
#include "gui_test_support.h"
#include "sim/row.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// Waits until the data drawn is of the panel's current parameters (each box edit is a change of
// its own, so the first data_ready may be of an earlier one).
bool wait_current(MainWindow& window) {
  for (int k = 0; k < 60; ++k) {
    if (window.data() && window.data()->params == window.panel()->params()) return true;
    test::wait_data(window, 2000);
  }
  return window.data() && window.data()->params == window.panel()->params();
}

// A small grouped problem with awkward numbers: 12 query heads over 3 K/V heads (g = 4), 97
// queries against 1,000 keys.
WorkbenchParams awkward_params() {
  WorkbenchParams p;
  p.problem.batch = 1;
  p.problem.heads = 12;
  p.problem.kv_heads = 3;
  p.problem.seqlen = 97;
  p.problem.seqlen_k = 1000;
  p.problem.headdim = 64;
  p.gqa_pack = false;
  p.algos = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2};
  p.sweep_min = 32;
  p.sweep_max = 128;
  p.sram_bytes = sim::hardware_preset(p.hw_name).sram_bytes;  // the panel always shows an M
  return p;
}

// Every row's shape columns are the problem's: Hkv, Nk resolved, gqa_pack as set.
void check_shape(const sim::Row& row, int64_t kv_heads, int64_t seqlen_k, int gqa_pack) {
  INFO(sim::to_string(row.source) << " " << sim::to_string(row.algo) << " " << sim::kernel_text(row.kernel));
  CHECK(row.kv_heads == kv_heads);
  CHECK(row.seqlen_k == seqlen_k);
  CHECK(row.gqa_pack == gqa_pack);
}

sim::Row measured_total(const WorkbenchParams& p, int64_t block_r, int64_t block_c, double time_ms) {
  sim::Row r = sim::config_row(current_config(p, sim::Algo::flash2), sim::RowSource::measured);
  r.block_r = block_r;
  r.block_c = block_c;
  r.time_ms = time_ms;
  return r;
}

bool write_rows(const QString& path, const std::vector<sim::Row>& rows) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  std::string text = sim::csv_header() + "\n";
  for (const sim::Row& r : rows) text += sim::to_csv_line(r) + "\n";
  return f.write(text.c_str()) == static_cast<qint64>(text.size());
}

QList<QPointF> measured_time_points(MainWindow& window) {
  return test::points(window.block_view()->time_chart()->series_named("time measured flash2"));
}

}  // namespace

TEST_CASE("Hkv and Nk show '= H' and '= N' at 0, never 0, and explain themselves in tooltips", "[gui][shapes][panel]") {
  auto window = test::make_window();
  ParameterPanel* panel = window->panel();
  CHECK(panel->kv_heads_box()->value() == 0);
  CHECK(panel->kv_heads_box()->text() == "= H");
  CHECK(panel->seqlen_k_box()->value() == 0);
  CHECK(panel->seqlen_k_box()->text() == "= N");
  CHECK(panel->kv_heads_box()->toolTip().contains("divide H"));
  CHECK(panel->kv_heads_box()->toolTip().contains("multi-query"));
  CHECK(panel->seqlen_k_box()->toolTip().contains("bottom-right"));
  CHECK(panel->gqa_pack_box()->toolTip().contains("read once for the group"));
  // The labels beside the boxes are field_label's, so sim's errors and the panel use one name.
  QStringList labels;
  for (QLabel* l : panel->findChildren<QLabel*>()) labels << l->text();
  CHECK(labels.contains(QString::fromStdString(std::string(field_label(sim::Field::kv_heads)))));
  CHECK(labels.contains(QString::fromStdString(std::string(field_label(sim::Field::seqlen_k)))));
  // Packing only matters where query heads share a K/V head: greyed out otherwise.
  CHECK_FALSE(panel->gqa_pack_box()->isEnabled());
  panel->heads_box()->setValue(12);
  panel->kv_heads_box()->setValue(3);
  CHECK(panel->gqa_pack_box()->isEnabled());
  CHECK(panel->kv_heads_box()->text() == "3");
  panel->kv_heads_box()->setValue(12);  // Hkv = H: no grouping
  CHECK_FALSE(panel->gqa_pack_box()->isEnabled());
}

TEST_CASE("the panel's Hkv, Nk and packing reach WorkbenchParams and every Config the GUI builds",
          "[gui][shapes][panel]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  ParameterPanel* panel = window->panel();
  // Typed the way a person would: box by box.
  panel->set_params(awkward_params());
  panel->kv_heads_box()->setValue(0);
  panel->seqlen_k_box()->setValue(0);
  panel->gqa_pack_box()->setChecked(true);
  panel->kv_heads_box()->setValue(3);
  panel->seqlen_k_box()->setValue(1000);
  panel->gqa_pack_box()->setChecked(false);
  const WorkbenchParams p = panel->params();
  CHECK(p.problem.kv_heads == 3);
  CHECK(p.problem.seqlen_k == 1000);
  CHECK_FALSE(p.gqa_pack);
  CHECK(p == awkward_params());
  CHECK(panel->problem_error_text().isEmpty());
  // Round trip: set_params then params gives the same, for the awkward shape and a round one.
  WorkbenchParams round = decode_preset(p);
  round.gqa_pack = true;
  panel->set_params(round);
  CHECK(panel->params() == round);
  panel->set_params(p);
  CHECK(panel->params() == p);
  // operator== sees each new field.
  for (auto change : {+[](WorkbenchParams& q) { q.problem.kv_heads = 4; },
                      +[](WorkbenchParams& q) { q.problem.seqlen_k = 1001; },
                      +[](WorkbenchParams& q) { q.gqa_pack = true; }}) {
    WorkbenchParams q = p;
    change(q);
    CHECK_FALSE(q == p);
  }

  for (const sim::Algo algo : {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2}) {
    const sim::Config c = current_config(p, algo);
    CHECK(c.problem.kv_heads == 3);
    CHECK(c.problem.seqlen_k == 1000);
    CHECK_FALSE(c.gqa_pack);
    const sim::Config swept = config_of(p, algo, 4096, {});
    CHECK(swept.problem.kv_heads_count() == 3);
    CHECK_FALSE(swept.gqa_pack);
  }
  // Every row the views draw comes from such a Config: the block sweep, the M sweep and the
  // breakdown carry Hkv 3, Nk 1,000, gqa_pack 0; the sequence sweep runs over Nk (its own test).
  REQUIRE(wait_current(*window));
  const auto data = window->data();
  REQUIRE(data->problem_error.empty());
  REQUIRE_FALSE(data->block_rows.empty());
  for (const PlotRow& r : data->block_rows) check_shape(r.row, 3, 1000, 0);
  for (const PlotRow& r : data->sram_rows) check_shape(r.row, 3, 1000, 0);
  for (const sim::Row& r : data->breakdown_rows) check_shape(r, 3, 1000, 0);
  for (const PlotRow& r : data->seqlen_rows) {
    CHECK(r.row.kv_heads == 3);
    CHECK(r.row.gqa_pack == 0);
  }
  // The L2 model's curves and the tiling map build theirs from the same parameters.
  for (const PlotRow& r : compute_cache_rows(*data, {})) check_shape(r.row, 3, 1000, 0);
  int cells = 0;
  for (const TilingMap& map : compute_tiling_maps(p))
    for (const MapCell& cell : map.cells)
      if (cell.model) {
        check_shape(*cell.model, 3, 1000, 0);
        ++cells;
      }
  CHECK(cells > 0);
}

TEST_CASE("an Hkv that does not divide H is named by the panel's label and leaves no numbers on screen",
          "[gui][shapes][errors]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE_FALSE(window->data()->block_rows.empty());
  ParameterPanel* panel = window->panel();
  panel->heads_box()->setValue(12);
  panel->kv_heads_box()->setValue(5);  // 12 query heads cannot share 5 K/V heads evenly
  REQUIRE(wait_current(*window));
  const QString error = panel->problem_error_text();
  INFO(error.toStdString());
  CHECK(error.startsWith("Hkv (K/V heads): "));
  CHECK(error.contains("must divide"));
  CHECK_FALSE(error.contains("--"));
  const auto data = window->data();
  CHECK(data->problem_error == error.toStdString());
  // Nothing of the earlier problem survives: no rows, no series, and every view says why.
  CHECK(data->block_rows.empty());
  CHECK(data->seqlen_rows.empty());
  CHECK(data->sram_rows.empty());
  CHECK(data->breakdown.empty());
  for (const char* name : {"io model flash2", "io model standard", "bound compulsory"})
    CHECK(window->block_view()->bytes_chart()->series_named(name) == nullptr);
  CHECK(window->block_view()->rows().empty());
  QStringList notes;
  for (QLabel* l : window->block_view()->findChildren<QLabel*>()) notes << l->text();
  CHECK(notes.join(" ").contains("cannot compute this problem: Hkv (K/V heads): "));
  REQUIRE(window->show_view("scaling"));
  CHECK(window->scaling_view()->rows().empty());
  CHECK(window->scaling_view()->fit_text().contains("Hkv (K/V heads): "));
  REQUIRE(window->show_view("breakdown"));
  CHECK(window->breakdown_view()->rows().empty());
  REQUIRE(window->show_view("map"));
  CHECK(window->map_view()->rows().empty());
  CHECK(window->map_view()->note_text().contains("Hkv (K/V heads): "));

  // An awkward Hkv that does divide: the error goes and the numbers are the new problem's.
  panel->kv_heads_box()->setValue(3);
  REQUIRE(wait_current(*window));
  CHECK(panel->problem_error_text().isEmpty());
  REQUIRE_FALSE(window->data()->block_rows.empty());
  for (const PlotRow& r : window->data()->block_rows) CHECK(r.row.kv_heads == 3);
}

TEST_CASE("causal with Nk < N is named by Nk's label, and Nk >= N is allowed", "[gui][shapes][errors]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  ParameterPanel* panel = window->panel();
  panel->seqlen_box()->setValue(1024);
  panel->seqlen_k_box()->setValue(1000);
  REQUIRE(wait_current(*window));
  CHECK(panel->problem_error_text().isEmpty());  // not causal: fewer keys than queries is fine
  CHECK_FALSE(window->data()->block_rows.empty());
  panel->causal_box()->setChecked(true);
  REQUIRE(wait_current(*window));
  const QString error = panel->problem_error_text();
  INFO(error.toStdString());
  CHECK(error.startsWith("Nk (keys): "));
  CHECK(window->data()->block_rows.empty());
  CHECK(window->data()->problem_error == error.toStdString());
  panel->seqlen_k_box()->setValue(1024 + 1000);
  REQUIRE(wait_current(*window));
  CHECK(panel->problem_error_text().isEmpty());
  CHECK_FALSE(window->data()->block_rows.empty());
}

TEST_CASE("the command line takes --kv-heads, --seqlen-k and --gqa-pack and names the bad one",
          "[gui][shapes][options]") {
  const auto ok = parse_command_line({"--heads", "12", "--kv-heads", "3", "--seqlen", "97",
                                      "--seqlen-k=1000", "--gqa-pack", "0"});
  INFO(ok.error);
  REQUIRE(ok.error.empty());
  CHECK(ok.line.params_given);
  CHECK(ok.line.params.problem.kv_heads == 3);
  CHECK(ok.line.params.problem.seqlen_k == 1000);
  CHECK_FALSE(ok.line.params.gqa_pack);
  // --gqa-pack alone is 1, as the runner's switch; =1 and a following 1 too.
  for (const QStringList& args : {QStringList{"--gqa-pack"}, QStringList{"--gqa-pack", "--causal"},
                                  QStringList{"--gqa-pack=1"}, QStringList{"--gqa-pack", "1"}}) {
    const auto r = parse_command_line(QStringList{"--gqa-pack=0"} + args);
    INFO(args.join(" ").toStdString() << " -> " << r.error);
    REQUIRE(r.error.empty());
    CHECK(r.line.params.gqa_pack);
  }
  const auto decode = parse_command_line({"--batch", "8", "--heads", "32", "--kv-heads", "8", "--seqlen",
                                          "1", "--seqlen-k", "32768", "--headdim", "128", "--causal"});
  REQUIRE(decode.error.empty());
  CHECK(decode.line.params == decode_preset([] {
          WorkbenchParams p;
          p.problem.causal = true;
          return p;
        }()));
  struct Bad { QStringList args; std::string names; std::string says; };
  for (const Bad& bad : {Bad{{"--kv-heads", "0"}, "--kv-heads", "positive integer"},
                         Bad{{"--kv-heads", "three"}, "--kv-heads", "positive integer"},
                         Bad{{"--heads", "12", "--kv-heads", "5"}, "--kv-heads", "must divide"},
                         Bad{{"--kv-heads", "32"}, "--kv-heads", "must divide"},  // more than H = 16
                         Bad{{"--seqlen-k", "-4"}, "--seqlen-k", "positive integer"},
                         Bad{{"--seqlen-k"}, "--seqlen-k", "needs a value"},
                         Bad{{"--seqlen", "1024", "--seqlen-k", "1000", "--causal"}, "--seqlen-k", "causal"},
                         Bad{{"--gqa-pack", "2"}, "--gqa-pack", "0 or 1"},
                         Bad{{"--gqa-pack=yes"}, "--gqa-pack", "0 or 1"}}) {
    const auto r = parse_command_line(bad.args);
    INFO(bad.args.join(" ").toStdString() << " -> " << r.error);
    CHECK(r.error.rfind(bad.names, 0) == 0);  // the message starts with the option
    CHECK(r.error.find(bad.says) != std::string::npos);
    CHECK(r.error.find('\n') == std::string::npos);
  }
  const std::string usage = usage_text();
  for (const char* option : {"--kv-heads", "--seqlen-k", "--gqa-pack"}) CHECK(usage.find(option) != std::string::npos);

  // The program itself: one line, status 2, no screenshot.
  test::check_refused_in_one_line({"--heads", "12", "--kv-heads", "5"}, "--kv-heads");
}

TEST_CASE("settings save and restore Hkv, Nk and packing, and older settings read as square attention",
          "[gui][shapes][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  for (const WorkbenchParams& p : {awkward_params(), decode_preset(WorkbenchParams{})}) {
    const auto back = gui::test::settings_round_trip(dir, p);
    REQUIRE(back);
    CHECK(back->problem.kv_heads == p.problem.kv_heads);
    CHECK(back->problem.seqlen_k == p.problem.seqlen_k);
    CHECK(back->gqa_pack == p.gqa_pack);
    CHECK(*back == p);
  }
  // A file saved before the keys existed: Hkv and Nk "the same", packing on.
  {
    QSettings s(dir.filePath("old.ini"), QSettings::IniFormat);
    s.setValue("problem/batch", 4);
    s.setValue("problem/heads", 12);
    s.setValue("problem/seqlen", 97);
    s.setValue("algos", "flash2");
  }
  const QSettings old(dir.filePath("old.ini"), QSettings::IniFormat);
  const auto restored = restore_params(old);
  REQUIRE(restored);
  CHECK(restored->problem.heads == 12);
  CHECK(restored->problem.kv_heads == 0);
  CHECK(restored->problem.seqlen_k == 0);
  CHECK(restored->gqa_pack);
  const QSettings none(dir.filePath("none.ini"), QSettings::IniFormat);
  CHECK_FALSE(restore_params(none));
}

TEST_CASE("a loaded row of another Hkv, Nk or packing is not matched, and rows without the columns are square",
          "[gui][shapes][loading]") {
  const WorkbenchParams grouped = decode_preset(WorkbenchParams{});  // H 32, Hkv 8, N 1, Nk 32,768
  const ProblemKey key = problem_key(grouped);
  const sim::Row same = sim::config_row(current_config(grouped, sim::Algo::flash2), sim::RowSource::measured);
  CHECK(row_matches(same, key));
  sim::Row other = same;
  other.kv_heads = 4;
  CHECK_FALSE(row_matches(other, key));
  other = same;
  other.kv_heads = 32;  // Hkv = H: the square-heads problem of the same B, H, N
  CHECK_FALSE(row_matches(other, key));
  other = same;
  other.seqlen_k = 32767;
  CHECK_FALSE(row_matches(other, key));
  other = same;
  other.seqlen_k = 1;  // Nk = N
  CHECK_FALSE(row_matches(other, key));
  other = same;
  other.gqa_pack = 0;  // another schedule where heads are grouped
  CHECK_FALSE(row_matches(other, key));

  // Square problem: a row's 0 (a row not through sim's reader) means "the same", and packing is
  // one schedule either way, so it does not keep a row off.
  WorkbenchParams square;
  square.problem.heads = 12;
  square.problem.seqlen = 1000;
  const ProblemKey square_key = problem_key(square);
  sim::Row plain = sim::config_row(current_config(square, sim::Algo::flash2), sim::RowSource::measured);
  CHECK(plain.kv_heads == 12);
  CHECK(row_matches(plain, square_key));
  plain.kv_heads = 0;
  plain.seqlen_k = 0;
  CHECK(row_matches(plain, square_key));
  plain.gqa_pack = 0;
  CHECK(row_matches(plain, square_key));
  plain.kv_heads = 3;
  CHECK_FALSE(row_matches(plain, square_key));

  // Through a file and the window: a csv with kv_heads = seqlen_k = 0 and one without the
  // columns are read (sim's reader) as square and drawn on the square problem; a grouped row of
  // the same B, H, N, d is not.
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p = window->panel()->params();
  p.shape = SweepShape::block_r;  // flash2 at Br = B, Bc fixed at 64
  p.block_c = 64;
  p.sweep_min = 64;
  p.sweep_max = 128;
  window->set_params(p);
  REQUIRE(wait_current(*window));
  QTemporaryDir dir;
  sim::Row zero = measured_total(p, 128, 64, 1.5);
  zero.kv_heads = zero.seqlen_k = 0;
  sim::Row grouped_row = measured_total(p, 64, 64, 2.5);
  grouped_row.kv_heads = 4;  // H 16 over 4 K/V heads: another problem
  sim::Row long_keys = measured_total(p, 64, 64, 3.5);
  long_keys.seqlen_k = 4096;
  REQUIRE(write_rows(dir.filePath("zero.csv"), {zero, grouped_row, long_keys}));
  {
    QFile f(dir.filePath("old.csv"));  // a file from before the shapes' columns
    REQUIRE(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral("source,algo,pass,kernel,batch,heads,seqlen,headdim,dtype,causal,block_r,block_c,time_ms\n"
                           "measured,flash2,fwd,total,%1,%2,%3,%4,fp16,0,64,64,4.5\n")
                .arg(p.problem.batch).arg(p.problem.heads).arg(p.problem.seqlen).arg(p.problem.headdim)
                .toUtf8());
  }
  for (const char* name : {"zero.csv", "old.csv"})
    for (const sim::Row& r : sim::read_rows_file(dir.filePath(name).toStdString())) {
      INFO(name);
      if (r.time_ms == 2.5) CHECK(r.kv_heads == 4);
      else CHECK(r.kv_heads == p.problem.heads);
      if (r.time_ms == 3.5) CHECK(r.seqlen_k == 4096);
      else CHECK(r.seqlen_k == p.problem.seqlen);
    }
  QString error;
  REQUIRE(window->load_results_file(dir.filePath("zero.csv"), &error));
  REQUIRE(window->load_results_file(dir.filePath("old.csv"), &error));
  QApplication::processEvents();
  std::set<double> times;
  for (const QPointF& pt : measured_time_points(*window)) times.insert(pt.y());
  CHECK(times == std::set<double>{1.5, 4.5});
  // The tiling map puts the same two on their cells and no other.
  std::vector<TilingMap> maps = compute_tiling_maps(p);
  std::vector<sim::Row> loaded;
  for (const char* name : {"zero.csv", "old.csv"})
    for (sim::Row& r : sim::read_rows_file(dir.filePath(name).toStdString())) loaded.push_back(std::move(r));
  attach_measured(maps, p, loaded);
  std::set<double> on_map;
  for (const TilingMap& map : maps)
    for (const MapCell& cell : map.cells)
      for (const sim::Row& r : cell.measured) on_map.insert(*r.time_ms);
  CHECK(on_map == std::set<double>{1.5, 4.5});
}

TEST_CASE("measured GQA and Nq != Nk rows of experiments/results are drawn only on their own shape",
          "[gui][shapes][loading]") {
  // h200_inference.csv: flash2 at B 2, H 32, N 1, 97, 1024, Nk 4096, Hkv 32, 8, 4, 1, 128 x 128
  // tiles (flashio validate). Before the shapes' key columns, its four Hkv rows of one N fell on
  // the square problem of that N.
  const QString path = QStringLiteral(FLASHIO_RESULTS_DIR) + "/h200_inference.csv";
  REQUIRE(QFile::exists(path));
  const std::vector<sim::Row> rows = sim::read_rows_file(path.toStdString());
  const sim::Row* chosen = nullptr;
  for (const sim::Row& r : rows)
    if (r.source == sim::RowSource::measured && r.is_total() && r.algo == sim::RowAlgo::flash2 &&
        r.pass == sim::Pass::fwd && r.kv_heads == 8 && r.seqlen == 97 && r.causal == 0 && r.page_size == 0 && r.lengths.empty() && r.time_ms)
      chosen = &r;
  REQUIRE(chosen != nullptr);
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  QString error;
  REQUIRE(window->load_results_file(path, &error));
  WorkbenchParams p = window->panel()->params();
  p.algos = {sim::Algo::flash2};
  p.problem.batch = chosen->batch;
  p.problem.heads = chosen->heads;
  p.problem.seqlen = chosen->seqlen;
  p.problem.headdim = chosen->headdim;
  p.problem.dtype = chosen->dtype;
  p.problem.pass = sim::Pass::fwd;
  p.problem.causal = false;
  if (chosen->sram_bytes) p.sram_bytes = *chosen->sram_bytes;
  p.shape = SweepShape::block_r;
  p.block_r = *chosen->block_r;
  p.block_c = *chosen->block_c;
  p.sweep_min = *chosen->block_r;
  p.sweep_max = *chosen->block_r;
  // Square: none of the file's rows (all Nk = 4096) is this problem's.
  window->set_params(p);
  REQUIRE(wait_current(*window));
  CHECK(measured_time_points(*window).isEmpty());
  // Its own shape: exactly its one row.
  p.problem.kv_heads = chosen->kv_heads;
  p.problem.seqlen_k = chosen->seqlen_k;
  p.gqa_pack = chosen->gqa_pack != 0;
  window->set_params(p);
  REQUIRE(wait_current(*window));
  const QList<QPointF> points = measured_time_points(*window);
  REQUIRE(points.size() == 1);
  CHECK(points.front() == QPointF(static_cast<double>(*chosen->block_r), *chosen->time_ms));
}

TEST_CASE("the decode preset sets B 8, H 32, Hkv 8, N 1, Nk 32768, d 128 in one click and keeps the rest",
          "[gui][shapes][preset]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  ParameterPanel* panel = window->panel();
  WorkbenchParams before = panel->params();
  before.problem.dtype = sim::DType::bf16;
  before.problem.pass = sim::Pass::fwd;
  before.gqa_pack = false;
  before.algos = {sim::Algo::flash1, sim::Algo::flash2};
  before.sram_bytes = 100 * 1024;
  before.sweep_min = 32;
  panel->set_params(before);
  REQUIRE(wait_current(*window));
  panel->decode_button()->click();
  const WorkbenchParams after = panel->params();
  CHECK(after.problem.batch == 8);
  CHECK(after.problem.heads == 32);
  CHECK(after.problem.kv_heads == 8);
  CHECK(after.problem.seqlen == 1);
  CHECK(after.problem.seqlen_k == 32768);
  CHECK(after.problem.headdim == 128);
  WorkbenchParams kept = after;  // everything else as it was
  kept.problem.batch = before.problem.batch;
  kept.problem.heads = before.problem.heads;
  kept.problem.kv_heads = before.problem.kv_heads;
  kept.problem.seqlen = before.problem.seqlen;
  kept.problem.seqlen_k = before.problem.seqlen_k;
  kept.problem.headdim = before.problem.headdim;
  CHECK(kept == before);
  CHECK(after == decode_preset(before));
  CHECK(panel->kv_heads_box()->text() == "8");
  CHECK(panel->gqa_pack_box()->isEnabled());
  REQUIRE(wait_current(*window));
  CHECK(panel->problem_error_text().isEmpty());
  CHECK(window->data()->problem_error.empty());
  CHECK_FALSE(window->data()->block_rows.empty());
  // The descriptions on screen name the shape: the breakdown's title, a row's tooltip.
  REQUIRE(window->show_view("breakdown"));
  auto* breakdown = qobject_cast<ChartPanel*>(window->breakdown_view()->charts().front().second);
  REQUIRE(breakdown != nullptr);
  const QString title = breakdown->chart()->title();
  INFO(title.toStdString());
  CHECK(title.contains("B=8 H=32 Hkv=8 N=1 Nk=32768 d=128"));
  CHECK(title.contains("groups not packed"));
  CHECK(row_tooltip(window->data()->block_rows.front().row).contains("B=8 H=32 Hkv=8 N=1 Nk=32768 d=128"));
  // The teaching view traces one head of square attention whatever the panel's Hkv and Nk.
  REQUIRE(window->show_view("tiling"));
  CHECK(window->tiling_view()->error_text().isEmpty());
  CHECK(window->tiling_view()->step_count() > 0);
}

TEST_CASE("descriptions name Hkv and Nk only where they differ from H and N", "[gui][shapes][text]") {
  sim::Problem p;
  p.batch = 8, p.heads = 32, p.seqlen = 1, p.headdim = 128;
  CHECK(shape_text(p) == "B=8 H=32 N=1 d=128");
  p.kv_heads = 32, p.seqlen_k = 1;  // given, but the same
  CHECK(shape_text(p) == "B=8 H=32 N=1 d=128");
  p.kv_heads = 8, p.seqlen_k = 32768;
  CHECK(shape_text(p) == "B=8 H=32 Hkv=8 N=1 Nk=32768 d=128");
  p.kv_heads = 0, p.seqlen_k = 1000;
  CHECK(shape_text(p) == "B=8 H=32 N=1 Nk=1000 d=128");
  CHECK(packing_text(12, 3, true) == ", groups packed");
  CHECK(packing_text(12, 3, false) == ", groups not packed");
  CHECK(packing_text(12, 12, false).isEmpty());
  CHECK(packing_text(12, 0, false).isEmpty());
}

TEST_CASE("with Nk != N the scaling view sweeps Nk at the panel's N, and says so", "[gui][shapes][scaling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("scaling"));
  ScalingView* view = window->scaling_view();
  // Square: x is N, and the keys follow it.
  {
    WorkbenchParams p = awkward_params();
    p.problem.seqlen_k = 0;
    window->set_params(p);
    REQUIRE(wait_current(*window));
    const auto data = window->data();
    REQUIRE_FALSE(data->seqlen_rows.empty());
    for (const PlotRow& r : data->seqlen_rows) {
      CHECK(r.x == static_cast<double>(r.row.seqlen));
      CHECK(r.row.seqlen_k == r.row.seqlen);
    }
    CHECK(view->seqlen_chart()->chart()->title().startsWith("io against sequence length N"));
    CHECK(view->seqlen_chart()->x_label_axis()->titleText().startsWith("sequence length N"));
  }
  // Nk = 1,000 at N = 97: x is Nk; every row sim was asked for has N = 97 and Nk = x.
  {
    window->set_params(awkward_params());
    REQUIRE(wait_current(*window));
    const auto data = window->data();
    std::set<double> xs;
    for (const PlotRow& r : data->seqlen_rows) {
      INFO(sim::to_string(r.row.algo) << " x " << r.x);
      CHECK(r.row.seqlen == 97);
      CHECK(r.x == static_cast<double>(r.row.seqlen_k));
      CHECK(r.row.kv_heads == 3);
      xs.insert(r.x);
    }
    std::set<double> swept;
    for (const int64_t x : scaling_seqlens(data->params)) swept.insert(static_cast<double>(x));
    CHECK(xs == swept);
    CHECK(swept == std::set<double>{256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536});
    CHECK(view->seqlen_chart()->chart()->title().startsWith("io against key length Nk at N = 97"));
    CHECK(view->seqlen_chart()->x_label_axis()->titleText().startsWith("key length Nk"));
    CHECK(view->seqlen_chart()->series_named("current Nk = 1000") != nullptr);
    // io at a fixed N grows as Nk: Theorem 2's Nq·Nk·d²/M, slope 1.
    CHECK(view->fit_text().contains("Nk = "));
    for (const SlopeFit& f : data->seqlen_fits) {
      INFO(sim::to_string(f.algo));
      REQUIRE(f.points >= 3);
      CHECK(f.slope == Approx(1.0).margin(0.1));
    }
  }
  // Causal at N = 1,000 with Nk = 4,096: sim refuses Nk < N, so the sweep starts at 1,024.
  {
    WorkbenchParams p = awkward_params();
    p.problem.seqlen = 1000;
    p.problem.seqlen_k = 4096;
    p.problem.causal = true;
    window->set_params(p);
    REQUIRE(wait_current(*window));
    const auto data = window->data();
    REQUIRE(data->problem_error.empty());
    std::set<double> xs;
    for (const PlotRow& r : data->seqlen_rows) {
      CHECK(r.row.seqlen == 1000);
      CHECK(r.row.causal == 1);
      xs.insert(r.x);
    }
    CHECK(xs == std::set<double>{1024, 2048, 4096, 8192, 16384, 32768, 65536});
  }
  // The decode preset: bytes against the cache length.
  {
    window->panel()->decode_button()->click();
    REQUIRE(wait_current(*window));
    const auto data = window->data();
    REQUIRE_FALSE(data->seqlen_rows.empty());
    for (const PlotRow& r : data->seqlen_rows) {
      CHECK(r.row.seqlen == 1);
      CHECK(r.row.heads == 32);
      CHECK(r.row.kv_heads == 8);
      CHECK(r.x == static_cast<double>(r.row.seqlen_k));
    }
    CHECK(view->seqlen_chart()->chart()->title().startsWith("io against key length Nk at N = 1"));
    CHECK(test::points(view->seqlen_chart()->series_named("io model flash2")).size() == 9);
  }
}
