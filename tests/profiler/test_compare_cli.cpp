// flashio compare and the input checks of flashio profile, run in-process through run_cli
// (CPU only: nothing here needs a GPU).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/cli.h"
#include "sim/hardware.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio;
namespace fs = std::filesystem;

namespace {

struct Result {
  int status;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "flashio");
  std::ostringstream out, err;
  const int status = cli::run_cli(args, out, err);
  return {status, out.str(), err.str()};
}

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("flashio_compare_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

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
  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    std::string cell;
    std::istringstream ss(s);
    while (std::getline(ss, cell, ',')) v.push_back(cell);
    if (!s.empty() && s.back() == ',') v.push_back("");
    return v;
  };
  const auto cols = split(header);
  const size_t k = std::find(cols.begin(), cols.end(), "kernel") - cols.begin();
  const size_t c = std::find(cols.begin(), cols.end(), name) - cols.begin();
  while (std::getline(in, line)) {
    const auto v = split(line);
    if (k < v.size() && v[k] == kernel && c < v.size()) return v[c];
  }
  return "<missing>";
}

}  // namespace

TEST_CASE("compare joins measured and predicted rows on the key columns other than source and "
          "reports (predicted - measured) / measured", "[compare]") {
  const fs::path dir = temp_dir();
  auto predicted = predicted_rows();
  auto measured = predicted;
  for (auto& r : measured) {
    r.source = "measured";
    *r.io_read_bytes /= 1.25;   // predicted 25 % above measured
    *r.io_write_bytes /= 1.25;
    *r.dram_read_bytes *= 2;    // predicted half of measured: -50 %
    *r.dram_write_bytes *= 2;
    r.flops_tensor.reset();     // unknown: no error can be computed
    r.time_ms = *r.time_ms * 4;
  }
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const Result res = run({"compare", "--predicted", (dir / "pred.csv").string(), "--measured",
                          (dir / "meas.csv").string(), "--format", "csv"});
  REQUIRE(res.status == 0);
  CHECK(std::stod(csv_value(res.out, "total", "rel_err_io")) == Approx(0.25));
  CHECK(std::stod(csv_value(res.out, "total", "rel_err_dram")) == Approx(-0.5));
  CHECK(csv_value(res.out, "total", "rel_err_flops").empty());
  CHECK(std::stod(csv_value(res.out, "flash2_fwd", "rel_err_time")) == Approx(-0.75));
  CHECK(csv_value(res.out, "total", "predicted_source") == "cache");
  CHECK(res.err.find("summary") != std::string::npos);
  // The two files may also be given as arguments: flashio compare PREDICTED MEASURED.
  const Result bare = run({"compare", (dir / "pred.csv").string(), (dir / "meas.csv").string(),
                           "--format", "csv"});
  REQUIRE(bare.status == 0);
  CHECK(bare.out == res.out);
  fs::remove_all(dir);
}

TEST_CASE("compare leaves out measured rows without a predicted row and says how many",
          "[compare]") {
  const fs::path dir = temp_dir();
  auto predicted = predicted_rows();
  auto measured = predicted;
  for (auto& r : measured) r.source = "measured";
  measured.push_back(measured.back());
  measured.back().seqlen = 97;  // a configuration that was not predicted
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const Result res = run({"compare", "--predicted", (dir / "pred.csv").string(), "--measured",
                          (dir / "meas.csv").string(), "--format", "csv"});
  REQUIRE(res.status == 0);
  CHECK(res.err.find("1 measured rows had no predicted row") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("compare with nothing to join, or a missing file, exits 2 with one line and writes "
          "no output file", "[compare]") {
  const fs::path dir = temp_dir();
  auto predicted = predicted_rows();
  auto measured = predicted;
  for (auto& r : measured) {
    r.source = "measured";
    r.block_r = 32;  // another tiling: no key matches
  }
  write_rows(dir / "pred.csv", predicted);
  write_rows(dir / "meas.csv", measured);
  const fs::path out = dir / "out.csv";
  Result res = run({"compare", "--predicted", (dir / "pred.csv").string(), "--measured",
                    (dir / "meas.csv").string(), "--format", "csv", "--out", out.string()});
  CHECK(res.status == 2);
  CHECK(res.err.find("--measured") != std::string::npos);
  CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out));
  res = run({"compare", "--predicted", (dir / "missing.csv").string(), "--measured",
             (dir / "meas.csv").string()});
  CHECK(res.status == 2);
  CHECK(res.err.find("--predicted") != std::string::npos);
  res = run({"compare", "--predicted", (dir / "pred.csv").string()});
  CHECK(res.status == 2);
  CHECK(res.err.find("--measured") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("profile refuses bad input before it touches the GPU: exit 2, one line naming the "
          "option", "[profile]") {
  Result res = run({"profile", "--repeats", "5"});
  CHECK(res.status == 2);
  CHECK(res.err.find("--repeats") != std::string::npos);
  res = run({"profile", "--algo", "blocksparse", "--block-mask", "banded:1"});
  CHECK(res.status == 2);
  CHECK(res.err.find("blocksparse") != std::string::npos);
  CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
}
