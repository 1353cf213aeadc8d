// The teaching view replays sim's schedule: its tally after the last step is the walk's count.
#include <catch2/catch.hpp>

#include <cmath>

#include "gui/tiling_trace.h"
#include "gui/tiling_view.h"
#include "gui_test_support.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

sim::Config teaching_config(sim::Algo algo, int64_t n, int64_t br, int64_t bc, bool causal,
                            int64_t d = 64) {
  sim::Config c = sim::make_config(algo, sim::Problem{}, sim::hardware_preset("h200"));
  c.problem.batch = 1;
  c.problem.heads = 1;
  c.problem.seqlen = n;
  c.problem.headdim = d;
  c.problem.causal = causal;
  c.tiling = {br, bc};
  return c;
}

int64_t walk_io(const sim::Config& c) {
  const auto r = sim::simulate(c, sim::CountMethod::walk);
  return r.total.io_read_bytes() + r.total.io_write_bytes();
}

}  // namespace

TEST_CASE("the tiling view's tally after the last step equals the walk's count",
          "[gui][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("tiling"));
  TilingView* view = window->tiling_view();
  struct Case { sim::Algo algo; int64_t n, br, bc; bool causal; };
  const Case cases[] = {{sim::Algo::flash2, 64, 16, 16, false}, {sim::Algo::flash1, 64, 16, 16, false},
                        {sim::Algo::flash2, 37, 16, 8, true},   {sim::Algo::flash1, 37, 8, 12, true},
                        {sim::Algo::flash1, 17, 5, 7, false},   {sim::Algo::flash2, 50, 64, 3, true}};
  for (const Case& c : cases) {
    view->set_teaching(c.algo, c.n, c.br, c.bc, c.causal);
    INFO(sim::to_string(c.algo) << " N=" << c.n << " Br=" << c.br << " Bc=" << c.bc
                                << (c.causal ? " causal" : ""));
    REQUIRE(view->error_text().isEmpty());
    CHECK(view->step_index() == -1);
    CHECK(view->tally_bytes() == 0);
    // Step through one at a time: the tally never falls, and ends at the walk's count.
    int64_t last = 0;
    while (view->step_index() + 1 < view->step_count()) {
      view->step();
      CHECK(view->tally_bytes() >= last);
      last = view->tally_bytes();
    }
    const sim::Config config = teaching_config(c.algo, c.n, c.br, c.bc, c.causal);
    CHECK(view->tally_bytes() == walk_io(config));
    CHECK(view->standard_bytes() > 0);
    view->reset();
    CHECK(view->tally_bytes() == 0);
    view->run_to_end();
    CHECK(view->tally_bytes() == walk_io(config));
  }
}

TEST_CASE("each visited tile is one step, in flash1's and flash2's loop orders", "[gui][tiling]") {
  for (const bool causal : {false, true})
    for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
      const sim::Config c = teaching_config(algo, 45, 16, 8, causal, 40);
      const TilingTrace trace = build_trace(c);
      INFO(sim::to_string(algo) << (causal ? " causal" : ""));
      std::vector<std::pair<int64_t, int64_t>> tiles;
      for (const auto& s : trace.steps)
        if (s.flops.tensor > 0) tiles.emplace_back(s.i, s.j);
      std::vector<std::pair<int64_t, int64_t>> expected;
      const auto& g = trace.grid;
      // flash1 (Algorithm 1): K/V tile j outside, Q tile i inside; flash2: the other way.
      if (algo == sim::Algo::flash1) {
        for (int64_t j = 0; j < g.tc; ++j)
          for (int64_t i = 0; i < g.tr; ++i)
            if (trace.visits(i, j)) expected.emplace_back(i, j);
      } else {
        for (int64_t i = 0; i < g.tr; ++i)
          for (int64_t j = 0; j < g.tc; ++j)
            if (trace.visits(i, j)) expected.emplace_back(i, j);
      }
      CHECK(tiles == expected);
      CHECK(trace.total_bytes == walk_io(c));
      if (causal) CHECK(expected.size() < static_cast<size_t>(g.tr * g.tc));
    }
}

TEST_CASE("the row's running max and sum after the last step equal the dense softmax's",
          "[gui][tiling]") {
  for (const bool causal : {false, true})
    for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
      const TilingTrace trace = build_trace(teaching_config(algo, 33, 8, 5, causal, 16));
      for (const int64_t row : {0, 7, 32}) {
        const RowStats stats = row_stats(trace, row);
        std::optional<RowState> last;
        for (const auto& s : stats.after_step)
          if (s) last = s;
        INFO(sim::to_string(algo) << " row " << row << (causal ? " causal" : ""));
        REQUIRE(last);
        CHECK(last->columns_seen == (causal ? row + 1 : 33));
        CHECK(last->m == Approx(stats.dense.m).epsilon(1e-12));
        CHECK(last->l == Approx(stats.dense.l).epsilon(1e-12));
      }
    }
}
