// Variable-length batches (docs/shapes.md, "Variable-length batches"; Problem::varlen): the
// sequences of a lengths file packed without padding, sequence b with n_b queries and keys. execute
// equals the dense reference of each sequence alone and counts what the walk and the closed form
// count; the batch counts exactly its sequences run alone, kernel by kernel; packing never moves
// more than the padded layout; the packed addresses of different sequences do not overlap; and
// what the kernels do not build is refused naming varlen.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/bounds.h"
#include "sim/cache_replay.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/explain.h"
#include "sim/row.h"
#include "sim/simulate.h"
#include "sim/split_kv.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

KeyLengths lengths_of(std::vector<int64_t> values) {
  return {std::make_shared<const std::vector<int64_t>>(std::move(values)), "test"};
}

// A varlen batch of `lengths` (each 1 … n) on flash2 with an explicit tiling.
Config varlen_config(Pass pass, int64_t heads, int64_t kv_heads, int64_t n, std::vector<int64_t> lengths, int64_t d,
                     int64_t br, int64_t bc, bool causal, bool pack) {
  const auto batch = static_cast<int64_t>(lengths.size());
  Config c = test::shaped_config(Algo::flash2, pass, batch, heads, kv_heads, n, n, d, br, bc, causal, pack);
  c.problem.seqlen_k = 0;
  c.problem.key_lengths = lengths_of(std::move(lengths));
  c.problem.varlen = true;
  return c;
}

// Sequence b of the batch alone: B = 1, Nq = Nk = n_b, no lengths.
Config alone(const Config& c, int64_t n) {
  Config one = c;
  one.problem.batch = 1;
  one.problem.seqlen = n;
  one.problem.seqlen_k = 0;
  one.problem.key_lengths = {};
  one.problem.varlen = false;
  return one;
}

using test::total;

int64_t io(const Counts& c) { return c.io_read_bytes() + c.io_write_bytes(); }

struct Shape {
  int64_t heads, kv_heads, n;
  std::vector<int64_t> lengths;
  int64_t br, bc;
};

}  // namespace

TEST_CASE("varlen: execute equals the dense reference of each sequence alone, forward and backward, and the walk and "
          "the closed form count exactly what execute counts (awkward lengths, GQA packed and not, causal and not, "
          "Br != Bc)",
          "[varlen]") {
  const Shape shapes[] = {
      {2, 2, 130, {1, 17, 130, 97}, 16, 32},         // one-row and one-tile sequences, the longest N
      {4, 2, 97, {97, 33, 33, 5}, 32, 16},           // a run of equal lengths, Br > Bc
      {4, 1, 100, {64, 1, 100}, 16, 16},             // multi-query, round lengths
      {6, 3, 61, {40, 61, 2, 61, 61}, 48, 16},       // rows of a group crossing heads inside a tile
  };
  for (const Shape& s : shapes)
    for (bool causal : {false, true})
      for (bool pack : {true, false}) {
        const Config c = varlen_config(Pass::fwdbwd, s.heads, s.kv_heads, s.n, s.lengths, 16, s.br, s.bc, causal, pack);
        CAPTURE(s.heads, s.kv_heads, s.n, s.br, s.bc, causal, pack);
        const ExecuteResult r = execute(c, 11);
        REQUIRE(static_cast<int64_t>(r.heads.size()) == c.problem.batch_heads());
        for (int64_t bh = 0; bh < c.problem.batch_heads(); ++bh)
          CHECK(r.heads[static_cast<size_t>(bh)].o.rows() == s.lengths[static_cast<size_t>(bh / s.heads)]);
        test::check_group_reference(c, r);
        CHECK(closed_form_counts(c) == r.kernels);
        CHECK(walk_counts(c) == r.kernels);
        Config fwd = c;
        fwd.problem.pass = Pass::fwd;
        CHECK(closed_form_counts(fwd) == walk_counts(fwd));
      }
}

TEST_CASE("varlen: the scores a packed sequence's head keeps are its own n_b × n_b, causal its own diagonal",
          "[varlen]") {
  for (bool causal : {false, true}) {
    const Config c = varlen_config(Pass::fwd, 2, 2, 130, {1, 17, 130}, 16, 16, 16, causal, true);
    for (int64_t bh = 0; bh < c.problem.batch_heads(); ++bh) {
      const int64_t n = c.problem.queries_of(bh / 2);
      const ScoreMask keep = kept_scores(c, bh);
      REQUIRE(keep.rows() == n);
      REQUIRE(keep.cols() == n);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t k = 0; k < n; ++k) CHECK(keep(r, k) == (!causal || k <= r));
    }
  }
}

TEST_CASE("varlen: a batch counts exactly the sum of its sequences run alone (B = 1, Nq = Nk = n_b), kernel by kernel: "
          "io of every tensor, FLOPs and the FLOP convention",
          "[varlen]") {
  const Shape shapes[] = {
      {8, 8, 1000, {1, 17, 1000, 97, 130, 97, 97}, 128, 64},  // Br != Bc, repeated lengths, one row
      {8, 2, 1000, {1, 17, 1000, 97, 130, 97, 97}, 64, 128},  // GQA, Bc > Br
      {32, 8, 4096, {4096, 1, 2048, 2048, 513}, 128, 128},    // round and awkward
      {4, 1, 1024, {1024, 1024, 1024}, 128, 64},              // every length N
  };
  for (const Shape& s : shapes)
    for (bool causal : {false, true})
      for (bool pack : {true, false}) {
        const Config c = varlen_config(Pass::fwdbwd, s.heads, s.kv_heads, s.n, s.lengths, 64, s.br, s.bc, causal, pack);
        CAPTURE(s.heads, s.kv_heads, s.n, s.br, s.bc, causal, pack);
        const std::vector<KernelCounts> batch = closed_form_counts(c);
        std::vector<Counts> sum(batch.size());
        double flops = 0;
        for (const int64_t n : s.lengths) {
          const Config one = alone(c, n);
          const std::vector<KernelCounts> k = closed_form_counts(one);
          REQUIRE(k.size() == batch.size());
          for (size_t i = 0; i < k.size(); ++i) {
            REQUIRE(k[i].kind == batch[i].kind);
            sum[i] += k[i].counts;
          }
          flops += convention_flops(one);
        }
        for (size_t i = 0; i < batch.size(); ++i) {
          INFO(to_string(batch[i].kind) << "\n  batch: " << describe(batch[i].counts) << "\n  sum:   " << describe(sum[i]));
          CHECK(batch[i].counts == sum[i]);
        }
        CHECK(convention_flops(c) == Approx(flops).epsilon(1e-12));
        CHECK(total(walk_counts(c)) == total(batch));
      }
}

TEST_CASE("varlen: the grids span the longest sequence, n_max, not N, and a block past its sequence's tiles moves "
          "nothing",
          "[varlen]") {
  const Config c = varlen_config(Pass::fwdbwd, 4, 2, 1024, {1, 300, 17}, 64, 128, 64, true, true);
  const std::vector<KernelSchedule> kernels = build_schedule(c);
  REQUIRE(kernels.size() == 4);
  // flash2_fwd: ⌈g·n_max / Br⌉ packed (g = 2); preprocess, convert_dq: ⌈n_max / Br⌉; bwd: ⌈n_max / Bc⌉.
  CHECK(kernels[0].blocks_per_head == 5);
  CHECK(kernels[0].heads == 3 * 2);
  CHECK(kernels[1].blocks_per_head == 3);
  CHECK(kernels[2].blocks_per_head == 5);
  CHECK(kernels[2].heads == 3 * 2);
  CHECK(kernels[3].blocks_per_head == 3);
  struct Recorder : ScheduleSink {
    int64_t transfers = 0;
    void transfer(const Transfer&) override { ++transfers; }
    void compute(const Flops&) override {}
  };
  // Sequence 0 (n_b = 1): only each kernel's first block does anything.
  for (const KernelSchedule& k : kernels)
    for (int64_t block = 0; block < k.blocks_per_head; ++block) {
      Recorder r;
      k.emit_block(0, block, r);
      CAPTURE(to_string(k.kind), block);
      CHECK((r.transfers > 0) == (block == 0));
    }
}

TEST_CASE("varlen: packed io is at most the padded io of the same lengths (--varlen=0), fewer FLOPs too, and equal to "
          "it (and to no lengths at all) when every length is N",
          "[varlen]") {
  for (bool causal : {false, true})
    for (bool pack : {true, false})
      for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) {
        CAPTURE(causal, pack, to_string(pass));
        const Config packed = varlen_config(pass, 8, 2, 1024, {1, 17, 1000, 513}, 64, 128, 64, causal, pack);
        Config padded = packed;
        padded.problem.varlen = false;
        if (causal) padded.problem.causal = false;  // padded causal needs every key length >= N
        const Counts p = total(closed_form_counts(packed)), q = total(closed_form_counts(padded));
        CHECK(io(p) < io(q));
        CHECK(p.flops.tensor < q.flops.tensor);
        CHECK(convention_flops(packed) < convention_flops(padded));
        CHECK(extra_memory_bytes(packed) < extra_memory_bytes(padded));

        const Config full = varlen_config(pass, 8, 2, 1024, {1024, 1024, 1024}, 64, 128, 64, causal, pack);
        Config full_padded = full;
        full_padded.problem.varlen = false;
        Config none = full_padded;
        none.problem.key_lengths = {};
        for (const Config* other : {&full_padded, &none}) {
          const std::vector<KernelCounts> a = closed_form_counts(full), b = closed_form_counts(*other);
          REQUIRE(a.size() == b.size());
          for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);  // counts and grids alike
          CHECK(convention_flops(full) == convention_flops(*other));
          CHECK(extra_memory_bytes(full) == extra_memory_bytes(*other));
        }
      }
}

TEST_CASE("varlen: the packed tensors are T·H·d elements (K, V: T·Hkv·d), head h of sequence b starts at row "
          "H·cu_b + h·n_b, and the addresses of different sequences and heads do not overlap",
          "[varlen][cache]") {
  const std::vector<int64_t> lengths = {1, 17, 1000, 97, 130, 97};
  const Config c = varlen_config(Pass::fwdbwd, 6, 2, 1000, lengths, 40, 64, 32, false, true);
  const Problem& p = c.problem;
  int64_t t = 0;
  for (const int64_t n : lengths) t += n;
  for (Tensor tensor : {Tensor::Q, Tensor::K, Tensor::V, Tensor::O, Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV,
                        Tensor::lse, Tensor::delta, Tensor::dq_accum}) {
    CAPTURE(to_string(tensor));
    const TensorShape s = tensor_shape(tensor, p);
    const int64_t heads = is_kv_tensor(tensor) ? 2 : 6;
    CHECK(s.total_elements(p.batch) == t * heads * s.cols);
    CHECK(s.cols == (tensor == Tensor::lse || tensor == Tensor::delta ? 1 : 40));
    // Each head's rows, in order: one after another from 0 to T·heads, nothing between or shared.
    const TensorAddresses addresses(p);
    const RowLayout rows(p);
    int64_t next = 0, cu = 0;
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t n = lengths[static_cast<size_t>(b)];
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t bh = b * heads + h;
        CHECK(rows.first_row(s, bh) == heads * cu + h * n);
        CHECK(rows.first_row(s, bh) == next);
        CHECK(rows.head_rows(s, bh) == n);
        CHECK(addresses.address(tensor, bh, 0, 0) ==
              addresses.address(tensor, 0, 0, 0) + static_cast<uint64_t>(next * s.cols * s.element_bytes));
        next += n;
      }
      cu += n;
    }
    CHECK(next == t * heads);
  }
  // The tensors' ranges do not overlap either: each lies below the next one's first byte.
  const TensorAddresses addresses(p);
  for (Tensor tensor : {Tensor::Q, Tensor::K, Tensor::V, Tensor::O}) {
    const TensorShape& s = addresses.shape(tensor);
    const int64_t heads = s.heads, last = p.batch * heads - 1;
    const uint64_t end = addresses.address(tensor, last, lengths.back() - 1, s.cols - 1) + s.element_bytes;
    CHECK(end - addresses.address(tensor, 0, 0, 0) == static_cast<uint64_t>(t * heads * s.cols * s.element_bytes));
    CHECK(end <= addresses.address(static_cast<Tensor>(static_cast<int>(tensor) + 1), 0, 0, 0));
  }
}

TEST_CASE("varlen: the L2 model gives rows for every kernel, equal in io to the closed form, dram at least the "
          "compulsory traffic, and the same dram as the padded layout when every length is N",
          "[varlen][cache]") {
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    const Config c = varlen_config(Pass::fwdbwd, 8, 2, 1024, {1, 17, 1000, 513}, 64, 128, 64, causal, true);
    const CacheResult r = replay_cache(c);
    const std::vector<Row> rows = cache_rows(r);
    REQUIRE(rows.size() == 5);  // four kernels and the total
    CHECK(rows.back().varlen == 1);
    const std::vector<KernelCounts> formula = closed_form_counts(c);
    for (size_t i = 0; i < formula.size(); ++i) CHECK(r.kernels[i].counts == formula[i].counts);
    double compulsory = 0;
    for (const Bound& b : bounds(c))
      if (b.algo == RowAlgo::compulsory) compulsory = b.total_bytes();
    const double dram = static_cast<double>(r.total_l2.dram_read_bytes + r.total_l2.dram_write_bytes);
    CHECK(compulsory > 0);
    CHECK(dram >= compulsory);
    CHECK(static_cast<double>(io(r.total_counts)) >= compulsory);
  }
  // Every length N: the packed layout is the padded one, address for address. The main kernels run
  // other instances (occupancy), so the replay is given one occupancy for both.
  const Config full = varlen_config(Pass::fwdbwd, 4, 4, 512, {512, 512}, 64, 128, 64, false, true);
  Config none = full;
  none.problem.varlen = false;
  none.problem.key_lengths = {};
  CacheOptions same;
  for (KernelKind k : {KernelKind::flash2_fwd, KernelKind::flash2_bwd_preprocess, KernelKind::flash2_bwd,
                       KernelKind::flash2_bwd_convert_dq})
    same.blocks_per_sm[k] = 2;
  const std::vector<Row> a = cache_rows(replay_cache(full, same)), b = cache_rows(replay_cache(none, same));
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(kernel_text(a[i].kernel));
    CHECK(a[i].varlen == 1);
    CHECK(b[i].varlen == 0);
    for (const std::string column : {"io_read_bytes", "io_write_bytes", "dram_read_bytes", "dram_write_bytes", "flops"})
      CHECK(cell(a[i], column) == cell(b[i], column));
  }
}

TEST_CASE("varlen: the compulsory bound counts the packed sizes, each sequence's n_b rows of Q, K, V and O",
          "[varlen][bounds]") {
  const std::vector<int64_t> lengths = {1, 17, 1000, 513};
  const Config c = varlen_config(Pass::fwd, 8, 2, 1024, lengths, 64, 128, 64, false, true);
  int64_t t = 0;
  for (const int64_t n : lengths) t += n;
  for (const Bound& b : bounds(c))
    if (b.algo == RowAlgo::compulsory) {
      CHECK(b.read_bytes == Approx(static_cast<double>((8 + 2 * 2) * t * 64 * 2)));  // Q; K, V of Hkv heads
      CHECK(b.write_bytes == Approx(static_cast<double>(8 * t * 64 * 2)));           // O
    }
}

TEST_CASE("varlen: refused naming varlen without lengths, with an algorithm other than flash2, Nk != N, the mask, "
          "dropout, a window, splits, a page size and in explain, lengths above N name key_lengths, causal and GQA "
          "are allowed, and --splits auto and best give 1",
          "[varlen][errors]") {
  const auto refusal = [](const Config& c) { return test::refusal_of(c, Field::varlen); };
  const Config ok = varlen_config(Pass::fwdbwd, 8, 2, 1024, {1, 17, 1000, 513}, 64, 128, 64, true, false);
  CHECK(refusal(ok) == "accepted");
  Config c = ok;
  c.problem.key_lengths = {};
  CHECK_THAT(refusal(c), Catch::Contains("allowed: varlen with key_lengths"));
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::blocksparse}) {
    c = ok;
    c.algo = algo;
    c.problem.kv_heads = 0;
    CAPTURE(to_string(algo));
    CHECK_THAT(refusal(c), Catch::Contains("FlashAttention-2's varlen API") && Catch::Contains("allowed: algo = flash2"));
  }
  c = ok;
  c.problem.seqlen_k = 2048;
  CHECK_THAT(refusal(c), Catch::Contains("allowed with varlen: seqlen_k = seqlen"));
  c.problem.seqlen_k = 1024;  // given, and equal to N
  CHECK(refusal(c) == "accepted");
  c = ok;
  c.problem.causal = false;
  c.problem.mask = true;
  CHECK_THAT(refusal(c), Catch::Contains("mask = 0"));
  c = ok;
  c.problem.dropout = 0.1;
  CHECK_THAT(refusal(c), Catch::Contains("dropout = 0"));
  c = ok;
  c.problem.causal = false;
  c.problem.window_left = 64;
  CHECK_THAT(refusal(c), Catch::Contains("no window"));
  c = ok;
  c.problem.pass = Pass::fwd;
  c.splits = 2;
  CHECK_THAT(refusal(c), Catch::Contains("splits = 1"));
  c.splits = 1;
  c.page_size = 64;
  CHECK_THAT(refusal(c), Catch::Contains("page_size = 0"));
  c = ok;
  c.problem.key_lengths = lengths_of({1, 17, 1025, 513});
  CHECK_THAT(test::refusal_of(c, Field::key_lengths), Catch::Contains("1 to N = 1024"));
  // Causal with lengths below N (each packed sequence is square), GQA packed and not.
  c = ok;
  c.gqa_pack = true;
  CHECK(refusal(c) == "accepted");
  // One query of a long sequence, few blocks: auto would split a padded decode, not a packed batch.
  Config decode = varlen_config(Pass::fwd, 2, 2, 16384, {16384}, 64, 128, 64, false, true);
  CHECK(auto_splits(decode) == 1);
  CHECK(best_splits(decode) == 1);
  Config tiny = varlen_config(Pass::fwd, 1, 1, 16, {16, 8}, 4, 4, 4, false, true);
  tiny.sram_bytes = 1024;
  try {
    (void)explain(tiny);
    FAIL("explain accepted a varlen batch");
  } catch (const InvalidInput& e) {
    CHECK(e.field() == Field::varlen);
  }
}

TEST_CASE("varlen: the models take the kernels' instances, the forward's KV-cache instance (paged_registers) and the "
          "backward's kDropout instance, and rows carry varlen as a key column, read back from csv",
          "[varlen][rows]") {
  const Config c = varlen_config(Pass::fwdbwd, 8, 2, 1024, {1, 17, 1000, 513}, 64, 128, 64, false, true);
  CHECK(runs_kv_cache_instance(c, KernelKind::flash2_fwd));
  CHECK_FALSE(runs_kv_cache_instance(c, KernelKind::flash2_bwd));
  CHECK(runs_dropout_instance(c, KernelKind::flash2_bwd));
  CHECK_FALSE(runs_dropout_instance(c, KernelKind::flash2_fwd));
  Config padded = c;
  padded.problem.varlen = false;
  CHECK_FALSE(runs_kv_cache_instance(padded, KernelKind::flash2_fwd));  // key lengths alone: the dense instance's
  const SimResult r = simulate(c, CountMethod::formula, TimeMethod::model);
  CHECK(r.time_ms > 0);
  CHECK(std::isfinite(r.time_ms));
  const Row row = config_row(c, RowSource::model);
  CHECK(row.varlen == 1);
  CHECK(cell(row, "varlen") == "1");
  CHECK(std::find(key_columns().begin(), key_columns().end(), "varlen") != key_columns().end());
  std::istringstream csv(csv_header() + "\n" + to_csv_line(row) + "\n");
  const std::vector<Row> back = read_rows_csv(csv, "test");
  REQUIRE(back.size() == 1);
  CHECK(back[0].varlen == 1);
  CHECK(config_row(padded, RowSource::model).varlen == 0);
}
