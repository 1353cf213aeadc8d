// The teaching view draws sim::explain's trace (the schedule's own tile steps): its tally after
// the last step is the walk's count, its steps are the visited tiles in each algorithm's order,
// and for a seed it shows the numbers `flashio explain` computes for the same seed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <QApplication>
#include <QPlainTextEdit>

#include "gui/size_text.h"
#include "gui/tiling_view.h"
#include "gui_test_support.h"
#include "sim/execute.h"
#include "sim/explain.h"
#include "sim/schedule.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::gui;

namespace {

// The view's problem: B = H = 1, forward, the view's N, d and tiles; dtype is the parameter
// panel's default (fp16) on the h200 preset.
sim::Config teaching_config(sim::Algo algo, int64_t n, int64_t br, int64_t bc, bool causal, int64_t d = 64) {
  sim::Config c = sim::make_config(algo, sim::Problem{}, sim::hardware_preset("h200"));
  c.problem.headdim = d;
  c.problem.batch = 1;
  c.problem.heads = 1;
  c.problem.seqlen = n;
  c.problem.causal = causal;
  c.tiling = {br, bc};
  return c;
}

int64_t walk_io(const sim::Config& c) {
  const auto r = sim::simulate(c, sim::CountMethod::walk);
  return r.total.io_read_bytes() + r.total.io_write_bytes();
}

struct Case {
  sim::Algo algo;
  int64_t n, br, bc;
  bool causal;
};
const Case kCases[] = {
    {sim::Algo::flash2, 64, 16, 16, false}, {sim::Algo::flash1, 64, 16, 16, false},
    {sim::Algo::flash2, 37, 16, 8, true},   {sim::Algo::flash1, 37, 8, 12, true},
    {sim::Algo::flash1, 17, 5, 7, false},   {sim::Algo::flash2, 50, 64, 3, true}};

}  // namespace

TEST_CASE("the tiling view's tally after the last step equals the walk's count",
          "[gui][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("tiling"));
  TilingView* view = window->tiling_view();
  for (const Case& c : kCases) {
    view->set_teaching(c.algo, c.n, 64, c.br, c.bc, c.causal);
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
    CHECK(view->step_text().contains(format_exact(static_cast<double>(walk_io(config)))));
    sim::Config standard = config;
    standard.algo = sim::Algo::standard;
    CHECK(view->standard_bytes() == walk_io(standard));
    view->reset();
    CHECK(view->tally_bytes() == 0);
    view->run_to_end();
    CHECK(view->tally_bytes() == walk_io(config));
  }
}

TEST_CASE("each visited tile is one step of the view, in flash1's and flash2's loop orders",
          "[gui][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  TilingView* view = window->tiling_view();
  for (const bool causal : {false, true})
    for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
      view->set_teaching(algo, 45, 64, 16, 8, causal);
      INFO(sim::to_string(algo) << (causal ? " causal" : ""));
      REQUIRE(view->error_text().isEmpty());
      const sim::Config c = teaching_config(algo, 45, 16, 8, causal);
      std::vector<std::pair<int64_t, int64_t>> tiles;
      for (const auto& s : view->trace().steps) {
        CHECK(s.computes_tile());
        tiles.emplace_back(s.i, s.j);
      }
      const sim::TileFilter filter(c);
      const sim::TileGrid& g = filter.grid();
      std::vector<std::pair<int64_t, int64_t>> expected;
      // flash1 (Algorithm 1): K/V tile j outside, Q tile i inside; flash2: the other way.
      if (algo == sim::Algo::flash1) {
        for (int64_t j = 0; j < g.tc; ++j)
          for (int64_t i = 0; i < g.tr; ++i)
            if (filter.visits(i, j)) expected.emplace_back(i, j);
      } else {
        for (int64_t i = 0; i < g.tr; ++i)
          for (int64_t j = 0; j < g.tc; ++j)
            if (filter.visits(i, j)) expected.emplace_back(i, j);
      }
      CHECK(tiles == expected);
      CHECK(view->step_count() == static_cast<int>(expected.size()));
      if (causal) CHECK(expected.size() < static_cast<size_t>(g.tr * g.tc));
    }
}

TEST_CASE("the tiling view's steps, statistics and tallies for a seed are sim::explain's for "
          "the same configuration, row and seed",
          "[gui][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  TilingView* view = window->tiling_view();
  // A fresh view follows its default row with explain's default seed.
  {
    // `flashio explain`'s defaults: flash1, N = 64, d = 16, 16 x 32 tiles, row 0, its seed.
    const sim::ExplainTrace expected =
        sim::explain(teaching_config(sim::Algo::flash1, 64, 16, 32, false, 16), sim::ExplainOptions{});
    REQUIRE(view->trace().steps.size() == expected.steps.size());
    CHECK(view->trace().tracked_row == 0);
    CHECK(view->trace().output == expected.output);
    CHECK(view->trace().read_bytes + view->trace().write_bytes == 19968);  // 48.75 % of standard's 40960
    CHECK(view->standard_bytes() == 40960);
    CHECK(view->note_text().isEmpty());
  }
  const std::pair<int64_t, uint64_t> tracked[] = {{0, 1}, {17, 5}, {36, 12345}};
  for (const Case& c : kCases)
    for (const auto& [wanted_row, seed] : tracked) {
      const int64_t row = std::min(wanted_row, c.n - 1);
      view->set_teaching(c.algo, c.n, 64, c.br, c.bc, c.causal);
      view->set_tracked(row, seed);
      INFO(sim::to_string(c.algo) << " N=" << c.n << " Br=" << c.br << " Bc=" << c.bc
                                  << (c.causal ? " causal" : "") << " row " << row << " seed "
                                  << seed);
      REQUIRE(view->error_text().isEmpty());
      const sim::ExplainTrace expected =
          sim::explain(teaching_config(c.algo, c.n, c.br, c.bc, c.causal), {row, seed});
      const sim::ExplainTrace& shown = view->trace();
      REQUIRE(shown.steps.size() == expected.steps.size());
      view->reset();
      for (size_t k = 0; k < expected.steps.size(); ++k) {
        view->step();
        const sim::ExplainStep& e = expected.steps[k];
        const sim::ExplainStep& s = shown.steps[k];
        CHECK(s.i == e.i);
        CHECK(s.j == e.j);
        CHECK(s.read_bytes == e.read_bytes);
        CHECK(s.write_bytes == e.write_bytes);
        CHECK(view->tally_bytes() == e.read_bytes + e.write_bytes);
        CHECK(s.tracked_row_in_tile == e.tracked_row_in_tile);
        CHECK(s.max_moved == e.max_moved);
        CHECK(s.row.m == e.row.m);
        CHECK(s.row.l == e.row.l);
        CHECK(s.row.output == e.row.output);
        CHECK(s.wrong_row.output == e.wrong_row.output);
        // What the view prints is explain's text for the row after this step.
        CHECK(view->status_text().contains(QString::fromStdString(sim::statistics_text(e.row))));
      }
      CHECK(shown.output == expected.output);
      CHECK(shown.reference_output == expected.reference_output);
      CHECK(shown.wrong_output == expected.wrong_output);
      CHECK(shown.max_moves == expected.max_moves);
      CHECK(view->status_text().contains(
          QString::fromStdString(sim::explain_values(expected.reference_output))));
    }
  // The seed is the inputs' seed: another seed moves the row's statistics.
  view->set_teaching(sim::Algo::flash2, 33, 64, 8, 5, false);
  view->set_tracked(7, 1);
  const double m_seed1 = view->trace().steps.back().row.m;
  view->set_tracked(7, 2);
  CHECK(view->trace().steps.back().row.m != m_seed1);
}

TEST_CASE("the followed row's statistics after the last step are the dense softmax's on "
          "explain's inputs (head 0 of random_inputs for the seed), and its output the "
          "reference's",
          "[gui][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  TilingView* view = window->tiling_view();
  const uint64_t seed = 9;
  for (const bool causal : {false, true})
    for (const sim::Algo algo : {sim::Algo::flash1, sim::Algo::flash2}) {
      const sim::Config c = teaching_config(algo, 33, 8, 5, causal);
      const sim::HeadTensors in = sim::random_inputs(c.problem, seed, 1).front();
      const int64_t d = c.problem.headdim;
      const sim::HeadTensors dense = sim::dense_reference(in.q, in.k, in.v, nullptr, causal);
      view->set_teaching(algo, 33, 64, 8, 5, causal);
      for (const int64_t row : {0, 7, 32}) {
        view->set_tracked(row, seed);
        INFO(sim::to_string(algo) << " row " << row << (causal ? " causal" : ""));
        REQUIRE(view->error_text().isEmpty());
        // The dense softmax of row `row`: scores q·k/√d over its unmasked columns.
        const int64_t last_col = causal ? row : 32;
        double m = -std::numeric_limits<double>::infinity(), l = 0;
        for (int64_t col = 0; col <= last_col; ++col)
          m = std::max(m, in.q.row(row).dot(in.k.row(col)) / std::sqrt(double(d)));
        for (int64_t col = 0; col <= last_col; ++col)
          l += std::exp(in.q.row(row).dot(in.k.row(col)) / std::sqrt(double(d)) - m);
        const sim::RowStatistics& last = view->trace().steps.back().row;
        CHECK(last.m == Approx(m).epsilon(1e-12));
        CHECK(last.l == Approx(l).epsilon(1e-12));
        REQUIRE(static_cast<int64_t>(last.output.size()) == d);
        for (int64_t x = 0; x < d; ++x)
          CHECK(last.output[x] == Approx(dense.o(row, x)).margin(1e-12));
      }
    }
}

TEST_CASE("the teaching view says why when FlashAttention moves more than standard, with explain's words, "
          "and its status keeps its height while stepping",
          "[gui][tiling]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  REQUIRE(window->show_view("tiling"));
  TilingView* view = window->tiling_view();
  // N = 40, d = 64, 16 x 8 tiles (the old defaults): flash2 moves more than standard.
  view->set_teaching(sim::Algo::flash2, 40, 64, 16, 8, false);
  REQUIRE(view->error_text().isEmpty());
  REQUIRE(view->trace().read_bytes + view->trace().write_bytes > view->standard_bytes());
  const auto note = sim::more_than_standard_note(view->trace());
  REQUIRE(note.has_value());
  CHECK(view->note_text() == QString::fromStdString(*note));
  CHECK(view->note_text().contains("K and V again for each of the Tr = 3 query tiles"));
  // Back to a problem where the lesson shows: no note.
  view->set_teaching(sim::Algo::flash1, 64, 16, 16, 32, false);
  CHECK(view->note_text().isEmpty());
  // The status line under the canvas keeps room for its longest text: stepping does not move the layout.
  QApplication::processEvents();
  const int before = view->findChildren<QPlainTextEdit*>().front()->geometry().height();
  for (int k = 0; k < view->step_count(); ++k) {
    view->step();
    QApplication::processEvents();
    CHECK(view->findChildren<QPlainTextEdit*>().front()->geometry().height() == before);
  }
}
