// Key padding in flash1 and flash2, forward and backward (docs/shapes.md, "Per-sequence key
// lengths"; docs/schedules.md): per-sequence key lengths (given, or --mask's built-in
// len_b = Nk − ⌊b·Nk / (2B)⌋) run as the kernels run them. execute equals the dense reference masked
// by the lengths (and with dropout, given the same multipliers); closed form = walk = execute kernel
// by kernel; a batch counts what its sequences count alone but for the backward's dK and dV, written
// for all Nk rows; lengths all Nk change nothing (counts and time); key tiles past a length are
// skipped; --mask is --lengths with the built-in lengths; what is not built is refused naming its
// field; the L2 and time models follow the schedules.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "sim/cache_replay.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/flops_model.h"
#include "sim/limits.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

KeyLengths lengths_of(std::vector<int64_t> values) {
  return {std::make_shared<const std::vector<int64_t>>(std::move(values)), "test"};
}

struct Shape {
  int64_t heads, kv_heads, nq, nk;
  std::vector<int64_t> lengths;
  int64_t d, br, bc;
  bool causal;
};
// Ragged lengths (a one-key sequence, a run of two equal ones, one just past a tile edge), N not a
// multiple of the tiles, Br != Bc both ways, grouped-query attention, Nq < Nk, causal in each
// sequence's own keys (lengths >= Nq).
const Shape kShapes[] = {
    {2, 2, 97, 97, {97, 1, 33, 33}, 16, 16, 32, false},
    {4, 2, 40, 130, {130, 17, 65, 1}, 16, 32, 16, false},
    {4, 1, 20, 100, {100, 20, 57}, 16, 16, 16, true},
    {2, 2, 61, 61, {61, 61}, 8, 8, 8, true},  // lengths all Nk, causal
};

Config padded_config(Algo algo, Pass pass, const Shape& s, bool pack = true) {
  Config c = test::shaped_config(algo, pass, static_cast<int64_t>(s.lengths.size()), s.heads, s.kv_heads, s.nq, s.nk,
                                 s.d, s.br, s.bc, s.causal, pack);
  c.problem.key_lengths = lengths_of(s.lengths);
  return c;
}

// The mask's configuration: B sequences of Nk = N keys, padded by the built-in lengths.
Config mask_config(Algo algo, Pass pass, int64_t batch, int64_t n, int64_t br, int64_t bc) {
  Config c = test::tiled_config(algo, pass, batch, 2, n, 16, br, bc, false);
  c.problem.mask = true;
  return c;
}

using test::total;

// Every query head of `r` against the dense reference over its group's K and V with the scores
// the lengths keep, built here from the definition (key c < Nk_b; causal c <= r + Nk_b − Nq), and
// the multipliers Z where the configuration drops; dK and dV summed over the group's heads, zero
// past the sequence's keys.
void check_reference(const Config& c, const std::vector<int64_t>& lengths, const ExecuteResult& r, uint64_t seed) {
  const Problem& p = c.problem;
  const int64_t g = p.group(), nq = p.seqlen, nk = p.keys();
  const bool bwd = has_backward(p.pass);
  REQUIRE(static_cast<int64_t>(r.heads.size()) == p.batch_heads());
  for (int64_t first = 0; first < p.batch_heads(); first += g) {
    const int64_t len = lengths[static_cast<size_t>(first / p.heads)];
    ScoreMask keep(nq, nk);
    for (int64_t q = 0; q < nq; ++q)
      for (int64_t k = 0; k < nk; ++k) keep(q, k) = k < len && (!p.causal || k <= q + len - nq);
    Matrix dk = Matrix::Zero(nk, p.headdim), dv = dk;
    for (int64_t bh = first; bh < first + g; ++bh) {
      CAPTURE(bh, len);
      const HeadTensors& got = r.heads[static_cast<size_t>(bh)];
      const Matrix z = dropout_multipliers(p, bh, seed);
      const HeadTensors ref = dense_reference(got.q, r.heads[first].k, r.heads[first].v, &got.d_o, &keep,
                                              p.dropout > 0 ? &z : nullptr);
      CHECK(test::max_error(got.o, ref.o) < 1e-12);
      CHECK(test::max_error(got.lse, ref.lse) < 1e-12);
      if (bwd) CHECK(test::max_error(got.dq, ref.dq) < 1e-12);
      dk += ref.dk, dv += ref.dv;
    }
    if (!bwd) continue;
    CHECK(test::max_error(r.heads[first].dk, dk) < 1e-12);
    CHECK(test::max_error(r.heads[first].dv, dv) < 1e-12);
    CHECK(r.heads[first].dk.bottomRows(nk - len).isZero(0));
    CHECK(r.heads[first].dv.bottomRows(nk - len).isZero(0));
  }
}

// A sink that keeps the transfers of one block.
struct Recorder : ScheduleSink {
  std::vector<Transfer> transfers;
  void transfer(const Transfer& t) override { transfers.push_back(t); }
  void compute(const Flops&) override {}
};

const KernelSchedule& kernel_of(const std::vector<KernelSchedule>& ks, KernelKind kind) {
  for (const KernelSchedule& k : ks)
    if (k.kind == kind) return k;
  FAIL("no kernel " << to_string(kind));
  return ks.front();
}

}  // namespace

TEST_CASE("key padding: execute of flash1 and flash2 equals the dense reference masked by each sequence's key "
          "length, forward and backward, with and without dropout, packed and not",
          "[padding][execute]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (double p : {0.0, 0.3})
      for (const Shape& s : kShapes)
        for (bool pack : {true, false}) {
          if (!pack && s.heads == s.kv_heads) continue;  // packing changes nothing without groups
          Config c = padded_config(algo, Pass::fwdbwd, s, pack);
          c.problem.dropout = p;
          CAPTURE(to_string(algo), p, s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc, s.causal, pack);
          REQUIRE_NOTHROW(validate(c));
          const uint64_t seed = 17;
          check_reference(c, s.lengths, execute(c, seed), seed);
        }
}

TEST_CASE("key padding: the backward alone (pass bwd) runs on the padded forward's outputs", "[padding][execute]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (double p : {0.0, 0.5}) {
      Config c = padded_config(algo, Pass::bwd, kShapes[1]);
      c.problem.dropout = p;
      CAPTURE(to_string(algo), p);
      check_reference(c, kShapes[1].lengths, execute(c, 4), 4);
    }
}

TEST_CASE("key padding: the closed form equals the walk, and execute counts what they count, kernel by kernel",
          "[padding][counts]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
      for (double p : {0.0, 0.1})
        for (const Shape& s : kShapes)
          for (bool pack : {true, false}) {
            Config c = padded_config(algo, pass, s, pack);
            c.problem.dropout = p;
            CAPTURE(to_string(algo), to_string(pass), p, s.heads, s.kv_heads, s.nq, s.nk, s.br, s.bc, s.causal, pack);
            const std::vector<KernelCounts> formula = closed_form_counts(c), walked = walk_counts(c);
            CHECK(formula == walked);
            CHECK(execute(c, 1).kernels == walked);
          }
  // Larger, with the mask's lengths, odd tiles: the formula and the walk only.
  for (const auto& [b, n, br, bc] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{7, 1025, 64, 32}, {5, 700, 7, 5},
                                     {3, 333, 200, 24}})
    for (Algo algo : {Algo::flash1, Algo::flash2}) {
      const Config c = mask_config(algo, Pass::fwdbwd, b, n, br, bc);
      CAPTURE(to_string(algo), b, n, br, bc);
      CHECK(closed_form_counts(c) == walk_counts(c));
    }
}

TEST_CASE("key padding: a batch counts the sum of what its sequences count alone, but for the backward's dK and dV, "
          "written for all Nk rows",
          "[padding][counts]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
      for (const Shape& s : kShapes) {
        const Config c = padded_config(algo, pass, s);
        CAPTURE(to_string(algo), to_string(pass), s.heads, s.kv_heads, s.nq, s.nk, s.causal);
        Counts alone;
        for (const int64_t len : s.lengths) {
          Config one = c;
          one.problem.batch = 1;
          one.problem.seqlen_k = len;
          one.problem.key_lengths = {};
          alone += total(closed_form_counts(one));
        }
        Counts batch = total(closed_form_counts(c));
        CHECK(batch.flops == alone.flops);
        const int64_t e = element_bytes(c.problem.dtype), d = c.problem.headdim;
        const int64_t written = has_backward(pass) ? c.problem.batch_kv_heads() * s.nk * d * e : 0;
        int64_t written_alone = 0;
        for (const int64_t len : s.lengths) written_alone += has_backward(pass) ? s.kv_heads * len * d * e : 0;
        for (Tensor t : {Tensor::dK, Tensor::dV}) {
          CHECK(batch.of(t).write_bytes == written);
          CHECK(alone.of(t).write_bytes == written_alone);
          batch.bytes[static_cast<int>(t)].write_bytes = alone.bytes[static_cast<int>(t)].write_bytes;
        }
        CHECK(batch == alone);
        // Convention FLOPs: each sequence's own 4·H·Nq·Nk_b·d (× 2.5 backward), causal in its keys.
        double convention = 0;
        for (const int64_t len : s.lengths) {
          Problem one = c.problem;
          one.batch = 1, one.seqlen_k = len, one.key_lengths = {};
          convention += convention_flops(one);
        }
        CHECK(convention_flops(c) == Approx(convention).epsilon(1e-12));
      }
}

TEST_CASE("key padding: lengths all Nk change nothing, the counts, the L2 model and the predicted time included",
          "[padding][time]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) {
      Config none = test::tiled_config(algo, pass, 3, 4, 1000, 64, 64, 128, false);
      Config full = none;
      full.problem.key_lengths = lengths_of({1000, 1000, 1000});
      CAPTURE(to_string(algo), to_string(pass));
      CHECK(closed_form_counts(full) == closed_form_counts(none));
      CHECK(walk_counts(full) == closed_form_counts(none));
      const SimResult a = simulate(full, CountMethod::formula), b = simulate(none, CountMethod::formula);
      CHECK(a.time_ms == Approx(b.time_ms).epsilon(1e-12));
      CHECK(a.convention_flops == Approx(b.convention_flops).epsilon(1e-12));
      Config small_full = test::tiled_config(algo, pass, 2, 2, 256, 64, 64, 64, true), small_none = small_full;
      small_full.problem.key_lengths = lengths_of({256, 256});
      const CacheResult x = replay_cache(small_full), y = replay_cache(small_none);
      CHECK(x.total_counts == y.total_counts);
      CHECK(x.total_l2.dram_read_bytes == y.total_l2.dram_read_bytes);
      CHECK(x.total_l2.dram_write_bytes == y.total_l2.dram_write_bytes);
    }
}

TEST_CASE("key padding: key tiles past a sequence's length are skipped (lengths 300, 1, 129, 255 at N = 300, Bc 64 "
          "and 128), the backward still writing every row of dK and dV",
          "[padding][counts]") {
  const std::vector<int64_t> lengths = {300, 1, 129, 255};
  const int64_t heads = 2, n = 300, d = 64, e = 2, br = 64;
  for (const int64_t bc : {64, 128})
    for (Algo algo : {Algo::flash1, Algo::flash2}) {
      Config c = test::tiled_config(algo, Pass::fwdbwd, 4, heads, n, d, br, bc, false);
      c.problem.key_lengths = lengths_of(lengths);
      CAPTURE(bc, to_string(algo));
      const int64_t tr = (n + br - 1) / br;
      int64_t keys = 0, key_tiles = 0;
      for (const int64_t len : lengths) keys += len, key_tiles += (len + bc - 1) / bc;
      for (const KernelCounts& k : closed_form_counts(c)) {
        INFO(to_string(k.kind));
        const bool main = k.kind == KernelKind::flash1_fwd || k.kind == KernelKind::flash1_bwd ||
                          k.kind == KernelKind::flash2_fwd || k.kind == KernelKind::flash2_bwd;
        if (!main) continue;
        const bool fwd = pass_of(k.kind) == Pass::fwd;
        const Flops tile = algo == Algo::flash1 ? (fwd ? flops_model::flash1_fwd_tile(br, bc, d, false)
                                                       : flops_model::flash1_bwd_tile(br, bc, d, false))
                                                : (fwd ? flops_model::flash2_fwd_tile(br, bc, d, false)
                                                       : flops_model::flash2_bwd_tile(br, bc, d, false));
        CHECK(k.counts.flops.tensor == tile.tensor * heads * tr * key_tiles);  // every row tile × the seen key tiles
        // K and V: each sequence's keys, once per block (flash1, flash2's backward) or per row tile (flash2's forward).
        const int64_t reads = k.kind == KernelKind::flash2_fwd ? tr : 1;
        CHECK(k.counts.of(Tensor::K).read_bytes == reads * heads * keys * d * e);
        CHECK(k.counts.of(Tensor::V).read_bytes == reads * heads * keys * d * e);
        if (!fwd) {
          CHECK(k.counts.of(Tensor::dK).write_bytes == 4 * heads * n * d * e);
          CHECK(k.counts.of(Tensor::dV).write_bytes == 4 * heads * n * d * e);
          CHECK(k.counts.of(Tensor::dQ).write_bytes + k.counts.of(Tensor::dq_accum).write_bytes > 0);
        } else {
          CHECK(k.counts.of(Tensor::O).write_bytes == 4 * heads * n * d * e);  // every row's O, at its last key tile
        }
      }
      // Every block of every head emits at most the transfers its kernel states (the limits of
      // walk and cache count those).
      const std::vector<KernelSchedule> ks = build_schedule(c);
      for (const KernelSchedule& k : ks)
        for (int64_t h = 0; h < k.heads; ++h)
          for (int64_t b = 0; b < k.blocks_per_head; ++b) {
            Recorder all;
            k.emit_block(h, b, all);
            CHECK(static_cast<int64_t>(all.transfers.size()) <= k.transfers_per_block);
          }
      // The one-key sequence's blocks past its first key tile (heads 2, 3 of the backward's grid)
      // read nothing and write their zero dK, dV rows.
      const KernelSchedule& bwd = kernel_of(ks, algo == Algo::flash1 ? KernelKind::flash1_bwd : KernelKind::flash2_bwd);
      Recorder rec;
      bwd.emit_block(heads, algo == Algo::flash1 ? 0 : 1, rec);
      int64_t read = 0, written = 0;
      for (const Transfer& t : rec.transfers) {
        if (t.dir == Dir::read) read += t.rows;
        if (t.tensor == Tensor::dK || t.tensor == Tensor::dV) written += t.rows;
      }
      const int64_t tc = (n + bc - 1) / bc;
      if (algo == Algo::flash2) {
        CHECK(read == 0);  // block 1 of a one-key sequence
        CHECK(written == 2 * std::min(bc, n - bc));
      } else {
        // flash1: one block loops over every key tile: K, V of the one key, its row tiles' reads of
        // Q, O, dO (r rows each), ℓ, m; all key tiles' dK, dV.
        CHECK(written == 2 * n);
        int64_t kv = 0;
        for (const Transfer& t : rec.transfers)
          if (t.dir == Dir::read && (t.tensor == Tensor::K || t.tensor == Tensor::V)) kv += t.rows;
        CHECK(kv == 2);
        int64_t dk_tiles = 0;
        for (const Transfer& t : rec.transfers) dk_tiles += t.tensor == Tensor::dK;
        CHECK(dk_tiles == tc);
      }
    }
}

TEST_CASE("key padding: --mask in flash1 and flash2 is --lengths with the built-in lengths Nk - floor(b·Nk / (2B)): "
          "counts, outputs, convention FLOPs, time and the L2 model",
          "[padding][mask]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) {
      const Config mask = mask_config(algo, pass, 4, 97, 16, 32);
      Config lengths = mask;
      lengths.problem.mask = false;
      std::vector<int64_t> built;
      for (int64_t b = 0; b < 4; ++b) built.push_back(97 - b * 97 / 8);
      CHECK(built == std::vector<int64_t>{97, 85, 73, 61});
      lengths.problem.key_lengths = lengths_of(built);
      CAPTURE(to_string(algo), to_string(pass));
      CHECK(closed_form_counts(mask) == closed_form_counts(lengths));
      CHECK(walk_counts(mask) == closed_form_counts(lengths));
      const ExecuteResult a = execute(mask, 3), b = execute(lengths, 3);
      CHECK(a.kernels == b.kernels);
      for (size_t h = 0; h < a.heads.size(); ++h) {
        CHECK(a.heads[h].o == b.heads[h].o);
        CHECK(a.heads[h].dq == b.heads[h].dq);
        CHECK(a.heads[h].dk == b.heads[h].dk);
      }
      check_reference(mask, built, a, 3);
      CHECK(convention_flops(mask) == convention_flops(lengths));
      CHECK(simulate(mask, CountMethod::formula).time_ms == simulate(lengths, CountMethod::formula).time_ms);
      const CacheResult x = replay_cache(mask), y = replay_cache(lengths);
      CHECK(x.total_counts == y.total_counts);
      CHECK(x.total_l2.dram_read_bytes == y.total_l2.dram_read_bytes);
      CHECK(x.total_l2.dram_write_bytes == y.total_l2.dram_write_bytes);
      // Padding skips keys: fewer bytes and FLOPs than the unpadded problem.
      Config unpadded = mask;
      unpadded.problem.mask = false;
      CHECK(total(closed_form_counts(mask)).io_read_bytes() < total(closed_form_counts(unpadded)).io_read_bytes());
      CHECK(convention_flops(mask) < convention_flops(unpadded));
    }
  // standard keeps its mask pass over every score: its convention and counts are its own.
  Config standard = mask_config(Algo::standard, Pass::fwdbwd, 4, 97, 16, 32);
  CHECK(key_length_runs(standard).empty());
  Config plain = standard;
  plain.problem.mask = false;
  CHECK(convention_flops(standard) == convention_flops(plain));
}

TEST_CASE("key padding: the mask's lengths in runs are key_padding_length's, in O(runs) for a huge batch, and past "
          "the model's runs the configuration is refused naming mask",
          "[padding][mask][limits]") {
  for (const auto& [b, n] : {std::pair<int64_t, int64_t>{1, 7}, {4, 300}, {7, 5}, {64, 1024}, {1000, 97}, {33, 66}}) {
    const Config c = mask_config(Algo::flash2, Pass::fwd, b, n, 16, 16);
    CAPTURE(b, n);
    std::vector<KeyLengthRun> expected;
    for (int64_t s = 0; s < b; ++s) {
      const int64_t len = key_padding_length(s, b, n);
      CHECK(len == n - s * n / (2 * b));
      CHECK(sequence_keys(c, s) == len);
      if (expected.empty() || expected.back().keys != len) expected.push_back({s, 0, len});
      ++expected.back().count;
    }
    CHECK(key_length_runs(c) == expected);
  }
  Config huge = mask_config(Algo::flash1, Pass::fwdbwd, int64_t{1} << 40, 64, 16, 16);
  huge.problem.heads = 1;
  const std::vector<KeyLengthRun> runs = key_length_runs(huge);
  CHECK(runs.size() == 32);  // 64 − ⌊b·64 / 2^41⌋ takes the values 64 … 33
  CHECK(runs.back().keys == 33);
  CHECK(runs.front().keys == 64);
  Config many = mask_config(Algo::flash2, Pass::fwd, int64_t{1} << 17, int64_t{1} << 18, 256, 256);
  const std::string what = test::refusal_of(many, Field::mask);
  CHECK_THAT(what, Catch::Contains("limit"));
  CHECK(what.find('\n') == std::string::npos);
  CHECK(kMaxKeyLengthRuns == 65536);
  // Within the runs, but past the time model's runs × blocks per head: refused by the limits.
  Config blocks = mask_config(Algo::flash2, Pass::bwd, int64_t{1} << 16, int64_t{1} << 18, 64, 64);
  REQUIRE(test::refusal_of(blocks, Field::mask) == "accepted");
  try {
    check_limits(blocks, CountMethod::formula);
    FAIL("accepted");
  } catch (const InvalidInput& e) {
    CHECK(e.field() == Field::mask);
    CHECK_THAT(e.what(), Catch::Contains("flash2_bwd"));
  }
  Config fine = mask_config(Algo::flash2, Pass::bwd, 64, 4096, 64, 64);
  CHECK_NOTHROW(check_limits(fine, CountMethod::formula));
}

TEST_CASE("key padding: the refusals name their field in one line: mask with causal or key lengths or blocksparse, "
          "key lengths with standard, blocksparse or a window, paging of the backward",
          "[padding][errors]") {
  const auto refused = [](const Config& c, Field field, const std::string& says) {
    const std::string what = test::refusal_of(c, field);
    INFO(what);
    CHECK(what.rfind(std::string(field_name(field)) + ": ", 0) == 0);
    CHECK(what.find(says) != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  };
  for (Algo algo : {Algo::flash1, Algo::flash2}) {
    CAPTURE(to_string(algo));
    Config causal = mask_config(algo, Pass::fwdbwd, 4, 97, 16, 32);
    CHECK(test::refusal_of(causal, Field::mask) == "accepted");
    causal.problem.causal = true;
    refused(causal, Field::mask, "causal aligns each sequence's last query with its last key, so flash1 and flash2 "
                                 "take the built-in padding lengths (below N) without causal");
    Config both = mask_config(algo, Pass::fwd, 2, 97, 16, 32);
    both.problem.key_lengths = lengths_of({97, 50});
    refused(both, Field::mask, "the built-in padding lengths or key_lengths, not both");
    Config window = padded_config(algo, Pass::fwd, kShapes[3]);  // lengths >= Nq, as a window needs
    window.problem.causal = false;
    window.problem.window_left = 8;
    refused(window, Field::window_left, "per-sequence key lengths");
    Config mask_window = mask_config(algo, Pass::fwd, 2, 97, 16, 32);
    mask_window.problem.window_right = 8;
    refused(mask_window, Field::window_right, "the mask's padding");
  }
  Config standard = padded_config(Algo::standard, Pass::fwd, kShapes[0]);
  refused(standard, Field::key_lengths, "mask");
  Config sparse = padded_config(Algo::blocksparse, Pass::fwd, kShapes[0]);
  refused(sparse, Field::key_lengths, "not over a block mask");
  Config sparse_mask = mask_config(Algo::blocksparse, Pass::fwd, 2, 97, 16, 32);
  refused(sparse_mask, Field::mask, "not over a block mask");
  Config paged = padded_config(Algo::flash2, Pass::fwdbwd, kShapes[0]);
  paged.page_size = 16;
  refused(paged, Field::page_size, "forward only");
  // The forward keeps its KV-cache combinations: lengths or the mask with splits and pages.
  Config cache = mask_config(Algo::flash2, Pass::fwd, 4, 97, 16, 32);
  cache.splits = 2;
  cache.page_size = 16;
  CHECK(test::refusal_of(cache, Field::mask) == "accepted");
  CHECK(closed_form_counts(cache) == walk_counts(cache));
}

TEST_CASE("key padding: the L2 model replays what the closed form counts, reading each sequence's own keys, and the "
          "time model predicts less time when every sequence is shorter",
          "[padding][cache][time]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (Pass pass : {Pass::fwd, Pass::bwd}) {
      Config c = test::tiled_config(algo, pass, 4, 4, 512, 64, 64, 64, false);
      Config padded = c;
      padded.problem.key_lengths = lengths_of({512, 64, 300, 1});
      CAPTURE(to_string(algo), to_string(pass));
      const CacheResult r = replay_cache(padded), full = replay_cache(c);
      CHECK(r.total_counts == total(closed_form_counts(padded)));
      CHECK(r.total_l2.dram_read_bytes < full.total_l2.dram_read_bytes);
      // At least each sequence's K and V (4 heads, fp16), read once.
      CHECK(r.total_l2.dram_read_bytes >= 2 * 4 * (512 + 64 + 300 + 1) * 64 * 2);
      if (pass == Pass::bwd)  // dK, dV of every key reach DRAM (zeros past a length)
        CHECK(r.total_l2.dram_write_bytes >= 2 * 4 * 4 * 512 * 64 * 2);
      // A grid of several waves (flash2) or one block per head (flash1), whose longest blocks are
      // shorter: every sequence below Nk.
      Config wide = c;
      wide.problem.heads = 32;
      Config shorter = wide;
      shorter.problem.key_lengths = lengths_of({256, 64, 300, 1});
      const SimResult a = simulate(shorter, CountMethod::formula), b = simulate(wide, CountMethod::formula);
      CHECK(a.time_ms < b.time_ms);
    }
}
