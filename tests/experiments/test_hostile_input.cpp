// Hostile input (experiments/README.md, "Errors and exit status"): text that a parser's own
// machinery could misread (placeholders of Program_options' messages, a byte-order mark, quoted
// fields, bytes that are not UTF-8) still gets one line and exit status 2, or is read as written.
#include <catch2/catch.hpp>

#include "cli_harness.h"

using namespace flashio::cli::test;

namespace {

// The binary must answer within a second with exit 2 and one line holding `names`.
void check_refused_quickly(const std::vector<std::string>& args, const std::string& names, double seconds = 1.0) {
  INFO("flashio " << command_text(args));
  const TimedResult t = run_binary_within(args, seconds);
  REQUIRE(!t.timed_out);
  CHECK(t.result.status == 2);
  CHECK(t.result.out.empty());
  const auto lines = t.result.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(names) != std::string::npos);
}

}  // namespace

TEST_CASE("a token holding a placeholder of Program_options' messages is quoted as typed, at once") {
  // Boost's message formatting replaces %canonical_option%, %original_token%, %value% and
  // %prefix% until none is left; the user's text must be inserted once, unchanged.
  check_refused_quickly({"simulate", "--%canonical_option%"}, "'--%canonical_option%'");
  check_refused_quickly({"bound", "-h%original_token%"}, "'-h%original_token%'");
  check_refused_quickly({"explain", "--row", "%value%"}, "('%value%') for option '--row'");
  check_refused_quickly({"simulate", "--%prefix%x"}, "'--%prefix%x'");
  TempDir dir;
  write_file(dir / "placeholder.cfg", "%canonical_option% = 1\n");
  check_refused_quickly({"simulate", "--config", (dir / "placeholder.cfg").string()},
                        "'%canonical_option%'");
}

TEST_CASE("Program_options' messages keep their wording for ordinary mistakes") {
  const CliResult ambiguous = run_in_process({"simulate", "--bl", "5"});
  CHECK(ambiguous.status == 2);
  CHECK(ambiguous.err ==
        "flashio simulate: option '--bl' is ambiguous and matches '--block-c', '--block-mask', "
        "and '--block-r'; see flashio simulate --help\n");
  const CliResult missing = run_in_process({"simulate", "--seqlen"});
  CHECK(missing.err ==
        "flashio simulate: the required argument for option '--seqlen' is missing; see flashio "
        "simulate --help\n");
}

TEST_CASE("an experiment file that starts with a UTF-8 byte-order mark is read as without it") {
  TempDir dir;
  write_file(dir / "bom.cfg", "\xEF\xBB\xBF" "algo = flash2\nseqlen = 97\nheaddim = 40\n");
  write_file(dir / "plain.cfg", "algo = flash2\nseqlen = 97\nheaddim = 40\n");
  const CliResult bom = run_in_process({"simulate", "--config", (dir / "bom.cfg").string(),
                                        "--format", "csv"});
  const CliResult plain = run_in_process({"simulate", "--config", (dir / "plain.cfg").string(),
                                          "--format", "csv"});
  INFO(bom.err);
  CHECK(bom.status == 0);
  CHECK(bom.err.empty());
  // The mark changes nothing: the same rows, byte for byte.
  REQUIRE(!plain.out.empty());
  CHECK(bom.out == plain.out);
}

TEST_CASE("an experiment file that is a directory is refused, not read as an empty file") {
  TempDir dir;
  check_refused_quickly({"simulate", "--config", dir.path().string()}, "is a directory");
}

TEST_CASE("a hardware file, block-mask file or rows file that is a directory is refused by that name") {
  TempDir dir;
  const std::string d = dir.path().string();
  check_refused_quickly({"simulate", "--hw", d}, "--hw: hardware file '" + d + "' is a directory");
  check_refused_quickly({"simulate", "--algo", "blocksparse", "--block-mask", d}, "--block-mask: '" + d + "' is a directory");
  check_refused_quickly({"compare", d, d}, "--predicted '" + d + "' is a directory");
}

TEST_CASE("an endless input file (/dev/zero) is refused by its size limit, not read forever") {
  // Reading up to the limit from /dev/zero takes up to half a second here: 5 s leaves room for a
  // loaded machine; forever is what this catches.
  check_refused_quickly({"simulate", "--config", "/dev/zero"}, "--config '/dev/zero' is larger than 1 MiB", 5.0);
  check_refused_quickly({"simulate", "--hw", "/dev/zero"}, "'/dev/zero' is larger than 1 MiB", 5.0);
  check_refused_quickly({"simulate", "--algo", "blocksparse", "--block-mask", "/dev/zero"},
                        "--block-mask: '/dev/zero' is larger than 128 MiB", 5.0);
  check_refused_quickly({"compare", "/dev/zero", "results.csv"}, "--predicted '/dev/zero' is larger than 128 MiB", 5.0);
  // A regular file past the limit is refused by its size, before it is read.
  TempDir dir;
  const auto big = dir / "big.hw";
  write_file(big, "name = x\n");
  std::filesystem::resize_file(big, 2 << 20);
  check_refused_quickly({"simulate", "--hw", big.string()}, "is larger than 1 MiB");
}

TEST_CASE("a negative --seed is refused, not wrapped to 2^64 - 1") {
  check_refused_quickly({"explain", "--seed", "-1", "--seqlen", "37", "--headdim", "20"},
                        "--seed must be an integer >= 0 (got -1)");
  check_refused_quickly({"explain", "--seed=-97", "--seqlen", "37", "--headdim", "20"},
                        "(got -97)");
  // 0 and the largest signed seed are seeds.
  CHECK(run_in_process({"explain", "--seed", "0", "--seqlen", "10"}).status == 0);
  CHECK(run_in_process({"explain", "--seed", "9223372036854775807", "--seqlen", "10"}).status == 0);
}

TEST_CASE("a block mask with no blocksparse in --algo is refused naming both options") {
  check_refused_quickly({"simulate", "--algo", "flash2", "--block-mask", "banded:2"},
                        "--block-mask applies to --algo blocksparse only, and --algo 'flash2'");
  check_refused_quickly({"simulate", "--block-mask", "random:0.5:7", "--seqlen", "97"},
                        "--block-mask applies to --algo blocksparse only");
  // Dense is no mask; and a list holding blocksparse pairs the mask with it alone.
  CHECK(run_in_process({"simulate", "--algo", "flash2", "--block-mask", "dense"}).status == 0);
  const CliResult mixed = run_in_process({"simulate", "--algo", "flash2,blocksparse",
                                          "--block-mask", "banded:2", "--seqlen", "97",
                                          "--headdim", "40", "--format", "csv"});
  INFO(mixed.err);
  CHECK(mixed.status == 0);
  CHECK(mixed.out.find("banded:2") != std::string::npos);
}

TEST_CASE("bytes that are not UTF-8 in a name or path still give valid json, replaced by U+FFFD") {
  TempDir dir;
  const auto hw = dir / "lab\xff.hw";
  write_file(hw, "name = lab\xfe\xff machine\nsram_bytes = 100KiB\nsm_count = 7\nl2_bytes = 1MiB\n"
                 "hbm_bytes_per_s = 1e12\ntensor_flops_per_s = 1e14\n"
                 "cuda_core_flops_per_s = 1e13\nexp_per_s = 1e12\n");
  const CliResult r = run_in_process({"simulate", "--hw", hw.string(), "--seqlen", "97",
                                      "--headdim", "40", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("lab\xEF\xBF\xBD\xEF\xBF\xBD machine") != std::string::npos);
  CHECK(r.out.find('\xff') == std::string::npos);
}
