// The model's kernel identities and its catalog of built kernels (sim/kernel_kind.h,
// sim/kernel_catalog.h), the committed occupancy data, and a configuration whose passes run
// different tilings (Config::bwd_tiling, what --tiling kernel gives where the defaults differ).
#include <catch2/catch.hpp>

#include <set>

#include "sim/cache_replay.h"
#include "sim/config.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_kind.h"
#include "sim/schedule.h"
#include "sim/simulate.h"

using namespace flashio::sim;

TEST_CASE("kernel kinds: every kind has one spelling that parses back, and an unknown one is refused") {
  std::set<std::string> spellings;
  for (KernelKind k : all_kernel_kinds()) {
    const std::string s = to_string(k);
    CHECK(parse_kernel_kind(s) == k);
    spellings.insert(s);
  }
  CHECK(spellings.size() == all_kernel_kinds().size());
  CHECK_FALSE(parse_kernel_kind("total").has_value());
  CHECK_FALSE(parse_kernel_kind("flash3_fwd").has_value());
}

TEST_CASE("kernel kinds: every schedule's kernels belong to its algorithm and pass, for every algorithm x pass") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2, Algo::blocksparse})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) {
      Problem p;
      p.seqlen = 97, p.headdim = 40, p.pass = pass;
      p.mask = algo == Algo::standard;
      p.dropout = algo == Algo::standard ? 0.1 : 0.0;
      Config c = make_config(algo, p, hardware_preset("h200"));
      if (algo == Algo::blocksparse) c.block_mask = {"banded:1"};
      for (const KernelSchedule& k : build_schedule(c)) {
        INFO(to_string(algo) << " " << to_string(pass) << " " << to_string(k.kind));
        CHECK(algo_of(k.kind) == algo);
        CHECK((pass == Pass::fwdbwd || pass_of(k.kind) == pass));
        CHECK(k.head_counts);  // a closed form beside every loop nest
      }
    }
}

TEST_CASE("catalog: one default per (algo, pass, d, dtype) that has kernels (and a dense-only one beside it), each "
          "tiling fitting the H200's M") {
  const int64_t h200_sram = hardware_preset("h200").sram_bytes;
  std::set<std::tuple<Algo, Pass, int64_t, DType>> with_kernels, with_default, with_dense_default;
  for (const BuiltKernel& k : built_kernels()) {
    with_kernels.insert({k.algo, k.pass, k.headdim, k.dtype});
    if (k.is_default)
      CHECK((k.dense_only ? with_dense_default : with_default).insert({k.algo, k.pass, k.headdim, k.dtype}).second);
    // One entry per tiling and family (two families may share a tiling: sim/kernel_choice.h).
    CHECK(find_built(k.algo, k.pass, k.headdim, k.dtype, k.tiling, k.mma) == &k);
    // Backward kernels are mma_sync or wgmma (none warp-specialised yet); a wgmma one runs dense
    // problems only, beside an mma_sync one of its tiling for the variants.
    if (k.pass == Pass::bwd) CHECK(k.mma != MmaKind::wgmma_ws);
    if (k.pass == Pass::bwd && k.mma == MmaKind::wgmma) {
      CHECK(k.dense_only);
      CHECK(find_built(k.algo, k.pass, k.headdim, k.dtype, k.tiling, MmaKind::mma_sync) != nullptr);
    }
    CHECK(k.smem_bytes <= h200_sram);
    CHECK(k.threads % 32 == 0);
    CHECK((k.stages == 1 || k.stages == 2));
  }
  CHECK(with_kernels == with_default);
  CHECK(find_built(Algo::flash2, Pass::fwd, 64, DType::fp16, {96, 64}) == nullptr);
  CHECK(built_tilings_text(Algo::blocksparse, Pass::fwd) == "none");
}

TEST_CASE("occupancy data: every committed entry names a built kernel launch of its tiling") {
  REQUIRE(!measured_occupancy().empty());
  for (const MeasuredOccupancy& m : measured_occupancy()) {
    const auto kind = parse_kernel_kind(m.kernel);
    REQUIRE(kind.has_value());
    INFO(m.kernel << " d=" << m.headdim << " " << m.tiling.block_r << "x" << m.tiling.block_c);
    CHECK(find_built(algo_of(*kind), pass_of(*kind), m.headdim, m.dtype, m.tiling) != nullptr);
    CHECK(m.blocks_per_sm >= 1);
  }
}

TEST_CASE("occupancy csv: malformed files are refused naming the file and line") {
  const std::string header = occupancy_csv_header() + "\n";
  CHECK(parse_occupancy_csv("# a comment\n" + header + "h200,flash2_fwd,64,fp16,128,64,2\n", "f").size() == 1);
  CHECK_THROWS_WITH(parse_occupancy_csv("", "f"), Catch::Matchers::Contains("f: empty"));
  CHECK_THROWS_WITH(parse_occupancy_csv("hw,kernel\n", "f"), Catch::Matchers::Contains("f:1: the header"));
  CHECK_THROWS_WITH(parse_occupancy_csv(header + "h200,flash9_fwd,64,fp16,128,64,2\n", "f"),
                    Catch::Matchers::Contains("f:2: unknown kernel 'flash9_fwd'"));
  CHECK_THROWS_WITH(parse_occupancy_csv(header + "h200,flash2_fwd,64,fp8,128,64,2\n", "f"),
                    Catch::Matchers::Contains("f:2: dtype"));
  CHECK_THROWS_WITH(parse_occupancy_csv(header + "h200,flash2_fwd,64,fp16,128,64,0\n", "f"),
                    Catch::Matchers::Contains("blocks_per_sm must be a positive integer"));
  CHECK_THROWS_WITH(parse_occupancy_csv(header + "h200,flash2_fwd,64,fp16,128\n", "f"),
                    Catch::Matchers::Contains("expected 7 fields, got 5"));
}

TEST_CASE("a backward tiling: fwdbwd counts are the forward's with the forward tiling plus the backward's with its own") {
  Problem p;
  p.batch = 2, p.heads = 3, p.seqlen = 1000, p.headdim = 128, p.pass = Pass::fwdbwd, p.causal = true;
  const Hardware hw = hardware_preset("h200");
  const Config c = make_config(Algo::flash2, p, hw, std::nullopt, {TilingSource::kernel});
  REQUIRE(c.bwd_tiling.has_value());
  CHECK(c.tiling_source == TilingSource::kernel);
  for (CountMethod method : {CountMethod::formula, CountMethod::walk}) {
    const SimResult both = simulate(c, method);
    const SimResult fwd = simulate(pass_config(c, Pass::fwd), method);
    const SimResult bwd = simulate(pass_config(c, Pass::bwd), method);
    CHECK(pass_config(c, Pass::bwd).tiling == *c.bwd_tiling);
    REQUIRE(both.kernels.size() == fwd.kernels.size() + bwd.kernels.size());
    for (size_t i = 0; i < both.kernels.size(); ++i)
      CHECK(both.kernels[i] == (i < fwd.kernels.size() ? fwd.kernels[i] : bwd.kernels[i - fwd.kernels.size()]));
  }
  // execute runs one tiling: it says so rather than counting a different schedule.
  Problem tiny = p;
  tiny.batch = 1, tiny.heads = 1, tiny.seqlen = 130;
  const Config small = make_config(Algo::flash2, tiny, hw, std::nullopt, {TilingSource::kernel});
  CHECK_THROWS_AS(simulate(small, CountMethod::execute), InvalidInput);
  // A given tiling is the one both passes run.
  const Config given = make_config(Algo::flash2, p, hw, std::nullopt, {TilingSource::kernel, 64, std::nullopt});
  CHECK(given.tiling_source == TilingSource::given);
  CHECK_FALSE(given.bwd_tiling.has_value());
}

TEST_CASE("the L2 model takes each pass's kernels' measured occupancy with that pass's tiling") {
  Problem p;
  p.batch = 1, p.heads = 2, p.seqlen = 256, p.headdim = 128, p.pass = Pass::fwdbwd;
  const Config c = make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt, {TilingSource::kernel});
  REQUIRE(c.bwd_tiling == Tiling{64, 128});
  const CacheResult r = replay_cache(c);
  for (const KernelCacheResult& k : r.kernels) {
    const int64_t measured = measured_blocks_per_sm(pass_config(c, pass_of(k.kind)), k.kind);
    INFO(to_string(k.kind));
    if (measured > 0) CHECK(k.blocks_per_sm == measured);
  }
  CHECK(measured_blocks_per_sm(c, KernelKind::flash2_fwd) == 1);  // 128x128 at d=128: one block per SM
}

TEST_CASE("catalog: the loads a built kernel's step waits for in turn follow its code: flash1 forward one round "
          "a step (every slice's loads before any use), flash1 backward one float4 per thread and round of dq_accum, "
          "none in flash2") {
  const BuiltKernel* f1_64x32 = find_built(Algo::flash1, Pass::fwd, 64, DType::fp16, {64, 32});      // 4 warps
  const BuiltKernel* f1_128x64 = find_built(Algo::flash1, Pass::fwd, 64, DType::fp16, {128, 64});    // 8 warps
  const BuiltKernel* f1_128x128 = find_built(Algo::flash1, Pass::fwd, 128, DType::fp16, {128, 128});  // 8 warps
  const BuiltKernel* b1 = find_built(Algo::flash1, Pass::bwd, 64, DType::fp16, {128, 128});           // 256 threads
  const BuiltKernel* f2 = find_built(Algo::flash2, Pass::fwd, 64, DType::fp16, {64, 64});
  REQUIRE(f1_64x32 != nullptr);
  REQUIRE(f1_128x64 != nullptr);
  REQUIRE(f1_128x128 != nullptr);
  REQUIRE(b1 != nullptr);
  REQUIRE(f2 != nullptr);
  CHECK(dependent_load_rounds(*f1_64x32, Tensor::o_accum, 64, 64) == 1);
  CHECK(dependent_load_rounds(*f1_128x64, Tensor::o_accum, 128, 64) == 1);  // four slices a warp, one round
  CHECK(dependent_load_rounds(*f1_128x64, Tensor::o_accum, 5, 64) == 1);    // a ragged last row tile of 5 rows
  CHECK(dependent_load_rounds(*f1_128x128, Tensor::o_accum, 128, 128) == 1);
  CHECK(dependent_load_rounds(*f1_128x64, Tensor::Q, 128, 64) == 0);      // streamed by cp.async
  CHECK(dependent_load_rounds(*b1, Tensor::dq_accum, 128, 64) == 8);      // 128·64/4 float4 over 256 threads
  CHECK(dependent_load_rounds(*b1, Tensor::dq_accum, 97, 64) == 7);       // ⌈97·64/4 / 256⌉
  CHECK(dependent_load_rounds(*f2, Tensor::Q, 64, 64) == 0);
  CHECK(fragments_overlap_mma(*f1_64x32));
  CHECK(fragments_overlap_mma(*f2));
  CHECK_FALSE(fragments_overlap_mma(*b1));
  const BuiltKernel* wgmma = find_built(Algo::flash2, Pass::fwd, 64, DType::fp16, {128, 64});
  REQUIRE(wgmma != nullptr);
  CHECK_FALSE(fragments_overlap_mma(*wgmma));  // no ldmatrix: wgmma reads shared memory itself
}

TEST_CASE("catalog: standard's row kernels have in flight the groups their compiled loops issue before waiting") {
  // softmax: the whole row at once (no limit below the block's reads).
  CHECK(row_kernel_bytes_in_flight(KernelKind::softmax, 256, 1024, 2) == 0);
  CHECK(row_kernel_bytes_in_flight(KernelKind::softmax, 256, 16384, 2) == 0);
  CHECK(row_kernel_bytes_in_flight(KernelKind::mask, 256, 16384, 2) == 256 * 4 * 2);
  // softmax_bwd: 4 chunks of 16 bytes of P and of dP per thread; N = 4096 has 512 chunks, 2 a thread.
  CHECK(row_kernel_bytes_in_flight(KernelKind::softmax_bwd, 256, 16384, 2) == 2 * 256 * 4 * 16);
  CHECK(row_kernel_bytes_in_flight(KernelKind::softmax_bwd, 256, 4096, 2) == 2 * 256 * 2 * 16);
  CHECK(row_kernel_bytes_in_flight(KernelKind::softmax_bwd, 256, 1000, 2) == 2 * 256 * 1 * 16);  // 125 chunks
  CHECK(row_kernel_bytes_in_flight(KernelKind::dropout, 256, 4096, 2) == 256 * 2);
  CHECK(row_kernel_bytes_in_flight(KernelKind::rowsum_do_o, 128, 4096, 2) == 128 * 2 * 16);
  CHECK(row_kernel_bytes_in_flight(KernelKind::flash2_fwd, 128, 4096, 2) == 0);
  CHECK(row_kernel_bytes_in_flight(KernelKind::gemm_qk, 256, 4096, 2) == 0);
}
