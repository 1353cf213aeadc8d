// The subcommand table: a file that registers a subcommand (as cmd_<name>.cpp does) gets
// dispatch, its own options on the command line and in experiment files, --help, the one-line
// errors, and the output writers. This test file registers one of its own.
#include <catch2/catch.hpp>

#include "cli_harness.h"
#include "experiments/subcommand.h"
#include "experiments/usage_error.h"

using namespace flashio::cli;
using namespace flashio::cli::test;

namespace {

// Writes one row per --count-to value, without the sweep options (like `compare`).
int run_count_rows(Invocation& inv) {
  const int n = inv.options["count-to"].as<int>();
  if (n < 0) throw UsageError("--count-to must be >= 0 (got " + std::to_string(n) + ")");
  auto target = inv.open_output();
  auto writer = make_row_writer(inv.output, target->stream(), inv.context());
  for (int i = 1; i <= n; ++i) {
    flashio::sim::Row row;
    row.source = flashio::sim::RowSource::measured;
    row.algo = flashio::sim::RowAlgo::flash2;
    row.kernel.reset();  // kernel=total
    row.seqlen = i;
    writer->write(row);
  }
  writer->finish();
  target->commit();
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "test-count-rows",
    .summary = "a subcommand registered by the tests",
    .order = 1000,
    .takes_sweep = false,
    .add_options =
        [](po::options_description& o) {
          o.add_options()("count-to", po::value<int>()->default_value(2), "rows to write");
        },
    .run = run_count_rows,
});

}  // namespace

TEST_CASE("a registered subcommand is dispatched with its own options and listed in --help") {
  const auto r = run_in_process({"test-count-rows", "--count-to", "3", "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK(split_lines(r.out).size() == 1 + 3);
  CHECK(run_in_process({"--help"}).out.find("test-count-rows") != std::string::npos);
  CHECK(run_in_process({"test-count-rows", "--help"}).out.find("--count-to") != std::string::npos);
}

TEST_CASE("a subcommand without the sweep rejects the sweep's options") {
  const auto r = run_in_process({"test-count-rows", "--seqlen", "97"});
  CHECK(r.status == 2);
  CHECK(r.err_lines().size() == 1);
}

TEST_CASE("a subcommand's own options come from experiment files too, the command line winning") {
  TempDir dir;
  write_file(dir / "rows.cfg", "count-to = 5\nformat = csv\n");
  const auto from_file = run_in_process({"test-count-rows", "--config", (dir / "rows.cfg").string()});
  REQUIRE(from_file.status == 0);
  CHECK(split_lines(from_file.out).size() == 1 + 5);
  const auto overridden = run_in_process(
      {"test-count-rows", "--config", (dir / "rows.cfg").string(), "--count-to", "1"});
  CHECK(split_lines(overridden.out).size() == 1 + 1);
}

TEST_CASE("a subcommand's UsageError is one line and exit 2, leaving --out untouched") {
  TempDir dir;
  const auto r = run_in_process(
      {"test-count-rows", "--count-to=-1", "--out", (dir / "rows.csv").string()});
  CHECK(r.status == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find("--count-to") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "rows.csv"));
}
