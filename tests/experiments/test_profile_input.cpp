// flashio profile's input checks (experiments/cmd_profile.cpp), run in-process: bad input is
// refused before the GPU is touched, so these run on a machine without one. Built only with
// FLASHIO_CUDA, as the profile subcommand is.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli_harness.h"

using namespace flashio::cli::test;

TEST_CASE("profile refuses bad input before it touches the GPU: exit 2, one line naming the "
          "option", "[profile]") {
  CliResult res = run_in_process({"profile", "--repeats", "5"});
  CHECK(res.status == 2);
  CHECK(res.err.find("--repeats") != std::string::npos);
  res = run_in_process({"profile", "--algo", "blocksparse", "--block-mask", "banded:1"});
  CHECK(res.status == 2);
  CHECK(res.err.find("blocksparse") != std::string::npos);
  CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
}
