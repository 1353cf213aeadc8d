// The workbench shows the model's errors by its own labels: a person who set M in the panel
// reads "M: ...", never the runner's "--sram".
#include <catch2/catch.hpp>

#include "gui/field_label.h"
#include "gui/parameter_panel.h"
#include "gui/tiling_view.h"
#include "gui_test_support.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("every field has a label, and no label is a command-line flag", "[gui][errors]") {
  for (sim::Field field : sim::kAllFields) {
    const std::string label(field_label(field));
    INFO(sim::field_name(field));
    CHECK_FALSE(label.empty());
    CHECK(label.find("--") == std::string::npos);
  }
  const sim::InvalidInput e(sim::Field::seqlen, "must be a positive integer (got 0)");
  CHECK(error_message(e) == "N (seqlen): must be a positive integer (got 0)");
  const std::runtime_error other("r.csv:2: expected 20 columns");
  CHECK(error_message(other) == "r.csv:2: expected 20 columns");
}

TEST_CASE("an M too small shows the panel's label for M and the tiling, not a flag",
          "[gui][errors]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("tiling"));
  TilingView* view = window->tiling_view();
  REQUIRE(view->error_text().isEmpty());
  // 2,048 B of fp16 = 1,024 elements >= the view's d = 16, but its tiling Br = 16, Bc = 32 needs
  // (2·16 + 2·32)·16 = 1,536 elements.
  {
    // A small problem: tiny M makes the paper's rule choose tiny tiles, and the default N = 1024
    // would make every sweep point walk ~10^5 tile steps.
    WorkbenchParams small = window->panel()->params();
    small.problem.seqlen = 256;
    small.problem.batch = 1;
    small.problem.heads = 1;
    small.sram_bytes = 2048;
    window->panel()->set_params(small);
  }
  REQUIRE(test::wait_data(*window));
  const QString tiling_error = view->error_text();
  INFO(tiling_error.toStdString());
  const std::string tiling_label(field_label(sim::Field::tiling));
  CHECK(tiling_error.startsWith(QString::fromStdString(tiling_label + ": ")));
  CHECK_FALSE(tiling_error.contains("--"));
  // 100 B of fp16 = 50 elements, fewer than d = 97 (the view's d, and the panel's for the other views).
  view->set_teaching(sim::Algo::flash1, 64, 97, 16, 32, false);
  WorkbenchParams params = window->panel()->params();
  params.problem.headdim = 97;
  params.sram_bytes = 100;
  window->panel()->set_params(params);  // one change, not two
  REQUIRE(test::wait_data(*window));
  const QString m_error = view->error_text();
  INFO(m_error.toStdString());
  CHECK(m_error.startsWith("M: "));
  CHECK(m_error.contains("fewer than d = 97"));
  CHECK_FALSE(m_error.contains("--"));
  // The block-size view's note of left-out configurations says the same.
  const auto data = window->data();
  REQUIRE(data);
  REQUIRE_FALSE(data->skipped.empty());
  for (const std::string& why : data->skipped) {
    INFO(why);
    CHECK(why.find(": M: ") != std::string::npos);
    CHECK(why.find("--") == std::string::npos);
  }
}
