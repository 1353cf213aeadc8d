// --tiling rule|kernel (experiments/sweep.cpp over sim::make_config): the paper's rule from M, or
// the tilings the built CUDA kernels run, so that `simulate --tiling kernel` predicts what
// `profile` measures and the two join.
#include <catch2/catch.hpp>

#include <sstream>

#include "cli_harness.h"
#include "sim/kernel_catalog.h"
#include "sim/row.h"
#include "sim/row_identity.h"

using namespace flashio::cli::test;
namespace fs = flashio::sim;

namespace {

std::vector<fs::Row> simulate_rows(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  args.insert(args.end(), {"--format", "csv"});
  const CliResult res = run_in_process(args);
  REQUIRE(res.status == 0);
  std::istringstream in(res.out);
  return fs::read_rows_csv(in, "simulate output");
}

}  // namespace

TEST_CASE("simulate --tiling kernel: every row carries the built kernels' default tiling of its pass") {
  for (const char* pass : {"fwd", "bwd", "fwdbwd"})
    for (const char* d : {"64", "128"})
      for (const char* dtype : {"fp16", "bf16"}) {
        const auto rows = simulate_rows({"--algo", "flash1,flash2", "--pass", pass, "--headdim", d, "--dtype",
                                         dtype, "--seqlen", "1000", "--tiling", "kernel"});
        REQUIRE(!rows.empty());
        for (const fs::Row& r : rows) {
          const fs::Pass key_pass = std::string(pass) == "bwd" ? fs::Pass::bwd : fs::Pass::fwd;
          const fs::BuiltKernel* k = fs::default_built(*fs::model_algo(r.algo), key_pass, std::stoll(d),
                                                      *fs::parse_dtype(dtype));
          REQUIRE(k != nullptr);
          INFO(fs::to_string(r.algo) << " " << pass << " d=" << d << " " << dtype << " " << fs::kernel_text(r.kernel));
          CHECK(r.block_r == k->tiling.block_r);
          CHECK(r.block_c == k->tiling.block_c);
        }
      }
}

TEST_CASE("simulate --tiling kernel fwdbwd: the backward's kernels are counted with the backward's tiling") {
  // flash2 d=128 fp16: the forward kernel runs 128x128, the backward 64x128 (sim/kernel_catalog.cpp).
  const auto fwdbwd = simulate_rows({"--algo", "flash2", "--pass", "fwdbwd", "--headdim", "128", "--seqlen", "1000",
                                     "--tiling", "kernel"});
  const auto bwd = simulate_rows({"--algo", "flash2", "--pass", "bwd", "--headdim", "128", "--seqlen", "1000",
                                  "--tiling", "kernel"});
  auto io_of = [](const std::vector<fs::Row>& rows, fs::KernelKind kernel) {
    for (const fs::Row& r : rows)
      if (r.kernel == kernel) return *r.io_read_bytes + *r.io_write_bytes;
    FAIL("no row for " << fs::to_string(kernel));
    return 0.0;
  };
  const fs::KernelKind flash2_bwd = fs::KernelKind::flash2_bwd;
  CHECK(io_of(fwdbwd, flash2_bwd) == io_of(bwd, flash2_bwd));
  const auto same_tiling = simulate_rows({"--algo", "flash2", "--pass", "fwdbwd", "--headdim", "128", "--seqlen",
                                          "1000", "--block-r", "128", "--block-c", "64"});
  CHECK(io_of(same_tiling, flash2_bwd) != io_of(bwd, flash2_bwd));
}

TEST_CASE("tiling option: an unknown choice, or kernel where none is built, is one line and exit 2") {
  CliResult res = run_in_process({"simulate", "--tiling", "fastest"});
  CHECK(res.status == 2);
  CHECK(res.err.find("--tiling 'fastest'") != std::string::npos);
  CHECK(res.err.find("rule, kernel") != std::string::npos);
  res = run_in_process({"simulate", "--algo", "flash2", "--headdim", "96", "--tiling", "kernel"});
  CHECK(res.status == 2);
  CHECK(res.err.find("--tiling: kernel: no flash2 fwd kernel is built for d=96") != std::string::npos);
  CHECK(std::count(res.err.begin(), res.err.end(), '\n') == 1);
  CHECK(res.out.empty());
}

TEST_CASE("tiling option kernel leaves standard attention (no tiles) on the rule, as --tiling rule does") {
  const auto kernel = simulate_rows({"--algo", "standard", "--tiling", "kernel"});
  const auto rule = simulate_rows({"--algo", "standard"});
  REQUIRE(kernel.size() == rule.size());
  for (size_t i = 0; i < rule.size(); ++i) CHECK(fs::to_csv_line(kernel[i]) == fs::to_csv_line(rule[i]));
}
