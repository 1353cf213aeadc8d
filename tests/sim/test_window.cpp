// Sliding windows (docs/shapes.md, "Causal and sliding windows"): query i sees keys j with
// i + Nk − Nq − L ≤ j ≤ i + Nk − Nq + R. execute equals a reference masked at the token level by
// that definition (written here, not through sim's KeyBand); the walk and the closed form count
// what execute counts; tiles wholly outside the band are skipped, so io grows with N·(L + R + tile);
// `--window-right 0` is causal; the FLOP convention counts the kept scores; bad windows are refused.
#include <catch2/catch.hpp>

#include <optional>
#include <tuple>

#include "sim/bounds.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

Config window_config(Algo algo, Pass pass, int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk, int64_t br,
                     int64_t bc, int64_t left, int64_t right, bool pack = true) {
  Config c = test::shaped_config(algo, pass, 2, heads, kv_heads, nq, nk, 16, br, bc, false, pack);
  c.problem.window_left = left;
  c.problem.window_right = right;
  return c;
}

// The window by its definition, over one head's Nq × Nk scores.
ScoreMask band_by_definition(int64_t nq, int64_t nk, int64_t left, int64_t right) {
  ScoreMask keep(nq, nk);
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j)
      keep(i, j) = (left == kNoWindow || j >= i + nk - nq - left) && (right == kNoWindow || j <= i + nk - nq + right);
  return keep;
}

int64_t io_bytes(const std::vector<KernelCounts>& ks) {
  int64_t b = 0;
  for (const KernelCounts& k : ks) b += k.counts.io_read_bytes() + k.counts.io_write_bytes();
  return b;
}

using Window = std::pair<int64_t, int64_t>;
const Window kWindows[] = {{0, 0}, {16, 16}, {127, kNoWindow}, {kNoWindow, 0}, {5, 33}, {0, kNoWindow}};

}  // namespace

TEST_CASE("window: execute equals the reference masked by the window's definition, forward and backward, and "
          "the walk and the closed form count what execute counts (awkward shapes, Br != Bc, GQA, Nq < Nk)",
          "[window]") {
  struct Shape {
    int64_t heads, kv_heads, nq, nk, br, bc;
  };
  const Shape shapes[] = {{2, 2, 97, 97, 16, 32}, {4, 2, 61, 130, 32, 16}, {2, 1, 33, 33, 48, 16}};
  for (const auto& [left, right] : kWindows)
    for (const Shape& s : shapes)
      for (const Algo algo : {Algo::flash1, Algo::flash2, Algo::standard}) {
        if (algo == Algo::flash1 && s.nq != s.nk) continue;
        const Config c = window_config(algo, Pass::fwdbwd, s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc, left, right);
        CAPTURE(to_string(algo), left, right, s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc);
        REQUIRE_NOTHROW(validate(c));
        const ExecuteResult r = execute(c, 5);
        const ScoreMask keep = band_by_definition(s.nq, s.nk, left, right);
        for (int64_t bh = 0; bh < c.problem.batch_heads(); ++bh) {
          const HeadTensors& h = r.heads[static_cast<size_t>(bh)];
          const HeadTensors& first = r.heads[static_cast<size_t>(bh - bh % c.problem.group())];
          HeadTensors ref = dense_reference(h.q, first.k, first.v, &h.d_o, &keep, nullptr);
          CHECK(test::max_error(h.o, ref.o) < 1e-10);
          CHECK(test::max_error(h.dq, ref.dq) < 1e-10);
        }
        if (algo != Algo::standard) {
          CHECK(closed_form_counts(c) == r.kernels);
          CHECK(walk_counts(c) == r.kernels);
        }
      }
}

TEST_CASE("window: the tiles visited are those that hold a kept score, and between a row tile's first and last "
          "every tile is visited",
          "[window]") {
  for (const auto& [left, right] : kWindows)
    for (const auto& [br, bc] : {std::pair<int64_t, int64_t>{16, 16}, {32, 64}, {64, 16}}) {
      const Config c = window_config(Algo::flash2, Pass::fwd, 2, 2, 300, 333, br, bc, left, right);
      CAPTURE(left, right, br, bc);
      const TileFilter f(c);
      const TileGrid& g = f.grid();
      const ScoreMask keep = band_by_definition(300, 333, left, right);
      for (int64_t i = 0; i < g.tr; ++i)
        for (int64_t j = 0; j < g.tc; ++j) {
          const bool kept = keep.block(i * br, j * bc, g.rows_in(i), g.cols_in(j)).any();
          CHECK(f.visits(i, j) == kept);
          CHECK((j >= g.first_col(i) && j <= g.last_col(i)) == kept);
        }
    }
}

TEST_CASE("window: --window-right 0 is causal (the same tiles and bytes), and a window's io grows with "
          "N·(L + R + tile) where dense attention's grows with N²",
          "[window]") {
  for (const Pass pass : {Pass::fwd, Pass::bwd}) {
    Config causal = test::tiled_config(Algo::flash2, pass, 2, 4, 1000, 64, 64, 32, true);
    Config right0 = causal;
    right0.problem.causal = false;
    right0.problem.window_right = 0;
    CHECK(closed_form_counts(causal) == closed_form_counts(right0));
  }
  // (256, 0) at N = 8192 and 16384, Br = Bc = 128: each row tile visits at most ⌈(256 + 128) / 128⌉ + 1
  // tiles, so doubling N doubles the io; dense attention's K, V reads quadruple.
  auto io_at = [](int64_t n, int64_t left, int64_t right) {
    Config c = test::tiled_config(Algo::flash2, Pass::fwd, 1, 1, n, 64, 128, 128, false);
    c.problem.window_left = left;
    c.problem.window_right = right;
    return static_cast<double>(io_bytes(closed_form_counts(c)));
  };
  CHECK(io_at(16384, 256, 0) / io_at(8192, 256, 0) == Approx(2.0).epsilon(0.01));
  CHECK(io_at(16384, kNoWindow, kNoWindow) / io_at(8192, kNoWindow, kNoWindow) > 3.8);
  const TileVisits v = tile_visits(test::tiled_config(Algo::flash2, Pass::fwd, 1, 1, 16384, 64, 128, 128, false));
  Config w = test::tiled_config(Algo::flash2, Pass::fwd, 1, 1, 16384, 64, 128, 128, false);
  w.problem.window_left = 256;
  w.problem.window_right = 0;
  const TileVisits band = tile_visits(w);
  for (size_t i = 0; i < band.per_row.size(); ++i) CHECK(band.per_row[i] <= 4);
  CHECK(v.tiles() == 128 * 128);
  CHECK(band.tiles() == 1 + 2 + 126 * 3);  // row tiles 0 and 1 start at key 0, every later one spans three
}

TEST_CASE("window: the FLOP convention counts the scores a window keeps, exactly, and causal keeps the field's "
          "Nq·Nk − Nq²/2",
          "[window]") {
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{97, 97}, {61, 130}, {1, 500}, {300, 333}})
    for (const auto& [left, right] : kWindows) {
      Problem p;
      p.batch = 3;
      p.heads = 2;
      p.seqlen = nq;
      p.seqlen_k = nk;
      p.headdim = 8;
      p.window_left = left;
      p.window_right = right;
      const double kept = static_cast<double>(band_by_definition(nq, nk, left, right).count());
      CAPTURE(nq, nk, left, right);
      CHECK(p.band_of().visible_scores(nq, nk) == kept);
      CHECK(convention_flops(p) == Approx(4.0 * 3 * 2 * 8 * kept));
    }
  // Causal with a left side: the band (L, 0), counted exactly.
  Problem causal_left;
  causal_left.seqlen = 300;
  causal_left.headdim = 8;
  causal_left.batch = causal_left.heads = 1;
  causal_left.causal = true;
  causal_left.window_left = 20;
  CHECK(convention_flops(causal_left) ==
        Approx(4.0 * 8 * static_cast<double>(band_by_definition(300, 300, 20, 0).count())));
  Problem causal;
  causal.seqlen = 1000;
  causal.causal = true;
  CHECK(convention_flops(causal) == Approx(4.0 * 64 * 16 * 64 * (1000.0 * 1000 - 1000.0 * 1000 / 2)));
}

TEST_CASE("window: io stays at or above the compulsory bound computed from the window", "[window]") {
  for (const auto& [left, right] : kWindows)
    for (const int64_t nk : {1000, 1500}) {
      for (const Pass pass : {Pass::fwd, Pass::bwd}) {
        Config c = window_config(Algo::flash2, pass, 4, 4, 1000, nk, 64, 64, left, right);
        c.problem.headdim = 64;
        CAPTURE(left, right, nk, to_string(pass));
        double compulsory = 0;
        for (const Bound& b : bounds(c))
          if (b.algo == RowAlgo::compulsory) compulsory = b.read_bytes + b.write_bytes;
        CHECK(compulsory > 0);
        CHECK(static_cast<double>(io_bytes(closed_form_counts(c))) >= compulsory);
      }
    }
}

TEST_CASE("window: bad windows are refused naming the field and what is allowed", "[window]") {
  Config c = window_config(Algo::flash2, Pass::fwd, 2, 2, 100, 100, 32, 32, 8, kNoWindow);
  CHECK(test::refusal_of(c, Field::window_left) == "accepted");
  c.problem.window_left = -3;
  CHECK_THAT(test::refusal_of(c, Field::window_left), Catch::Contains(">= 0, or none"));
  c.problem.window_left = 8;
  c.problem.causal = true;
  c.problem.window_right = 4;
  CHECK_THAT(test::refusal_of(c, Field::window_right), Catch::Contains("causal is a window whose right side is 0"));
  c.problem.causal = false;
  c.problem.seqlen_k = 50;
  CHECK_THAT(test::refusal_of(c, Field::seqlen_k), Catch::Contains("seqlen_k >= seqlen"));
  c.problem.seqlen_k = 100;
  c.splits = 2;
  CHECK_THAT(test::refusal_of(c, Field::window_left), Catch::Contains("splits = 1"));
  c.splits = 1;
  c.page_size = 16;
  CHECK_THAT(test::refusal_of(c, Field::window_left), Catch::Contains("page_size = 0"));
  c.page_size = 0;
  c.algo = Algo::blocksparse;
  c.block_mask.text = "banded:1";
  CHECK_THAT(test::refusal_of(c, Field::window_left), Catch::Contains("banded block mask"));
}
