// Per-sequence key lengths (docs/shapes.md, "Per-sequence key lengths"): each sequence attends to
// its own first keys of the cache; execute equals the dense reference over them, the walk and the
// closed form count what execute counts, a batch counts what its sequences would alone, lengths all
// Nk change nothing (counts and predicted time), and bad lengths or files are refused naming the field.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "sim/bounds.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/key_lengths_file.h"
#include "sim/simulate.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

KeyLengths lengths_of(std::vector<int64_t> values) {
  return {std::make_shared<const std::vector<int64_t>>(std::move(values)), "test"};
}

Config lengths_config(int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk, std::vector<int64_t> lengths,
                      int64_t br, int64_t bc, bool causal, bool pack) {
  const auto batch = static_cast<int64_t>(lengths.size());
  Config c = test::shaped_config(Algo::flash2, Pass::fwd, batch, heads, kv_heads, nq, nk, 32, br, bc, causal, pack);
  c.problem.key_lengths = lengths_of(std::move(lengths));
  return c;
}

using test::total;

}  // namespace

TEST_CASE("key lengths: execute equals the dense reference over each sequence's own keys, and the walk and the "
          "closed form count what execute counts (ragged lengths, splits, pages, causal, packed and not)",
          "[lengths]") {
  struct Shape {
    int64_t heads, kv_heads, nq, nk;
    std::vector<int64_t> lengths;
    int64_t br, bc;
    bool causal;
    int64_t splits, page;
  };
  const Shape shapes[] = {
      {4, 1, 1, 200, {200, 7, 97, 97}, 16, 32, false, 1, 0},  // decode, MQA, a run of two equal lengths
      {8, 2, 3, 160, {3, 160, 50}, 16, 16, true, 3, 0},       // splits: the short sequence's chunks are its own
      {4, 4, 5, 100, {33, 100}, 16, 16, true, 1, 16},          // paged, causal bottom-right in each sequence
      {8, 2, 2, 333, {1, 2, 333, 40, 40}, 16, 64, false, 4, 48},  // a one-key sequence, empty splits
  };
  for (const Shape& s : shapes)
    for (bool pack : {true, false}) {
      Config c = lengths_config(s.heads, s.kv_heads, s.nq, s.nk, s.lengths, s.br, s.bc, s.causal, pack);
      c.splits = s.splits;
      c.page_size = s.page;
      CAPTURE(s.heads, s.kv_heads, s.nq, s.nk, s.causal, s.splits, s.page, pack);
      const ExecuteResult r = execute(c, 5);
      test::check_forward_matches_reference(c, r);
      CHECK(closed_form_counts(c) == r.kernels);
      CHECK(walk_counts(c) == r.kernels);
    }
}

TEST_CASE("key lengths: a batch counts what its sequences would alone, and lengths all Nk change nothing, the "
          "predicted time included",
          "[lengths]") {
  const std::vector<int64_t> lengths = {4096, 100, 2048, 2048, 1};
  for (int64_t splits : {1, 3}) {
    Config c = lengths_config(32, 8, 1, 4096, lengths, 16, 128, false, true);
    c.problem.headdim = 128;
    c.tiling = {64, 128};
    c.splits = splits;
    CAPTURE(splits);
    Counts alone;
    for (const int64_t len : lengths) {
      Config one = c;
      one.problem.batch = 1;
      one.problem.seqlen_k = len;
      one.problem.key_lengths = {};
      alone += total(closed_form_counts(one));
    }
    const Counts batch = total(closed_form_counts(c));
    CHECK(batch.io_read_bytes() == alone.io_read_bytes());
    CHECK(batch.io_write_bytes() == alone.io_write_bytes());
    CHECK(batch.flops == alone.flops);

    Config full = c;
    full.problem.key_lengths = lengths_of(std::vector<int64_t>(lengths.size(), 4096));
    Config none = c;
    none.problem.key_lengths = {};
    CHECK(closed_form_counts(full) == closed_form_counts(none));
    const SimResult a = simulate(full, CountMethod::formula), b = simulate(none, CountMethod::formula);
    CHECK(a.time_ms == Approx(b.time_ms).epsilon(1e-12));
    // Shorter sequences: less to read, less time.
    const SimResult ragged = simulate(c, CountMethod::formula);
    CHECK(ragged.time_ms < b.time_ms);
    CHECK(convention_flops(c.problem) < convention_flops(none.problem));
  }
}

TEST_CASE("key lengths: the L2 model reads each sequence's own keys once", "[lengths][cache]") {
  const std::vector<int64_t> lengths = {4096, 512, 1000, 3000};
  Config c = lengths_config(16, 4, 1, 4096, lengths, 16, 128, false, true);
  c.problem.headdim = 128;
  c.tiling = {64, 128};
  int64_t kv_bytes = 0;
  for (const int64_t len : lengths) kv_bytes += 2 * 4 * len * 128 * 2;
  const SimResult r = simulate(c, CountMethod::cache);
  const double dram_read = static_cast<double>(r.total_dram.read_bytes);
  CHECK(dram_read >= 0.99 * static_cast<double>(kv_bytes));
  CHECK(dram_read <= 1.05 * static_cast<double>(kv_bytes));
}

TEST_CASE("key lengths: a count other than B, a length outside 1..Nk, causal lengths below Nq, standard or "
          "blocksparse are refused naming key_lengths, and flash1 and the backward take them",
          "[lengths]") {
  auto refusal = [](const Config& c) { return test::refusal_of(c, Field::key_lengths); };
  Config c = lengths_config(4, 2, 3, 100, {100, 50, 3}, 16, 32, true, true);
  CHECK(refusal(c) == "accepted");
  c.problem.batch = 4;
  CHECK_THAT(refusal(c), Catch::Contains("B = 4"));
  c.problem.batch = 3;
  c.problem.key_lengths = lengths_of({100, 101, 3});
  CHECK_THAT(refusal(c), Catch::Contains("1 to Nk = 100"));
  c.problem.key_lengths = lengths_of({100, 0, 3});
  CHECK_THAT(refusal(c), Catch::Contains("1 to Nk"));
  c.problem.key_lengths = lengths_of({100, 2, 3});
  CHECK_THAT(refusal(c), Catch::Contains("lengths >= seqlen"));
  c.problem.causal = false;
  CHECK(refusal(c) == "accepted");
  Config bwd = c;
  bwd.problem.pass = Pass::fwdbwd;
  CHECK(refusal(bwd) == "accepted");
  Config f1 = c;
  f1.algo = Algo::flash1;
  CHECK(refusal(f1) == "accepted");
  f1.problem.pass = Pass::bwd;
  CHECK(refusal(f1) == "accepted");
  Config standard = c;
  standard.algo = Algo::standard;
  CHECK_THAT(refusal(standard), Catch::Contains("standard pads the keys with its mask pass"));
  Config sparse = c;
  sparse.algo = Algo::blocksparse;
  sparse.problem.kv_heads = 0, sparse.problem.seqlen_k = 0, sparse.problem.seqlen = 100;
  CHECK_THAT(refusal(sparse), Catch::Contains("not over a block mask"));
}

TEST_CASE("key lengths files: one positive integer a line, blank and # lines skipped, a bad line refused by "
          "number",
          "[lengths][files]") {
  const std::string path = "test_key_lengths.txt";
  auto write = [&](const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  };
  write("# lengths\n4096\n\n  17 \r\n1\n");
  const KeyLengths k = read_key_lengths(path);
  REQUIRE(!k.empty());
  CHECK(*k.values == std::vector<int64_t>{4096, 17, 1});
  CHECK(k.source == path);
  for (const std::string& bad : {std::string("12\nx\n"), std::string("12\n-3\n"), std::string("12\n0\n"),
                                 std::string("3.5\n"), std::string("# only a comment\n")}) {
    write(bad);
    CAPTURE(bad);
    try {
      (void)read_key_lengths(path);
      FAIL("accepted");
    } catch (const InvalidInput& e) {
      CHECK(e.field() == Field::key_lengths);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  std::remove(path.c_str());
  CHECK_THROWS_AS(read_key_lengths("no/such/file"), InvalidInput);
}

TEST_CASE("key lengths: the compulsory bound reads each sequence's own K and V once, and the forward's io stays above it",
          "[lengths][bounds]") {
  const std::vector<int64_t> lengths = {4096, 100, 2048, 7};
  Config c = lengths_config(16, 4, 1, 4096, lengths, 16, 128, false, true);
  c.problem.headdim = 128;
  c.tiling = {64, 128};
  int64_t kv = 0;
  for (const int64_t len : lengths) kv += 2 * 4 * len * 128 * 2;
  const int64_t q_o = 4 * 16 * 1 * 128 * 2;
  double io = 0;
  for (const KernelCounts& k : closed_form_counts(c)) io += static_cast<double>(k.counts.io_read_bytes() + k.counts.io_write_bytes());
  for (const Bound& b : bounds(c))
    if (b.algo == RowAlgo::compulsory) {
      CHECK(b.read_bytes == Approx(static_cast<double>(kv + q_o)));
      CHECK(b.write_bytes == Approx(static_cast<double>(q_o)));
      CHECK(io >= b.read_bytes + b.write_bytes);
    }
}
