// The bounds (sim/bounds.h) against hand computations from their formulas: Theorem 2 with
// Algorithm 1's and 4's constants, the compulsory traffic, and both branches of Saha & Ye's
// shape, at a round shape and an awkward one.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "sim/bounds.h"
#include "sim/hardware.h"
#include "sim/simulate.h"

using namespace flashio::sim;

namespace {

std::map<RowAlgo, Bound> bounds_by_algo(const Config& c) {
  std::map<RowAlgo, Bound> by_algo;
  for (const Bound& b : bounds(c)) by_algo[b.algo] = b;
  return by_algo;
}

Config config(int64_t batch, int64_t heads, int64_t n, int64_t d, DType dtype, Pass pass,
              int64_t sram_bytes) {
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.seqlen = n;
  p.headdim = d;
  p.dtype = dtype;
  p.pass = pass;
  Config c = make_config(Algo::flash1, p, hardware_preset("h200"));
  c.sram_bytes = sram_bytes;
  return c;
}

}  // namespace

TEST_CASE("Theorem 2 at N = 1024, d = 64, M = 100 KiB fp16, forward: 8 and 4 N²d²/M",
          "[bounds]") {
  // M = 102,400 B / 2 B = 51,200 elements; N²d²/M = 1024² · 64² / 51,200 = 83,886.08 elements.
  // One head of fp16: read 8 × 83,886.08 × 2 B = 1,342,177.28 B, write 4 × ... = 671,088.64 B.
  const auto b = bounds_by_algo(config(1, 1, 1024, 64, DType::fp16, Pass::fwd, 100 * 1024));
  CHECK(b.at(RowAlgo::theorem2).read_bytes == Approx(1342177.28).epsilon(1e-12));
  CHECK(b.at(RowAlgo::theorem2).write_bytes == Approx(671088.64).epsilon(1e-12));
  // Compulsory: Q, K, V read once (3Nd), O written once (Nd): 393,216 B and 131,072 B.
  CHECK(b.at(RowAlgo::compulsory).read_bytes == 393216.0);
  CHECK(b.at(RowAlgo::compulsory).write_bytes == 131072.0);
  // M = 51,200 > d² = 4,096: Saha & Ye's N²d²/M branch, 83,886.08 elements = 167,772.16 B.
  CHECK(b.at(RowAlgo::saha_ye).read_bytes == Approx(167772.16).epsilon(1e-12));
  CHECK(b.at(RowAlgo::saha_ye).write_bytes == 0);
}

TEST_CASE("Theorem 2 at B = 3, H = 5, N = 97, d = 40, M = 1000 B fp32, forward and backward: "
          "24 and 8 N²d²/M", "[bounds]") {
  // M = 1000 B / 4 B = 250 elements; N²d²/M = 97² · 40² / 250 = 60,217.6 elements per head.
  // fwd 8 + bwd 16 read, fwd 4 + bwd 4 written; 15 heads × 4 B = 60 B per element:
  // read 24 × 60,217.6 × 60 = 86,713,344 B, write 8 × 60,217.6 × 60 = 28,904,448 B.
  const auto b = bounds_by_algo(config(3, 5, 97, 40, DType::fp32, Pass::fwdbwd, 1000));
  CHECK(b.at(RowAlgo::theorem2).read_bytes == Approx(86713344.0).epsilon(1e-12));
  CHECK(b.at(RowAlgo::theorem2).write_bytes == Approx(28904448.0).epsilon(1e-12));
  // Compulsory: fwd 3Nd + bwd 5Nd read, fwd Nd + bwd 3Nd written; Nd = 3,880:
  // 8 × 3,880 × 60 = 1,862,400 B and 4 × 3,880 × 60 = 931,200 B.
  CHECK(b.at(RowAlgo::compulsory).read_bytes == 1862400.0);
  CHECK(b.at(RowAlgo::compulsory).write_bytes == 931200.0);
  // M = 250 < d² = 1,600: the N²d/√M branch, 97² · 40 / √250 = 23,803.0964... elements per
  // pass; two passes × 60 B = 2,856,371.568... B.
  CHECK(b.at(RowAlgo::saha_ye).read_bytes == Approx(2856371.5684343).epsilon(1e-12));
}

TEST_CASE("Theorem 2's backward alone carries Algorithm 4's constants, 16 and 4 N²d²/M",
          "[bounds]") {
  // N = 1024, d = 64, M = 100 KiB fp16 as above, one head: 16 × 83,886.08 × 2 B read,
  // 4 × 83,886.08 × 2 B written.
  const auto b = bounds_by_algo(config(1, 1, 1024, 64, DType::fp16, Pass::bwd, 100 * 1024));
  CHECK(b.at(RowAlgo::theorem2).read_bytes == Approx(2684354.56).epsilon(1e-12));
  CHECK(b.at(RowAlgo::theorem2).write_bytes == Approx(671088.64).epsilon(1e-12));
}

TEST_CASE("blocksparse's bounds come from its mask: the compulsory traffic counts the queries and keys "
          "with a kept score, Theorem 2 scales by the density (Proposition 4), and the schedule's io "
          "never falls below the compulsory bound at any tiling") {
  const std::string path = "test_bounds_empty_row.mask";
  {
    std::ofstream f(path);
    f << "100\n000\n001\n";  // 3 × 3 blocks: queries 128-255 and keys 128-255 have no kept score
  }
  Problem p;
  p.batch = 2, p.heads = 3, p.seqlen = 3 * 128 - 11, p.headdim = 40, p.pass = Pass::fwdbwd;
  Config c = make_config(Algo::blocksparse, p, hardware_preset("h200"));
  c.block_mask.text = path;
  const double n = static_cast<double>(p.seqlen), d = 40, scale = 2.0 * 3 * 2;  // B·H · 2 bytes
  const double kept = n - 128;  // queries (and keys) with a kept score
  const auto b = bounds_by_algo(c);
  CHECK(b.at(RowAlgo::compulsory).read_bytes == Approx(((kept + 2 * kept) + (3 * kept + 2 * kept)) * d * scale));
  CHECK(b.at(RowAlgo::compulsory).write_bytes == Approx((n + 3 * n) * d * scale));
  Config dense = c;
  dense.block_mask.text.clear();
  const auto bd = bounds_by_algo(dense);
  CHECK(b.at(RowAlgo::theorem2).read_bytes == Approx(bd.at(RowAlgo::theorem2).read_bytes * 2.0 / 9.0));
  CHECK(b.at(RowAlgo::compulsory).formula.find("nonzero blocks of 128 tokens") != std::string::npos);
  std::remove(path.c_str());
  // The formula names the mask's own block size.
  Config small = c;
  small.block_mask.text = "banded:1@16";
  CHECK(bounds_by_algo(small).at(RowAlgo::compulsory).formula.find("nonzero blocks of 16 tokens") != std::string::npos);

  for (const char* spec : {"banded:0", "banded:1", "random:0.3:5"})
    for (int64_t n2 : {130, 517, 1000})
      for (bool causal : {false, true})
        for (const auto& [br, bc] : {std::pair<int64_t, int64_t>{16, 64}, {64, 16}, {96, 40}, {256, 256}}) {
          Problem q;
          q.batch = 1, q.heads = 2, q.seqlen = n2, q.headdim = 32, q.causal = causal, q.pass = Pass::fwdbwd;
          Config s = make_config(Algo::blocksparse, q, hardware_preset("h200"));
          s.block_mask.text = spec;
          s.tiling = {br, bc};
          CAPTURE(spec, n2, causal, br, bc);
          const SimResult r = simulate(s, CountMethod::formula);
          const Bound comp = bounds_by_algo(s).at(RowAlgo::compulsory);
          CHECK(static_cast<double>(r.total.io_read_bytes()) >= comp.read_bytes);
          CHECK(static_cast<double>(r.total.io_write_bytes()) >= comp.write_bytes);
        }
}

TEST_CASE("blocksparse's FLOP convention counts the scores its mask keeps: banded:0 at N = 300 keeps the three "
          "diagonal blocks (128, 128, 44 tokens), causal half of each (causal's convention), and a dense mask is flash2's, causal and not") {
  Problem p;
  p.batch = 3, p.heads = 5, p.seqlen = 300, p.headdim = 64, p.pass = Pass::fwdbwd;
  Config c = make_config(Algo::blocksparse, p, hardware_preset("h200"));
  c.block_mask = BlockMaskSpec{"banded:0"};
  const double per_score = 4.0 * 3 * 5 * 64 * 3.5;  // fwd + 2.5 bwd
  CHECK(convention_flops(c) == Approx(per_score * (128.0 * 128 + 128.0 * 128 + 44.0 * 44)));
  c.problem.causal = true;
  CHECK(convention_flops(c) == Approx(per_score * (128.0 * 128 / 2 * 2 + 44.0 * 44 / 2)));
  c.block_mask = BlockMaskSpec{""};
  for (bool causal : {false, true}) {
    c.problem.causal = causal;
    Problem q = p;
    q.causal = causal;
    CHECK(convention_flops(c) == Approx(convention_flops(make_config(Algo::flash2, q, hardware_preset("h200")))));
  }
  c.problem.causal = false;
  // And the rows say so: simulate's total row carries it.
  c.block_mask = BlockMaskSpec{"banded:0"};
  CHECK(simulate(c, CountMethod::formula).convention_flops == Approx(per_score * (128.0 * 128 + 128.0 * 128 + 44.0 * 44)));
}
