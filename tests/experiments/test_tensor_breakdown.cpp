// simulate --tensors: the bytes of each tensor behind io_read_bytes and io_write_bytes.
#include <catch2/catch.hpp>

#include "cli_harness.h"

using namespace flashio::cli::test;

TEST_CASE("simulate --tensors lists each tensor's bytes: S and P for standard, o_accum, l, m for flash1") {
  const auto r = run_in_process({"simulate", "--algo", "standard,flash1", "--tensors"});
  REQUIRE(r.status == 0);
  const auto std_at = r.out.find("standard fwd");
  const auto f1_at = r.out.find("flash1 fwd");
  REQUIRE(std_at != std::string::npos);
  REQUIRE(f1_at != std::string::npos);
  const std::string standard = r.out.substr(std_at, f1_at - std_at);
  const std::string flash1 = r.out.substr(f1_at);
  CHECK(standard.find("\n  S ") != std::string::npos);
  CHECK(standard.find("\n  P ") != std::string::npos);
  CHECK(standard.find("o_accum") == std::string::npos);
  CHECK(flash1.find("\n  S ") == std::string::npos);
  CHECK(flash1.find("o_accum     fp32") != std::string::npos);
  CHECK(flash1.find("\n  l ") != std::string::npos);
}

TEST_CASE("simulate --tensors with csv or json, or with a large sweep, is refused with exit 2") {
  const auto csv = run_in_process({"simulate", "--tensors", "--format", "csv"});
  CHECK(csv.status == 2);
  REQUIRE(csv.err_lines().size() == 1);
  CHECK(csv.err_lines()[0].find("--tensors") != std::string::npos);
  const auto big = run_in_process({"simulate", "--tensors", "--seqlen", "1:100"});
  CHECK(big.status == 2);
  CHECK(big.out.empty());
}
