// The model's limits as a user meets them (experiments/README.md, "Limits"): an input whose
// counts would pass 64 bits, or whose counting would pass a documented work or memory limit,
// is refused with exit status 2 and one line naming the option and the limit, nothing written,
// and quickly (before any work). Run through the binary.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <limits>

#include "cli_harness.h"

using namespace flashio::cli::test;

namespace {

// Runs the case with --out naming a new file and an existing one: exit 2, one line holding
// every text of `names`, neither file touched, no temporary left, and under a second each.
void check_refused(std::vector<std::string> args, const std::vector<std::string>& names) {
  INFO("flashio " << command_text(args));
  TempDir dir;
  const auto fresh = dir / "fresh.csv", existing = dir / "existing.csv";
  write_file(existing, "keep me\n");
  for (const auto& out : {fresh, existing}) {
    auto with_out = args;
    if (args.front() != "explain") with_out.insert(with_out.end(), {"--out", out.string()});
    const auto start = std::chrono::steady_clock::now();
    const CliResult r = run_binary(with_out);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    INFO(lines[0]);
    for (const std::string& name : names) CHECK(lines[0].find(name) != std::string::npos);
  }
  CHECK(!std::filesystem::exists(fresh));
  CHECK(read_file(existing) == "keep me\n");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

// A hardware file (sim/hardware.h) with the given L2 lines.
std::string hardware_file(const TempDir& dir, const std::string& l2_lines) {
  const auto path = dir / "hw.txt";
  write_file(path, "name = odd\nsram_bytes = 227KiB\nsm_count = 132\nhbm_bytes_per_s = 3e12\n"
                   "tensor_flops_per_s = 1e15\ncuda_core_flops_per_s = 6e13\nexp_per_s = 3e12\n" + l2_lines);
  return path.string();
}

}  // namespace

TEST_CASE("counts that would pass 64 bits are refused naming the option and the limit") {
  const std::string limit = "9223372036854775807";
  // flash2's tensor FLOPs at N = 6,000,000 (B = 64, H = 16) pass 2^63; they printed -9010 PFLOP.
  check_refused({"simulate", "--seqlen", "6000000"}, {"--seqlen: ", limit});
  check_refused({"simulate", "--seqlen", "2147483648"}, {"--seqlen: ", limit});
  // B·H = 2^64 wrapped to 0: every byte count was 0.
  check_refused({"simulate", "--batch", "4294967296", "--heads", "4294967296"}, {"--batch: ", limit});
  check_refused({"simulate", "--heads", "1099511627776", "--batch", "97"}, {"--heads: ", limit});
  check_refused({"bound", "--seqlen", "6000000"}, {"--seqlen: ", limit});
  check_refused({"explain", "--batch", "4294967296", "--heads", "4294967296"}, {"--batch: ", limit});
  // (2·Br + 2·Bc)·d wrapped to a small number: the tiling was accepted as fitting.
  check_refused({"simulate", "--block-r", "9223372036854775807", "--block-c", "16", "--algo", "flash2"},
                {"--block-r/--block-c: ", "fit in M"});
  // 4·d wrapped to 0: SIGFPE in the paper's rule.
  check_refused({"simulate", "--headdim", "4611686018427387904", "--algo", "flash2"}, {"--headdim: ", "2^63"});
  // M from a config line: the rule's 240961009481984-row tiles.
  TempDir dir;
  write_file(dir / "huge.cfg", "sram = 123372036854775807\n");
  check_refused({"simulate", "--config", (dir / "huge.cfg").string(), "--algo", "flash2"},
                {"--sram: ", "123372036854775807", limit});
}

TEST_CASE("numbers past 64 bits in the parsers are refused, not cast") {
  check_refused({"simulate", "--sram", "-6e19"}, {"--sram", "9e18"});
  check_refused({"simulate", "--sram", "9223372036854775808"}, {"--sram", "9e18"});
  // lo:hi:S where hi − step and hi − lo pass 2^63.
  check_refused({"simulate", "--batch", "-9223372036854775808:-9223372036854775800:100"}, {"--batch"});
  check_refused({"simulate", "--seqlen", "-9223372036854775807:9223372036854775807:9223372036854775807"},
                {"--seqlen"});
  TempDir dir;
  const auto rows = dir / "rows.csv";
  write_file(rows, "source,algo,pass,kernel,dtype,batch,heads,seqlen,headdim\nmodel,flash2,fwd,total,fp16,1e300,1,97,40\n");
  check_refused({"compare", rows.string(), rows.string()}, {"batch", "1e300"});
}

TEST_CASE("hardware figures past 64 bits are refused naming --hw") {
  TempDir dir;
  // l2_line_bytes × l2_ways wrapped to 0: SIGFPE under --count cache.
  check_refused({"simulate", "--hw", hardware_file(dir, "l2_bytes = 50MiB\nl2_ways = 4611686018427387904\n"), "--count", "cache",
                 "--seqlen", "97", "--batch", "1", "--heads", "1"},
                {"--hw: "});
  check_refused({"simulate", "--hw", hardware_file(dir, "l2_bytes = 1099511627776\n"), "--count", "cache",
                 "--seqlen", "97", "--batch", "1", "--heads", "1"},
                {"--hw: ", "2^24"});
}

TEST_CASE("work and memory past the documented limits are refused before they start") {
  check_refused({"simulate", "--count", "walk", "--algo", "flash1", "--pass", "fwdbwd", "--seqlen", "4000000",
                 "--batch", "1", "--heads", "1"},
                {"--count: ", "2^32"});
  check_refused({"simulate", "--count", "walk", "--seqlen", "2147483648", "--batch", "1", "--heads", "1",
                 "--algo", "flash2"},
                {"--seqlen: ", "2^22"});
  check_refused({"simulate", "--count", "cache", "--seqlen", "1048576"}, {"--count: ", "2^31"});
  check_refused({"simulate", "--count", "cache", "--seqlen", "32768", "--algo", "flash2"}, {"--count: ", "2^37"});
  check_refused({"simulate", "--count", "execute", "--algo", "flash2", "--batch", "4000000000", "--heads", "1",
                 "--seqlen", "1", "--headdim", "1"},
                {"--count: ", "2147483648 bytes"});
  check_refused({"simulate", "--algo", "blocksparse", "--block-mask", "banded:2", "--block-r", "16", "--block-c",
                 "16", "--seqlen", "1048577"},
                {"--block-mask: ", "2^26"});
  check_refused({"explain", "--headdim", "2000000"}, {"--headdim", "256"});
  // --format table keeps its rows: 10^6 configurations (3·10^6 rows) pass its 2^22 cells.
  check_refused({"simulate", "--seqlen", "1:1000000"}, {"--format table", "4194304"});
  check_refused({"simulate", "--seqlen", "1:100000", "--kernels"}, {"--format table", "4194304"});
}

TEST_CASE("in a sweep, a configuration past the limits is skipped and summarised") {
  const CliResult r = run_binary({"simulate", "--algo", "flash2", "--seqlen", "1024,6000000", "--format", "csv"});
  CHECK(r.status == 0);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("skipped 1 of 2") != std::string::npos);
  CHECK(lines[0].find("--seqlen: ") != std::string::npos);
  const auto rows = split_lines(r.out);
  REQUIRE(rows.size() == 3);  // header, flash2_fwd, total
  CHECK(rows[1].find(",1024,") != std::string::npos);
}

TEST_CASE("large shapes inside the limits still run, with no negative or wrapped count") {
  // N = 1,000,000 and N = 999,983 (prime) at the default B = 64, H = 16; flash2 at N = 4·10^6,
  // where its tensor FLOPs reach 4.2·10^18, half the limit.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"simulate", "--seqlen", "1000000,999983", "--format", "csv"},
           {"simulate", "--seqlen", "4000000", "--algo", "flash2", "--format", "csv"},
           {"simulate", "--seqlen", "999983", "--headdim", "40", "--pass", "fwdbwd", "--causal", "--format", "csv"},
           {"simulate", "--seqlen", "100000", "--headdim", "40", "--batch", "3", "--heads", "5", "--count", "walk",
            "--algo", "flash1,flash2", "--format", "csv"}}) {
    INFO("flashio " << command_text(args));
    const CliResult r = run_binary(args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const auto lines = split_lines(r.out);
    REQUIRE(lines.size() > 1);
    const auto header = split_csv(lines[0]);
    for (size_t i = 1; i < lines.size(); ++i) {
      const auto cells = split_csv(lines[i]);
      REQUIRE(cells.size() == header.size());
      for (size_t k = 0; k < cells.size(); ++k) {
        if (header[k].rfind("io_", 0) != 0 && header[k].rfind("flops", 0) != 0) continue;
        if (cells[k].empty()) continue;
        const double v = std::stod(cells[k]);
        INFO(header[k] << " = " << cells[k]);
        CHECK(v >= 0);
        CHECK(v < 9.3e18);
      }
    }
  }
}
