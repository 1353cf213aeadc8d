// The default kernel of a configuration (--tiling kernel; sim/config.h, kernel_tiling and
// settle_kernel_tiling; sim/kernel_choice.h, default_kernel), as the kernels choose it
// (kernels/registry.cpp, default_choices): the warp-specialised forward for dense attention, the
// wgmma one for the variants it lacks; and the warp-specialised forward's causal block order.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/config.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/schedule.h"

using namespace flashio::sim;

namespace {

Problem problem(int64_t d, bool causal = false) {
  Problem p;
  p.batch = 2, p.heads = 3, p.seqlen = 1000, p.headdim = d, p.causal = causal, p.pass = Pass::fwd;
  return p;
}

Config by_default(const Problem& p, std::optional<MmaKind> family = std::nullopt) {
  return make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt, {TilingSource::kernel, std::nullopt,
                                                                              std::nullopt, family});
}

// The first query row each block of the forward reads (its Q transfer), in launch order.
std::vector<int64_t> first_rows(const KernelSchedule& k) {
  struct FirstQ : ScheduleSink {
    int64_t row = -1;
    void transfer(const Transfer& t) override {
      if (t.tensor == Tensor::Q && row < 0) row = t.row0;
    }
    void compute(const Flops&) override {}
  };
  std::vector<int64_t> rows;
  for (int64_t block = 0; block < k.blocks_per_head; ++block) {
    FirstQ sink;
    k.emit_block(0, block, sink);
    rows.push_back(sink.row);
  }
  return rows;
}

}  // namespace

TEST_CASE("the default forward of dense attention is the warp-specialised kernel (192x128 at d = 64, 128x128 at "
          "d = 128, a tiling wgmma shares), of dropout, a paged cache or splits the wgmma one") {
  for (const int64_t d : {64, 128}) {
    INFO("d = " << d);
    const Config dense = by_default(problem(d));
    const BuiltKernel* k = built_kernel(dense, Pass::fwd, dense.tiling);
    REQUIRE(k != nullptr);
    CHECK(k->mma == MmaKind::wgmma_ws);
    CHECK(dense.tiling == (d == 64 ? Tiling{192, 128} : Tiling{128, 128}));
    CHECK(forward_kernel_impl(dense) == MmaKind::wgmma_ws);

    Problem drop = problem(d);
    drop.dropout = 0.1;
    const Config dropped = by_default(drop);
    CHECK(built_kernel(dropped, Pass::fwd, dropped.tiling)->mma == MmaKind::wgmma);
    CHECK(dropped.tiling == (d == 64 ? Tiling{128, 64} : Tiling{128, 128}));

    // Splits and a page size come after make_config: settle_kernel_tiling takes the default that runs them.
    for (const bool paged : {false, true}) {
      Config c = by_default(problem(d));
      if (paged) c.page_size = 64;
      else c.splits = 2;
      settle_kernel_tiling(c);
      INFO((paged ? "paged" : "split"));
      REQUIRE(built_kernel(c, Pass::fwd, c.tiling) != nullptr);
      CHECK(built_kernel(c, Pass::fwd, c.tiling)->mma == MmaKind::wgmma);
    }
    // A family asked for keeps its own default; a given tiling its first entry (wgmma at 128x128).
    CHECK(built_kernel(by_default(problem(d), MmaKind::wgmma), Pass::fwd, by_default(problem(d), MmaKind::wgmma).tiling)
              ->mma == MmaKind::wgmma);
    Config given = make_config(Algo::flash2, problem(d), hardware_preset("h200"), std::nullopt,
                               {TilingSource::rule, 128, 128});
    CHECK(built_kernel(given, Pass::fwd, given.tiling)->mma == (d == 64 ? MmaKind::mma_sync : MmaKind::wgmma));
  }
}

TEST_CASE("the warp-specialised forward runs a causal head's row tiles last-first, the others first-first") {
  for (const bool causal : {false, true}) {
    const Config ws = by_default(problem(128, causal));  // 1000 rows: 8 row tiles of 128
    const std::vector<int64_t> rows = first_rows(build_schedule(ws).front());
    REQUIRE(rows.size() == 8);
    for (size_t b = 0; b < rows.size(); ++b) CHECK(rows[b] == 128 * static_cast<int64_t>(causal ? 7 - b : b));
    const Config wgmma = by_default(problem(128, causal), MmaKind::wgmma);
    const std::vector<int64_t> plain = first_rows(build_schedule(wgmma).front());
    for (size_t b = 0; b < plain.size(); ++b) CHECK(plain[b] == 128 * static_cast<int64_t>(b));
  }
}
