// Fused dropout in flash1 and flash2 (docs/schedules.md, "Fused dropout"): the one keep rule
// (kernels/dropout_keep.h) drives execute's tiles, so execute equals the dense reference given
// the same multipliers, forward and backward, at any tiling; the bytes are those without dropout
// and only the CUDA-core work grows (closed form = walk = execute still); the rule keeps 1 − p
// of the scores with p rounded to 2^-16; the configurations no instance drops in are refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/dropout_keep.h"
#include "sim/cache_replay.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/flops_model.h"
#include "sim/kernel_catalog.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/split_kv.h"
#include "sim/time_model.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;
namespace dropout = flashio::dropout;

namespace {

struct Shape {
  int64_t heads, kv_heads, nq, nk, d, br, bc;
};
// Awkward: N not a multiple of the tiles, Br != Bc both ways, grouped-query attention, Nq < Nk.
const Shape kShapes[] = {{2, 2, 97, 97, 16, 16, 32}, {2, 2, 130, 130, 32, 32, 16}, {4, 2, 97, 97, 16, 16, 32},
                         {2, 1, 61, 130, 16, 32, 16}};

Config dropout_config(Algo algo, Pass pass, const Shape& s, bool causal, double p, bool pack = true) {
  Config c = test::shaped_config(algo, pass, 2, s.heads, s.kv_heads, s.nq, s.nk, s.d, s.br, s.bc, causal, pack);
  c.problem.dropout = p;
  return c;
}

// Every query head of `r` against the dense reference with its group's K and V, its kept scores
// and its own multipliers Z (dK, dV summed over the group's heads).
void check_reference(const Config& c, const ExecuteResult& r, uint64_t seed) {
  const Problem& p = c.problem;
  const int64_t g = p.group();
  REQUIRE(static_cast<int64_t>(r.heads.size()) == p.batch_heads());
  for (int64_t first = 0; first < p.batch_heads(); first += g) {
    Matrix dk = Matrix::Zero(p.keys(), p.headdim), dv = dk;
    for (int64_t bh = first; bh < first + g; ++bh) {
      CAPTURE(bh);
      const HeadTensors& got = r.heads[static_cast<size_t>(bh)];
      const ScoreMask keep = kept_scores(c, bh);
      const Matrix z = dropout_multipliers(p, bh, seed);
      const HeadTensors ref = dense_reference(got.q, r.heads[first].k, r.heads[first].v, &got.d_o, &keep, &z);
      CHECK(test::max_error(got.o, ref.o) < 1e-12);
      CHECK(test::max_error(got.lse, ref.lse) < 1e-12);  // ℓ and m of the undropped P̃
      CHECK(test::max_error(got.dq, ref.dq) < 1e-12);
      dk += ref.dk, dv += ref.dv;
      // The dropout really ran: without it O is another.
      const HeadTensors undropped = dense_reference(got.q, r.heads[first].k, r.heads[first].v, &got.d_o, &keep, nullptr);
      CHECK((got.o - undropped.o).norm() > 1e-6);
    }
    CHECK(test::max_error(r.heads[first].dk, dk) < 1e-12);
    CHECK(test::max_error(r.heads[first].dv, dv) < 1e-12);
  }
}

// The bytes of every tensor, without the FLOPs.
std::vector<Counts> bytes_only(std::vector<KernelCounts> kernels) {
  std::vector<Counts> out;
  for (KernelCounts& k : kernels) {
    k.counts.flops = {};
    out.push_back(k.counts);
  }
  return out;
}

}  // namespace

TEST_CASE("dropout: the rule's constants: p rounded to a multiple of 2^-16, kept scores scaled by 1 / (1 - that)",
          "[dropout]") {
  CHECK(dropout::threshold_of(0.1) == 6554);
  CHECK(dropout::applied_probability(0.1) == 6554.0 / 65536.0);
  CHECK(dropout::keep_scale(0.1) == 65536.0 / (65536.0 - 6554.0));
  CHECK(dropout::threshold_of(0.5) == 32768);
  CHECK(dropout::keep_scale(0.5) == 2.0);
  CHECK(dropout::threshold_of(0.0) == 0);
  CHECK(dropout::keep_scale(0.0) == 1.0);
  CHECK(dropout::threshold_of(0.999999) == 65535);  // at least 2^-16 kept
  // The multipliers are 0 or the keep scale, nothing else.
  Problem p;
  p.seqlen = 64;
  p.dropout = 0.1;
  const Matrix z = dropout_multipliers(p, 3, 11);
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    const double x = z.data()[i];
    CHECK((x == 0.0 || x == dropout::keep_scale(0.1)));
  }
}

TEST_CASE("dropout: over a 512 x 512 head the kept fraction, of all keys and of the even and odd keys alone (the "
          "draw's two halves), is within 4 sigma of 1 - applied_probability(p)",
          "[dropout]") {
  for (double p : {0.1, 0.3, 0.5})
    for (uint64_t seed : {uint64_t{1}, uint64_t{0x9e3779b97f4a7c15}}) {
      Problem pr;
      pr.batch = 2, pr.heads = 3, pr.seqlen = 512, pr.dropout = p;
      const Matrix z = dropout_multipliers(pr, 4, seed);
      const double q = 1 - dropout::applied_probability(p);
      const auto within = [q](const Eigen::ArrayXXd& kept) {
        const double n = static_cast<double>(kept.size());
        const double sigma = std::sqrt(q * (1 - q) / n);
        CAPTURE(kept.mean(), q, sigma);
        CHECK(std::abs(kept.mean() - q) < 4 * sigma);
      };
      CAPTURE(p, seed);
      const Eigen::ArrayXXd kept = (z.array() > 0).cast<double>();
      within(kept);
      Eigen::ArrayXXd even(512, 256), odd(512, 256);
      for (int c = 0; c < 256; ++c) even.col(c) = kept.col(2 * c), odd.col(c) = kept.col(2 * c + 1);
      within(even);
      within(odd);
    }
}

TEST_CASE("dropout: execute of flash1 and flash2 equals the dense reference given the same multipliers, forward "
          "and backward, causal and not, N = 97 and 130, Br != Bc, grouped-query attention and Nq < Nk",
          "[dropout][execute]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (double p : {0.1, 0.5})
      for (bool causal : {false, true})
        for (const Shape& s : kShapes)
          for (bool pack : {false, true}) {
            if (!pack && s.heads == s.kv_heads) continue;  // packing changes nothing without groups
            const Config c = dropout_config(algo, Pass::fwdbwd, s, causal, p, pack);
            CAPTURE(to_string(algo), p, causal, s.heads, s.kv_heads, s.nq, s.nk, s.d, s.br, s.bc, pack);
            REQUIRE_NOTHROW(validate(c));
            const uint64_t seed = 13;
            check_reference(c, execute(c, seed), seed);
          }
}

TEST_CASE("dropout: the backward alone (pass bwd) regenerates the forward's decisions", "[dropout][execute]") {
  for (Algo algo : {Algo::flash1, Algo::flash2}) {
    const Config c = dropout_config(algo, Pass::bwd, kShapes[2], true, 0.5);
    CAPTURE(to_string(algo));
    const uint64_t seed = 21;
    const ExecuteResult r = execute(c, seed);
    for (int64_t bh = 0; bh < c.problem.batch_heads(); ++bh) {
      const HeadTensors& h = r.heads[static_cast<size_t>(bh)];
      const ScoreMask keep = kept_scores(c, bh);
      const Matrix z = dropout_multipliers(c.problem, bh, seed);
      const HeadTensors& first = r.heads[static_cast<size_t>(bh - bh % c.problem.group())];
      CHECK(test::max_error(h.dq, dense_reference(h.q, first.k, first.v, &h.d_o, &keep, &z).dq) < 1e-12);
    }
  }
}

TEST_CASE("dropout: a key's decision is a pure function of (seed, head, query, key): two tilings, and flash1 and "
          "flash2, give the same outputs",
          "[dropout][execute]") {
  const Shape s = kShapes[0];
  const Config a = dropout_config(Algo::flash2, Pass::fwdbwd, s, true, 0.3);
  Config b = a;
  b.tiling = {48, 16};
  Config f1 = a;
  f1.algo = Algo::flash1;
  f1.tiling = {8, 64};
  const ExecuteResult ra = execute(a, 5), rb = execute(b, 5), r1 = execute(f1, 5);
  for (size_t h = 0; h < ra.heads.size(); ++h) {
    CAPTURE(h);
    for (const ExecuteResult* other : {&rb, &r1}) {
      CHECK(test::max_error(ra.heads[h].o, other->heads[h].o) < 1e-12);
      CHECK(test::max_error(ra.heads[h].dq, other->heads[h].dq) < 1e-12);
      CHECK(test::max_error(ra.heads[h].dk, other->heads[h].dk) < 1e-12);
      CHECK(test::max_error(ra.heads[h].dv, other->heads[h].dv) < 1e-12);
    }
  }
  // Another seed drops other scores.
  CHECK((execute(a, 6).heads[0].o - ra.heads[0].o).norm() > 1e-6);
}

TEST_CASE("dropout: p = 0 is no dropout, and any p > 0 drops with at least 2^-16 (the kernels run their dropout "
          "instances for it, as the model counts): p = 1e-6 keeps the threshold 1",
          "[dropout][execute]") {
  Problem p;
  p.seqlen = 40;
  CHECK(dropout_multipliers(p, 0, 1) == Matrix::Ones(40, 40));
  CHECK(dropout::threshold_of(0.0) == 0);
  CHECK(dropout::threshold_of(1e-6) == 1);
  CHECK(dropout::applied_probability(1e-6) == 1.0 / 65536);
  for (Algo algo : {Algo::flash1, Algo::flash2}) {
    const Config none = dropout_config(algo, Pass::fwdbwd, kShapes[2], true, 0.0);
    Config tiny = none;
    tiny.problem.dropout = 1e-6;
    // The same bytes and the same lse (from every probability, dropped or not); O is the dropout's.
    const ExecuteResult a = execute(none, 3), b = execute(tiny, 3);
    for (size_t h = 0; h < a.heads.size(); ++h) CHECK(a.heads[h].lse == b.heads[h].lse);
    for (size_t k = 0; k < a.kernels.size(); ++k) CHECK(a.kernels[k].counts.bytes == b.kernels[k].counts.bytes);
  }
}

TEST_CASE("dropout: every kernel moves the same bytes with and without it, and the tiles' other FLOPs grow by "
          "the select (forward) or the select and multiply (backward) per score",
          "[dropout][counts]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
      for (bool causal : {false, true}) {
        const Config without = dropout_config(algo, pass, kShapes[3], causal, 0.0);
        const Config with = dropout_config(algo, pass, kShapes[3], causal, 0.25);
        CAPTURE(to_string(algo), to_string(pass), causal);
        const std::vector<KernelCounts> a = closed_form_counts(without), b = closed_form_counts(with);
        CHECK(bytes_only(a) == bytes_only(b));
        CHECK(bytes_only(execute(without, 2).kernels) == bytes_only(execute(with, 2).kernels));
        REQUIRE(a.size() == b.size());
        for (size_t k = 0; k < a.size(); ++k) {
          INFO(to_string(a[k].kind));
          CHECK(a[k].counts.flops.tensor == b[k].counts.flops.tensor);
          CHECK(a[k].counts.flops.exp == b[k].counts.flops.exp);
          const KernelKind kind = a[k].kind;
          const bool tile_kernel = kind == KernelKind::flash1_fwd || kind == KernelKind::flash2_fwd ||
                                   kind == KernelKind::flash1_bwd || kind == KernelKind::flash2_bwd;
          if (!tile_kernel) {
            CHECK(a[k].counts.flops.other == b[k].counts.flops.other);
            continue;
          }
          // The tiles' scores, from their tensor FLOPs: 4·d a score forward, 10·d backward.
          const bool fwd = pass_of(kind) == Pass::fwd;
          const int64_t scores = a[k].counts.flops.tensor / ((fwd ? 4 : 10) * with.problem.headdim);
          const int64_t per_score = fwd ? flops_model::kDropoutFwdFlopsPerScore : flops_model::kDropoutBwdFlopsPerScore;
          CHECK(b[k].counts.flops.other - a[k].counts.flops.other == per_score * scores);
        }
      }
}

TEST_CASE("dropout: the closed form equals the walk, and execute counts what they count, kernel by kernel",
          "[dropout][counts]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
      for (bool causal : {false, true})
        for (const Shape& s : kShapes) {
          const Config c = dropout_config(algo, pass, s, causal, 0.1);
          CAPTURE(to_string(algo), to_string(pass), causal, s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc);
          const std::vector<KernelCounts> formula = closed_form_counts(c), walked = walk_counts(c);
          CHECK(formula == walked);
          CHECK(execute(c, 1).kernels == walked);
        }
  // Larger, ragged, with odd tiles: the formula and the walk only.
  for (const auto& [n, br, bc] : {std::tuple<int64_t, int64_t, int64_t>{1025, 64, 32}, {700, 7, 5}, {333, 200, 24}})
    for (Algo algo : {Algo::flash1, Algo::flash2}) {
      Config c = test::tiled_config(algo, Pass::fwdbwd, 2, 3, n, 40, br, bc, true);
      c.problem.dropout = 0.2;
      CAPTURE(to_string(algo), n, br, bc);
      CHECK(closed_form_counts(c) == walk_counts(c));
    }
}

TEST_CASE("dropout: the keep decisions' integer instructions follow the rule (a draw is 9: lowbias32's 3 shifts, "
          "3 xors and 2 multiplies and the add of its pair's offset)",
          "[dropout][time]") {
  // Forward: a draw per pair of keys, tests of 2 (even key) and 1 (odd): 6 a score.
  CHECK(flops_model::dropout_fwd_tile_integer_ops(64, 64) == 6 * 64 * 64);
  // Backward: a draw and a shuffle per pair of keys (lanes share them), a select and the test per score: 5 + 1 + 1.5.
  CHECK(flops_model::dropout_bwd_tile_integer_ops(64, 64) == 64 * 64 * 15 / 2);
  // An odd Bc: the last key is even and has a draw of its own.
  CHECK(flops_model::dropout_fwd_tile_integer_ops(1, 5) == 3 * 10 + 5);
  CHECK(flops_model::dropout_bwd_tile_integer_ops(1, 5) == 3 * 10 + 5 + 5 + 3);
}

namespace {

// The keep decisions' integer instructions of flash2's `pass` (fwd or bwd) at d 64, 64 × 64 tiles,
// dense: per tile step (its steps from the kernel's tensor FLOPs).
double integer_ops_64x64(Pass pass, int64_t tensor_flops) {
  const bool fwd = pass == Pass::fwd;
  const int64_t tile_tensor = fwd ? flops_model::flash2_fwd_tile(64, 64, 64, false).tensor
                                  : flops_model::flash2_bwd_tile(64, 64, 64, false).tensor;
  const int64_t tile_integer = fwd ? flops_model::dropout_fwd_tile_integer_ops(64, 64)
                                   : flops_model::dropout_bwd_tile_integer_ops(64, 64);
  return static_cast<double>(tensor_flops / tile_tensor * tile_integer);
}

}  // namespace

TEST_CASE("dropout: the time model puts the integer instructions and the extra FLOPs on the fp32 pipe, and "
          "nothing else changes",
          "[dropout][time]") {
  for (Pass pass : {Pass::fwd, Pass::bwd}) {
    Config without = test::tiled_config(Algo::flash2, pass, 2, 4, 1024, 64, 64, 64, false);
    Config with = without;
    with.problem.dropout = 0.1;
    CAPTURE(to_string(pass));
    const std::vector<KernelSchedule> ka = build_schedule(without), kb = build_schedule(with);
    const PassTime a = model_time(without, ka, {}, {}), b = model_time(with, kb, {}, {});
    REQUIRE(a.kernels.size() == b.kernels.size());
    const std::vector<KernelCounts> ca = closed_form_counts(without), cb = closed_form_counts(with);
    for (size_t k = 0; k < a.kernels.size(); ++k) {
      const KernelTime &x = a.kernels[k], &y = b.kernels[k];
      INFO(to_string(x.kind));
      CHECK(x.dram_ms == y.dram_ms);
      CHECK(x.tensor_ms == y.tensor_ms);
      CHECK(x.exp_ms == y.exp_ms);
      CHECK(x.blocks_per_sm == y.blocks_per_sm);  // no dropout_registers known yet: the registers'
      if (x.kind != KernelKind::flash2_fwd && x.kind != KernelKind::flash2_bwd) {
        CHECK(x.fp32_ms == y.fp32_ms);
        continue;
      }
      // fp32 time ∝ other FLOPs + integer instructions.
      const double integer = integer_ops_64x64(pass, ca[k].counts.flops.tensor);
      const double ratio = (static_cast<double>(cb[k].counts.flops.other) + integer) /
                           static_cast<double>(ca[k].counts.flops.other);
      CHECK(y.fp32_ms / x.fp32_ms == Approx(ratio).epsilon(1e-9));
      CHECK(y.time_ms > x.time_ms);
    }
  }
}

TEST_CASE("dropout: with a calibrated integer rate the integer instructions take their time at it, without one at "
          "the fp32 rate",
          "[dropout][time]") {
  for (Pass pass : {Pass::fwd, Pass::bwd}) {
    Config at_fp32 = test::tiled_config(Algo::flash2, pass, 3, 5, 1024, 64, 64, 64, false);
    at_fp32.problem.dropout = 0.1;
    REQUIRE_FALSE(at_fp32.hw.calibration.integer_ops_per_s);
    const double fp32_lanes_per_s = *at_fp32.hw.calibration.fma_flops_per_s / 2;
    Config at_half = at_fp32, at_equal = at_fp32;
    at_half.hw.calibration.integer_ops_per_s = fp32_lanes_per_s / 2;  // sm_90's integer lanes: half the fp32 ones
    at_equal.hw.calibration.integer_ops_per_s = fp32_lanes_per_s;
    CAPTURE(to_string(pass));
    const std::vector<KernelSchedule> k = build_schedule(at_fp32);
    const PassTime a = model_time(at_fp32, k, {}, {}), h = model_time(at_half, k, {}, {}), e = model_time(at_equal, k, {}, {});
    const std::vector<KernelCounts> counts = closed_form_counts(at_fp32);
    for (size_t i = 0; i < a.kernels.size(); ++i) {
      const KernelTime& x = a.kernels[i];
      INFO(to_string(x.kind));
      // The figure equal to the fp32 lanes' rate gives what its absence gives.
      CHECK(e.kernels[i].fp32_ms == Approx(x.fp32_ms).epsilon(1e-12));
      if (x.kind != KernelKind::flash2_fwd && x.kind != KernelKind::flash2_bwd) {
        CHECK(h.kernels[i].fp32_ms == x.fp32_ms);
        continue;
      }
      // At half the rate the integer instructions' share of the term doubles: the term grows by
      // that share (the integer instructions per tile step × the steps, over the other FLOPs + them).
      const double integer = integer_ops_64x64(pass, counts[i].counts.flops.tensor);
      const double share = integer / (static_cast<double>(counts[i].counts.flops.other) + integer);
      CHECK(h.kernels[i].fp32_ms == Approx(x.fp32_ms * (1 + share)).epsilon(1e-9));
      CHECK(h.kernels[i].time_ms >= x.time_ms);
    }
  }
}

TEST_CASE("dropout: the occupancy takes a kernel's dropout_registers where known, its registers where 0",
          "[dropout][occupancy]") {
  BuiltKernel k = built_kernels().front();
  KernelInstance drop;
  drop.dropout = true;
  k.dropout_registers = 0;
  CHECK(instance_registers(k, drop) == k.registers);
  k.registers = 128;
  k.dropout_registers = 255;
  CHECK(instance_registers(k, drop) == 255);
  CHECK(instance_registers(k, KernelInstance{}) == 128);
  const Hardware hw = hardware_preset("h200");
  CHECK(built_blocks_per_sm(k, main_kernel_kind(k), hw, drop) <= built_blocks_per_sm(k, main_kernel_kind(k), hw));
}

TEST_CASE("dropout: the L2 model replays the same bytes at the same occupancy while dropout_registers are unknown",
          "[dropout][cache]") {
  for (Algo algo : {Algo::flash1, Algo::flash2}) {
    Config without = test::tiled_config(algo, Pass::fwdbwd, 2, 4, 512, 64, 128, 64, true);
    Config with = without;
    with.problem.dropout = 0.1;
    CAPTURE(to_string(algo));
    const CacheResult a = replay_cache(without), b = replay_cache(with);
    REQUIRE(a.kernels.size() == b.kernels.size());
    for (size_t k = 0; k < a.kernels.size(); ++k) {
      INFO(to_string(a.kernels[k].kind));
      CHECK(a.kernels[k].blocks_per_sm == b.kernels[k].blocks_per_sm);
      CHECK(a.kernels[k].l2.dram_read_bytes == b.kernels[k].l2.dram_read_bytes);
      CHECK(a.kernels[k].l2.dram_write_bytes == b.kernels[k].l2.dram_write_bytes);
    }
  }
}

TEST_CASE("dropout: flash1 and flash2 allow it with causal, grouped-query attention, Nq != Nk, key lengths (given "
          "or the mask's), every pass and type, and refuse it naming dropout with a block mask, split keys, a paged "
          "cache or a window",
          "[dropout][errors]") {
  for (Algo algo : {Algo::flash1, Algo::flash2, Algo::standard})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
      for (DType dtype : {DType::fp16, DType::bf16, DType::fp32}) {
        Config c = dropout_config(algo, pass, kShapes[3], true, 0.1);
        c.problem.dtype = dtype;
        CAPTURE(to_string(algo), to_string(pass), to_string(dtype));
        CHECK(test::refusal_of(c, Field::dropout) == "accepted");
      }
  const Config base = dropout_config(Algo::flash2, Pass::fwd, kShapes[0], false, 0.1);
  const auto refused = [](const Config& c, Field field, const std::string& allowed) {
    const std::string what = test::refusal_of(c, field);
    INFO(what);
    CHECK(what.rfind(std::string(field_name(field)) + ": ", 0) == 0);
    CHECK(what.find(allowed) != std::string::npos);
  };
  Config sparse = base;
  sparse.algo = Algo::blocksparse;
  sparse.block_mask = {"banded:1"};
  refused(sparse, Field::dropout, "allowed with blocksparse: dropout = 0");
  Config split = base;
  split.splits = 2;
  refused(split, Field::dropout, "splits = 1");
  Config paged = base;
  paged.page_size = 16;
  refused(paged, Field::dropout, "page_size = 0");
  for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
    for (Algo algo : {Algo::flash1, Algo::flash2}) {
      Config lengths = base;
      lengths.algo = algo;
      lengths.problem.pass = pass;
      lengths.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{50, 97}), "x"};
      CAPTURE(to_string(algo), to_string(pass));
      CHECK(test::refusal_of(lengths, Field::dropout) == "accepted");
      Config mask = base;
      mask.algo = algo;
      mask.problem.pass = pass;
      mask.problem.mask = true;
      CHECK(test::refusal_of(mask, Field::dropout) == "accepted");
    }
  for (const auto& [left, right] : {std::pair<int64_t, int64_t>{8, kNoWindow}, {kNoWindow, 0}, {4, 4}}) {
    Config window = base;
    window.problem.window_left = left, window.problem.window_right = right;
    CAPTURE(left, right);
    refused(window, Field::dropout, "no window");
  }
  Config standard = base;
  standard.algo = Algo::standard;
  standard.problem.mask = true;
  CHECK(test::refusal_of(standard, Field::dropout) == "accepted");
}

TEST_CASE("dropout: --splits auto and best keep one split (the fused-dropout kernels are built without splits), where "
          "without dropout they would split a decode",
          "[dropout][splits]") {
  // One query against a long cache: a handful of blocks on 132 SMs, so auto splits without dropout.
  Config c = test::shaped_config(Algo::flash2, Pass::fwd, 1, 2, 2, 1, 16384, 64, 128, 64, false, true);
  REQUIRE(auto_splits(c) > 1);
  c.problem.dropout = 0.1;
  CHECK(auto_splits(c) == 1);
  CHECK(best_splits(c) == 1);
  c.splits = auto_splits(c);
  CHECK_NOTHROW(validate(c));
}

TEST_CASE("dropout: the kernels' instance for fused dropout and key padding is the one the models take: flash1's "
          "kernels and flash2's backward with dropout or any key lengths, flash2's forward with dropout only",
          "[dropout][lengths]") {
  Config c = dropout_config(Algo::flash1, Pass::fwdbwd, kShapes[0], false, 0.0);
  for (KernelKind k : {KernelKind::flash1_fwd, KernelKind::flash1_bwd, KernelKind::flash2_fwd, KernelKind::flash2_bwd})
    CHECK_FALSE(runs_dropout_instance(c, k));
  c.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{97, 97}), "test"};
  CHECK(runs_dropout_instance(c, KernelKind::flash1_fwd));  // every length Nk still passes seqlens_k
  CHECK(runs_dropout_instance(c, KernelKind::flash1_bwd));
  CHECK(runs_dropout_instance(c, KernelKind::flash2_bwd));
  CHECK_FALSE(runs_dropout_instance(c, KernelKind::flash2_fwd));  // its KV-cache instance
  CHECK_FALSE(runs_dropout_instance(c, KernelKind::flash2_bwd_preprocess));
  c.problem.key_lengths = {};
  c.problem.mask = true;  // flash's --mask: the built-in lengths
  CHECK(runs_dropout_instance(c, KernelKind::flash1_bwd));
  c.problem.mask = false;
  c.problem.dropout = 0.1;
  CHECK(runs_dropout_instance(c, KernelKind::flash2_fwd));
}
