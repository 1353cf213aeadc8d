// The row schema: every key column filled, one total row per configuration, CSV round trip,
// bad files named by line; the typed identity columns (source, algo, pass, kernel, dtype): every
// spelling reads back as itself, an unknown one is refused naming what is allowed.
#include <sstream>
#include <string>
#include <vector>

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
  CHECK(total.is_total());
  CHECK(cell(total, "kernel") == "total");
  for (size_t i = 0; i + 1 < rows.size(); ++i) CHECK(rows[i].kernel == res.kernels[i].kind);
  double io = 0;
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    io += *rows[i].io_read_bytes;
    CHECK_FALSE(rows[i].flops.has_value());  // the convention belongs to the configuration
  }
  CHECK(io == *total.io_read_bytes);
  CHECK(*total.flops == convention_flops(p));
  CHECK(*total.tflops == Approx(*total.flops / (*total.time_ms * 1e-3) / 1e12));
  for (const auto& col : key_columns()) {
    // Only blocksparse has a mask; only a lengths file gives lengths; only a built tiling a family.
    if (col == "block_mask" || col == "lengths" || col == "kernel_impl") continue;
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
  CHECK(peers[0].source == RowSource::peer);
  CHECK(peers[0].algo == RowAlgo::torch_flash);
  CHECK(peers[0].is_total());
  CHECK_FALSE(peers[0].block_r.has_value());
  CHECK(*peers[0].tflops == 308.0);
}

TEST_CASE("a malformed rows file is rejected with its line number") {
  const std::string header = "source,algo,pass,kernel,dtype,seqlen\n";
  std::stringstream bad(header + "model,flash2,fwd,total,fp16,1024\nmodel,flash2,fwd,total,fp16,ten\n");
  CHECK_THROWS_WITH(read_rows_csv(bad, "r.csv"), Catch::Contains("r.csv:3:"));
  std::stringstream short_line(header + "model,flash2\n");
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
    if (b.algo == RowAlgo::compulsory) compulsory = b.total_bytes();
    if (b.algo == RowAlgo::theorem2) theorem2 = b.total_bytes();
    if (b.algo == RowAlgo::saha_ye) saha = b.total_bytes();
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
  CHECK(cached.back().source == RowSource::cache);
  CHECK(model.back().source == RowSource::model);
  CHECK(*cached.back().io_read_bytes == *model.back().io_read_bytes);
  REQUIRE(cached.back().dram_read_bytes.has_value());
  // A cold L2 much larger than the problem: every input is read from DRAM once, no more.
  const double inputs = 3.0 * 2 * 2 * 256 * 64 * 2;
  CHECK(*cached.back().dram_read_bytes == inputs);
}

namespace {

// One model row of an awkward shape (N = 97, d = 40), written and read back through the CSV.
Row csv_round_trip(const Row& row) {
  std::stringstream s;
  s << csv_header() << "\n" << to_csv_line(row) << "\n";
  const auto back = read_rows_csv(s, "mem");
  REQUIRE(back.size() == 1);
  return back.front();
}

Row awkward_row() {
  Problem p;
  p.seqlen = 97;
  p.headdim = 40;
  return rows_from_result(
             simulate(make_config(Algo::flash2, p, hardware_preset("h200")), CountMethod::formula))
      .back();
}

// The text of the InvalidInput that reading `text` throws ("" when it reads).
std::string read_error(const std::string& text) {
  std::stringstream s(text);
  try {
    read_rows_csv(s, "r.csv");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every spelling of the identity columns is the one files carry, and reads back") {
  // The csv cells stay what they were when these columns were strings (docs/rows.md).
  CHECK(allowed_row_sources() == "model, cache, measured, peer, bound");
  CHECK(allowed_row_algos() ==
        "standard, flash1, flash2, blocksparse, torch_flash, torch_cudnn, torch_efficient, "
        "torch_math, compulsory, theorem2, saha_ye, standard_theta");
  const Row base = awkward_row();
  for (RowSource s : all_row_sources()) {
    INFO(to_string(s));
    CHECK(parse_row_source(to_string(s)) == s);
    Row r = base;
    r.source = s;
    CHECK(csv_round_trip(r).source == s);
    CHECK(to_json(r)["source"] == to_string(s));
  }
  for (RowAlgo a : all_row_algos()) {
    INFO(to_string(a));
    CHECK(parse_row_algo(to_string(a)) == a);
    Row r = base;
    r.algo = a;
    CHECK(csv_round_trip(r).algo == a);
    CHECK(cell(r, "algo") == to_string(a));
  }
  for (Algo a : {Algo::standard, Algo::flash1, Algo::flash2, Algo::blocksparse}) {
    INFO(to_string(a));
    CHECK(to_string(row_algo(a)) == to_string(a));  // the model's algorithms keep their spelling
    CHECK(model_algo(row_algo(a)) == a);
  }
  for (RowAlgo a : {RowAlgo::torch_flash, RowAlgo::torch_math, RowAlgo::theorem2,
                    RowAlgo::standard_theta})
    CHECK_FALSE(model_algo(a).has_value());  // peers and bounds are no algorithm of the model
  for (Pass p : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) {
    Row r = base;
    r.pass = p;
    CHECK(csv_round_trip(r).pass == p);
  }
  for (DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    Row r = base;
    r.dtype = t;
    CHECK(csv_round_trip(r).dtype == t);
  }
  Row total = base;
  total.kernel.reset();
  CHECK(cell(total, "kernel") == "total");
  CHECK(csv_round_trip(total).is_total());
  for (KernelKind k : all_kernel_kinds()) {
    INFO(to_string(k));
    Row r = base;
    r.kernel = k;
    CHECK(cell(r, "kernel") == to_string(k));
    CHECK_FALSE(r.is_total());
    CHECK(csv_round_trip(r).kernel == k);
  }
}

TEST_CASE("an identity cell that is not one of its spellings is refused: file, line, column, "
          "what is allowed") {
  const std::string header = "source,algo,pass,kernel,batch,seqlen,headdim,dtype\n";
  const std::string good = "measured,flash2,fwd,total,3,97,40,fp16\n";
  REQUIRE(read_error(header + good).empty());
  struct Case {
    std::string line, column, value, allowed;
  };
  const std::vector<Case> cases = {
      {"model_x,flash2,fwd,total,3,97,40,fp16", "source", "model_x", allowed_row_sources()},
      {"measured,flash3,fwd,total,3,97,40,fp16", "algo", "flash3", allowed_row_algos()},
      {"measured,torch_sdpa,fwd,total,3,97,40,fp16", "algo", "torch_sdpa", allowed_row_algos()},
      {"measured,flash2,forward,total,3,97,40,fp16", "pass", "forward", allowed_passes()},
      {"measured,flash2,fwd,Total,3,97,40,fp16", "kernel", "Total", "total, gemm_qk,"},
      {"measured,flash2,fwd,flash3_fwd,3,97,40,fp16", "kernel", "flash3_fwd",
       "blocksparse_bwd_convert_dq"},
      {"measured,flash2,fwd,total,3,97,40,fp8", "dtype", "fp8", allowed_dtypes()},
      {"measured,flash2,fwd,total,3,97,40,", "dtype", "", allowed_dtypes()},  // empty: not known
  };
  for (const Case& c : cases) {
    INFO(c.line);
    const std::string error = read_error(header + good + c.line + "\n");
    CHECK_THAT(error, Catch::StartsWith("r.csv:3: column '" + c.column + "': '" + c.value + "'"));
    CHECK_THAT(error, Catch::Contains("allowed: ") && Catch::Contains(c.allowed));
    CHECK(error.find('\n') == std::string::npos);
  }
  // A header without an identity column: the file cannot say what its rows are.
  const std::vector<std::string> columns = {"source", "algo", "pass", "kernel", "dtype", "seqlen"};
  const std::vector<std::string> cells = {"measured", "flash2", "fwd", "total", "fp16", "97"};
  for (size_t left_out = 1; left_out < 5; ++left_out) {
    INFO(columns[left_out]);
    std::string h, line;
    for (size_t i = 0; i < columns.size(); ++i)
      if (i != left_out) {
        h += (h.empty() ? "" : ",") + columns[i];
        line += (line.empty() ? "" : ",") + cells[i];
      }
    const std::string error = read_error(h + "\n" + line + "\n");
    CHECK_THAT(error, Catch::StartsWith("r.csv:1: header has no '" + columns[left_out] + "' column"));
  }
}

TEST_CASE("flashio compare output is read as its measured rows: time, tensor FLOPs and the io and dram totals "
          "it keeps (no read/write split)") {
  std::istringstream in(
      "# a comment line\n"
      "algo,pass,kernel,batch,heads,seqlen,headdim,dtype,causal,sram_bytes,block_r,block_c,hw,mask,dropout,"
      "block_mask,predicted_source,io_predicted,io_measured,rel_err_io,dram_predicted,dram_measured,rel_err_dram,"
      "flops_predicted,flops_measured,rel_err_flops,time_predicted,time_measured,rel_err_time\n"
      "flash2,fwd,total,3,5,97,40,bf16,1,232448,64,32,h200,0,0,,cache,100,101,0.01,80,79,-0.0125,64,64,0,"
      "0.5,0.25,1\n");
  const std::vector<Row> rows = read_rows_csv(in, "cmp.csv");
  REQUIRE(rows.size() == 1);
  const Row& r = rows.front();
  CHECK(r.source == RowSource::measured);
  CHECK(r.algo == RowAlgo::flash2);
  CHECK(r.batch == 3);
  CHECK(r.seqlen == 97);
  CHECK(r.headdim == 40);
  CHECK(r.dtype == DType::bf16);
  CHECK(r.causal == 1);
  CHECK(*r.block_r == 64);
  CHECK(*r.block_c == 32);
  CHECK(r.is_total());
  CHECK(*r.time_ms == 0.25);         // the measured time, not the predicted 0.5
  CHECK(*r.flops_tensor == 64);
  CHECK(*r.io_total_bytes == 101);
  CHECK(*r.dram_total_bytes == 79);
  CHECK_FALSE(r.io_read_bytes.has_value());  // the split is unknown
}

TEST_CASE("a subcommand's json output reads as the same rows as its csv, and a malformed json is refused in one "
          "line naming the file") {
  const Config c = make_config(Algo::flash1, Problem{}, hardware_preset("h200"));
  const std::vector<Row> rows = rows_from_result(simulate(c, CountMethod::formula));
  std::string json = R"({"context": {"subcommand": "simulate"}, "rows": [)";
  std::string csv = csv_header() + "\n";
  for (size_t k = 0; k < rows.size(); ++k) {
    json += (k ? "," : "") + to_json(rows[k]).dump();
    csv += to_csv_line(rows[k]) + "\n";
  }
  json += "]}";
  std::istringstream csv_in(csv);
  const std::vector<Row> from_csv = read_rows_csv(csv_in, "r.csv");
  const std::vector<Row> from_json = read_rows_json(json, "r.json");
  REQUIRE(from_json.size() == from_csv.size());
  for (size_t k = 0; k < from_csv.size(); ++k) CHECK(to_csv_line(from_json[k]) == to_csv_line(from_csv[k]));
  try {
    read_rows_json(R"({"rows": 5})", "bad.json");
    FAIL("accepted");
  } catch (const InvalidInput& e) {
    CHECK(std::string(e.what()).find("bad.json: no \"rows\" array") != std::string::npos);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
  CHECK_THROWS_AS(read_rows_json("{not json", "x.json"), InvalidInput);
}

TEST_CASE("kernel_impl: the forward's family round-trips through csv and json, reads as unset from a file without "
          "the column, and a cell that is not a family is refused naming the allowed ones") {
  Problem p;
  p.seqlen = 97, p.pass = Pass::fwdbwd;
  const Config c = make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt, {TilingSource::rule, 128, 64});
  const std::vector<Row> rows = rows_from_result(simulate(c, CountMethod::formula));
  for (const Row& r : rows) CHECK(cell(r, "kernel_impl") == "wgmma");  // d = 64's one kernel at 128x64
  std::stringstream s;
  s << csv_header() << "\n";
  for (const auto& r : rows) s << to_csv_line(r) << "\n";
  const auto back = read_rows_csv(s, "mem");
  REQUIRE(back.size() == rows.size());
  CHECK(back.front().kernel_impl == MmaKind::wgmma);
  std::string json = R"({"rows": [)" + to_json(rows.back()).dump() + "]}";
  CHECK(read_rows_json(json, "r.json").front().kernel_impl == MmaKind::wgmma);
  // The bounds run no kernel.
  for (const Row& b : bound_rows(c)) CHECK_FALSE(b.kernel_impl.has_value());

  std::stringstream old("source,algo,pass,kernel,dtype,block_r,block_c\nmeasured,flash2,fwd,total,fp16,128,64\n");
  CHECK_FALSE(read_rows_csv(old, "old.csv").front().kernel_impl.has_value());
  std::stringstream empty("source,algo,pass,kernel,dtype,kernel_impl\nmodel,standard,fwd,total,fp16,\n");
  CHECK_FALSE(read_rows_csv(empty, "e.csv").front().kernel_impl.has_value());
  std::stringstream bad("source,algo,pass,kernel,dtype,kernel_impl\nmodel,flash2,fwd,total,fp16,wgmma2\n");
  CHECK_THROWS_WITH(read_rows_csv(bad, "b.csv"), Catch::Contains("b.csv:2:") && Catch::Contains("'kernel_impl'") &&
                                                     Catch::Contains("mma_sync, wgmma, wgmma_ws"));
}
