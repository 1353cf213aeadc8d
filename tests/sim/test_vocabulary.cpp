// The model's vocabulary: tiling rule and fit rule, hardware presets and files, block masks,
// FLOP convention, extra memory (Theorem 1).
#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "sim/block_mask.h"
#include "sim/config.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/simulate.h"

using namespace flashio::sim;

TEST_CASE("the paper's rule: flash1 Bc = ceil(M/4d), Br = min(Bc, d), flash2 transposed") {
  Problem p;
  p.headdim = 64;
  // M = 192 KB (the paper's A100 analysis) in fp16: 96000 elements; M/4d = 375.
  const Tiling f1 = rule_tiling(Algo::flash1, p, 192000);
  CHECK(f1 == Tiling{64, 375});
  const Tiling f2 = rule_tiling(Algo::flash2, p, 192000);
  CHECK(f2 == Tiling{375, 64});
  // Small M: square tiles; the ceiling would overshoot M, so the floor keeps the fit rule.
  const Tiling small = rule_tiling(Algo::flash1, p, 2 * (4 * 64 * 10 + 5));  // M = 2565 elem
  CHECK(tiling_fits(p, small, 2 * (4 * 64 * 10 + 5)));
}

TEST_CASE("a rule-chosen tiling always fits, an explicit one that does not is rejected") {
  Problem p;
  for (int64_t d : {16, 40, 64, 128})
    for (int64_t sram : {4096, 10000, 65536, 232448}) {
      p.headdim = d;
      if (sram / 2 < d) continue;
      for (Algo a : {Algo::flash1, Algo::flash2})
        CHECK(tiling_fits(p, rule_tiling(a, p, sram), sram));
    }
  p.headdim = 128;
  CHECK_THROWS_AS(validate_tiling(p, {256, 256}, 232448), InvalidInput);
  CHECK_THROWS_AS(validate_tiling(p, {1, 1}, 100), InvalidInput);  // M < d
}

TEST_CASE("hardware presets carry the H200 figures read off the device, files load and fail") {
  const Hardware h = hardware_preset("h200");
  CHECK(h.sm_count == 132);
  CHECK(h.l2_bytes == 62914560);
  CHECK(h.sram_bytes == 232448);
  CHECK_THROWS_AS(hardware_preset("tpu"), InvalidInput);
  const std::string path = "test_hw_file.txt";
  {
    std::ofstream f(path);
    f << "# a small GPU\nname = tiny\nsram_bytes = 49152\nsm_count = 4\nl2_bytes = 1048576\n"
         "hbm_bytes_per_s = 1e11\ntensor_flops_per_s = 1e13\ncuda_core_flops_per_s = 1e12\n"
         "exp_per_s = 1e11\n";
  }
  const Hardware t = resolve_hardware(path);
  CHECK(t.name == "tiny");
  CHECK(t.smem_per_sm_bytes == 49152);
  CHECK(t.l2_partitions == 1);  // a file that does not say has one L2
  CHECK(h.l2_partitions == 2);  // the presets: two partitions (whitepapers)
  {
    std::ofstream f(path, std::ios::app);
    f << "l2_partitions = 2\n";
  }
  CHECK(resolve_hardware(path).l2_partitions == 2);
  {
    std::ofstream f(path);
    f << "name = bad\nsm_count = four\n";
  }
  CHECK_THROWS_WITH(load_hardware_file(path), Catch::Contains(":2:"));
  std::remove(path.c_str());
}

namespace {
Problem of_length(int64_t n, bool causal = false) {
  Problem p;
  p.seqlen = n;
  p.causal = causal;
  return p;
}
}  // namespace

TEST_CASE("block masks: on blocks of 128 tokens, banded keeps |i-j| <= W, random is seeded and keeps "
          "the diagonal, causal drops the blocks above it") {
  BlockMask band({"banded:1"}, of_length(5 * 128 - 7));  // 5 × 5 blocks, the last one 121 tokens
  CHECK(band.blocks() == 5);
  CHECK(band.nonzero_count() == 5 + 4 + 4);
  CHECK(band.keeps(0, 255));
  CHECK(!band.keeps(0, 256));
  CHECK(band.kept_queries() == 5 * 128 - 7);
  BlockMask causal_band({"banded:1"}, of_length(5 * 128 - 7, true));
  CHECK(causal_band.nonzero_count() == 5 + 4);
  CHECK(!causal_band.keeps(0, 1));
  CHECK(causal_band.keeps(129, 0));
  CHECK(causal_band.density() == Approx(9.0 / 15.0));
  BlockMask r1({"random:0.25:3"}, of_length(20 * 128)), r2({"random:0.25:3"}, of_length(20 * 128));
  for (int i = 0; i < 20; ++i) {
    CHECK(r1.nonzero(i, i));
    for (int j = 0; j < 20; ++j) CHECK(r1.nonzero(i, j) == r2.nonzero(i, j));
  }
  // A rectangle of queries × keys overlaps a nonzero block or not, at any edges.
  CHECK(band.overlaps_nonzero(0, 16, 240, 272));   // keys 240-271 reach block 1 (|0 − 1| ≤ 1)
  CHECK(!band.overlaps_nonzero(0, 16, 256, 300));  // block 2 only: |0 − 2| > 1
  CHECK(band.overlaps_nonzero(120, 136, 380, 400));  // query block 1 meets key block 2
  // @T: blocks of T tokens (a small problem's mask; the teaching view's N = 64).
  BlockMask small({"banded:1@16"}, of_length(80));
  CHECK(small.block_tokens() == 16);
  CHECK(small.blocks() == 5);
  CHECK(small.nonzero_count() == 13);
  CHECK(small.keeps(0, 31));
  CHECK(!small.keeps(0, 32));
  CHECK(block_mask_tokens({"random:0.5:3@40"}) == 40);
  CHECK(block_mask_tokens({"banded:2"}) == 128);
  CHECK_THROWS_AS(BlockMask({"banded:1@0"}, of_length(2)), InvalidInput);
  CHECK_THROWS_AS(BlockMask({"banded:1@x"}, of_length(2)), InvalidInput);
  CHECK_THROWS_AS(BlockMask({"banded:x"}, of_length(2)), InvalidInput);
  CHECK_THROWS_AS(BlockMask({"random:1.5"}, of_length(2)), InvalidInput);
  CHECK_THROWS_AS(BlockMask({"no/such/file"}, of_length(2)), InvalidInput);
}

TEST_CASE("FLOP convention: 4BHN²d forward, 2.5x backward, 3.5x both, halved when causal") {
  Problem p;
  p.batch = 2; p.heads = 3; p.seqlen = 100; p.headdim = 8;
  const double fwd = 4.0 * 2 * 3 * 100 * 100 * 8;
  CHECK(convention_flops(p) == fwd);
  p.pass = Pass::bwd;
  CHECK(convention_flops(p) == 2.5 * fwd);
  p.pass = Pass::fwdbwd;
  p.causal = true;
  CHECK(convention_flops(p) == 0.5 * 3.5 * fwd);
}

TEST_CASE("extra memory (Theorem 1): N² matrices for standard, O(N) statistics for flash2") {
  Problem p;
  p.batch = 1; p.heads = 1; p.seqlen = 1000; p.headdim = 64;
  const Hardware hw = hardware_preset("h200");
  CHECK(extra_memory_bytes(make_config(Algo::standard, p, hw)) == 2 * 1000 * 1000 * 2);  // S, P
  CHECK(extra_memory_bytes(make_config(Algo::flash2, p, hw)) == 1000 * 4);  // log-sum-exp
  // flash1 keeps l, m and its fp32 running output.
  CHECK(extra_memory_bytes(make_config(Algo::flash1, p, hw)) == 2 * 1000 * 4 + 1000 * 64 * 4);
}

TEST_CASE("causal skips tiles wholly above the diagonal and halves tensor FLOPs roughly") {
  Problem p;
  p.batch = 1; p.heads = 1; p.seqlen = 4096; p.headdim = 64;
  Config c = make_config(Algo::flash2, p, hardware_preset("h200"));
  c.tiling = {128, 128};
  const auto dense = closed_form_counts(c)[0].counts.flops.tensor;
  c.problem.causal = true;
  const auto causal = closed_form_counts(c)[0].counts.flops.tensor;
  // 32 row tiles: 32·33/2 = 528 of 1024 tiles visited, diagonal tiles whole.
  CHECK(causal * 1024 == dense * 528);
}
