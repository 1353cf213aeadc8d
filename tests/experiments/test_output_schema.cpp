// The output schema (docs/rows.md): csv header = sim::row_columns(),
// every key column filled, one kernel=total row per configuration, json = context + rows.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_harness.h"
#include "sim/row.h"

using namespace flashio::cli::test;

namespace {

// The key columns of docs/rows.md; mask, dropout and block_mask are variants that may be at
// defaults (varlen, 0 or 1, is always written).
const std::vector<std::string> kAlwaysFilled = {"source", "algo",    "pass",   "kernel",
                                                "batch",  "heads",   "seqlen", "headdim",
                                                "dtype",  "causal",  "sram_bytes", "block_r",
                                                "block_c", "hw",     "mask",   "dropout", "varlen"};

struct Csv {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

Csv parse_csv(const std::string& text) {
  Csv csv;
  const auto lines = split_lines(text);
  REQUIRE(!lines.empty());
  csv.header = split_csv(lines[0]);
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto fields = split_csv(lines[i]);
    REQUIRE(fields.size() == csv.header.size());
    std::map<std::string, std::string> row;
    for (size_t k = 0; k < fields.size(); ++k) row[csv.header[k]] = fields[k];
    csv.rows.push_back(row);
  }
  return csv;
}

// A sweep over awkward shapes: 3 algorithms × N ∈ {97, 1025} × causal × fwd/bwd = 24 configs.
const std::vector<std::string> kSweep = {"simulate", "--seqlen", "97,1025", "--headdim", "40,72",
                                         "--causal=0,1", "--pass", "fwd,bwd", "--batch", "3",
                                         "--heads", "5"};

}  // namespace

TEST_CASE("the csv header is sim::row_columns()") {
  auto args = kSweep;
  args.insert(args.end(), {"--format", "csv"});
  const auto r = run_in_process(args);
  REQUIRE(r.status == 0);
  CHECK(parse_csv(r.out).header == flashio::sim::row_columns());
}

TEST_CASE("every csv row fills every key column, and each configuration has one total row") {
  auto args = kSweep;
  args.insert(args.end(), {"--format", "csv"});
  const auto r = run_in_process(args);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const Csv csv = parse_csv(r.out);
  std::map<std::string, int> totals;  // configuration -> total rows
  std::map<std::string, double> kernel_io;
  for (const auto& row : csv.rows) {
    for (const auto& key : kAlwaysFilled) {
      INFO(key);
      CHECK(!row.at(key).empty());
    }
    CHECK(row.at("source") == "model");
    std::string config;
    for (const auto& key : flashio::sim::key_columns())
      if (key != "kernel") config += row.at(key) + "|";
    const double io = std::stod(row.at("io_read_bytes")) + std::stod(row.at("io_write_bytes"));
    if (row.at("kernel") == "total") {
      ++totals[config];
      // The total is the sum of its kernels, and carries what only totals have.
      CHECK(io == kernel_io[config]);
      CHECK(!row.at("flops").empty());
      CHECK(!row.at("extra_memory_bytes").empty());
      CHECK(!row.at("tflops").empty());
    } else {
      CHECK(totals.count(config) == 0);  // kernels come before their total
      kernel_io[config] += io;
    }
  }
  CHECK(totals.size() == 3 * 2 * 2 * 2 * 2);
  for (const auto& [config, n] : totals) CHECK(n == 1);
}

TEST_CASE("json carries a context block and the same rows as csv") {
  auto csv_args = kSweep, json_args = kSweep;
  csv_args.insert(csv_args.end(), {"--format", "csv"});
  json_args.insert(json_args.end(), {"--format", "json", "--hw", "a100-40gb"});
  csv_args.insert(csv_args.end(), {"--hw", "a100-40gb"});
  const auto csv_run = run_in_process(csv_args), json_run = run_in_process(json_args);
  REQUIRE(json_run.status == 0);
  const auto j = nlohmann::json::parse(json_run.out);
  const auto& context = j.at("context");
  CHECK(context.at("version").is_string());
  CHECK(context.at("command_line").get<std::string>().find("--format json") != std::string::npos);
  CHECK(context.at("date").get<std::string>().size() == 20);  // 2026-12-01T03:35:00Z
  REQUIRE(context.at("hardware").size() == 1);
  CHECK(context.at("hardware")[0].at("name") == "a100-40gb");
  CHECK(context.at("hardware")[0].at("sram_bytes") == 163 * 1024);
  CHECK(context.at("hardware")[0].at("l2_partitions") == 2);  // the L2 model's geometry is recorded
  CHECK(context.at("hardware")[0].at("l2_ways") == 16);
  const Csv csv = parse_csv(csv_run.out);
  REQUIRE(j.at("rows").size() == csv.rows.size());
  for (size_t i = 0; i < csv.rows.size(); ++i)
    for (const auto& column : flashio::sim::row_columns()) {
      INFO(column);
      REQUIRE(j.at("rows")[i].contains(column));
    }
  CHECK(j.at("rows")[0].at("hw") == "a100-40gb");
}

TEST_CASE("the default run compares standard and FlashAttention on GPT-2 medium (B=64 H=16 N=1024 d=64 fp16, h200)") {
  const auto r = run_in_process({"simulate", "--format", "csv"});
  REQUIRE(r.status == 0);
  std::set<std::string> algos;
  for (const auto& row : parse_csv(r.out).rows) {
    CHECK(row.at("batch") == "64");
    CHECK(row.at("heads") == "16");
    CHECK(row.at("seqlen") == "1024");
    CHECK(row.at("headdim") == "64");
    CHECK(row.at("dtype") == "fp16");
    CHECK(row.at("hw") == "h200");
    CHECK(row.at("pass") == "fwd");
    if (row.at("kernel") == "total") algos.insert(row.at("algo"));
  }
  CHECK(algos == std::set<std::string>{"standard", "flash1", "flash2"});
}

TEST_CASE("the default table shows totals, the comparison with standard, and how numbers are computed") {
  const auto r = run_in_process({"simulate"});
  REQUIRE(r.status == 0);
  const auto& t = r.out;
  for (const char* text : {"standard", "flash1", "flash2", "io ÷ std", "speedup", "extra memory",
                           "time ms", "FLOPs:", "io:", "time (h200): the time model"}) {
    INFO(text);
    CHECK(t.find(text) != std::string::npos);
  }
  CHECK(t.find("gemm_qk") == std::string::npos);  // per-kernel rows only with --kernels
  // --time roofline keeps the paper's model, and the notes say so.
  const auto roofline = run_in_process({"simulate", "--time", "roofline"});
  REQUIRE(roofline.status == 0);
  CHECK(roofline.out.find("time (h200): roofline") != std::string::npos);
  CHECK(roofline.out != t);
  CHECK(run_in_process({"simulate", "--kernels"}).out.find("gemm_qk") != std::string::npos);
}

TEST_CASE("output file: --out writes exactly what standard output gets") {
  TempDir dir;
  const auto path = dir / "rows.csv";
  const auto to_stdout = run_in_process({"simulate", "--seqlen", "1025", "--format", "csv"});
  const auto to_file =
      run_in_process({"simulate", "--seqlen", "1025", "--format", "csv", "--out", path.string()});
  REQUIRE(to_file.status == 0);
  CHECK(to_file.out.empty());
  CHECK(read_file(path) == to_stdout.out);
  // Only the file itself is left in the directory (the temporary was renamed).
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("sram sizes: --sram takes KiB as 1024 and KB as 1000 bytes into the rows") {
  const auto kib = parse_csv(run_in_process({"simulate", "--algo", "flash2", "--sram", "192KiB",
                                             "--format", "csv"}).out);
  const auto kb = parse_csv(run_in_process({"simulate", "--algo", "flash2", "--sram", "192KB",
                                            "--format", "csv"}).out);
  CHECK(kib.rows.at(0).at("sram_bytes") == "196608");
  CHECK(kb.rows.at(0).at("sram_bytes") == "192000");
}

TEST_CASE("an omitted block size comes from the paper's rule, a given one is kept") {
  // flash2 at d = 64, M = 192000 B = 96000 fp16 elements: Br = ⌈M/4d⌉ = 375, Bc = min(Br, d).
  const auto rule = parse_csv(run_in_process({"simulate", "--algo", "flash2", "--sram", "192KB",
                                              "--format", "csv"}).out);
  CHECK(rule.rows.at(0).at("block_r") == "375");
  CHECK(rule.rows.at(0).at("block_c") == "64");
  const auto given = parse_csv(run_in_process({"simulate", "--algo", "flash2", "--sram", "192KB",
                                               "--block-c", "97", "--format", "csv"}).out);
  CHECK(given.rows.at(0).at("block_r") == "375");
  CHECK(given.rows.at(0).at("block_c") == "97");
}

TEST_CASE("a sweep visits the product of its lists, algorithms included") {
  const auto r = run_in_process({"simulate", "--algo", "flash1,flash2", "--seqlen", "97:1025:x2",
                                 "--block-c", "16:64:x2", "--block-r", "32", "--format", "csv"});
  REQUIRE(r.status == 0);
  int totals = 0;
  for (const auto& row : parse_csv(r.out).rows) totals += row.at("kernel") == "total";
  CHECK(totals == 2 * 4 * 3);  // N = 97, 194, 388, 776
}

TEST_CASE("configurations that cannot exist are skipped with one summary line") {
  const auto r = run_in_process({"simulate", "--algo", "flash2", "--block-r", "64,4096",
                                 "--block-c", "64", "--format", "csv"});
  REQUIRE(r.status == 0);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find("skipped 1 of 2") != std::string::npos);
  for (const auto& row : parse_csv(r.out).rows) CHECK(row.at("block_r") == "64");
}

TEST_CASE("bound writes source=bound rows for N, d, M, and a readable report") {
  const auto r = run_in_process({"bound", "--seqlen", "1025", "--headdim", "72", "--sram",
                                 "100KiB", "--format", "csv"});
  REQUIRE(r.status == 0);
  std::set<std::string> names;
  for (const auto& row : parse_csv(r.out).rows) {
    CHECK(row.at("source") == "bound");
    CHECK(row.at("seqlen") == "1025");
    CHECK(row.at("sram_bytes") == "102400");
    names.insert(row.at("algo"));
  }
  CHECK(names.count("theorem2") == 1);
  CHECK(names.count("compulsory") == 1);
  const auto table = run_in_process({"bound", "--seqlen", "1025", "--headdim", "72"});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("derived tiling") != std::string::npos);
  CHECK(table.out.find("Theorem 2") != std::string::npos);
}

TEST_CASE("explain traces a tiny problem and shows the worked example's 8, and 9 and 6 when wrong") {
  const auto r = run_in_process({"explain"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("tiled output 8.0000") != std::string::npos);
  const auto wrong = run_in_process({"explain", "--explain-wrong", "--seqlen", "13"});
  REQUIRE(wrong.status == 0);
  CHECK(wrong.out.find("only ℓ rescaled gives 9.0000, not 8") != std::string::npos);
  CHECK(wrong.out.find("= 6.0000, not 8") != std::string::npos);
  // Standard and the backward pass get the schedule's transfers, checked against the closed form.
  const auto bwd = run_in_process({"explain", "--algo", "flash2", "--pass", "bwd", "--seqlen", "11"});
  REQUIRE(bwd.status == 0);
  CHECK(bwd.out.find("agrees with the steps above") != std::string::npos);
  CHECK(bwd.out.find("DIFFERS") == std::string::npos);
}

TEST_CASE("explain's defaults show the paper's lesson (flash1 48.75 %, flash2 30.62 % of standard) and a "
          "problem too small for it says why FlashAttention moves more") {
  const auto flash1 = run_in_process({"explain"});
  REQUIRE(flash1.status == 0);
  CHECK(flash1.out.find("N = 64, d = 16") != std::string::npos);
  CHECK(flash1.out.find("48.75% of standard attention's 40960 B") != std::string::npos);
  CHECK(flash1.out.find("Why more than standard") == std::string::npos);
  const auto flash2 = run_in_process({"explain", "--algo", "flash2"});
  REQUIRE(flash2.status == 0);
  CHECK(flash2.out.find("30.62% of standard") != std::string::npos);
  // N = 10, d = 4, 4 × 4 tiles: flash1 moves 111.8 % of standard's 1360 B (its GEMMs split the keys
  // 8 + 2: Q read twice by gemm_qk, O read back and written twice by gemm_pv, 240 B beyond one
  // call) and the note names its re-reads per key tile.
  const auto small = run_in_process({"explain", "--seqlen", "10", "--headdim", "4", "--sram", "128B"});
  REQUIRE(small.status == 0);
  CHECK(small.out.find("111.8% of standard attention's 1360 B") != std::string::npos);
  CHECK(small.out.find("Why more than standard: flash1 reads Q and its running output again for each of the "
                       "Tc = 3 key tiles") != std::string::npos);
}

#ifndef FLASHIO_WITH_CUDA
TEST_CASE("without CUDA, bench and profile say so and exit 2") {
  for (const char* sub : {"bench", "profile"}) {
    const auto r = run_in_process({sub});
    CHECK(r.status == 2);
    CHECK(r.err.find("flashio was built without CUDA") != std::string::npos);
  }
}
#endif
