// The block-size view draws sim's numbers, exactly, for whatever the panel says.
#include <catch2/catch.hpp>

#include <QSpinBox>

#include "gui/block_size_view.h"
#include "gui/chart_panel.h"
#include "gui/parameter_panel.h"
#include "gui_test_support.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// Compares every model series of the block-size view with simulate(formula) at each block size.
void check_series_equal_sim(MainWindow& window) {
  const WorkbenchParams params = window.panel()->params();
  BlockSizeView* view = window.block_view();
  for (const sim::Algo algo : params.algos) {
    const QString name = QString::fromStdString(sim::to_string(algo));
    const auto io = test::points(view->bytes_chart()->series_named("io model " + name));
    const auto flops = test::points(view->flops_chart()->series_named("flops model " + name));
    const auto time = test::points(view->time_chart()->series_named("time model " + name));
    // The roofline beside the model, its own legend entry (the h200 preset is calibrated).
    const auto roofline = test::points(view->time_chart()->series_named("time roofline " + name));
    int expected = 0;
    for (const int64_t block : sweep_blocks(params)) {
      sim::Config config = current_config(params, algo);
      if (algo != sim::Algo::standard) config.tiling = sweep_tiling(params, algo, block);
      if (!sim::tiling_fits(config.problem, config.tiling, config.sram_bytes)) continue;
      const sim::SimResult r = sim::simulate(config, sim::CountMethod::formula);
      INFO(name.toStdString() << " B=" << block << " N=" << params.problem.seqlen
                              << " d=" << params.problem.headdim);
      REQUIRE(expected < io.size());
      CHECK(io[expected].x() == static_cast<double>(block));
      CHECK(io[expected].y() ==
            static_cast<double>(r.total.io_read_bytes() + r.total.io_write_bytes()));
      CHECK(flops[expected].y() == static_cast<double>(r.total.flops.tensor + r.total.flops.exp +
                                                       r.total.flops.other));
      CHECK(r.time_method == sim::TimeMethod::model);
      CHECK(time[expected].y() == r.time_ms);
      REQUIRE(expected < roofline.size());
      CHECK(roofline[expected].y() == sim::simulate(config, sim::CountMethod::formula, sim::TimeMethod::roofline).time_ms);
      ++expected;
    }
    CHECK(io.size() == expected);
    CHECK(expected > 0);
  }
}

}  // namespace

TEST_CASE("changing N and d in the panel updates the block-size series to exactly sim's numbers",
          "[gui][block]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  check_series_equal_sim(*window);

  // Awkward shapes: N not a multiple of any block, d not a power of two.
  window->panel()->seqlen_box()->setValue(1025);
  REQUIRE(test::wait_data(*window));
  CHECK(window->panel()->params().problem.seqlen == 1025);
  check_series_equal_sim(*window);

  window->panel()->headdim_box()->setValue(40);
  REQUIRE(test::wait_data(*window));
  window->panel()->seqlen_box()->setValue(97);
  REQUIRE(test::wait_data(*window));
  CHECK(window->data()->params.problem.seqlen == 97);
  CHECK(window->data()->params.problem.headdim == 40);
  check_series_equal_sim(*window);
}

TEST_CASE("turning on blocksparse and causal draws their curves from sim too", "[gui][block]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams p = window->panel()->params();
  p.algos = {sim::Algo::flash1, sim::Algo::flash2, sim::Algo::blocksparse};
  p.problem.causal = true;
  p.problem.seqlen = 1000;
  p.shape = SweepShape::square;
  p.sweep_min = 16;
  p.sweep_max = 256;
  window->set_params(p);
  REQUIRE(test::wait_data(*window));
  CHECK(window->data()->params == p);
  check_series_equal_sim(*window);
}

TEST_CASE("a smaller M drops the block sizes whose tiles no longer fit", "[gui][block]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  // 48 KiB fp16 = 24,576 elements; flash2's outer shape B × min(B, 64) with d = 64 needs
  // (2B + 128)·64 <= 24,576, so B <= 128: 256 and 512 are left out.
  window->panel()->sram_box()->setValue(48 * 1024);
  REQUIRE(test::wait_data(*window));
  const auto io = test::points(window->block_view()->bytes_chart()->series_named("io model flash2"));
  REQUIRE_FALSE(io.isEmpty());
  CHECK(io.back().x() == 128);
  check_series_equal_sim(*window);
}

TEST_CASE("the M slider and the M box stay in step", "[gui][panel]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  ParameterPanel* panel = window->panel();
  panel->sram_box()->setValue(65536);
  CHECK(panel->sram_slider()->value() == 16 * 8);  // log2(65536) = 16, eight steps a doubling
  panel->sram_slider()->setValue(17 * 8);
  CHECK(panel->sram_box()->value() == 131072);
  REQUIRE(test::wait_data(*window));
  CHECK(window->data()->params.sram_bytes == 131072);
}
