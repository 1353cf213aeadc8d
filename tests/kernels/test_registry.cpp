// The registry and input checks of flashio_kernels: properties that need no GPU.
#include <catch2/catch.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/launch.h"

namespace fk = flashio::kernels;

TEST_CASE("registry: fp16 flash1 and flash2, fwd and bwd, d = 64 and 128 each have >= 6 tilings from {32,64,128}^2") {
  for (fk::Algo algo : {fk::Algo::flash1, fk::Algo::flash2})
    for (fk::Pass pass : {fk::Pass::fwd, fk::Pass::bwd})
      for (int d : {64, 128}) {
        std::set<std::pair<int, int>> tilings;
        for (const fk::KernelEntry& e : fk::registry())
          if (e.algo == algo && e.pass == pass && e.headdim == d && e.dtype == fk::DType::fp16 &&
              e.mma != fk::MmaKind::wgmma_ws) {  // its tiles are 64 rows a consumer warpgroup
            CHECK((e.block_r == 32 || e.block_r == 64 || e.block_r == 128));
            CHECK((e.block_c == 32 || e.block_c == 64 || e.block_c == 128));
            tilings.insert({e.block_r, e.block_c});
          }
        INFO(fk::to_string(algo) << " " << fk::to_string(pass) << " d=" << d);
        CHECK(tilings.size() >= 6);
      }
}

TEST_CASE("registry: every entry fits the H200's 227 KiB of shared memory per block and has whole warps") {
  for (const fk::KernelEntry& e : fk::registry()) {
    CHECK(e.smem_bytes > 0);
    CHECK(e.smem_bytes <= 232448);
    CHECK(e.threads % 32 == 0);
    CHECK(e.threads >= 64);
  }
}

TEST_CASE("registry: the default tiling of each (algo, pass, d, dtype) with entries is itself registered") {
  for (const fk::KernelEntry& e : fk::registry()) {
    const fk::KernelEntry& d = fk::default_entry(e.algo, e.pass, e.headdim, e.dtype);
    CHECK(d.algo == e.algo);
    CHECK(d.headdim == e.headdim);
  }
}

TEST_CASE("an unsupported tiling is refused with a message that lists what is built") {
  fk::AttentionConfig c;
  c.algo = fk::Algo::flash2;
  c.headdim = 64;
  c.block_r = 96;
  c.block_c = 64;
  try {
    fk::AttentionRun run(c);
    FAIL("96x64 was accepted");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("tiling") == 0);
    CHECK(msg.find("96x64") != std::string::npos);
    CHECK(msg.find("128x128") != std::string::npos);  // a built one is listed
  }
}

TEST_CASE("unsupported head dimension, dtype spelling and flash's mask with causal are refused naming the field") {
  fk::AttentionConfig c;
  c.algo = fk::Algo::flash1;
  c.headdim = 96;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("headdim"));
  c.headdim = 64;
  c.mask = true;  // flash's mask is the built-in key lengths, which causal cannot take
  c.causal = true;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("mask"));
  c.causal = false;
  c.block_mask.block_tokens = 128, c.block_mask.blocks = 1, c.block_mask.bits = {1};  // nor the block-sparse kernels
  c.algo = fk::Algo::flash2;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("mask"));
  c.block_mask = {};
  c.batch = int64_t{1} << 40;  // the built-in lengths are made only after B is checked
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("batch"));
  c.batch = 1;
  c.algo = fk::Algo::flash1;
  c.mask = false;
  c.seqlen = 0;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("seqlen"));
}

TEST_CASE("flash2's forward with splits > 1 is the split forward then its combine, one split the single kernel") {
  // The contract with the model (docs/kernels.md, "Split-KV"): launch_sequence needs no GPU.
  fk::AttentionConfig c;
  c.algo = fk::Algo::flash2;
  c.seqlen = 1, c.seqlen_k = 32769, c.heads = 8, c.kv_heads = 1;
  CHECK(fk::launch_sequence(c, fk::Pass::fwd) == std::vector<fk::Launch>{fk::Launch::flash2_fwd});
  c.splits = 3;
  CHECK(fk::launch_sequence(c, fk::Pass::fwd) ==
        std::vector<fk::Launch>{fk::Launch::flash2_fwd, fk::Launch::flash2_fwd_combine});
  CHECK(fk::launch_sequence(c, fk::Pass::bwd) ==
        std::vector<fk::Launch>{fk::Launch::flash2_bwd_preprocess, fk::Launch::flash2_bwd,
                                fk::Launch::flash2_bwd_convert_dq});
  CHECK(fk::launch_sequence(c, fk::Pass::fwdbwd) ==
        std::vector<fk::Launch>{fk::Launch::flash2_fwd, fk::Launch::flash2_fwd_combine,
                                fk::Launch::flash2_bwd_preprocess, fk::Launch::flash2_bwd,
                                fk::Launch::flash2_bwd_convert_dq});
  CHECK(fk::to_string(fk::Launch::flash2_fwd_combine) == "flash2_fwd_combine");
  CHECK(fk::library_calls(c, fk::Launch::flash2_fwd_combine) == 1);
}

TEST_CASE("splits are refused naming the field: below 1, for an algorithm other than flash2, beyond the forward's "
          "key tiles, and beyond the grid") {
  // AttentionRun checks its configuration before it touches the GPU, so this runs anywhere.
  fk::AttentionConfig c;
  c.algo = fk::Algo::flash2;
  c.seqlen = 1, c.seqlen_k = 1000, c.headdim = 64;  // default d = 64 tiling 128 x 64: 16 key tiles
  c.splits = 0;
  CHECK_THROWS_WITH(fk::AttentionRun(c), "splits: must be ≥ 1 (got 0)");
  c.splits = 2;
  c.algo = fk::Algo::flash1;
  c.seqlen_k = 0, c.seqlen = 1000;
  CHECK_THROWS_WITH(fk::AttentionRun(c), "splits: only flash2 splits its forward (got flash1)");
  c.algo = fk::Algo::standard;
  CHECK_THROWS_WITH(fk::AttentionRun(c), "splits: only flash2 splits its forward (got standard)");
  c.algo = fk::Algo::flash2;
  c.seqlen = 1, c.seqlen_k = 1000;
  c.splits = 17;
  CHECK_THROWS_WITH(fk::AttentionRun(c), "splits: at most the forward's key tiles ⌈Nk / Bc⌉ = 16 (got 17)");
  c.block_r = 64, c.block_c = 32;  // the tiling in use decides: 32 tiles of 32 keys
  c.splits = 33;
  CHECK_THROWS_WITH(fk::AttentionRun(c), "splits: at most the forward's key tiles ⌈Nk / Bc⌉ = 32 (got 33)");
}

TEST_CASE("a kernel family is chosen by --kernel: the warp-specialised forward shares 128x128 with the wgmma one, "
          "and is refused for a variant it lacks or a tiling it does not have") {
  // AttentionRun checks its configuration before it touches the GPU, so this runs anywhere.
  int shared = 0;
  for (const fk::KernelEntry& e : fk::registry())
    if (e.mma == fk::MmaKind::wgmma_ws) {
      CHECK(e.dense_only);
      CHECK(e.algo == fk::Algo::flash2);
      CHECK(e.pass == fk::Pass::fwd);
      for (const fk::KernelEntry& other : fk::registry())
        shared += other.mma == fk::MmaKind::wgmma && other.headdim == e.headdim && other.dtype == e.dtype &&
                  other.block_r == e.block_r && other.block_c == e.block_c;
    }
  CHECK(shared >= 2);  // d = 128, fp16 and bf16
  fk::AttentionConfig c;
  c.algo = fk::Algo::flash2;
  c.headdim = 128, c.seqlen = 1000;
  c.block_r = 128, c.block_c = 128;
  c.kernel = fk::MmaKind::wgmma_ws;
  c.dropout = 0.1;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("kernel: wgmma_ws runs dense attention only"));
  c.dropout = 0.0;
  c.window_left = 16;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("kernel: wgmma_ws runs dense attention only"));
  c.window_left = -1;
  c.block_r = 64, c.block_c = 64;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("tiling: no flash2 fwd kernel for d=128 fp16 64x64 on "
                                                                     "wgmma_ws"));
  c.block_r = c.block_c = 0;
  c.algo = fk::Algo::flash1;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("kernel: no default flash1 fwd kernel for d=128 fp16 "
                                                                     "on wgmma_ws; give its tiling"));
}

TEST_CASE("the default forward is the fastest measured kernel that runs the problem: warp-specialised for dense "
          "attention, wgmma for a variant it lacks, and a family asked for gets its own default") {
  for (fk::DType dtype : {fk::DType::fp16, fk::DType::bf16})
    for (int d : {64, 128}) {
      const fk::KernelEntry& dense = fk::find_impl(fk::Algo::flash2, fk::Pass::fwd, d, dtype, 0, 0).entry;
      CHECK(dense.mma == fk::MmaKind::wgmma_ws);
      CHECK(dense.block_r == (d == 64 ? 192 : 128));
      const fk::KernelEntry& variant =
          fk::find_impl(fk::Algo::flash2, fk::Pass::fwd, d, dtype, 0, 0, std::nullopt, /*dense=*/false).entry;
      CHECK(variant.mma == fk::MmaKind::wgmma);
      CHECK(variant.block_c == (d == 64 ? 64 : 128));
      CHECK(fk::find_impl(fk::Algo::flash2, fk::Pass::fwd, d, dtype, 0, 0, fk::MmaKind::wgmma).entry.mma ==
            fk::MmaKind::wgmma);
      // A tiling two families share, unasked: the first registered (wgmma), whatever the problem.
      if (d == 128)
        CHECK(fk::find_impl(fk::Algo::flash2, fk::Pass::fwd, d, dtype, 128, 128).entry.mma == fk::MmaKind::wgmma);
      CHECK(&fk::default_entry(fk::Algo::flash2, fk::Pass::fwd, d, dtype) == &dense);
    }
  fk::AttentionConfig c;
  c.algo = fk::Algo::flash2, c.dropout = 0.1;
  CHECK_FALSE(fk::runs_only_dense(c));
  c.dropout = 0.0, c.window_right = 7;  // a right side is causal's test with an offset
  CHECK(fk::runs_only_dense(c));
}
