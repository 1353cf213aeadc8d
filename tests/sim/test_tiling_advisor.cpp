// The tiling advisor (sim/tiling_advisor.h): tilings ranked fastest first by the time model, each
// predicted as simulate predicts it, built ones marked as the catalog says, and the best built
// tiling the first built one of the ranking; --tiling best (make_config) runs it per pass.
#include <catch2/catch.hpp>

#include "sim/errors.h"
#include "sim/kernel_catalog.h"
#include "sim/tiling_advisor.h"

using namespace flashio::sim;

namespace {

Config h200_config(Algo algo, Pass pass, int64_t d, bool causal) {
  Problem p;
  p.batch = 3, p.heads = 7, p.seqlen = 3000, p.headdim = d, p.causal = causal, p.pass = pass;
  return make_config(algo, p, hardware_preset("h200"));
}

}  // namespace

TEST_CASE("the ranking is sorted by predicted time, each as simulate predicts it, built ones marked") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd})
      for (bool causal : {false, true}) {
        const Config c = h200_config(algo, pass, 64, causal);
        const std::vector<RankedTiling> ranked = rank_tilings(c, CountMethod::formula);
        INFO(to_string(algo) << " " << to_string(pass) << " causal=" << causal);
        REQUIRE(ranked.size() > 10);
        int built = 0;
        for (size_t i = 0; i < ranked.size(); ++i) {
          if (i > 0) CHECK(ranked[i - 1].time_ms <= ranked[i].time_ms);
          Config t = c;
          t.tiling = ranked[i].tiling;
          t.tiling_source = TilingSource::given;
          CHECK(ranked[i].time_ms == simulate(t, CountMethod::formula, TimeMethod::model).time_ms);
          CHECK(ranked[i].built == (find_built(algo, pass, 64, DType::fp16, ranked[i].tiling) != nullptr));
          built += ranked[i].built;
        }
        // Every built tiling of d = 64 fp16 is a candidate: six of {32, 64, 128}² for each, and
        // flash2's forward the warp-specialised 192 x 128 as well.
        CHECK(built == (algo == Algo::flash2 && pass == Pass::fwd ? 7 : 6));
        const auto best = best_built_tiling(c);
        REQUIRE(best);
        const auto first_built = std::find_if(ranked.begin(), ranked.end(), [](const RankedTiling& r) { return r.built; });
        CHECK(*best == first_built->tiling);
      }
}

TEST_CASE("given block sizes restrict the candidates (the built tilings stay)") {
  const Config c = h200_config(Algo::flash2, Pass::fwd, 128, false);
  const int64_t rs[] = {48}, cs[] = {80};
  const std::vector<RankedTiling> ranked = rank_tilings(c, CountMethod::formula, rs, cs);
  int given = 0;
  for (const RankedTiling& r : ranked) {
    if (r.tiling == Tiling{48, 80}) ++given;
    else CHECK(r.built);
  }
  CHECK(given == 1);
}

TEST_CASE("the best tiling (--tiling best): each pass runs the fastest built tiling of its own ranking") {
  Problem p;
  p.batch = 2, p.heads = 5, p.seqlen = 2000, p.headdim = 128, p.pass = Pass::fwdbwd;
  const Config c = make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt, {TilingSource::best});
  CHECK(c.tiling_source == TilingSource::best);
  const Config rule = make_config(Algo::flash2, p, hardware_preset("h200"));
  CHECK(c.tiling == *best_built_tiling(pass_config(rule, Pass::fwd)));
  CHECK(pass_config(c, Pass::bwd).tiling == *best_built_tiling(pass_config(rule, Pass::bwd)));
  // blocksparse runs flash2's kernels: its best is one of them.
  const Config sparse = make_config(Algo::blocksparse, p, hardware_preset("h200"), std::nullopt, {TilingSource::best});
  CHECK(find_built(Algo::flash2, Pass::fwd, 128, DType::fp16, sparse.tiling) != nullptr);
  // Without a calibration the advisor names the figure it lacks.
  CHECK_THROWS_WITH(make_config(Algo::flash2, p, hardware_preset("a100-40gb"), std::nullopt, {TilingSource::best}),
                    Catch::Contains("a figure the time model needs"));
}

TEST_CASE("blocksparse's built tilings are those whose tiles divide its mask's T: a 64-token mask runs 64x64, not "
          "128x64, in the ranking's built column and in --tiling best") {
  Problem p;
  p.batch = 2, p.heads = 4, p.seqlen = 1000, p.headdim = 64, p.pass = Pass::fwd;
  Config c = make_config(Algo::blocksparse, p, hardware_preset("h200"));
  c.block_mask = BlockMaskSpec{"banded:1@64"};
  CHECK(runs_built(c, Pass::fwd, Tiling{64, 64}));
  CHECK_FALSE(runs_built(c, Pass::fwd, Tiling{128, 64}));  // built for flash2, but 64 tokens hold no 128 rows
  CHECK_FALSE(runs_built(c, Pass::fwd, Tiling{48, 64}));   // not built
  c.block_mask = BlockMaskSpec{"banded:1"};
  CHECK(runs_built(c, Pass::fwd, Tiling{128, 64}));
  c.block_mask = BlockMaskSpec{"banded:1@64"};
  for (const RankedTiling& t : rank_tilings(c, CountMethod::formula)) {
    INFO(t.tiling.block_r << "x" << t.tiling.block_c);
    CHECK(t.built == runs_built(c, Pass::fwd, t.tiling));
    if (t.built) CHECK((64 % t.tiling.block_r == 0 && 64 % t.tiling.block_c == 0));
  }
  const std::optional<Tiling> best = best_built_tiling(c);
  REQUIRE(best);
  CHECK(64 % best->block_r == 0);
  CHECK(64 % best->block_c == 0);
}
