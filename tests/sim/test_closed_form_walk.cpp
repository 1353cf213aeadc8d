// The closed form equals the walk over the schedule exactly (docs/architecture.md, "Ways to
// count"), for every algorithm and pass, including N not divisible by the blocks, Br ≠ Bc and
// causal.
#include <random>

#include <catch2/catch.hpp>
#include <tuple>

#include "sim/config.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"
#include "sim/simulate.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

Config config(Algo algo, Pass pass, int64_t b, int64_t h, int64_t n, int64_t d, int64_t br,
              int64_t bc, bool causal) {
  return test::tiled_config(algo, pass, b, h, n, d, br, bc, causal);
}

void require_equal(const Config& c) {
  const auto formula = closed_form_counts(c);
  const auto walk = walk_counts(c);
  REQUIRE(formula.size() == walk.size());
  for (size_t k = 0; k < formula.size(); ++k) {
    INFO(to_string(c.algo) << " " << to_string(c.problem.pass) << " N=" << c.problem.seqlen
         << " d=" << c.problem.headdim << " Br=" << c.tiling.block_r << " Bc="
         << c.tiling.block_c << " causal=" << c.problem.causal << " kernel " << to_string(formula[k].kind)
         << "\nformula: " << describe(formula[k].counts) << "\nwalk:    "
         << describe(walk[k].counts));
    REQUIRE(formula[k] == walk[k]);
  }
}

}  // namespace

TEST_CASE("walk equals closed form on hundreds of random shapes, ragged and causal") {
  std::mt19937_64 rng(2022);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const Algo algos[] = {Algo::standard, Algo::flash1, Algo::flash2};
  const Pass passes[] = {Pass::fwd, Pass::bwd, Pass::fwdbwd};
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t n = pick(1, 700), d = pick(1, 160);
    const int64_t br = pick(1, 200), bc = pick(1, 200);
    require_equal(config(algos[trial % 3], passes[(trial / 3) % 3], pick(1, 3), pick(1, 3), n,
                         d, br, bc, trial % 2 == 1));
  }
}

TEST_CASE("walk equals closed form for N not divisible by the blocks (N = 97, 1025)") {
  for (int64_t n : {97, 1025})
    for (bool causal : {false, true})
      for (Algo a : {Algo::flash1, Algo::flash2})
        require_equal(config(a, Pass::fwdbwd, 2, 3, n, 64, 64, 32, causal));
}

// Every (mask, causal, N × Br × Bc) case of a blocksparse configuration of `pass`, B = 1, H = 2,
// d = 40, handed to `check` (each CAPTUREd).
using MaskShape = std::tuple<int64_t, int64_t, int64_t>;  // N, Br, Bc
template <typename Check>
void for_each_mask_case(Pass pass, std::initializer_list<const char*> specs, std::initializer_list<MaskShape> shapes,
                        Check check) {
  for (const char* spec : specs)
    for (bool causal : {false, true})
      for (const auto& [n, br, bc] : shapes) {
        Config c = config(Algo::blocksparse, pass, 1, 2, n, 40, br, bc, causal);
        c.block_mask.text = spec;
        CAPTURE(spec, causal, n, br, bc);
        check(c);
      }
}

TEST_CASE("walk equals closed form for blocksparse masks, causal and not, at tilings across the "
          "mask's 128-token blocks") {
  for_each_mask_case(Pass::fwdbwd, {"banded:1", "banded:0", "random:0.3:7", "random:1"},
                     {{333, 32, 48}, {1000, 16, 160}, {1000, 200, 24}, {517, 256, 256}, {129, 8, 8}},
                     [](const Config& c) { require_equal(c); });
}

TEST_CASE("with a block mask, tile_visits counts exactly the tiles TileFilter visits (per row tile, "
          "per column tile, and the rows they cover)") {
  for_each_mask_case(Pass::fwd, {"banded:0", "banded:2", "random:0.2:3", "random:0.6:9"},
                     {{1000, 16, 160}, {1000, 200, 24}, {777, 128, 128}, {2049, 96, 40}, {300, 512, 8}},
                     [](const Config& c) {
                       const TileVisits v = tile_visits(c);
                       const TileFilter f(c);
                       const TileGrid& g = f.grid();
                       std::vector<int64_t> per_row(g.tr, 0), kv_rows(g.tr, 0), per_col(g.tc, 0), q_rows(g.tc, 0);
                       for (int64_t i = 0; i < g.tr; ++i)
                         for (int64_t j = 0; j < g.tc; ++j)
                           if (f.visits(i, j))
                             ++per_row[i], kv_rows[i] += g.cols_in(j), ++per_col[j], q_rows[j] += g.rows_in(i);
                       CHECK(v.per_row == per_row);
                       CHECK(v.kv_rows == kv_rows);
                       CHECK(v.per_col == per_col);
                       CHECK(v.q_rows == q_rows);
                     });
}

TEST_CASE("standard with mask and dropout adds their passes and walk still equals closed form") {
  Config c = config(Algo::standard, Pass::fwdbwd, 2, 2, 300, 72, 64, 64, false);
  c.problem.mask = true;
  c.problem.dropout = 0.1;
  require_equal(c);
  const auto ks = closed_form_counts(c);
  std::vector<KernelKind> kinds;
  for (const auto& k : ks) kinds.push_back(k.kind);
  using K = KernelKind;
  CHECK(kinds == std::vector<KernelKind>{K::gemm_qk, K::mask, K::softmax, K::dropout, K::gemm_pv,
                                         K::gemm_dv, K::gemm_dp, K::dropout_bwd, K::rowsum_do_o,
                                         K::softmax_bwd, K::gemm_dq, K::gemm_dk});
}

TEST_CASE("a block mask of small blocks (@T) skips tiles in a small problem: banded:0@16 at N = 64 "
          "on 16 x 16 tiles visits the 4 diagonal tiles, on 32 x 16 tiles 2 per row tile") {
  Config c = config(Algo::blocksparse, Pass::fwd, 1, 1, 64, 16, 16, 16, false);
  c.block_mask.text = "banded:0@16";
  require_equal(c);
  CHECK(tile_visits(c).tiles() == 4);
  c.tiling = {32, 16};
  CHECK(tile_visits(c).tiles() == 4);  // each 32-row tile meets two 16-token blocks' keys
  c.block_mask.text = "banded:0";      // one 128-token block: dense
  CHECK(tile_visits(c).tiles() == 8);
}

TEST_CASE("standard's GEMMs at N not a multiple of 8 run the last N mod 8 keys as a second cuBLAS call: "
          "N = 300 (296 + 4 keys) reads Q once more in gemm_qk, O back and twice written in gemm_pv, "
          "and N = 296 has no second call") {
  for (int64_t n : {300, 296, 13, 7}) {
    Config c = config(Algo::standard, Pass::fwdbwd, 2, 3, n, 72, 64, 64, n % 2 == 1);
    require_equal(c);
    const int64_t e = 2, bh = 6, d = 72;
    const int64_t main = standard_gemm_main_keys(n), calls = main < n ? 2 : 1;
    const int64_t key_tiles = (main + 127) / 128 + (calls - 1), row_tiles = (n + 127) / 128;
    INFO("N = " << n << " main keys " << main);
    for (const auto& k : closed_form_counts(c)) {
      const Counts& h = k.counts;
      if (k.kind == KernelKind::gemm_qk) {
        CHECK(h.of(Tensor::Q).read_bytes == bh * key_tiles * n * d * e);
        CHECK(h.of(Tensor::K).read_bytes == bh * row_tiles * n * d * e);
        CHECK(h.of(Tensor::S).write_bytes == bh * n * n * e);
      }
      if (k.kind == KernelKind::gemm_pv) {
        CHECK(h.of(Tensor::O).read_bytes == bh * (calls - 1) * n * d * e);
        CHECK(h.of(Tensor::O).write_bytes == bh * calls * n * d * e);
        CHECK(h.of(Tensor::P).read_bytes == bh * n * n * e);  // d = 72: one column tile of d
      }
      if (k.kind == KernelKind::gemm_dv) CHECK(h.of(Tensor::dO).read_bytes == bh * key_tiles * n * d * e);
      if (k.kind == KernelKind::gemm_dq) CHECK(h.of(Tensor::dQ).write_bytes == bh * calls * n * d * e);
    }
  }
}
