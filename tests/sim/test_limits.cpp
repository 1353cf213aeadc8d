// The model's limits (docs/architecture.md, "Limits"): checked arithmetic never wraps, every
// configuration whose counts pass 64 bits or whose counting would pass a work or memory limit
// is refused with InvalidInput naming the field, in well under a second, and the shapes just
// inside the limits still count exactly.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>

#include "sim/byte_size.h"
#include "sim/cache_replay.h"
#include "sim/checked.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/explain.h"
#include "sim/flops_model.h"
#include "sim/limits.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

using i128 = __int128;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Config config_of(Algo algo, int64_t batch, int64_t heads, int64_t seqlen, int64_t headdim,
                 Pass pass = Pass::fwd) {
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.seqlen = seqlen;
  p.headdim = headdim;
  p.pass = pass;
  return make_config(algo, p, hardware_preset("h200"));
}

// Runs `run`, which must throw InvalidInput naming `field`, and must do so in under a second
// (a refusal comes before any work).
void check_refused(const char* what, Field field, const std::function<void()>& run, const std::string& names = "") {
  INFO(what);
  const auto start = std::chrono::steady_clock::now();
  bool thrown = false;
  try {
    run();
  } catch (const InvalidInput& e) {
    thrown = true;
    INFO(e.what());
    REQUIRE(e.field().has_value());
    CHECK(*e.field() == field);
    CHECK(std::string(e.what()).find(names) != std::string::npos);
  }
  CHECK(thrown);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

// flash2's forward tensor FLOPs, 4·Br·Bc·d per visited tile × B·H, in 128 bits.
i128 flash2_fwd_tensor_flops(const Config& c) {
  const TileGrid g = tile_grid(c);
  return i128{4} * g.br * g.bc * c.problem.headdim * g.tr * g.tc * c.problem.batch * c.problem.heads;
}

}  // namespace

TEST_CASE("checked arithmetic throws at the first product or sum past 2^63 - 1", "[limits]") {
  // 3037000499² = 9223372030926249001 is the largest square below 2^63.
  CHECK(checked_mul(3037000499, 3037000499) == 9223372030926249001);
  CHECK_THROWS_AS(checked_mul(3037000500, 3037000500), CountOverflow);
  CHECK(checked_mul(2, 3, 5, 7) == 210);
  CHECK_THROWS_AS(checked_mul(int64_t{1} << 31, int64_t{1} << 31, 2), CountOverflow);
  CHECK(checked_add(kMax - 1, 1) == kMax);
  CHECK_THROWS_AS(checked_add(kMax, 1), CountOverflow);
  CHECK(saturating_mul(int64_t{1} << 40, int64_t{1} << 30) == kMax);
  CHECK(saturating_mul(97, 40) == 3880);
  CHECK(saturating_add(kMax, 97) == kMax);
}

TEST_CASE("ceil_div is exact up to 2^63 - 1, where a + b - 1 would wrap", "[limits]") {
  CHECK(ceil_div(97, 16) == 7);
  CHECK(ceil_div(96, 16) == 6);
  CHECK(ceil_div(0, 5) == 0);
  CHECK(ceil_div(kMax, 2) == int64_t{1} << 62);
  CHECK(ceil_div(kMax, kMax) == 1);
  CHECK(ceil_div(kMax, 1) == kMax);
  CHECK(ceil_div(kMax - 1, kMax) == 1);
}

TEST_CASE("the fit rule and the paper's rule stay defined for d and tiles near 2^63", "[limits]") {
  Problem p;
  p.headdim = int64_t{1} << 62;  // 4·d would wrap to 0: a division by zero before
  const Tiling t = rule_tiling(Algo::flash2, p, 232448);
  CHECK(t.block_r == 1);
  CHECK(t.block_c == 1);
  CHECK(tile_footprint_elements(p, t) == kMax);  // saturated, so it fits in no M
  CHECK(!tiling_fits(p, t, 9'000'000'000'000'000'000));
  Problem q;
  q.headdim = 64;
  CHECK(!tiling_fits(q, Tiling{kMax, 16}, 232448));  // (2·Br + 2·Bc)·d wrapped to a small number
  CHECK(tile_footprint_elements(q, Tiling{454, 64}) == (2 * 454 + 2 * 64) * 64);
  check_refused("d of more than 2^63 bytes", Field::headdim,
                [] { validate(config_of(Algo::flash2, 1, 1, 97, int64_t{1} << 62)); });
}

TEST_CASE("counts past 64 bits are refused naming the input that contributes most", "[limits]") {
  check_refused("N = 6,000,000 at B=64, H=16 (flash2's tensor FLOPs pass 2^63)", Field::seqlen,
                [] { simulate(config_of(Algo::flash2, 64, 16, 6'000'000, 64), CountMethod::formula); });
  check_refused("N = 2^31, standard", Field::seqlen, [] {
    simulate(config_of(Algo::standard, 64, 16, int64_t{1} << 31, 64), CountMethod::formula);
  });
  check_refused("B·H = 2^64", Field::batch, [] {
    simulate(config_of(Algo::flash1, int64_t{1} << 32, int64_t{1} << 32, 1024, 64), CountMethod::formula);
  });
  check_refused("H = 2^40 at B = 97", Field::heads,
                [] { simulate(config_of(Algo::flash2, 97, int64_t{1} << 40, 1024, 64), CountMethod::walk); });
  check_refused("d = 2^56 with an M to hold it", Field::headdim, [] {
    Config c = config_of(Algo::flash2, 1, 1, 97, int64_t{1} << 56);
    c.sram_bytes = int64_t{1} << 62;
    c.tiling = rule_tiling(c.algo, c.problem, c.sram_bytes);
    simulate(c, CountMethod::formula);
  });
  check_refused("M = 123372036854775807 B: the rule's 240961009481984-row tiles", Field::sram_bytes, [] {
    Problem p;
    simulate(make_config(Algo::flash2, p, hardware_preset("h200"), 123372036854775807), CountMethod::formula);
  });
  check_refused("a given Br of 2^40 rows for N = 1024 (whole tiles counted)", Field::block_r, [] {
    Problem p;
    TilingRequest t;
    t.block_r = int64_t{1} << 40;
    t.block_c = 40;
    simulate(make_config(Algo::flash2, p, hardware_preset("h200"), int64_t{1} << 50, t), CountMethod::formula);
  });
  // Building the schedule counts the N × N GEMM tiles: (N/128)² must not wrap before the check
  // (found by fuzz_experiment_file under UBSan).
  check_refused("standard, N = 880888888888888", Field::seqlen, [] {
    simulate(config_of(Algo::standard, 64, 16, 880'888'888'888'888, 64), CountMethod::formula);
  });
  check_refused("flash1 fwdbwd, N = 2^27 at B = H = 1, d = 40", Field::seqlen, [] {
    simulate(config_of(Algo::flash1, 1, 1, int64_t{1} << 27, 40, Pass::fwdbwd), CountMethod::formula);
  });
}

TEST_CASE("the largest N whose counts fit is counted exactly, and the next one is refused", "[limits]") {
  // flash2's forward at B = 64, H = 16, d = 64 on the h200's M: the tensor FLOPs are its
  // largest count. Find, in 128 bits, the largest N for which they fit.
  auto at = [](int64_t n) { return config_of(Algo::flash2, 64, 16, n, 64); };
  int64_t lo = 1'000'000, hi = 6'000'000;  // fits at lo, not at hi
  REQUIRE(flash2_fwd_tensor_flops(at(lo)) <= kMax);
  REQUIRE(flash2_fwd_tensor_flops(at(hi)) > kMax);
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (flash2_fwd_tensor_flops(at(mid)) <= kMax ? lo : hi) = mid;
  }
  INFO("largest N = " << lo);
  const SimResult r = simulate(at(lo), CountMethod::formula);
  CHECK(i128{r.total.flops.tensor} == flash2_fwd_tensor_flops(at(lo)));
  CHECK(r.total.flops.tensor > kMax / 2);  // within a factor 2 of the limit
  check_refused("one more row", Field::seqlen, [&] { simulate(at(hi), CountMethod::formula); });
}

TEST_CASE("large shapes inside the limits count as before: N = 1,000,000 and an awkward one", "[limits]") {
  const SimResult r = simulate(config_of(Algo::flash2, 64, 16, 1'000'000, 64), CountMethod::formula);
  CHECK(i128{r.total.flops.tensor} == flash2_fwd_tensor_flops(r.config));
  // Q, O once per row (N·d·e per head), K and V once per row tile.
  CHECK(r.total.of(Tensor::Q).read_bytes == int64_t{64} * 16 * 1'000'000 * 64 * 2);
  const TileGrid g = tile_grid(r.config);
  CHECK(r.total.of(Tensor::K).read_bytes == int64_t{64} * 16 * g.tr * 1'000'000 * 64 * 2);
  // N = 999,983 (prime), d = 40, causal fwdbwd, standard and flash1: formula works, the
  // standard's N × N extra memory is B·H·N²·e per matrix.
  Config s = config_of(Algo::standard, 3, 5, 999'983, 40, Pass::fwdbwd);
  s.problem.causal = true;
  const SimResult rs = simulate(s, CountMethod::formula);
  // S, P, dP, dS in fp16 and D in fp32.
  CHECK(rs.extra_memory_bytes == int64_t{3} * 5 * (int64_t{999'983} * 999'983 * 2 * 4 + 999'983 * 4));
  Config f = config_of(Algo::flash1, 3, 5, 999'983, 40, Pass::fwdbwd);
  f.problem.causal = true;
  CHECK(simulate(f, CountMethod::formula).total.flops.tensor > 0);
}

TEST_CASE("the tile grid and a block mask are capped before anything is allocated", "[limits]") {
  check_refused("Br = Bc = 1 at N = 10^8: Tr + Tc = 2·10^8 sums", Field::tiling, [] {
    Problem p;
    p.batch = p.heads = 1;
    p.seqlen = 100'000'000;
    p.headdim = 1;
    TilingRequest t;
    t.block_r = t.block_c = 1;
    simulate(make_config(Algo::flash2, p, hardware_preset("h200"), 64, t), CountMethod::formula);
  });
  check_refused("a block mask of 8193 × 8193 blocks of 128 tokens (N = 2^20 + 1)", Field::block_mask, [] {
    Config c = flashio::sim::test::tiled_config(Algo::blocksparse, Pass::fwd, 1, 1, (int64_t{1} << 20) + 1, 64,
                                                256, 256, false);
    c.block_mask.text = "banded:2";
    simulate(c, CountMethod::formula);
  });
  // At the tile grid's limit the closed form is counted (causal, both passes) and the next
  // tile is refused.
  {
    Config at = flashio::sim::test::tiled_config(Algo::flash2, Pass::fwdbwd, 1, 1, kMaxTileRowsAndCols / 2, 16, 1, 1, true);
    REQUIRE(tile_grid(at).tr + tile_grid(at).tc == kMaxTileRowsAndCols);
    CHECK(simulate(at, CountMethod::formula).total.flops.tensor > 0);
    at.problem.seqlen += 1;
    check_refused("one row past the tile grid's limit", Field::seqlen, [&] { simulate(at, CountMethod::formula); });
  }
  // At the limit's side that is allowed: 8192 × 8192 = 2^26 blocks (N = 2^20) counts. With
  // 256 × 256 tiles each tile spans 2 × 2 blocks, so a band of one block visits |i − j| ≤ 1.
  Config c = flashio::sim::test::tiled_config(Algo::blocksparse, Pass::fwd, 1, 1, int64_t{1} << 20, 16, 256,
                                              256, false);
  c.block_mask.text = "banded:1";
  const int64_t side = ceil_div(c.problem.seqlen, kMaskBlockTokens);
  REQUIRE(side * side == kMaxMaskBlocks);
  const SimResult r = simulate(c, CountMethod::formula);
  const int64_t tiles = 3 * (int64_t{1} << 12) - 2;  // a band of width 1 on 2^12 × 2^12 tiles
  CHECK(r.total.flops.tensor == flops_model::flash2_fwd_tile(256, 256, 16, false).tensor * tiles);
}

TEST_CASE("walk, cache and execute refuse work past their limits before starting", "[limits]") {
  check_refused("walk of flash1 fwdbwd at N = 4·10^6 (one head: ~10^10 transfers)", Field::count_method, [] {
    simulate(config_of(Algo::flash1, 1, 1, 4'000'000, 64, Pass::fwdbwd), CountMethod::walk);
  }, "2^32");
  check_refused("cache at N = 2^20 (the default B, H)", Field::count_method,
                [] { simulate(config_of(Algo::flash2, 64, 16, int64_t{1} << 20, 64), CountMethod::cache); }, "2^31");
  check_refused("cache at N = 32768 (6·10^11 bytes)", Field::count_method,
                [] { simulate(config_of(Algo::flash2, 64, 16, 32768, 64), CountMethod::cache); }, "2^37");
  // flash1 at d = 8: few bytes, but each of the 132 resident blocks holds a whole head's
  // million transfers at once.
  check_refused("cache of flash1 at N = 65536, d = 8, 132 heads (memory)", Field::count_method,
                [] { replay_cache(config_of(Algo::flash1, 1, 132, 65536, 8)); }, "held");
  check_refused("execute of 4·10^9 heads of N = d = 1 (memory)", Field::count_method, [] {
    simulate(config_of(Algo::flash2, 4'000'000'000, 1, 1, 1), CountMethod::execute);
  });
  check_refused("execute of standard at N = 20000, d = 8 (memory: N × N doubles)", Field::count_method,
                [] { simulate(config_of(Algo::standard, 1, 1, 20000, 8), CountMethod::execute); });
  // Inside the limits they run: a walk of flash1 at N = 97·1024 and a small cache replay.
  const Config w = config_of(Algo::flash1, 2, 3, 97 * 1024, 40, Pass::fwdbwd);
  CHECK(simulate(w, CountMethod::walk).total == simulate(w, CountMethod::formula).total);
  const Config k = config_of(Algo::flash2, 2, 3, 1000, 40, Pass::fwdbwd);
  CHECK(simulate(k, CountMethod::cache).total == simulate(k, CountMethod::formula).total);
  CHECK(execute_memory_bytes(config_of(Algo::flash2, 1, 1, 97, 16)) < kExecuteMaxMemoryBytes);
}

TEST_CASE("transfers_per_block bounds the transfers every block emits", "[limits]") {
  // The walk's and the cache's limits count transfers by this bound; it must never be below
  // the real number, for ragged, causal and masked grids.
  class Counter : public ScheduleSink {
   public:
    void transfer(const Transfer&) override { ++transfers; }
    void compute(const Flops&) override {}
    int64_t transfers = 0;
  };
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2, Algo::blocksparse})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
      for (bool causal : {false, true}) {
        Config c = flashio::sim::test::tiled_config(algo, pass, 1, 2, 97, 40, 16, 32, causal);
        if (algo == Algo::blocksparse) c.block_mask.text = "random:0.4:7";
        if (algo == Algo::standard) {
          c.problem.mask = true;
          c.problem.dropout = 0.1;
        }
        for (const KernelSchedule& k : build_schedule(c)) {
          INFO(to_string(k.kind) << " causal " << causal);
          REQUIRE(k.transfers_per_block > 0);
          for (int64_t b = 0; b < k.blocks_per_head; ++b) {
            Counter counter;
            k.emit_block(1, b, counter);
            CHECK(counter.transfers <= k.transfers_per_block);
          }
        }
      }
}

TEST_CASE("hardware geometry far past 64 bits is refused, not divided by zero", "[limits]") {
  Hardware hw = hardware_preset("h200");
  hw.l2_ways = int64_t{1} << 62;  // l2_line_bytes × l2_ways wrapped to 0
  Config c = config_of(Algo::flash2, 1, 1, 97, 40);
  c.hw = hw;
  check_refused("l2_ways = 2^62", Field::hardware, [&] { replay_cache(c); });
  c.hw = hardware_preset("h200");
  c.hw.l2_bytes = int64_t{1} << 40;  // 2^33 lines of 128 B
  check_refused("l2_bytes = 1 TiB", Field::hardware, [&] { replay_cache(c); });
  c.hw = hardware_preset("h200");
  c.hw.sm_count = int64_t{1} << 61;  // SMs × blocks per SM would wrap
  CHECK(replay_cache(c).total_counts == simulate(c, CountMethod::formula).total);
}

TEST_CASE("explain caps d as it caps N", "[limits]") {
  Config c = config_of(Algo::flash2, 1, 1, 13, 2'000'000);
  c.sram_bytes = int64_t{1} << 40;
  c.tiling = {4, 4};
  check_refused("d = 2·10^6", Field::headdim, [&] { explain(c); });
  c.problem.headdim = kExplainMaxHeaddim;
  CHECK_NOTHROW(explain(c));
}

TEST_CASE("byte sizes are exact integers and refused beyond 9e18 of either sign", "[limits][byte_size]") {
  CHECK(parse_byte_size("123372036854775807").bytes == 123372036854775807);  // a double would round it
  CHECK(parse_byte_size("9000000000000000000").bytes == 9'000'000'000'000'000'000);
  CHECK(!parse_byte_size("9000000000000000001").bytes);
  CHECK(!parse_byte_size("9223372036854775808").bytes);  // past int64_t
  CHECK(!parse_byte_size("8589934592GiB").bytes);        // 2^33 · 2^30 = 2^63
  CHECK(!parse_byte_size("-6e19").bytes);                // the cast was undefined: INT64_MIN
  CHECK(!parse_byte_size("1e300").bytes);
  CHECK(parse_byte_size("-97").bytes == -97);  // a sign is the caller's to refuse (--sram must be > 0)
  CHECK(parse_byte_size("227KiB").bytes == 227 * 1024);
  CHECK(parse_byte_size("1.5KiB").bytes == 1536);
}
