// A paged KV cache in the workbench (docs/gui.md, "Grouped-query attention and Nq ≠ Nk"): the
// panel's page-size box (0: contiguous) reaches flash2's forward Configs only, is saved,
// restored and parsed, its counts are sim's (the block table's bytes in the totals), and rows of
// another page size stay off the charts.
#include <catch2/catch.hpp>

#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "gui/command_line.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/workbench_data.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("the panel round-trips the page size, contiguous at 0, and only flash2's forward Configs get it",
          "[gui][paged]") {
  ParameterPanel panel;
  QSpinBox* box = panel.page_size_box();
  REQUIRE(box);
  CHECK(box->minimum() == 0);
  CHECK(box->singleStep() == 16);
  CHECK(box->specialValueText() == "contiguous");
  CHECK(box->toolTip().contains("block table"));
  CHECK(panel.params().page_size == 0);

  WorkbenchParams p = decode_preset(panel.params());
  p.page_size = 256;
  panel.set_params(p);
  CHECK(box->value() == 256);
  CHECK(panel.params() == p);

  CHECK(current_config(p, sim::Algo::flash2).page_size == 256);
  CHECK(current_config(p, sim::Algo::flash1).page_size == 0);
  CHECK(current_config(p, sim::Algo::standard).page_size == 0);
  WorkbenchParams fwdbwd = p;
  fwdbwd.problem.pass = sim::Pass::fwdbwd;
  CHECK(current_config(fwdbwd, sim::Algo::flash2).page_size == 0);
  sim::validate(current_config(p, sim::Algo::flash2));

  // The workbench's flash2 breakdown is sim's: the block table's reads among the tensors.
  p.algos = {sim::Algo::flash2};
  const WorkbenchData data = compute_workbench(p);
  REQUIRE(data.problem_error.empty());
  const sim::SimResult r = sim::simulate(current_config(p, sim::Algo::flash2), sim::CountMethod::formula);
  CHECK(r.total.of(sim::Tensor::block_table).read_bytes > 0);
  bool found = false;
  for (const BreakdownBar& bar : data.breakdown)
    if (bar.algo == sim::Algo::flash2) {
      found = true;
      CHECK(bar.counts.of(sim::Tensor::block_table).read_bytes == r.total.of(sim::Tensor::block_table).read_bytes);
      CHECK(bar.counts.io_read_bytes() == r.total.io_read_bytes());
    }
  CHECK(found);

  // A page size that is not a multiple of 16 (typed into the box) is refused with the field's name.
  p.page_size = 24;
  const WorkbenchData bad = compute_workbench(p);
  CHECK_THAT(bad.problem_error, Catch::Contains("page size"));
}

TEST_CASE("the command line parses --page-size and rejects others in one line", "[gui][paged][options]") {
  const auto n = parse_command_line({"--page-size", "16"});
  INFO(n.error);
  REQUIRE(n.error.empty());
  CHECK(n.line.params.page_size == 16);
  CHECK(parse_command_line({"--page-size=0"}).line.params.page_size == 0);
  for (const QStringList& bad : {QStringList{"--page-size", "24"}, QStringList{"--page-size", "-16"},
                                 QStringList{"--page-size", "8192"}, QStringList{"--page-size", "x"}}) {
    const auto r = parse_command_line(bad);
    INFO(bad.join(" ").toStdString() << " -> " << r.error);
    CHECK(r.error.rfind("--page-size", 0) == 0);
    CHECK(r.error.find('\n') == std::string::npos);
  }
  CHECK(usage_text().find("--page-size") != std::string::npos);
}

TEST_CASE("settings save and restore the page size, and older or odd settings read contiguous",
          "[gui][paged][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  for (int64_t page : {int64_t{0}, int64_t{16}, int64_t{256}, int64_t{4096}}) {
    WorkbenchParams p = decode_preset(WorkbenchParams{});
    p.page_size = page;
    const auto back = gui::test::settings_round_trip(dir, p);
    REQUIRE(back);
    CHECK(*back == p);
  }
  {
    QSettings s(dir.filePath("odd.ini"), QSettings::IniFormat);
    s.setValue("problem/seqlen", 97);
    s.setValue("problem/page_size", 24);
  }
  const QSettings odd(dir.filePath("odd.ini"), QSettings::IniFormat);
  REQUIRE(restore_params(odd));
  CHECK(restore_params(odd)->page_size == 0);
}

TEST_CASE("a flash2 forward row of another page size is not matched", "[gui][paged][loading]") {
  WorkbenchParams p = decode_preset(WorkbenchParams{});
  p.page_size = 16;
  const ProblemKey key = problem_key(p);
  const sim::Row same = sim::config_row(current_config(p, sim::Algo::flash2), sim::RowSource::measured);
  REQUIRE(same.page_size == 16);
  CHECK(row_matches(same, key));
  sim::Row other = same;
  other.page_size = 0;
  CHECK_FALSE(row_matches(other, key));
  const sim::Row flash1 = sim::config_row(current_config(p, sim::Algo::flash1), sim::RowSource::measured);
  CHECK(flash1.page_size == 0);
  CHECK(row_matches(flash1, key));
}
