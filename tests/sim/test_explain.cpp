// explain (sim/explain.h): the teaching trace must count what the walk counts, its tracked row
// must end at the reference output, and its "only ℓ rescaled" variant must be wrong exactly
// when the row's max moves.
#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/explain.h"
#include "sim/hardware.h"
#include "sim/simulate.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

Config make(Algo algo, int64_t n, int64_t d, int64_t br, int64_t bc, bool causal,
            int64_t batch = 1, int64_t heads = 1) {
  return test::tiled_config(algo, Pass::fwd, batch, heads, n, d, br, bc, causal);
}

using test::total;

}  // namespace

TEST_CASE("explain's byte tally after the last step, times B·H, equals the walk's count, tensor "
          "by tensor",
          "[explain]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (int64_t n : {1, 7, 33, 64})
      for (auto [br, bc] : {std::pair<int64_t, int64_t>{4, 4}, {8, 3}, {5, 16}})
        for (bool causal : {false, true}) {
          const Config c = make(algo, n, 8, br, bc, causal, 2, 3);
          CAPTURE(to_string(algo), n, br, bc, causal);
          const ExplainTrace t = explain(c);
          const Counts walk = total(walk_counts(c));
          CHECK(t.read_bytes * 6 == walk.io_read_bytes());
          CHECK(t.write_bytes * 6 == walk.io_write_bytes());
          Counts traced;
          for (const ExplainStep& s : t.steps)
            for (const TileMove& m : s.moves)
              traced.add_transfer(m.transfer.tensor, m.transfer.dir, m.bytes);
          INFO("walk:    " << describe(walk) << "\ntraced:  " << describe(traced.scaled(6)));
          Counts walk_io = walk;
          walk_io.flops = {};
          CHECK(traced.scaled(6) == walk_io);
          // The tallies only grow, and the last step's are the totals.
          for (size_t k = 1; k < t.steps.size(); ++k) {
            CHECK(t.steps[k].read_bytes >= t.steps[k - 1].read_bytes);
            CHECK(t.steps[k].write_bytes >= t.steps[k - 1].write_bytes);
          }
          // Standard attention's figure is the walk of standard's forward, per head.
          Config s = c;
          s.algo = Algo::standard;
          CHECK(t.standard_read_bytes * 6 == total(walk_counts(s)).io_read_bytes());
          CHECK(t.standard_write_bytes * 6 == total(walk_counts(s)).io_write_bytes());
        }
}

TEST_CASE("explain steps through the visited tiles in the algorithm's order: flash2 row tile by "
          "row tile, flash1 column tile by column tile",
          "[explain]") {
  const ExplainTrace f2 = explain(make(Algo::flash2, 21, 4, 8, 5, false));
  const ExplainTrace f1 = explain(make(Algo::flash1, 21, 4, 8, 5, false));
  REQUIRE(f2.steps.size() == 3 * 5);
  REQUIRE(f1.steps.size() == 3 * 5);
  for (size_t k = 0; k < f2.steps.size(); ++k) {
    CHECK(f2.steps[k].i == static_cast<int64_t>(k) / 5);
    CHECK(f2.steps[k].j == static_cast<int64_t>(k) % 5);
    CHECK(f1.steps[k].j == static_cast<int64_t>(k) / 3);
    CHECK(f1.steps[k].i == static_cast<int64_t>(k) % 3);
  }
  // Causal: row tile i stops at the tile holding its last row (8·i + 7 → column tile of it).
  const ExplainTrace causal = explain(make(Algo::flash2, 21, 4, 8, 5, true));
  int64_t visited = 0;
  for (int64_t i = 0; i < 3; ++i) visited += std::min<int64_t>(20, 8 * i + 7) / 5 + 1;
  CHECK(static_cast<int64_t>(causal.steps.size()) == visited);
}

TEST_CASE("the tracked row's final statistics give the reference output (and execute's), for "
          "every row",
          "[explain]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (bool causal : {false, true}) {
      const Config c = make(algo, 37, 8, 8, 6, causal);
      const ExecuteResult run = execute(c, 5);
      for (int64_t row = 0; row < 37; ++row) {
        CAPTURE(to_string(algo), causal, row);
        const ExplainTrace t = explain(c, {row, 5});
        CHECK(t.output_error < 1e-12);
        const ExplainStep& last = t.steps.back();
        REQUIRE(last.row.output.size() == 8);
        for (int64_t k = 0; k < 8; ++k) {
          CHECK(t.output[k] == Approx(run.heads[0].o(row, k)).margin(1e-12));
          CHECK(last.row.output[k] == Approx(t.output[k]).margin(1e-15));
        }
        // L = m + log ℓ from the final statistics is execute's log-sum-exp.
        CHECK(last.row.m + std::log(last.row.l) == Approx(run.heads[0].lse(row, 0)).margin(1e-12));
      }
    }
}

TEST_CASE("the 'only ℓ rescaled' variant differs from the reference when the row's max moves, "
          "and agrees when it never moves",
          "[explain]") {
  int64_t moved_rows = 0, unmoved_rows = 0;
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (bool causal : {false, true}) {
      const Config c = make(algo, 40, 8, 4, 4, causal);
      for (int64_t row = 0; row < 40; ++row) {
        CAPTURE(to_string(algo), causal, row);
        const ExplainTrace t = explain(c, {row, 3});
        int64_t moves = 0;
        for (const ExplainStep& s : t.steps) moves += s.max_moved ? 1 : 0;
        CHECK(moves == t.max_moves);
        if (t.max_moves > 0) {
          ++moved_rows;
          CHECK(t.wrong_output_error > 1e-6);
        } else {
          ++unmoved_rows;
          CHECK(t.wrong_output_error < 1e-12);
        }
      }
    }
  // Both cases were exercised (causal rows 0-3 see one tile only: their max cannot move).
  CHECK(moved_rows > 0);
  CHECK(unmoved_rows > 0);
}

TEST_CASE("explain on the paper's worked row: output 8, the ℓ-only variant 9, one max move",
          "[explain][worked]") {
  HeadTensors h;
  h.q = Matrix::Constant(2, 1, 1.0);
  h.k = Matrix(2, 1);
  h.k << 0, std::log(3.0);
  h.v = Matrix(2, 1);
  h.v << 2, 10;
  for (Algo algo : {Algo::flash1, Algo::flash2}) {
    CAPTURE(to_string(algo));
    const ExplainTrace t = explain(make(algo, 2, 1, 1, 1, false), h, 0);
    CHECK(t.output[0] == Approx(8.0).epsilon(1e-14));
    CHECK(t.wrong_output[0] == Approx(9.0).epsilon(1e-14));
    CHECK(t.wrong_output_error == Approx(1.0).epsilon(1e-12));
    CHECK(t.max_moves == 1);
    const std::string text = explain_text(t);
    CHECK(text.find("max moved") != std::string::npos);
    CHECK(text.find("[9]") != std::string::npos);
    CHECK(text.find("[8]") != std::string::npos);
  }
}

TEST_CASE("explain_text prints one line per step and the totals that match the trace",
          "[explain]") {
  const ExplainTrace t = explain(make(Algo::flash1, 13, 4, 4, 4, true), {5, 1});
  const std::string text = explain_text(t);
  std::istringstream in(text);
  std::string line;
  size_t step_lines = 0;
  while (std::getline(in, line))
    if (line.size() > 6 && line.find_first_not_of(" 0123456789") == 6 &&
        std::isdigit(static_cast<unsigned char>(line[4])))
      ++step_lines;
  CHECK(step_lines == t.steps.size());
  CHECK(text.find(std::to_string(t.read_bytes + t.write_bytes) + " B") != std::string::npos);
  CHECK(text.find(std::to_string(t.standard_read_bytes + t.standard_write_bytes) + " B") !=
        std::string::npos);
}

TEST_CASE("explain refuses what it cannot trace, naming the field", "[explain]") {
  // The field explain refused, or nullopt when it traced the configuration.
  auto refused = [](const Config& c, int64_t row) -> std::optional<Field> {
    try {
      explain(c, {row, 1});
    } catch (const InvalidInput& e) {
      REQUIRE(e.field());
      return e.field();
    }
    return std::nullopt;
  };
  CHECK(refused(make(Algo::standard, 16, 8, 4, 4, false), 0) == Field::algo);
  CHECK(refused(make(Algo::blocksparse, 16, 8, 4, 4, false), 0) == Field::algo);
  CHECK(refused(make(Algo::flash2, 65, 8, 4, 4, false), 0) == Field::seqlen);
  CHECK(refused(make(Algo::flash2, 16, 8, 4, 4, false), 16) == Field::tracked_row);
  CHECK(refused(make(Algo::flash2, 16, 8, 4, 4, false), -1) == Field::tracked_row);
  Config bwd = make(Algo::flash2, 16, 8, 4, 4, false);
  bwd.problem.pass = Pass::fwdbwd;
  CHECK(refused(bwd, 0) == Field::pass);
  CHECK(refused(make(Algo::flash2, 64, 8, 4, 4, false), 63) == std::nullopt);
}

TEST_CASE("more_than_standard_note: only when FlashAttention moves more than standard, with the bytes of its "
          "re-reads (flash2: K and V per query tile) against standard's N x N matrices") {
  // N = 64, d = 16, 16 x 32 tiles: flash1 moves 48.75 % of standard, no note.
  CHECK_FALSE(more_than_standard_note(explain(make(Algo::flash1, 64, 16, 16, 32, false))).has_value());
  // N = 24, d = 40, 8 x 8 tiles (awkward: d not a power of two, N not a multiple of 16).
  const ExplainTrace t = explain(make(Algo::flash2, 24, 40, 8, 8, false));
  REQUIRE(t.read_bytes + t.write_bytes > t.standard_read_bytes + t.standard_write_bytes);
  const auto note = more_than_standard_note(t);
  REQUIRE(note.has_value());
  const int64_t once = 4 * 24 * 40 * 2;
  CHECK(note->find("K and V again for each of the Tr = 3 query tiles") != std::string::npos);
  CHECK(note->find(std::to_string(t.read_bytes + t.write_bytes - once) + " B beyond") != std::string::npos);
  CHECK(note->find(std::to_string(t.standard_read_bytes + t.standard_write_bytes - once) + " B of standard") !=
        std::string::npos);
}
