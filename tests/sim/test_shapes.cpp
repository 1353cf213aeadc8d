// Grouped-query attention and Nq != Nk (docs/shapes.md): execute equals the dense reference (dK,
// dV summed over each group's query heads), the walk and the closed form count exactly what
// execute counts, packing a group's rows reads each K/V tile once for the group, and the bounds
// count K/V per K/V head.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "sim/bounds.h"
#include "sim/execute.h"
#include "sim/simulate.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

using test::check_group_reference;
using test::scaled_error;
using test::shaped_config;

void check_counts(const Config& c, const ExecuteResult& r) {
  const std::vector<KernelCounts> walked = walk_counts(c), formula = closed_form_counts(c);
  REQUIRE(r.kernels.size() == walked.size());
  REQUIRE(formula.size() == walked.size());
  for (size_t k = 0; k < walked.size(); ++k) {
    INFO("kernel " << to_string(walked[k].kind) << "\n  walk:    " << describe(walked[k].counts)
                   << "\n  execute: " << describe(r.kernels[k].counts) << "\n  formula: " << describe(formula[k].counts));
    CHECK(r.kernels[k] == walked[k]);
    CHECK(formula[k] == walked[k]);
  }
}

int64_t read_bytes(const Config& c, Tensor t) {
  int64_t bytes = 0;
  for (const KernelCounts& k : closed_form_counts(c)) bytes += k.counts.of(t).read_bytes;
  return bytes;
}

}  // namespace

TEST_CASE("with grouped-query attention and Nq != Nk, execute equals the dense reference (dK, dV "
          "summed over the group) and counts what the walk and the closed form count",
          "[shapes]") {
  struct Shape {
    int64_t heads, kv_heads, nq, nk;
  };
  const Shape shapes[] = {{4, 1, 1, 97}, {4, 2, 3, 33}, {8, 2, 17, 17}, {3, 3, 20, 47}, {6, 3, 33, 20}, {2, 1, 40, 129}};
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2})
    for (const Shape& s : shapes)
      for (bool causal : {false, true})
        for (bool pack : {false, true})
          for (auto [br, bc] : {std::pair<int64_t, int64_t>{16, 8}, {7, 32}}) {
            if (causal && s.nk < s.nq) continue;  // refused: the first queries see no key
            const Config c = shaped_config(algo, Pass::fwdbwd, 2, s.heads, s.kv_heads, s.nq, s.nk, 16, br, bc, causal, pack);
            CAPTURE(to_string(algo), s.heads, s.kv_heads, s.nq, s.nk, causal, pack, br, bc);
            const ExecuteResult r = execute(c, 5);
            check_group_reference(c, r);
            check_counts(c, r);
          }
}

TEST_CASE("causal with Nq != Nk is aligned bottom-right: the last query sees every key, the first "
          "Nk − Nq + 1 of them",
          "[shapes]") {
  Config c = shaped_config(Algo::flash2, Pass::fwd, 1, 1, 1, 4, 10, 8, 16, 16, true, true);
  const ScoreMask keep = kept_scores(c, 0);
  REQUIRE(keep.rows() == 4);
  REQUIRE(keep.cols() == 10);
  CHECK(keep.row(0).count() == 7);
  CHECK(keep.row(3).count() == 10);
  // The convention's FLOPs count Nq·Nk − Nq²/2 scores: 40 − 8 = 32 of 40.
  c.problem.causal = false;
  const double full = convention_flops(c.problem);
  c.problem.causal = true;
  CHECK(convention_flops(c.problem) == Approx(full * 32.0 / 40.0));
}

TEST_CASE("packing a group's rows reads each K/V tile once for the group's g query heads, and without "
          "packing every query head reads its group's K/V",
          "[shapes]") {
  // Decode-like: one query per head, 8 query heads per K/V head, every head's rows one tile.
  const int64_t heads = 32, kv_heads = 4, nk = 4096, d = 128;
  const Config packed = shaped_config(Algo::flash2, Pass::fwd, 2, heads, kv_heads, 1, nk, d, 64, 128, false, true);
  const Config plain = shaped_config(Algo::flash2, Pass::fwd, 2, heads, kv_heads, 1, nk, d, 64, 128, false, false);
  const int64_t kv_bytes = 2 * kv_heads * nk * d * 2;  // B · Hkv · Nk · d · 2 bytes
  CHECK(read_bytes(packed, Tensor::K) == kv_bytes);
  CHECK(read_bytes(plain, Tensor::K) == kv_bytes * (heads / kv_heads));
  // The compulsory bound reads K and V once per K/V head: the packed schedule meets it.
  for (const Bound& b : bounds(packed))
    if (b.algo == RowAlgo::compulsory) {
      const double q = 2.0 * heads * d * 2, kv = 2.0 * kv_bytes;
      CHECK(b.read_bytes == Approx(q + kv));
      int64_t io_read = 0;
      for (const KernelCounts& k : closed_form_counts(packed)) io_read += k.counts.io_read_bytes();
      CHECK(static_cast<double>(io_read) == Approx(b.read_bytes));
    }
}

TEST_CASE("grouped-query attention's io never falls below the compulsory bound", "[shapes]") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2})
    for (int64_t kv : {1, 2, 8})
      for (bool pack : {false, true})
        for (int64_t nk : {100, 1000}) {
          const Config c = shaped_config(algo, Pass::fwdbwd, 3, 8, kv, 97, nk, 64, 64, 64, true, pack);
          CAPTURE(to_string(algo), kv, pack, nk);
          double io = 0;
          for (const KernelCounts& k : closed_form_counts(c))
            io += static_cast<double>(k.counts.io_read_bytes() + k.counts.io_write_bytes());
          for (const Bound& b : bounds(c))
            if (b.algo == RowAlgo::compulsory) CHECK(io >= b.read_bytes + b.write_bytes);
        }
}

TEST_CASE("the L2 model: without packing the g query heads of a group read its K/V from L2, so DRAM "
          "sees K and V about once per K/V head, as with packing",
          "[shapes][cache]") {
  // Decode-like, on the H200's L2: query heads of a group run in adjacent blocks (grid head
  // order), so the second to g-th reads of a K/V tile find it in L2.
  const int64_t batch = 2, heads = 16, kv_heads = 2, nk = 2048, d = 128;
  const int64_t kv_bytes = 2 * batch * kv_heads * nk * d * 2;  // K and V, once per K/V head
  for (bool pack : {false, true}) {
    Config c = shaped_config(Algo::flash2, Pass::fwd, batch, heads, kv_heads, 3, nk, d, 64, 128, false, pack);
    c.hw = hardware_preset("h200");
    CAPTURE(pack);
    const SimResult r = simulate(c, CountMethod::cache);
    const double io_read = static_cast<double>(r.total.io_read_bytes());
    const double dram_read = static_cast<double>(r.total_dram.read_bytes);
    if (!pack) CHECK(io_read >= 0.99 * (heads / kv_heads) * kv_bytes);  // io: g reads of K/V
    // dram: K/V once (± the Q, O rows and a few lines), not g times.
    CHECK(dram_read >= 0.99 * kv_bytes);
    CHECK(dram_read <= 1.05 * kv_bytes);
  }
}
