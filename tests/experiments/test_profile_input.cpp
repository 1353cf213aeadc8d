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
  res = run_in_process({"profile", "--algo", "blocksparse", "--block-mask", "stripes:3"});
  CHECK(res.status == 2);
  CHECK(res.err.find("--block-mask") != std::string::npos);
  CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
}

TEST_CASE("validate refuses bad input before it touches the GPU: exit 2, one line naming the option",
          "[validate]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", "--repeats", "3"},
        std::vector<std::string>{"validate", "--algo", "blocksparse", "--block-mask", "stripes:3"},
        std::vector<std::string>{"validate", "--count", "execute"},
        std::vector<std::string>{"validate", "--tiling", "fastest"},
        std::vector<std::string>{"validate", "--measured-out", "same.csv", "--predicted-out", "same.csv"}}) {
    const CliResult res = run_in_process(args);
    INFO(args[1] << " " << args[2] << ": " << res.err);
    CHECK(res.status == 2);
    CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
    CHECK(res.out.empty());
  }
}

TEST_CASE("bench and profile run the built kernels' tilings: --sram alone is refused, not silently ignored",
          "[profile]") {
  for (const char* sub : {"bench", "profile", "validate"}) {
    CliResult res = run_in_process({sub, "--sram", "64KiB"});
    INFO(sub << ": " << res.err);
    CHECK(res.status == 2);
    CHECK(res.err.find("--sram") != std::string::npos);
    CHECK(res.err.find("--tiling rule") != std::string::npos);
  }
}
