// A paged KV cache (docs/shapes.md, "Paged KV cache"): execute gathers K and V through the block
// table and still equals the dense reference; the walk and the closed form count what it counts,
// the table's entries per tile included; the table is a permutation; the L2 model reads the
// scattered pages once; bad page sizes are refused naming the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/paged_kv.h"
#include "sim/simulate.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

Config paged_config(int64_t batch, int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk, int64_t d, int64_t br,
                    int64_t bc, bool causal, bool pack, int64_t page, int64_t splits) {
  Config c = test::shaped_config(Algo::flash2, Pass::fwd, batch, heads, kv_heads, nq, nk, d, br, bc, causal, pack);
  c.page_size = page;
  c.splits = splits;
  return c;
}

int64_t table_bytes(const std::vector<KernelCounts>& ks) {
  int64_t b = 0;
  for (const KernelCounts& k : ks) b += k.counts.of(Tensor::block_table).read_bytes;
  return b;
}

}  // namespace

TEST_CASE("paged KV: the block table is a permutation of the B·ceil(Nk/P) pages, and pages_touched counts "
          "the pages a key range meets",
          "[paged]") {
  for (const auto [batch, keys, page] : {std::tuple{1, 1, 16}, {3, 1000, 16}, {8, 32769, 256}, {5, 97, 48}, {2, 64, 64}}) {
    const PageTable t = page_table(batch, keys, page);
    CAPTURE(batch, keys, page);
    CHECK(t.pages_per_sequence == (keys + page - 1) / page);
    std::set<int64_t> seen;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t p = 0; p < t.pages_per_sequence; ++p) {
        const int64_t phys = t.physical(b, p);
        CHECK(phys >= 0);
        CHECK(phys < t.pages);
        seen.insert(phys);
      }
    CHECK(static_cast<int64_t>(seen.size()) == t.pages);
  }
  CHECK(pages_touched(0, 64, 16) == 4);   // P < Bc: a tile gathers four pages
  CHECK(pages_touched(64, 64, 256) == 1);  // a page holds four tiles
  CHECK(pages_touched(32, 64, 48) == 2);   // keys 32..95 meet pages 0 and 1
  CHECK(pages_touched(40, 1, 16) == 1);
  CHECK(pages_touched(40, 0, 16) == 0);
}

TEST_CASE("paged KV: execute gathers K and V through the block table and equals the dense reference, and the "
          "walk and the closed form count what execute counts (awkward shapes, pages smaller and larger than "
          "a tile, splits, causal, packed and not)",
          "[paged]") {
  struct Shape {
    int64_t heads, kv_heads, nq, nk, br, bc;
    bool causal;
    int64_t page, splits;
  };
  const Shape shapes[] = {
      {4, 1, 1, 97, 16, 32, false, 16, 1},   // decode, MQA, P < Bc, last page partial
      {8, 2, 3, 160, 16, 16, false, 64, 3},  // a page holds four tiles, splits
      {4, 4, 97, 100, 32, 32, true, 48, 1},  // P neither a divisor nor a multiple of Bc
      {8, 8, 1, 333, 16, 64, true, 256, 3},  // decode-like with splits, one page per sequence and a bit
      {4, 2, 5, 33, 16, 16, true, 16, 2},    // stacked rows crossing heads
  };
  for (const Shape& s : shapes)
    for (bool pack : {true, false}) {
      const Config c = paged_config(2, s.heads, s.kv_heads, s.nq, s.nk, 32, s.br, s.bc, s.causal, pack, s.page, s.splits);
      CAPTURE(s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc, s.causal, s.page, s.splits, pack);
      const ExecuteResult r = execute(c, 11);
      test::check_forward_matches_reference(c, r);
      CHECK(closed_form_counts(c) == r.kernels);
      CHECK(walk_counts(c) == r.kernels);
      CHECK(table_bytes(r.kernels) > 0);
    }
}

TEST_CASE("paged KV: K, V, Q and O move as without paging, and the block table adds 4 bytes per page each "
          "visited K/V tile touches",
          "[paged]") {
  // B 3, H 8, Hkv 2, Nq 1, Nk 1000, Bc 64, packed: one row tile per group; Tc = 16 tiles.
  for (const int64_t page : {16, 64, 256, 48}) {
    Config c = paged_config(3, 8, 2, 1, 1000, 64, 16, 64, false, true, page, 1);
    Config flat = c;
    flat.page_size = 0;
    const auto paged = closed_form_counts(c), contiguous = closed_form_counts(flat);
    REQUIRE(paged.size() == contiguous.size());
    for (int t = 0; t < kTensorCount; ++t) {
      if (static_cast<Tensor>(t) == Tensor::block_table) continue;
      CHECK(paged[0].counts.of(static_cast<Tensor>(t)).read_bytes == contiguous[0].counts.of(static_cast<Tensor>(t)).read_bytes);
    }
    int64_t entries = 0;
    for (int64_t j = 0; j < 16; ++j) entries += pages_touched(j * 64, std::min<int64_t>(64, 1000 - j * 64), page);
    CAPTURE(page);
    CHECK(table_bytes(paged) == 3 * 2 * entries * 4);  // every (b, K/V head) block reads its tiles' entries
    CHECK(table_bytes(contiguous) == 0);
  }
}

TEST_CASE("paged KV: the L2 model reads the scattered pages about once, as the contiguous cache", "[paged][cache]") {
  // Decode: B 4, H 16, Hkv 4, Nq 1, Nk 4096, d 128, pages of 16 and 256 tokens, unpacked (each
  // query head reads its group's pages, the others hit in L2).
  const int64_t kv_bytes = 2 * 4 * 4 * 4096 * 128 * 2;
  for (const int64_t page : {16, 256})
    for (bool pack : {true, false}) {
      Config c = paged_config(4, 16, 4, 1, 4096, 128, 64, 128, false, pack, page, 1);
      CAPTURE(page, pack);
      const SimResult r = simulate(c, CountMethod::cache);
      const double dram_read = static_cast<double>(r.total_dram.read_bytes);
      CHECK(dram_read >= 0.99 * kv_bytes);
      CHECK(dram_read <= 1.05 * kv_bytes);
    }
}

TEST_CASE("paged KV: a page size that is not a multiple of 16, another algorithm or a backward is refused "
          "naming page_size and what is allowed",
          "[paged]") {
  auto refusal = [](const Config& c) { return test::refusal_of(c, Field::page_size); };
  Config c = paged_config(2, 4, 2, 1, 100, 64, 16, 32, false, true, 24, 1);
  CHECK_THAT(refusal(c), Catch::Contains("multiple of 16"));
  c.page_size = -16;
  CHECK_THAT(refusal(c), Catch::Contains("multiple of 16"));
  c.page_size = 32;
  CHECK(refusal(c) == "accepted");
  Config bwd = c;
  bwd.problem.pass = Pass::fwdbwd;
  CHECK_THAT(refusal(bwd), Catch::Contains("forward only"));
  Config f1 = c;
  f1.algo = Algo::flash1;
  CHECK_THAT(refusal(f1), Catch::Contains("only flash2"));
}
