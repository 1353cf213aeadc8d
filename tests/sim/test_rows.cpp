// The row schema: every key column filled, one total row per configuration, CSV round trip,
// bad files named by line.
#include <sstream>

#include <catch2/catch.hpp>

#include "sim/bounds.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio::sim;

TEST_CASE("simulate rows: one per kernel plus a total that sums them and carries the FLOP convention") {
  Problem p;
  p.pass = Pass::fwdbwd;
  const auto res = simulate(make_config(Algo::flash2, p, hardware_preset("h200")), CountMethod::formula);
  const auto rows = rows_from_result(res);
  REQUIRE(rows.size() == res.kernels.size() + 1);
  const Row& total = rows.back();
  CHECK(total.kernel == "total");
  double io = 0;
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    io += *rows[i].io_read_bytes;
    CHECK_FALSE(rows[i].flops.has_value());  // the convention belongs to the configuration
  }
  CHECK(io == *total.io_read_bytes);
  CHECK(*total.flops == convention_flops(p));
  CHECK(*total.tflops == Approx(*total.flops / (*total.time_ms * 1e-3) / 1e12));
  for (const auto& col : key_columns()) {
    if (col == "block_mask") continue;  // only blocksparse has one
    CHECK_FALSE(cell(total, col).empty());
  }
  CHECK(cell(total, "dram_read_bytes").empty());  // not known to the closed form: empty, not 0
}

TEST_CASE("CSV rows round-trip and read peers.py's subset of columns") {
  Problem p;
  p.seqlen = 97;
  const auto rows = rows_from_result(
      simulate(make_config(Algo::flash1, p, hardware_preset("h200")), CountMethod::formula));
  std::stringstream s;
  s << csv_header() << "\n";
  for (const auto& r : rows) s << to_csv_line(r) << "\n";
  const auto back = read_rows_csv(s, "mem");
  REQUIRE(back.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) CHECK(to_csv_line(back[i]) == to_csv_line(rows[i]));

  std::stringstream peer(
      "source,algo,pass,kernel,batch,heads,seqlen,headdim,dtype,causal,hw,flops,time_ms,tflops\n"
      "peer,torch_flash,fwd,total,16,16,4096,64,fp16,0,h200,1099511627776,3.57,308.0\n");
  const auto peers = read_rows_csv(peer, "peers.csv");
  REQUIRE(peers.size() == 1);
  CHECK(peers[0].algo == "torch_flash");
  CHECK_FALSE(peers[0].block_r.has_value());
  CHECK(*peers[0].tflops == 308.0);
}

TEST_CASE("a malformed rows file is rejected with its line number") {
  std::stringstream bad("source,algo,seqlen\nmodel,flash2,1024\nmodel,flash2,ten\n");
  CHECK_THROWS_WITH(read_rows_csv(bad, "r.csv"), Catch::Contains("r.csv:3:"));
  std::stringstream short_line("source,algo,seqlen\nmodel,flash2\n");
  CHECK_THROWS_WITH(read_rows_csv(short_line, "r.csv"), Catch::Contains("r.csv:2:"));
  std::stringstream no_header("");
  CHECK_THROWS_AS(read_rows_csv(no_header, "r.csv"), InvalidInput);
}

TEST_CASE("bounds: flash1's io sits between the lower-bound shape and Theorem 2's constant") {
  Problem p;
  p.batch = 1; p.heads = 1; p.seqlen = 8192; p.headdim = 64;
  Config c = make_config(Algo::flash1, p, hardware_preset("h200"));
  c.sram_bytes = 64 * 1024;
  c.tiling = rule_tiling(Algo::flash1, p, c.sram_bytes);
  Counts t;
  for (const auto& k : closed_form_counts(c)) t += k.counts;
  const double io = static_cast<double>(t.io_read_bytes() + t.io_write_bytes());
  double compulsory = 0, theorem2 = 0, saha = 0;
  for (const auto& b : bounds(c)) {
    if (b.name == "compulsory") compulsory = b.total_bytes();
    if (b.name == "theorem2") theorem2 = b.total_bytes();
    if (b.name == "saha_ye") saha = b.total_bytes();
  }
  CHECK(io >= compulsory);
  CHECK(io >= saha);
  // The fp32 running output costs 2× the element-type bytes Theorem 2's constant assumes.
  CHECK(io <= 2.2 * theorem2 + compulsory);
  CHECK(bound_rows(c).size() == bounds(c).size());
}

TEST_CASE("count=cache rows are source=cache, fill dram, and keep the walk's io") {
  Problem p;
  p.batch = 2; p.heads = 2; p.seqlen = 256; p.headdim = 64;
  const Config c = make_config(Algo::flash2, p, hardware_preset("h200"));
  const auto cached = rows_from_result(simulate(c, CountMethod::cache));
  const auto model = rows_from_result(simulate(c, CountMethod::formula));
  REQUIRE(cached.size() == model.size());
  CHECK(cached.back().source == "cache");
  CHECK(model.back().source == "model");
  CHECK(*cached.back().io_read_bytes == *model.back().io_read_bytes);
  REQUIRE(cached.back().dram_read_bytes.has_value());
  // A cold L2 much larger than the problem: every input is read from DRAM once, no more.
  const double inputs = 3.0 * 2 * 2 * 256 * 64 * 2;
  CHECK(*cached.back().dram_read_bytes == inputs);
}
