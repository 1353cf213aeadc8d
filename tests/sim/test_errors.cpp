// sim's bad-input errors name the field, in sim's spelling, and no front end's option: each
// throw site is driven through sim's API, and every message is one line that starts with its
// field's name and never contains a command-line flag ("--").
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include "sim/block_mask.h"
#include "sim/config.h"
#include "sim/errors.h"
#include "sim/explain.h"
#include "sim/hardware.h"
#include "sim/l2_partitions.h"
#include "sim/simulate.h"

using namespace flashio::sim;

namespace {

struct Throws {
  const char* what;               // the case, for the failure message
  Field field;                    // the field it must name
  std::function<void()> run;      // must throw InvalidInput
};

Config flash2_config(int64_t n, int64_t d) {
  Problem p;
  p.batch = 3;
  p.heads = 5;
  p.seqlen = n;
  p.headdim = d;
  return make_config(Algo::flash2, p, hardware_preset("h200"));
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("every sim input error names its field in sim's spelling and no command-line flag",
          "[errors]") {
  const std::string mask_file = "test_errors_mask.txt";
  const std::string hw_file = "test_errors_hw.txt";
  const std::string hw_ok = "name = x\nsram_bytes = 1000\nsm_count = 1\nl2_bytes = 65536\n"
                            "hbm_bytes_per_s = 1\ntensor_flops_per_s = 1\n"
                            "cuda_core_flops_per_s = 1\nexp_per_s = 1\n";
  auto problem_with = [](auto set) {
    Problem p;
    p.seqlen = 97;
    p.headdim = 40;
    set(p);
    validate(p);
  };
  auto config_with = [](auto set) {
    Config c = flash2_config(97, 40);
    set(c);
    validate(c);
  };
  auto explain_with = [](auto set, int64_t row) {
    Config c = flash2_config(40, 16);
    c.problem.batch = c.problem.heads = 1;
    c.tiling = {8, 8};
    set(c);
    explain(c, {row, 1});
  };
  const Throws cases[] = {
      {"B = 0", Field::batch, [&] { problem_with([](Problem& p) { p.batch = 0; }); }},
      {"H = -1", Field::heads, [&] { problem_with([](Problem& p) { p.heads = -1; }); }},
      {"N = 0", Field::seqlen, [&] { problem_with([](Problem& p) { p.seqlen = 0; }); }},
      {"d = 0", Field::headdim, [&] { problem_with([](Problem& p) { p.headdim = 0; }); }},
      {"Hkv not dividing H", Field::kv_heads, [&] { problem_with([](Problem& p) { p.heads = 12, p.kv_heads = 5; }); }},
      {"Hkv < 0", Field::kv_heads, [&] { problem_with([](Problem& p) { p.kv_heads = -2; }); }},
      {"Nk < 0", Field::seqlen_k, [&] { problem_with([](Problem& p) { p.seqlen_k = -1; }); }},
      {"causal with Nk < Nq", Field::seqlen_k,
       [&] { problem_with([](Problem& p) { p.causal = true, p.seqlen_k = 96; }); }},
      {"blocksparse with Nk != Nq", Field::seqlen_k,
       [&] { config_with([](Config& c) { c.algo = Algo::blocksparse, c.problem.seqlen_k = 200; }); }},
      {"explain with GQA", Field::kv_heads,
       [&] { explain_with([](Config& c) { c.problem.heads = 2, c.problem.kv_heads = 1; }, 0); }},
      {"dropout 1.5", Field::dropout, [&] { problem_with([](Problem& p) { p.dropout = 1.5; }); }},
      {"M = 0", Field::sram_bytes, [&] { config_with([](Config& c) { c.sram_bytes = 0; }); }},
      {"M < d", Field::sram_bytes, [&] { config_with([](Config& c) { c.sram_bytes = 70; }); }},
      {"mask with flash2 and causal", Field::mask,
       [&] { config_with([](Config& c) { c.problem.mask = true, c.problem.causal = true; }); }},
      {"mask with flash1 and key lengths", Field::mask, [&] {
         config_with([](Config& c) {
           c.algo = Algo::flash1, c.problem.mask = true;
           c.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>(c.problem.batch, 50)), "x"};
         });
       }},
      {"mask with blocksparse", Field::mask,
       [&] { config_with([](Config& c) { c.algo = Algo::blocksparse, c.problem.mask = true; }); }},
      {"explain with mask", Field::mask, [&] { explain_with([](Config& c) { c.problem.mask = true; }, 0); }},
      {"dropout with splits", Field::dropout,
       [&] { config_with([](Config& c) { c.problem.dropout = 0.1, c.splits = 2; }); }},
      {"dropout with a window", Field::dropout,
       [&] { config_with([](Config& c) { c.problem.dropout = 0.1, c.problem.window_left = 8; }); }},
      {"dropout with blocksparse", Field::dropout, [&] {
         config_with([](Config& c) {
           c.problem.dropout = 0.1, c.algo = Algo::blocksparse, c.block_mask = {"banded:1"};
         });
       }},
      {"explain with dropout", Field::dropout, [&] { explain_with([](Config& c) { c.problem.dropout = 0.1; }, 0); }},
      {"splits 0", Field::splits, [&] { config_with([](Config& c) { c.splits = 0; }); }},
      {"splits beyond the key tiles", Field::splits, [&] { config_with([](Config& c) { c.splits = 1000; }); }},
      {"splits with flash1", Field::splits,
       [&] { config_with([](Config& c) { c.algo = Algo::flash1, c.splits = 2; }); }},
      {"explain with splits", Field::splits, [&] { explain_with([](Config& c) { c.splits = 2; }, 0); }},
      {"window left side < 0", Field::window_left, [&] { problem_with([](Problem& p) { p.window_left = -4; }); }},
      {"a window with splits", Field::window_left,
       [&] { config_with([](Config& c) { c.problem.window_left = 8, c.splits = 2; }); }},
      {"causal with a window right side", Field::window_right,
       [&] { problem_with([](Problem& p) { p.causal = true, p.window_right = 3; }); }},
      {"page size not a multiple of 16", Field::page_size, [&] { config_with([](Config& c) { c.page_size = 40; }); }},
      {"key lengths of another count", Field::key_lengths, [&] {
         config_with([](Config& c) {
           c.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>(c.problem.batch + 1, 1)), "x"};
         });
       }},
      {"key lengths with standard", Field::key_lengths, [&] {
         config_with([](Config& c) {
           c.algo = Algo::standard;
           c.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>(c.problem.batch, 1)), "x"};
         });
       }},
      {"varlen without key lengths", Field::varlen, [&] { config_with([](Config& c) { c.problem.varlen = true; }); }},
      {"page size with flash1", Field::page_size,
       [&] { config_with([](Config& c) { c.algo = Algo::flash1, c.page_size = 16; }); }},
      {"a kernel family at a tiling without it", Field::kernel_impl,
       [&] { config_with([](Config& c) { c.kernel_impl = MmaKind::wgmma; }); }},
      {"a kernel family with standard", Field::kernel_impl,
       [&] { config_with([](Config& c) { c.algo = Algo::standard, c.kernel_impl = MmaKind::mma_sync; }); }},
      {"block mask with flash2", Field::block_mask,
       [&] { config_with([](Config& c) { c.block_mask = {"banded:1"}; }); }},
      {"Br = 0", Field::block_r, [&] { config_with([](Config& c) { c.tiling = {0, 16}; }); }},
      {"Bc = -3", Field::block_c, [&] { config_with([](Config& c) { c.tiling = {16, -3}; }); }},
      {"tiles beyond M", Field::tiling,
       [&] { config_with([](Config& c) { c.tiling = {1025, 1025}; }); }},
      {"explain standard", Field::algo,
       [&] { explain_with([](Config& c) { c.algo = Algo::standard; }, 0); }},
      {"explain bwd", Field::pass,
       [&] { explain_with([](Config& c) { c.problem.pass = Pass::bwd; }, 0); }},
      {"explain N = 65", Field::seqlen,
       [&] { explain_with([](Config& c) { c.problem.seqlen = 65; }, 0); }},
      {"explain row N", Field::tracked_row, [&] { explain_with([](Config&) {}, 40); }},
      {"execute too large", Field::count_method,
       [&] { simulate(flash2_config(4096, 64), CountMethod::execute); }},
      {"banded:x", Field::block_mask, [] { BlockMask({"banded:x"}, Problem{}); }},
      {"random:1.5", Field::block_mask, [] { BlockMask({"random:1.5"}, Problem{}); }},
      {"random:0.5:-1", Field::block_mask, [] { BlockMask({"random:0.5:-1"}, Problem{}); }},
      {"no such mask file", Field::block_mask, [] { validate_block_mask_spec({"no/such/file"}); }},
      {"mask file line", Field::block_mask,
       [&] {
         write(mask_file, "101\n012\n010\n");
         Problem p;
         p.seqlen = 3 * 128;  // 3 × 3 blocks
         BlockMask({mask_file}, p);
       }},
      {"mask file rows", Field::block_mask,
       [&] {
         write(mask_file, "101\n");
         Problem p;
         p.seqlen = 3 * 128;
         BlockMask({mask_file}, p);
       }},
      {"no kernel built for d", Field::tiling_source,
       [] {
         Problem p;
         p.headdim = 96;
         make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt, {TilingSource::kernel});
       }},
      {"no blocksparse kernel built for d", Field::tiling_source,
       [] {
         Problem p;
         p.headdim = 96;
         make_config(Algo::blocksparse, p, hardware_preset("h200"), std::nullopt, {TilingSource::kernel});
       }},
      {"unknown preset", Field::hardware, [] { hardware_preset("tpu"); }},
      {"no hardware file", Field::hardware, [] { load_hardware_file("no/such/hw.txt"); }},
      {"hardware file line", Field::hardware,
       [&] {
         write(hw_file, hw_ok + "sm_count = four\n");
         load_hardware_file(hw_file);
       }},
      {"hardware file size", Field::hardware,
       [&] {
         write(hw_file, hw_ok + "l2_bytes = 12 parsecs\n");
         load_hardware_file(hw_file);
       }},
      {"L2 line not 2^k", Field::hardware, [] { L2Cache(L2Geometry{4096, 96, 32, 16}); }},
      {"L2 not whole sets", Field::hardware, [] { L2Cache(L2Geometry{1000, 128, 32, 16}); }},
      {"no L2 partition", Field::hardware, [] { PartitionedL2(L2Geometry{4096, 128, 32, 4}, 0); }},
      {"L2 partition below a set", Field::hardware,
       [] { PartitionedL2(L2Geometry{4096, 128, 32, 16}, 3); }},
  };
  std::set<Field> reached;
  for (const Throws& c : cases) {
    INFO(c.what);
    bool threw = false;
    try {
      c.run();
    } catch (const InvalidInput& e) {
      threw = true;
      const std::string what = e.what();
      INFO(what);
      REQUIRE(e.field());
      CHECK(*e.field() == c.field);
      reached.insert(*e.field());
      CHECK(what == std::string(field_name(c.field)) + ": " + e.problem());
      CHECK(what.find("--") == std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(e.problem().size() > 10);
    }
    CHECK(threw);
  }
  // Every field is one some input error names: the enum has no value nothing throws.
  for (Field f : kAllFields) {
    INFO(field_name(f));
    CHECK(reached.count(f) == 1);
  }
  std::remove(mask_file.c_str());
  std::remove(hw_file.c_str());
}

TEST_CASE("an error about no one field is its message alone", "[errors]") {
  const InvalidInput e("r.csv:3: expected 20 columns");
  CHECK_FALSE(e.field());
  CHECK(std::string(e.what()) == "r.csv:3: expected 20 columns");
  CHECK(e.problem() == e.what());
}
