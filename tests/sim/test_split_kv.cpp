// Split-KV (docs/shapes.md, "Split-KV"): execute with S splits and the combine equals the dense
// reference, counts exactly what the walk and the closed form count, moves the fp32 partials it
// should (written by the split blocks, read once by the combine), empty splits included; the
// bounds on S; FlashAttention's `auto` heuristic.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/simulate.h"
#include "sim/split_kv.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

Config split_config(int64_t batch, int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk, int64_t d, int64_t br,
                    int64_t bc, bool causal, bool pack, int64_t splits) {
  Config c = test::shaped_config(Algo::flash2, Pass::fwd, batch, heads, kv_heads, nq, nk, d, br, bc, causal, pack);
  c.splits = splits;
  return c;
}

int64_t bytes_of(const std::vector<KernelCounts>& ks, KernelKind kind, Tensor t, Dir dir) {
  int64_t b = 0;
  for (const KernelCounts& k : ks)
    if (k.kind == kind) b += dir == Dir::read ? k.counts.of(t).read_bytes : k.counts.of(t).write_bytes;
  return b;
}

}  // namespace

TEST_CASE("split-KV: execute with S splits and the combine equals the dense reference, and the walk and the "
          "closed form count what execute counts (awkward shapes, empty splits, causal bottom-right, packed and not)",
          "[split]") {
  struct Shape {
    int64_t heads, kv_heads, nq, nk, br, bc;
    bool causal;
    int64_t splits;
  };
  const Shape shapes[] = {
      {4, 1, 1, 97, 16, 16, false, 3},    // decode-like, MQA
      {8, 2, 3, 160, 64, 16, false, 6},   // Tc = 10, chunk 2: split 5 holds no key tile
      {4, 4, 97, 97, 16, 16, true, 3},    // causal: row tile 0 sees only key tile 0, splits 1, 2 empty
      {6, 2, 17, 200, 32, 32, true, 7},   // one tile per split, Nk not a multiple of Bc
      {4, 2, 5, 33, 16, 16, true, 3},     // stacked rows crossing heads inside a row tile
  };
  for (const Shape& s : shapes)
    for (bool pack : {true, false}) {
      const Config c = split_config(2, s.heads, s.kv_heads, s.nq, s.nk, 32, s.br, s.bc, s.causal, pack, s.splits);
      CAPTURE(s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc, s.causal, s.splits, pack);
      const ExecuteResult r = execute(c, 7);
      test::check_forward_matches_reference(c, r);
      CHECK(closed_form_counts(c) == r.kernels);
      CHECK(walk_counts(c) == r.kernels);
      REQUIRE(r.kernels.size() == 2);
      CHECK(r.kernels[0].kind == KernelKind::flash2_fwd);
      CHECK(r.kernels[1].kind == KernelKind::flash2_fwd_combine);
    }
}

TEST_CASE("split-KV: each split writes its rows' fp32 partial O and lse once, the combine reads each once and "
          "writes O and lse once, and K and V are read as without splits",
          "[split]") {
  const int64_t b = 3, h = 8, hkv = 2, nq = 5, nk = 1000, d = 64, s = 4;
  const Config c = split_config(b, h, hkv, nq, nk, d, 64, 64, false, true, s);
  Config one = c;
  one.splits = 1;
  const std::vector<KernelCounts> split = closed_form_counts(c), plain = closed_form_counts(one);
  const int64_t partial_o = s * b * h * nq * d * 4, partial_lse = s * b * h * nq * 4;
  CHECK(bytes_of(split, KernelKind::flash2_fwd, Tensor::o_accum, Dir::write) == partial_o);
  CHECK(bytes_of(split, KernelKind::flash2_fwd, Tensor::lse_accum, Dir::write) == partial_lse);
  CHECK(bytes_of(split, KernelKind::flash2_fwd_combine, Tensor::o_accum, Dir::read) == partial_o);
  CHECK(bytes_of(split, KernelKind::flash2_fwd_combine, Tensor::lse_accum, Dir::read) == partial_lse);
  CHECK(bytes_of(split, KernelKind::flash2_fwd_combine, Tensor::O, Dir::write) == b * h * nq * d * 2);
  CHECK(bytes_of(split, KernelKind::flash2_fwd, Tensor::O, Dir::write) == 0);
  for (Tensor t : {Tensor::K, Tensor::V})
    CHECK(bytes_of(split, KernelKind::flash2_fwd, t, Dir::read) == bytes_of(plain, KernelKind::flash2_fwd, t, Dir::read));
  // Every split reads the row tile's Q (packed: one tile of g·Nq = 20 rows per K/V head).
  CHECK(bytes_of(split, KernelKind::flash2_fwd, Tensor::Q, Dir::read) == s * b * h * nq * d * 2);
  // The partials are extra memory (Theorem 1's sense): S·(d + 1) fp32 per query row.
  CHECK(extra_memory_bytes(c, simulate(c, CountMethod::formula).total) ==
        extra_memory_bytes(one, simulate(one, CountMethod::formula).total) + partial_o + partial_lse);
}

TEST_CASE("split-KV's bounds: S must be 1 to Tc = ceil(Nk / Bc), and only flash2 splits", "[split]") {
  Config c = split_config(1, 4, 2, 1, 1000, 64, 64, 128, false, true, 8);  // Tc = 8
  CHECK_NOTHROW(validate(c));
  c.splits = 9;
  CHECK_THROWS_AS(validate(c), InvalidInput);
  c.splits = 0;
  CHECK_THROWS_AS(validate(c), InvalidInput);
  try {
    c.splits = 9;
    validate(c);
  } catch (const InvalidInput& e) {
    CHECK(e.field() == Field::splits);
    CHECK(std::string(e.what()).find("= 8") != std::string::npos);
  }
  Config f1 = c;
  f1.algo = Algo::flash1;
  f1.problem.kv_heads = 0;
  f1.problem.seqlen_k = 0;
  f1.splits = 2;
  CHECK_THROWS_AS(validate(f1), InvalidInput);
}

TEST_CASE("split-KV auto: 1 when the unsplit grid fills the GPU, otherwise the fewest splits within 85 % of the "
          "best wave efficiency, never one whose chunk equals the previous count's",
          "[split]") {
  // Prefill: 4 · 32 · 32 blocks on 132 SMs.
  Config prefill = split_config(4, 32, 8, 4096, 4096, 128, 128, 128, false, true, 1);
  CHECK(auto_splits(prefill) == 1);
  // Decode: B 8, H 32, Hkv 8, Nq 1, packed: 64 blocks of one row tile.
  for (int64_t nk : {1000, 32768, 131072}) {
    Config c = split_config(8, 32, 8, 1, nk, 128, 64, 128, false, true, 1);
    const int64_t s = auto_splits(c);
    CAPTURE(nk, s);
    const int64_t tc = (nk + 127) / 128, sms = c.hw.sm_count;
    REQUIRE(s >= 1);
    REQUIRE(s <= std::min<int64_t>({kMaxAutoSplits, sms, tc}));
    const auto eff = [&](int64_t k) {
      const double w = 64.0 * static_cast<double>(k) / static_cast<double>(sms);
      return w / std::ceil(w);
    };
    double best = 0;
    for (int64_t k = 1; k <= std::min<int64_t>({kMaxAutoSplits, sms, tc}); ++k)
      if (k == 1 || (tc + k - 1) / k != (tc + k - 2) / (k - 1)) best = std::max(best, eff(k));
    CHECK(eff(s) >= 0.85 * best);
    for (int64_t k = 1; k < s; ++k)
      if (k == 1 || (tc + k - 1) / k != (tc + k - 2) / (k - 1)) CHECK(eff(k) < 0.85 * best);
    c.splits = s;
    CHECK_NOTHROW(validate(c));
  }
  Config f1 = split_config(1, 4, 4, 1, 1000, 64, 64, 64, false, true, 1);
  f1.algo = Algo::flash1;
  f1.problem.kv_heads = 0;
  f1.problem.seqlen_k = 0;
  CHECK(auto_splits(f1) == 1);
}
