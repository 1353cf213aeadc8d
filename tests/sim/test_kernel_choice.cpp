// Which built kernel a configuration runs (sim/kernel_choice.h): the forward's family
// (Config::kernel_impl) where one is asked for, else the tiling's first entry that runs the
// configuration, a dense_only one only for dense attention; the refusals; the row's kernel_impl.
// Over the real catalog (mma_sync and wgmma at flash2's d = 64 128x64 and d = 128 128x128), and
// over a hand-made catalog for the dense_only entries the real one has none of yet.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/config.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/row.h"
#include "sim/simulate.h"
#include "sim/tiling_advisor.h"

using namespace flashio::sim;

namespace {

Config flash2_at(int64_t d, Tiling tiling, std::optional<MmaKind> family = std::nullopt, Pass pass = Pass::fwd) {
  Problem p;
  p.batch = 2, p.heads = 4, p.seqlen = 1024, p.headdim = d, p.pass = pass;
  Config c = make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt,
                         {TilingSource::rule, tiling.block_r, tiling.block_c, family});
  return c;
}

// The message of validate_kernel_impl's refusal, after checking that it names kernel_impl.
std::string kernel_refusal(const Config& c, std::span<const BuiltKernel> entries = built_kernels()) {
  try {
    validate_kernel_impl(c, entries);
  } catch (const InvalidInput& e) {
    CHECK(e.field() == Field::kernel_impl);
    return e.problem();
  }
  FAIL("not refused");
  return "";
}

// flash2's forward at d = 128 fp16 128x128 twice: a warp-specialised dense_only kernel registered
// first, then the wgmma kernel that runs every variant, as the kernels will register them.
std::vector<BuiltKernel> two_families() {
  const BuiltKernel* wgmma = find_built(Algo::flash2, Pass::fwd, 128, DType::fp16, {128, 128}, MmaKind::wgmma);
  REQUIRE(wgmma != nullptr);
  BuiltKernel ws = *wgmma;
  ws.mma = MmaKind::wgmma_ws;
  ws.threads = 384;  // a producer warpgroup beside two consumers
  ws.is_default = false;
  ws.dense_only = true;
  return {ws, *wgmma};
}

}  // namespace

TEST_CASE("kernel families: each spelling parses back, an unknown one does not, the allowed list names them all") {
  for (MmaKind m : {MmaKind::mma_sync, MmaKind::wgmma, MmaKind::wgmma_ws}) {
    CHECK(parse_mma_kind(to_string(m)) == m);
    CHECK(allowed_mma_kinds().find(to_string(m)) != std::string::npos);
  }
  CHECK(to_string(MmaKind::wgmma_ws) == "wgmma_ws");
  CHECK_FALSE(parse_mma_kind("wgmma-ws").has_value());
  CHECK_FALSE(parse_mma_kind("").has_value());
  CHECK(issues_wgmma(MmaKind::wgmma));
  CHECK(issues_wgmma(MmaKind::wgmma_ws));
  CHECK_FALSE(issues_wgmma(MmaKind::mma_sync));
}

TEST_CASE("kernel choice: flash2's forward at d = 64 128x64 and d = 128 128x128 is wgmma, asked for or not, "
          "mma_sync is not built there, and is at 64x64") {
  for (auto [d, tiling] : {std::pair<int64_t, Tiling>{64, {128, 64}}, std::pair<int64_t, Tiling>{128, {128, 128}}}) {
    INFO("d=" << d);
    const BuiltKernel* unset = built_kernel(flash2_at(d, tiling), Pass::fwd, tiling);
    REQUIRE(unset != nullptr);
    CHECK(unset->mma == MmaKind::wgmma);
    CHECK(built_kernel(flash2_at(d, tiling, MmaKind::wgmma), Pass::fwd, tiling) == unset);
    CHECK(built_kernel(flash2_at(d, tiling, MmaKind::mma_sync), Pass::fwd, tiling) == nullptr);
    CHECK(forward_kernel_impl(flash2_at(d, tiling)) == MmaKind::wgmma);
    CHECK_NOTHROW(validate(flash2_at(d, tiling, MmaKind::wgmma)));
    const std::string refused = kernel_refusal(flash2_at(d, tiling, MmaKind::mma_sync));
    CHECK(refused.find(" on mma_sync") != std::string::npos);
    CHECK(refused.find("allowed at that tiling: wgmma") != std::string::npos);
    CHECK(refused.find("128x64(wgmma)") != std::string::npos);  // what is built, with its family
  }
  // No warp-specialised forward at d = 64 128x64 (its tilings are 128x128 and 192x128).
  CHECK(built_kernel(flash2_at(64, {128, 64}, MmaKind::wgmma_ws), Pass::fwd, {128, 64}) == nullptr);
  CHECK(kernel_refusal(flash2_at(64, {128, 64}, MmaKind::wgmma_ws)).find("on wgmma_ws") != std::string::npos);
  const Tiling small{64, 64};
  CHECK(forward_kernel_impl(flash2_at(64, small)) == MmaKind::mma_sync);
  CHECK(forward_kernel_impl(flash2_at(64, small, MmaKind::mma_sync)) == MmaKind::mma_sync);
  CHECK(kernel_refusal(flash2_at(64, small, MmaKind::wgmma)).find("allowed at that tiling: mma_sync") !=
        std::string::npos);
  // A tiling nothing is built for: no family, and any family asked for is refused.
  CHECK_FALSE(forward_kernel_impl(flash2_at(64, {96, 64})).has_value());
  CHECK(kernel_refusal(flash2_at(64, {96, 64}, MmaKind::mma_sync)).find("allowed at that tiling: none") !=
        std::string::npos);
}

TEST_CASE("kernel choice: the family is the forward's, the backward's kernel its tiling's whatever it is") {
  const Tiling bwd{128, 128};
  Config c = flash2_at(64, bwd, MmaKind::mma_sync, Pass::fwdbwd);  // both passes at 128x128: mma_sync is built
  const BuiltKernel* b = built_kernel(c, Pass::bwd, bwd);
  REQUIRE(b != nullptr);
  CHECK(b->mma == MmaKind::mma_sync);
  c.kernel_impl = MmaKind::wgmma;
  CHECK(built_kernel(c, Pass::bwd, bwd) == b);  // a family asked of the forward leaves the backward's kernel
  CHECK(built_kernel(c, Pass::fwd, bwd) == nullptr);
  CHECK(built_kernel(c, KernelKind::flash2_bwd) == b);
  CHECK(built_kernel(c, KernelKind::flash2_bwd_preprocess) == nullptr);  // row kernels have no entry
}

TEST_CASE("kernel choice: a backward alone names the forward the GPU runs first (forward_tiling)") {
  Problem p;
  p.headdim = 64, p.pass = Pass::bwd;
  const Hardware h200 = hardware_preset("h200");
  const Config chosen = make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::kernel});
  CHECK(chosen.tiling == Tiling{128, 128});  // the backward's default
  const BuiltKernel* forward = default_kernel(chosen, Pass::fwd);
  REQUIRE(forward != nullptr);
  CHECK(forward_tiling(chosen) == forward->tiling);  // the forward's default, which runs first
  CHECK(forward_kernel_impl(chosen) == forward->mma);
  Config given = make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::rule, 128, 128});
  CHECK(forward_tiling(given) == Tiling{128, 128});  // both passes run a given tiling
  CHECK(forward_kernel_impl(given) == MmaKind::mma_sync);
  given.kernel_impl = MmaKind::wgmma;
  CHECK(kernel_refusal(given).find("128x128 on wgmma") != std::string::npos);
  p.pass = Pass::fwdbwd;
  const Config both = make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::kernel});
  CHECK(forward_tiling(both) == both.tiling);
}

TEST_CASE("kernel choice: a row names the family of the kernel its pass times: a backward alone its backward's, "
          "wgmma at the default tiling of a dense problem, mma_sync at a given tiling or with dropout") {
  const Hardware h200 = hardware_preset("h200");
  for (int64_t d : {64, 128}) {
    Problem p;
    p.batch = 3, p.heads = 5, p.seqlen = 1000, p.headdim = d, p.pass = Pass::bwd;
    const Config chosen = make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::kernel});
    const BuiltKernel* backward = default_kernel(chosen, Pass::bwd);
    REQUIRE(backward != nullptr);
    CHECK(backward->mma == MmaKind::wgmma);
    CHECK(backward->dense_only);
    CHECK(row_kernel_impl(chosen) == MmaKind::wgmma);
    CHECK(forward_kernel_impl(chosen) == default_kernel(chosen, Pass::fwd)->mma);  // the forward run first: wgmma_ws
    CHECK(forward_kernel_impl(chosen) != row_kernel_impl(chosen));
    // The same tiling given: its first registered backward, mma_sync (the kernels' find_impl).
    const Config given =
        make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::rule, backward->tiling.block_r, backward->tiling.block_c});
    CHECK(row_kernel_impl(given) == MmaKind::mma_sync);
    // Not dense: the dense_only default is not run, the tiling's mma_sync kernel is.
    Problem dropped = p;
    dropped.dropout = 0.25;
    const Config dropout = make_config(Algo::flash2, dropped, h200, std::nullopt, {TilingSource::kernel});
    CHECK(row_kernel_impl(dropout) == MmaKind::mma_sync);
    // A forward+backward row names its forward.
    Problem both = p;
    both.pass = Pass::fwdbwd;
    const Config fb = make_config(Algo::flash2, both, h200, std::nullopt, {TilingSource::kernel});
    CHECK(row_kernel_impl(fb) == forward_kernel_impl(fb));
  }
  // A tiling with no backward built names none; standard none.
  Config unbuilt = flash2_at(128, {128, 128}, std::nullopt, Pass::bwd);
  CHECK_FALSE(row_kernel_impl(unbuilt).has_value());
  unbuilt.algo = Algo::standard;
  CHECK_FALSE(row_kernel_impl(unbuilt).has_value());
}

TEST_CASE("kernel choice: standard and flash1 refuse a family they do not build, flash1's is mma_sync") {
  Config c = flash2_at(64, {128, 128});
  c.algo = Algo::flash1;
  CHECK(forward_kernel_impl(c) == MmaKind::mma_sync);
  for (MmaKind family : {MmaKind::wgmma, MmaKind::wgmma_ws}) {
    c.kernel_impl = family;
    CHECK(kernel_refusal(c).find("no flash1 fwd kernel") != std::string::npos);
  }
  c.kernel_impl = MmaKind::mma_sync;
  CHECK_NOTHROW(validate_kernel_impl(c));
  c.algo = Algo::standard;
  CHECK_FALSE(forward_kernel_impl(c).has_value());
  CHECK(kernel_refusal(c).find("allowed with standard: none") != std::string::npos);
  c.kernel_impl.reset();
  CHECK_NOTHROW(validate(c));
}

TEST_CASE("dense attention: causal, grouped heads, Nq != Nk and a window's right side are dense, each variant is not") {
  const Config dense = flash2_at(128, {128, 128});
  CHECK(runs_only_dense(dense));
  const auto still_dense = [&](auto set) {
    Config c = dense;
    set(c);
    return runs_only_dense(c);
  };
  CHECK(still_dense([](Config& c) { c.problem.causal = true; }));
  CHECK(still_dense([](Config& c) { c.problem.kv_heads = 1; }));
  CHECK(still_dense([](Config& c) { c.problem.seqlen_k = 4096; }));
  CHECK(still_dense([](Config& c) { c.problem.window_right = 64; }));
  CHECK(still_dense([](Config& c) { c.gqa_pack = false; }));
  CHECK_FALSE(still_dense([](Config& c) { c.problem.mask = true; }));
  CHECK_FALSE(still_dense([](Config& c) { c.problem.dropout = 0.1; }));
  CHECK_FALSE(still_dense([](Config& c) { c.problem.window_left = 64; }));
  CHECK_FALSE(still_dense([](Config& c) { c.splits = 2; }));
  CHECK_FALSE(still_dense([](Config& c) { c.page_size = 16; }));
  CHECK_FALSE(still_dense([](Config& c) {
    c.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>(2, 100)), "l"};
  }));
  CHECK_FALSE(still_dense([](Config& c) { c.problem.varlen = true; }));
  CHECK_FALSE(still_dense([](Config& c) { c.algo = Algo::blocksparse, c.block_mask = {"banded:1"}; }));
}

TEST_CASE("kernel choice over two families at one tiling: a dense_only kernel runs dense attention only") {
  const std::vector<BuiltKernel> entries = two_families();
  const Tiling t{128, 128};
  Config dense = flash2_at(128, t);
  Config dropout = dense;
  dropout.problem.dropout = 0.1;
  // Unset: the tiling's first entry that runs the configuration.
  REQUIRE(built_kernel(dense, Pass::fwd, t, entries) == &entries[0]);
  REQUIRE(built_kernel(dropout, Pass::fwd, t, entries) == &entries[1]);
  CHECK(forward_kernel_impl(dense, entries) == MmaKind::wgmma_ws);
  CHECK(forward_kernel_impl(dropout, entries) == MmaKind::wgmma);
  // Asked for: that family's, or a refusal in the kernels' words.
  dense.kernel_impl = MmaKind::wgmma;
  CHECK(built_kernel(dense, Pass::fwd, t, entries) == &entries[1]);
  dense.kernel_impl = MmaKind::wgmma_ws;
  CHECK(built_kernel(dense, Pass::fwd, t, entries) == &entries[0]);
  CHECK_NOTHROW(validate_kernel_impl(dense, entries));
  dropout.kernel_impl = MmaKind::wgmma_ws;
  CHECK(built_kernel(dropout, Pass::fwd, t, entries) == nullptr);
  const std::string refused = kernel_refusal(dropout, entries);
  CHECK(refused.find("wgmma_ws runs dense attention only") != std::string::npos);
  CHECK(refused.find("dropout") != std::string::npos);
  CHECK(refused.find("allowed for this problem at 128x128: wgmma") != std::string::npos);
  dropout.kernel_impl = MmaKind::mma_sync;
  CHECK(kernel_refusal(dropout, entries).find("allowed at that tiling: wgmma") != std::string::npos);
  // The same lookup of the catalog's own function.
  CHECK(find_built(Algo::flash2, Pass::fwd, 128, DType::fp16, t, std::nullopt, false, entries) == &entries[1]);
  CHECK(find_built(Algo::flash2, Pass::fwd, 128, DType::fp16, t, MmaKind::wgmma_ws, false, entries) == nullptr);
}

TEST_CASE("a row's kernel_impl is the family its configuration's forward runs, empty where none applies") {
  const Config wgmma = flash2_at(64, {128, 64});
  CHECK(config_row(wgmma, RowSource::model).kernel_impl == MmaKind::wgmma);
  CHECK(cell(config_row(wgmma, RowSource::model), "kernel_impl") == "wgmma");
  Config standard = wgmma;
  standard.algo = Algo::standard;
  CHECK(cell(config_row(standard, RowSource::model), "kernel_impl").empty());
  CHECK(cell(config_row(flash2_at(64, {96, 64}), RowSource::model), "kernel_impl").empty());
  for (const Row& r : rows_from_result(simulate(flash2_at(64, {64, 64}), CountMethod::formula)))
    CHECK(r.kernel_impl == MmaKind::mma_sync);  // every kernel's row and the total
}

TEST_CASE("the models take the asked family's entry: the same numbers as the tiling's first where that is it") {
  const Config unset = flash2_at(128, {128, 128});
  const Config asked = flash2_at(128, {128, 128}, MmaKind::wgmma);
  const SimResult a = simulate(unset, CountMethod::formula, TimeMethod::model);
  const SimResult b = simulate(asked, CountMethod::formula, TimeMethod::model);
  CHECK(a.time_ms == b.time_ms);
  CHECK(a.total.io_read_bytes() == b.total.io_read_bytes());
  CHECK(runs_built(asked, Pass::fwd, {128, 128}));
  CHECK_FALSE(runs_built(flash2_at(128, {128, 128}, MmaKind::mma_sync), Pass::fwd, {128, 128}));
}

TEST_CASE("tiling best picks among the asked family's built tilings") {
  Problem p;
  p.batch = 3, p.heads = 7, p.seqlen = 3000, p.headdim = 64;
  const Hardware h200 = hardware_preset("h200");
  const Config wgmma = make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::best, {}, {}, MmaKind::wgmma});
  CHECK(wgmma.tiling == Tiling{128, 64});  // d = 64's only wgmma forward
  CHECK(wgmma.kernel_impl == MmaKind::wgmma);
  const Config mma_sync =
      make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::best, {}, {}, MmaKind::mma_sync});
  CHECK(forward_kernel_impl(mma_sync) == MmaKind::mma_sync);
  CHECK_FALSE(mma_sync.tiling == Tiling{128, 64});
  try {
    make_config(Algo::flash1, p, h200, std::nullopt, {TilingSource::best, {}, {}, MmaKind::wgmma});
    FAIL("a family without kernels gave a best tiling");
  } catch (const InvalidInput& e) {
    CHECK(e.field() == Field::kernel_impl);  // the family is what has no kernel
    CHECK(e.problem().find("no flash1 fwd kernel on wgmma") != std::string::npos);
  }
}

TEST_CASE("kernel choice of a default: the asked family's, for the configuration's density") {
  // The real catalog: one default forward per (d, dtype); a family asked that it is not is refused.
  Problem p;
  p.headdim = 64;
  const Hardware h200 = hardware_preset("h200");
  const Config wgmma = make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::kernel, {}, {}, MmaKind::wgmma});
  CHECK(wgmma.tiling == Tiling{128, 64});
  try {
    make_config(Algo::flash2, p, h200, std::nullopt, {TilingSource::kernel, {}, {}, MmaKind::mma_sync});
    FAIL("d = 64 has no default forward on mma_sync");
  } catch (const InvalidInput& e) {
    CHECK(e.field() == Field::kernel_impl);
    CHECK(e.problem().find("no default flash2 fwd kernel on mma_sync for d=64 fp16; give its tiling") !=
          std::string::npos);
  }
  // Two defaults at d = 128: the warp-specialised one (dense only) before the wgmma one.
  std::vector<BuiltKernel> entries = two_families();
  entries[0].is_default = true;
  Config dense = flash2_at(128, {128, 128});
  REQUIRE(default_kernel(dense, Pass::fwd, entries) == &entries[0]);
  Config dropout = dense;
  dropout.problem.dropout = 0.1;
  CHECK(default_kernel(dropout, Pass::fwd, entries) == &entries[1]);
  dense.kernel_impl = MmaKind::wgmma;
  CHECK(default_kernel(dense, Pass::fwd, entries) == &entries[1]);
  dense.kernel_impl = MmaKind::mma_sync;
  CHECK(default_kernel(dense, Pass::fwd, entries) == nullptr);
  CHECK(default_kernel(dense, Pass::bwd, entries) == nullptr);  // the span has no backward
  CHECK(default_built(Algo::flash2, Pass::fwd, 128, DType::fp16, MmaKind::wgmma_ws, false, entries) == nullptr);
  // Listed after the wgmma default, as the registry appends the warp-specialised kernels: a dense
  // problem still takes it first (the kernels' order of preference), another the wgmma one.
  const std::vector<BuiltKernel> later = {entries[1], entries[0]};
  dense.kernel_impl.reset();
  CHECK(default_kernel(dense, Pass::fwd, later) == &later[1]);
  CHECK(default_kernel(dropout, Pass::fwd, later) == &later[0]);
}
