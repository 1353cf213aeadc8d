// The forward kernel's family in the workbench (docs/gui.md, "Kernel family"): the panel's "kernel"
// combo beside the tiling (default, mma_sync, wgmma, wgmma_ws) sets Config::kernel_impl on the
// Configs of the tiled algorithms whose pass runs a forward, so the views model that family's
// built kernel and sim leaves out, with its reason, the tilings without one; it is saved, restored
// and parsed (--kernel), and a loaded row is matched at its family.
#include <catch2/catch.hpp>

#include <QComboBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "gui/command_line.h"
#include "gui/field_label.h"
#include "gui/parameter_panel.h"
#include "gui/params_settings.h"
#include "gui/row_text.h"
#include "gui/workbench_data.h"
#include "sim/errors.h"
#include "sim/kernel_choice.h"
#include "sim/row.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// d = 64's flash2 forward at 128x64 is built on wgmma alone, at 64x64 on mma_sync alone.
WorkbenchParams at_tiling(int64_t br, int64_t bc, std::optional<sim::MmaKind> family) {
  WorkbenchParams p = test::small_params();
  p.algos = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2};
  p.block_r = br;
  p.block_c = bc;
  p.kernel_impl = family;
  return p;
}

}  // namespace

TEST_CASE("the kernel combo offers default and the three families, sets WorkbenchParams::kernel_impl, and is "
          "labelled as sim's refusals name it",
          "[gui][kernel]") {
  ParameterPanel panel;
  QComboBox* box = panel.kernel_box();
  REQUIRE(box);
  REQUIRE(box->count() == 4);
  CHECK(box->itemText(0) == "default");
  CHECK(box->itemText(1) == "mma_sync");
  CHECK(box->itemText(2) == "wgmma");
  CHECK(box->itemText(3) == "wgmma_ws");
  CHECK(box->currentText() == "default");
  CHECK_FALSE(panel.params().kernel_impl.has_value());
  CHECK(box->toolTip().contains("dense attention only"));
  CHECK(std::string(field_label(sim::Field::kernel_impl)) == "kernel");

  QSignalSpy changed(&panel, &ParameterPanel::params_changed);
  box->setCurrentIndex(2);
  CHECK(changed.count() == 1);
  CHECK(panel.params().kernel_impl == sim::MmaKind::wgmma);
  WorkbenchParams p = panel.params();
  p.kernel_impl = sim::MmaKind::wgmma_ws;
  panel.set_params(p);
  CHECK(box->currentText() == "wgmma_ws");
  CHECK(panel.params() == p);
  p.kernel_impl.reset();
  panel.set_params(p);
  CHECK(box->currentText() == "default");
  // A family is a Config's to refuse (per tiling), not the panel's problem: no red line.
  p.kernel_impl = sim::MmaKind::wgmma_ws;
  panel.set_params(p);
  CHECK(panel.problem_error_text().isEmpty());
}

TEST_CASE("config_of sets the family on the tiled algorithms' Configs whose pass runs a forward, and sim runs it "
          "where it is built and refuses it elsewhere",
          "[gui][kernel]") {
  const WorkbenchParams wgmma = at_tiling(128, 64, sim::MmaKind::wgmma);
  CHECK(current_config(wgmma, sim::Algo::flash2).kernel_impl == sim::MmaKind::wgmma);
  CHECK(current_config(wgmma, sim::Algo::flash1).kernel_impl == sim::MmaKind::wgmma);
  CHECK_FALSE(current_config(wgmma, sim::Algo::standard).kernel_impl.has_value());  // standard has no family
  CHECK(test::refusal(wgmma, sim::Algo::flash2).empty());
  CHECK(test::refusal(wgmma, sim::Algo::standard).empty());
  CHECK(test::refusal(wgmma, sim::Algo::flash1).rfind("flash1: kernel: no flash1 fwd kernel", 0) == 0);
  WorkbenchParams backward = wgmma;
  backward.problem.pass = sim::Pass::bwd;  // the family is the forward's: a backward alone leaves it out
  CHECK_FALSE(current_config(backward, sim::Algo::flash2).kernel_impl.has_value());
  backward.problem.pass = sim::Pass::fwdbwd;
  CHECK(current_config(backward, sim::Algo::flash2).kernel_impl == sim::MmaKind::wgmma);

  const WorkbenchParams mma_sync = at_tiling(128, 64, sim::MmaKind::mma_sync);
  const std::string refused = test::refusal(mma_sync, sim::Algo::flash2);
  CHECK(refused.rfind("flash2: kernel: no flash2 fwd kernel for d=64 fp16 128x64 on mma_sync", 0) == 0);
  CHECK(refused.find("allowed at that tiling: wgmma") != std::string::npos);

  // The views: the breakdown at the current tiling says sim's reason, the block-size view keeps the
  // family's tilings only (128x64 is the one wgmma forward at d = 64; the outer shape sweeps Br at
  // Bc = 64).
  const WorkbenchData data = compute_workbench(wgmma);
  CHECK(data.problem_error.empty());
  bool flash1_refused = false;
  for (const std::string& why : data.skipped) flash1_refused |= why.rfind("flash1 (breakdown): kernel: ", 0) == 0;
  CHECK(flash1_refused);
  int flash2_points = 0;
  for (const PlotRow& r : data.block_rows)
    if (r.row.algo == sim::RowAlgo::flash2 && r.row.source == sim::RowSource::model && r.row.is_total()) {
      CHECK(r.row.kernel_impl == sim::MmaKind::wgmma);
      CHECK(*r.row.block_r == 128);
      ++flash2_points;
    }
  CHECK(flash2_points == 1);
  // The default: every swept tiling, each at its own first kernel.
  const WorkbenchData all = compute_workbench(at_tiling(128, 64, std::nullopt));
  int points = 0;
  for (const PlotRow& r : all.block_rows)
    points += r.row.algo == sim::RowAlgo::flash2 && r.row.source == sim::RowSource::model && r.row.is_total();
  CHECK(points > 1);
}

TEST_CASE("settings keep the kernel family, and settings from before it restore the default", "[gui][kernel][settings]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  for (auto family : {std::optional<sim::MmaKind>{}, std::optional{sim::MmaKind::mma_sync},
                      std::optional{sim::MmaKind::wgmma}, std::optional{sim::MmaKind::wgmma_ws}}) {
    const WorkbenchParams p = at_tiling(128, 64, family);
    const auto back = test::settings_round_trip(dir, p);
    REQUIRE(back);
    CHECK(back->kernel_impl == family);
    CHECK(*back == p);
  }
  {
    QSettings s(dir.filePath("old.ini"), QSettings::IniFormat);
    s.setValue("problem/seqlen", 97);
    s.setValue("blocks/kernel", "tensor_cores");  // not a family: the default
  }
  const QSettings old(dir.filePath("old.ini"), QSettings::IniFormat);
  REQUIRE(restore_params(old));
  CHECK_FALSE(restore_params(old)->kernel_impl.has_value());
}

TEST_CASE("the command line takes --kernel as the runner spells it and refuses an unknown family in one line",
          "[gui][kernel][options]") {
  const auto r = parse_command_line({"--kernel", "wgmma", "--block-r", "128", "--block-c", "64"});
  INFO(r.error);
  REQUIRE(r.error.empty());
  CHECK(r.line.params.kernel_impl == sim::MmaKind::wgmma);
  CHECK(r.line.params_given);
  CHECK_FALSE(parse_command_line({"--batch", "2"}).line.params.kernel_impl.has_value());
  const auto bad = parse_command_line({"--kernel", "tensor"});
  CHECK(bad.error.rfind("--kernel 'tensor' is not one of mma_sync, wgmma, wgmma_ws", 0) == 0);
  CHECK(bad.error.find('\n') == std::string::npos);
  CHECK(usage_text().find("[--kernel mma_sync|wgmma|wgmma_ws]") != std::string::npos);
  test::check_refused_in_one_line({"--kernel", "wgmma2"}, "--kernel 'wgmma2'");
}

TEST_CASE("a loaded row is matched at its kernel family: the panel's, or with the default the one its tiling runs, a "
          "row without the column as before",
          "[gui][kernel][loading]") {
  const WorkbenchParams wgmma = at_tiling(128, 64, sim::MmaKind::wgmma);
  const WorkbenchParams dflt = at_tiling(128, 64, std::nullopt);
  const sim::Row row = sim::config_row(current_config(wgmma, sim::Algo::flash2), sim::RowSource::measured);
  REQUIRE(row.kernel_impl == sim::MmaKind::wgmma);
  CHECK(row_matches(row, problem_key(wgmma)));
  CHECK(row_matches(row, problem_key(dflt)));  // 128x64's first kernel is wgmma
  sim::Row other = row;
  other.kernel_impl = sim::MmaKind::wgmma_ws;  // as a measured warp-specialised kernel would be
  CHECK_FALSE(row_matches(other, problem_key(wgmma)));
  CHECK_FALSE(row_matches(other, problem_key(dflt)));
  WorkbenchParams ws = wgmma;
  ws.kernel_impl = sim::MmaKind::wgmma_ws;
  CHECK(row_matches(other, problem_key(ws)));
  sim::Row old = row;
  old.kernel_impl.reset();  // a file without the column
  CHECK(row_matches(old, problem_key(wgmma)));
  CHECK(row_matches(old, problem_key(dflt)));
  CHECK(row_tooltip(row).contains("kernel wgmma"));
}
