// flashio tune: its csv has the documented columns, ranks 1..n per configuration and pass with
// times ascending, marks the built tilings; bad input (standard, --time roofline, hardware without
// a calibration) is one line and exit 2.
#include <catch2/catch.hpp>

#include <map>

#include "cli_harness.h"

using namespace flashio::cli::test;

TEST_CASE("tune ranks each configuration's tilings by predicted time, built ones marked", "[tune]") {
  const CliResult r = run_in_process({"tune", "--algo", "flash1,flash2", "--pass", "fwdbwd", "--seqlen", "1000",
                                      "--batch", "3", "--heads", "5", "--causal=0,1", "--format", "csv"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() > 1);
  const auto header = split_csv(lines[0]);
  const std::vector<std::string> tail(header.end() - 6, header.end());
  CHECK(tail == std::vector<std::string>{"rank", "block_r", "block_c", "time_ms", "built", "bound_by"});
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  // Per (algo, pass, causal): ranks 1, 2, ... with times that never decrease; some built.
  std::map<std::string, std::pair<int, double>> last;
  std::map<std::string, int> built;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto cells = split_csv(lines[i]);
    REQUIRE(cells.size() == header.size());
    const std::string key = cells[col["algo"]] + " " + cells[col["pass"]] + " " + cells[col["causal"]];
    CHECK((cells[col["pass"]] == "fwd" || cells[col["pass"]] == "bwd"));  // fwdbwd ranks each pass
    const int rank = std::stoi(cells[col["rank"]]);
    const double t = std::stod(cells[col["time_ms"]]);
    auto& [prev_rank, prev_time] = last[key];
    CHECK(rank == prev_rank + 1);
    CHECK(t >= prev_time);
    prev_rank = rank, prev_time = t;
    built[key] += cells[col["built"]] == "1";
    CHECK(!cells[col["bound_by"]].empty());
  }
  CHECK(last.size() == 8);  // 2 algos × 2 passes × 2 causal
  for (const auto& [key, n] : built) CHECK(n > 0);
  // The table names the best built tiling.
  const CliResult table = run_in_process({"tune", "--seqlen", "1000", "--batch", "3", "--heads", "5"});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("best built:") != std::string::npos);
}

TEST_CASE("tune refuses what it cannot rank with one line", "[tune]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"tune", "--algo", "standard"},
           {"tune", "--time", "roofline"},
           {"tune", "--hw", "a100-40gb"},
           {"tune", "--kernels"}}) {
    const CliResult r = run_in_process(args);
    INFO(command_text(args) << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(split_lines(r.err).size() == 1);
  }
}

TEST_CASE("tune --kernel ranks the forward's tilings of that family only, and names it", "[tune]") {
  const CliResult r = run_in_process({"tune", "--algo", "flash2", "--headdim", "64", "--seqlen", "2048", "--kernel",
                                      "wgmma", "--format", "csv"});
  REQUIRE(r.status == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 2);  // d = 64's one wgmma forward: 128x64
  const auto header = split_csv(lines[0]);
  const auto cells = split_csv(lines[1]);
  std::map<std::string, std::string> row;
  for (size_t i = 0; i < header.size(); ++i) row[header[i]] = cells[i];
  CHECK(row["kernel_impl"] == "wgmma");
  CHECK(row["block_r"] == "128");
  CHECK(row["block_c"] == "64");
  CHECK(row["built"] == "1");
  const CliResult table = run_in_process({"tune", "--algo", "flash2", "--headdim", "64", "--seqlen", "2048", "--kernel",
                                          "wgmma"});
  REQUIRE(table.status == 0);
  CHECK(table.out.find(", kernel wgmma on h200") != std::string::npos);
}
