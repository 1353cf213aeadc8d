// Experiment files (--config): `option = value` lines with the long option names, read with
// Boost.Program_options; the command line wins; the example files shipped in experiments/ run.
#include <catch2/catch.hpp>

#include <set>

#include "cli_harness.h"

using namespace flashio::cli::test;

namespace {

std::set<std::string> column_values(const std::string& csv, const std::string& column) {
  const auto lines = split_lines(csv);
  REQUIRE(!lines.empty());
  const auto header = split_csv(lines[0]);
  const auto at = std::find(header.begin(), header.end(), column) - header.begin();
  std::set<std::string> values;
  for (size_t i = 1; i < lines.size(); ++i) values.insert(split_csv(lines[i]).at(at));
  return values;
}

}  // namespace

TEST_CASE("an experiment file sets options by their long names, with comments and lists") {
  TempDir dir;
  write_file(dir / "sweep.cfg",
             "# N not a multiple of the tiles\n"
             "algo = flash2\n"
             "seqlen = 97, 1025\n"
             "\n"
             "headdim = 40\n"
             "causal = 0,1\n"
             "sram = 100KiB\n"
             "format = csv\n");
  const auto r = run_in_process({"simulate", "--config", (dir / "sweep.cfg").string()});
  REQUIRE(r.status == 0);
  CHECK(column_values(r.out, "seqlen") == std::set<std::string>{"97", "1025"});
  CHECK(column_values(r.out, "headdim") == std::set<std::string>{"40"});
  CHECK(column_values(r.out, "causal") == std::set<std::string>{"0", "1"});
  CHECK(column_values(r.out, "sram_bytes") == std::set<std::string>{"102400"});
  CHECK(column_values(r.out, "algo") == std::set<std::string>{"flash2"});
}

TEST_CASE("the command line wins over the experiment file") {
  TempDir dir;
  write_file(dir / "base.cfg", "seqlen = 97\nalgo = flash1\nformat = csv\n");
  const auto r = run_in_process(
      {"simulate", "--config", (dir / "base.cfg").string(), "--seqlen", "1025"});
  REQUIRE(r.status == 0);
  CHECK(column_values(r.out, "seqlen") == std::set<std::string>{"1025"});
  CHECK(column_values(r.out, "algo") == std::set<std::string>{"flash1"});
}

TEST_CASE("the example experiment files in experiments/ run") {
  TempDir dir;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FLASHIO_EXPERIMENTS_DIR)) {
    if (entry.path().extension() != ".cfg") continue;
    ++files;
    // bound_*.cfg and explain_*.cfg are for those subcommands; the others for simulate.
    const std::string stem = entry.path().stem().string();
    std::string sub = "simulate";
    for (const char* other : {"bound", "explain"})
      if (stem.rfind(std::string(other) + "_", 0) == 0) sub = other;
    INFO(entry.path().string() << " with " << sub);
    std::vector<std::string> args = {sub, "--config", entry.path().string()};
    if (sub != "explain") args.insert(args.end(), {"--out", (dir / (stem + ".out")).string()});
    const auto r = run_in_process(args);
    CHECK(r.status == 0);
    CHECK(r.err.find("error") == std::string::npos);
    if (sub != "explain") CHECK(!read_file(dir / (stem + ".out")).empty());
    else CHECK(!r.out.empty());
  }
  CHECK(files >= 3);
}
