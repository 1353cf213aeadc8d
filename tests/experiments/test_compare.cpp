// flashio compare (experiments/cmd_compare.cpp), run in-process through run_cli: predicted and
// measured rows written as CSV files, joined, and the relative errors checked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "sim/hardware.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio;
using namespace flashio::cli::test;
namespace fs = std::filesystem;

namespace {

void write_rows(const fs::path& path, const std::vector<sim::Row>& rows) {
  std::ofstream f(path);
  f << sim::csv_header() << '\n';
  for (const auto& r : rows) f << sim::to_csv_line(r) << '\n';
}

// Predicted rows of flash2 fwd at an awkward N, with dram filled as the L2 model would.
std::vector<sim::Row> predicted_rows() {
  sim::Problem p;
  p.batch = 2;
  p.heads = 3;
  p.seqlen = 1025;
  p.headdim = 64;
  const auto c = sim::make_config(sim::Algo::flash2, p, sim::hardware_preset("h200"));
  auto rows = sim::rows_from_result(sim::simulate(c, sim::CountMethod::cache));
  return rows;
}

// The column `name` of the CSV line whose `kernel` is `kernel`.
std::string csv_value(const std::string& csv, const std::string& kernel, const std::string& name) {
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  const auto cols = split_csv(header);
  const size_t k = std::find(cols.begin(), cols.end(), "kernel") - cols.begin();
  const size_t c = std::find(cols.begin(), cols.end(), name) - cols.begin();
  while (std::getline(in, line)) {
    const auto v = split_csv(line);
    if (k < v.size() && v[k] == kernel && c < v.size()) return v[c];
  }
  return "<missing>";
}

}  // namespace

TEST_CASE("compare joins measured and predicted rows on the key columns other than source and "
          "reports (predicted - measured) / measured", "[compare]") {
  const TempDir dir;
  auto predicted = predicted_rows();
  auto measured = predicted;
  for (auto& r : measured) {
    r.source = sim::RowSource::measured;
    *r.io_read_bytes /= 1.25;   // predicted 25 % above measured
    *r.io_write_bytes /= 1.25;
    *r.dram_read_bytes *= 2;    // predicted half of measured: -50 %
    *r.dram_write_bytes *= 2;
    r.flops_tensor.reset();     // unknown: no error can be computed
    r.time_ms = *r.time_ms * 4;
  }
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const CliResult res = run_in_process({"compare", "--predicted", (dir / "pred.csv").string(),
                                        "--measured", (dir / "meas.csv").string(), "--format",
                                        "csv"});
  REQUIRE(res.status == 0);
  CHECK(std::stod(csv_value(res.out, "total", "rel_err_io")) == Approx(0.25));
  CHECK(std::stod(csv_value(res.out, "total", "rel_err_dram")) == Approx(-0.5));
  CHECK(csv_value(res.out, "total", "rel_err_flops").empty());
  CHECK(std::stod(csv_value(res.out, "flash2_fwd", "rel_err_time")) == Approx(-0.75));
  CHECK(csv_value(res.out, "total", "predicted_source") == "cache");
  CHECK(res.err.find("summary") != std::string::npos);
  // The time model's targets apply to the total rows: within 25 % each, 10 % their median.
  CHECK(res.err.find("time  ") != std::string::npos);
  CHECK(res.err.find("total rows within ±25%: 0 of") != std::string::npos);
  CHECK(res.err.find("(target ≤ 10%: missed)") != std::string::npos);
  // The two files may also be given as arguments: flashio compare PREDICTED MEASURED.
  const CliResult bare = run_in_process(
      {"compare", (dir / "pred.csv").string(), (dir / "meas.csv").string(), "--format", "csv"});
  REQUIRE(bare.status == 0);
  CHECK(bare.out == res.out);
}

TEST_CASE("compare leaves out measured rows without a predicted row and says how many",
          "[compare]") {
  const TempDir dir;
  auto predicted = predicted_rows();
  auto measured = predicted;
  for (auto& r : measured) r.source = sim::RowSource::measured;
  measured.push_back(measured.back());
  measured.back().seqlen = 97;  // a configuration that was not predicted
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const CliResult res = run_in_process({"compare", "--predicted", (dir / "pred.csv").string(),
                                        "--measured", (dir / "meas.csv").string(), "--format",
                                        "csv"});
  REQUIRE(res.status == 0);
  CHECK(res.err.find("1 measured rows had no predicted row") != std::string::npos);
}

TEST_CASE("compare with nothing to join, or a missing file, exits 2 with one line and writes "
          "no output file", "[compare]") {
  const TempDir dir;
  auto predicted = predicted_rows();
  auto measured = predicted;
  for (auto& r : measured) {
    r.source = sim::RowSource::measured;
    r.block_r = 32;  // another tiling: no key matches
  }
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const fs::path out = dir / "out.csv";
  CliResult res = run_in_process({"compare", "--predicted", (dir / "pred.csv").string(),
                                  "--measured", (dir / "meas.csv").string(), "--format", "csv",
                                  "--out", out.string()});
  CHECK(res.status == 2);
  CHECK(res.err.find("--measured") != std::string::npos);
  CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out));
  res = run_in_process({"compare", "--predicted", (dir / "missing.csv").string(), "--measured",
                        (dir / "meas.csv").string()});
  CHECK(res.status == 2);
  CHECK(res.err.find("--predicted") != std::string::npos);
  res = run_in_process({"compare", "--predicted", (dir / "pred.csv").string()});
  CHECK(res.status == 2);
  CHECK(res.err.find("--measured") != std::string::npos);
}

TEST_CASE("compare round-trips flashio's own rows when the hardware name holds a comma and quotes: "
          "its csv quotes the cell, its json has the context block and numbers as numbers", "[compare]") {
  const TempDir dir;
  auto predicted = predicted_rows();
  for (auto& r : predicted) r.hw = "my,gpu \"b\"";
  auto measured = predicted;
  for (auto& r : measured) {
    r.source = sim::RowSource::measured;
    *r.io_read_bytes /= 1.25;
    *r.io_write_bytes /= 1.25;
  }
  write_rows(dir.path() / "p.csv", predicted);
  write_rows(dir.path() / "m.csv", measured);
  const std::string p = (dir.path() / "p.csv").string(), m = (dir.path() / "m.csv").string();
  CliResult res = run_in_process({"compare", p, m, "--format", "csv"});
  REQUIRE(res.status == 0);
  CHECK(res.out.find("\"my,gpu \"\"b\"\"\"") != std::string::npos);  // RFC 4180: quoted, quotes doubled
  res = run_in_process({"compare", p, m, "--format", "json"});
  REQUIRE(res.status == 0);
  const auto j = nlohmann::json::parse(res.out);
  CHECK(j.at("context").at("subcommand") == "compare");
  const auto& row = j.at("rows").at(0);
  CHECK(row.at("hw") == "my,gpu \"b\"");
  CHECK(row.at("batch").is_number());
  CHECK(row.at("io_predicted").is_number());
  CHECK(row.at("rel_err_io").get<double>() == Approx(0.25));
  CHECK((row.at("rel_err_flops").is_number() || row.at("rel_err_flops").is_null()));
}

TEST_CASE("compare's table prints whole kernel names, the longest included", "[compare]") {
  const TempDir dir;
  sim::Problem p;
  p.batch = 1, p.heads = 2, p.seqlen = 200, p.headdim = 64, p.pass = sim::Pass::bwd;
  const auto c = sim::make_config(sim::Algo::blocksparse, p, sim::hardware_preset("h200"));
  auto predicted = sim::rows_from_result(sim::simulate(c, sim::CountMethod::walk));
  auto measured = predicted;
  for (auto& r : measured) r.source = sim::RowSource::measured;
  write_rows(dir.path() / "p.csv", predicted);
  write_rows(dir.path() / "m.csv", measured);
  const CliResult res = run_in_process(
      {"compare", (dir.path() / "p.csv").string(), (dir.path() / "m.csv").string(), "--kernels"});
  REQUIRE(res.status == 0);
  // The columns after the kernel start at the same place on every row: the longest name
  // (26 characters) does not push its row's numbers out of their columns.
  std::istringstream lines(res.out);
  std::vector<size_t> starts;
  for (std::string line; std::getline(lines, line);) {
    const size_t k = line.find("blocksparse_bwd");
    if (k == std::string::npos) continue;
    starts.push_back(line.find_first_not_of(' ', line.find(' ', k)));
  }
  REQUIRE(starts.size() == 3);  // blocksparse_bwd_preprocess, blocksparse_bwd, blocksparse_bwd_convert_dq
  CHECK(std::adjacent_find(starts.begin(), starts.end(), std::not_equal_to<>()) == starts.end());
}

TEST_CASE("compare joins on kernel_impl: a measured row of another family has no predicted row, and the output "
          "carries the family", "[compare]") {
  const TempDir dir;
  sim::Problem p;
  p.batch = 2, p.heads = 3, p.seqlen = 1025, p.headdim = 64;
  const auto c = sim::make_config(sim::Algo::flash2, p, sim::hardware_preset("h200"), std::nullopt,
                                  {sim::TilingSource::rule, 128, 64});  // d = 64's one kernel there: wgmma
  const auto predicted = sim::rows_from_result(sim::simulate(c, sim::CountMethod::formula));
  REQUIRE(predicted.back().kernel_impl == sim::MmaKind::wgmma);
  auto measured = predicted;
  for (auto& r : measured) r.source = sim::RowSource::measured;
  const size_t same = measured.size();
  for (size_t i = 0; i < same; ++i) {
    measured.push_back(measured[i]);
    measured.back().kernel_impl = sim::MmaKind::wgmma_ws;  // as another family's kernel would be measured
  }
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const CliResult res = run_in_process({"compare", "--predicted", (dir / "pred.csv").string(), "--measured",
                                        (dir / "meas.csv").string(), "--format", "csv"});
  REQUIRE(res.status == 0);
  CHECK(res.err.find(std::to_string(same) + " measured rows had no predicted row") != std::string::npos);
  CHECK(csv_value(res.out, "total", "kernel_impl") == "wgmma");
}
