// The bridge between the kernels' vocabulary and the model's (profiler/kernel_bridge.h): what the
// CUDA kernels launch, mapped to sim's kernel kinds, is the model's schedule, kernel for kernel,
// for every algorithm × pass × variant the kernels build. Needs neither CUDA nor a GPU.
#include <catch2/catch.hpp>

#include "kernels/attention.h"
#include "profiler/kernel_bridge.h"
#include "sim/kernel_choice.h"
#include "sim/hardware.h"
#include "sim/schedule.h"

namespace fk = flashio::kernels;
namespace fs = flashio::sim;
namespace fp = flashio::profiler;

namespace {

std::vector<fs::KernelKind> model_kinds(const fs::Config& c) {
  std::vector<fs::KernelKind> kinds;
  for (const fs::KernelSchedule& k : fs::build_schedule(c)) kinds.push_back(k.kind);
  return kinds;
}

std::vector<fs::KernelKind> launched_kinds(const fs::Config& c) {
  std::vector<fs::KernelKind> kinds;
  for (fk::Launch l : fk::launch_sequence(fp::kernel_config(c), fp::to_kernels(c.problem.pass)))
    kinds.push_back(fp::to_sim(l));
  return kinds;
}

}  // namespace

TEST_CASE("bridge: the kernels' launches are the model's kernels, in order, for every algorithm, pass and variant") {
  int checked = 0;
  for (fs::Algo algo : {fs::Algo::standard, fs::Algo::flash1, fs::Algo::flash2, fs::Algo::blocksparse})
    for (fs::Pass pass : {fs::Pass::fwd, fs::Pass::bwd, fs::Pass::fwdbwd})
      for (fs::DType dtype : {fs::DType::fp16, fs::DType::bf16})
        for (bool causal : {false, true})
          for (int variant = 0; variant < (algo == fs::Algo::standard ? 4 : 1); ++variant)
            for (fs::TilingSource source : {fs::TilingSource::rule, fs::TilingSource::kernel}) {
              // blocksparse's kernels take tilings dividing its mask's blocks: the built ones (the
              // rule's 227x128 at d = 128 is refused, test_block_sparse_tiles.cpp).
              if (algo == fs::Algo::blocksparse && source == fs::TilingSource::rule) continue;
              fs::Problem p;
              p.batch = 2, p.heads = 3, p.seqlen = 97, p.headdim = 128;
              p.pass = pass, p.dtype = dtype, p.causal = causal;
              p.mask = (variant & 1) != 0;          // standard's separate mask pass
              p.dropout = (variant & 2) ? 0.1 : 0;  // and dropout pass
              fs::Config c = fs::make_config(algo, p, fs::hardware_preset("h200"), std::nullopt, {source});
              if (algo == fs::Algo::blocksparse) c.block_mask = fs::BlockMaskSpec{"banded:1"};
              INFO(fs::to_string(algo) << " " << fs::to_string(pass) << " " << fs::to_string(dtype) << " causal="
                                       << causal << " variant=" << variant << " tiling " << fs::to_string(source));
              CHECK(launched_kinds(c) == model_kinds(c));
              ++checked;
            }
  CHECK(checked == 2 * 3 * 2 * 2 * 4 + 2 * 2 * 3 * 2 * 2 + 3 * 2 * 2);
}

TEST_CASE("bridge: --tiling kernel runs the catalog's default tiling of each pass, a rule or given tiling runs in both") {
  fs::Problem p;
  p.seqlen = 1000, p.headdim = 128, p.pass = fs::Pass::fwdbwd;
  const fs::Hardware hw = fs::hardware_preset("h200");
  const fs::Config kernel = fs::make_config(fs::Algo::flash2, p, hw, std::nullopt, {fs::TilingSource::kernel});
  const fk::AttentionConfig k = fp::kernel_config(kernel);
  const fs::Tiling fwd = fs::default_built(fs::Algo::flash2, fs::Pass::fwd, 128, fs::DType::fp16)->tiling;
  const fs::Tiling bwd = fs::default_built(fs::Algo::flash2, fs::Pass::bwd, 128, fs::DType::fp16)->tiling;
  REQUIRE(!(fwd == bwd));  // flash2 d=128: 128x128 forward, 64x128 backward
  CHECK(fs::Tiling{k.block_r, k.block_c} == fwd);
  CHECK(fs::Tiling{k.bwd_block_r, k.bwd_block_c} == bwd);
  CHECK(kernel.tiling == fwd);
  CHECK(kernel.bwd_tiling == bwd);
  // The model's backward kernels use the backward's tiling: its grid has Tc = ⌈N / Bc⌉ blocks per head.
  const auto schedule = fs::build_schedule(kernel);
  CHECK(schedule.back().kind == fs::KernelKind::flash2_bwd_convert_dq);
  CHECK(schedule[2].blocks_per_head == (1000 + bwd.block_c - 1) / bwd.block_c);

  const fs::Config given = fs::make_config(fs::Algo::flash2, p, hw, std::nullopt, {fs::TilingSource::rule, 64, 64});
  CHECK(given.tiling_source == fs::TilingSource::given);
  const fk::AttentionConfig g = fp::kernel_config(given);
  CHECK(fs::Tiling{g.block_r, g.block_c} == fs::Tiling{64, 64});
  // One tiling for both passes: no backward tiling of its own, so a forward-only tiling (whose
  // backward is not built) still runs its forward (kernels/attention.h, AttentionConfig).
  CHECK(fs::Tiling{g.bwd_block_r, g.bwd_block_c} == fs::Tiling{0, 0});
}

TEST_CASE("bridge: --tiling best runs the time model's best built tiling of each pass, a backward alone "
          "runs its untimed forward at the catalog's default") {
  fs::Problem p;
  p.seqlen = 3000, p.headdim = 64, p.pass = fs::Pass::fwdbwd;
  const fs::Hardware hw = fs::hardware_preset("h200");
  const fs::Config best = fs::make_config(fs::Algo::flash1, p, hw, std::nullopt, {fs::TilingSource::best});
  const fk::AttentionConfig k = fp::kernel_config(best);
  const fs::Tiling fwd = best.tiling, bwd = best.bwd_tiling.value_or(best.tiling);
  CHECK(fs::find_built(fs::Algo::flash1, fs::Pass::fwd, 64, fs::DType::fp16, fwd));
  CHECK(fs::find_built(fs::Algo::flash1, fs::Pass::bwd, 64, fs::DType::fp16, bwd));
  CHECK(fs::Tiling{k.block_r, k.block_c} == fwd);
  if (!(bwd == fwd)) CHECK(fs::Tiling{k.bwd_block_r, k.bwd_block_c} == bwd);
  p.pass = fs::Pass::bwd;
  const fs::Config bwd_only = fs::make_config(fs::Algo::flash1, p, hw, std::nullopt, {fs::TilingSource::best});
  const fk::AttentionConfig b = fp::kernel_config(bwd_only);
  const fs::Tiling default_fwd = fs::default_built(fs::Algo::flash1, fs::Pass::fwd, 64, fs::DType::fp16)->tiling;
  CHECK(fs::Tiling{b.block_r, b.block_c} == default_fwd);
  const fs::Tiling timed = b.bwd_block_r ? fs::Tiling{b.bwd_block_r, b.bwd_block_c} : fs::Tiling{b.block_r, b.block_c};
  CHECK(timed == bwd_only.tiling);
}

TEST_CASE("bridge: what the kernels do not build is refused with one line naming the field") {
  CHECK_THROWS_WITH(fp::to_kernels(fs::DType::fp32), Catch::Matchers::StartsWith("dtype") &&
                                                         Catch::Matchers::Contains("fp16, bf16"));
  // blocksparse is flash2 over a block mask: its kernels' configuration carries the mask's bits.
  CHECK(fp::to_kernels(fs::Algo::blocksparse) == fk::Algo::flash2);
  fs::Problem p;
  p.headdim = 96;
  CHECK_THROWS_WITH(fs::make_config(fs::Algo::flash2, p, fs::hardware_preset("h200"), std::nullopt,
                                    {fs::TilingSource::kernel}),
                    Catch::Matchers::Contains("d=96") && Catch::Matchers::Contains("d=64 fp16: 64x32"));
  // Grouped-query attention and Nq != Nk have flash2 kernels only: flash1 and standard refuse
  // them rather than run the square kernels on another problem; flash2 carries them over.
  fs::Problem gqa;
  gqa.heads = 8, gqa.kv_heads = 2;
  for (fs::Algo a : {fs::Algo::flash1, fs::Algo::standard})
    CHECK_THROWS_WITH(fp::kernel_config(fs::make_config(a, gqa, fs::hardware_preset("h200"))),
                      Catch::Matchers::StartsWith("--kv-heads") && Catch::Matchers::Contains("flash2"));
  fs::Problem keys;
  keys.seqlen = 97, keys.seqlen_k = 4096;
  for (fs::Algo a : {fs::Algo::flash1, fs::Algo::standard})
    CHECK_THROWS_WITH(fp::kernel_config(fs::make_config(a, keys, fs::hardware_preset("h200"))),
                      Catch::Matchers::StartsWith("--seqlen-k") && Catch::Matchers::Contains("flash2"));
  fs::Problem both = gqa;
  both.seqlen = 3, both.seqlen_k = 1000;
  fs::Config packed_off = fs::make_config(fs::Algo::flash2, both, fs::hardware_preset("h200"));
  packed_off.gqa_pack = false;
  const fk::AttentionConfig k = fp::kernel_config(packed_off);
  CHECK(k.heads == 8);
  CHECK(k.kv_heads == 2);
  CHECK(k.seqlen == 3);
  CHECK(k.seqlen_k == 1000);
  CHECK_FALSE(k.gqa_pack);
  CHECK(fk::kv_heads_of(k) == 2);
  CHECK(fk::keys_of(fp::kernel_config(fs::make_config(fs::Algo::flash2, fs::Problem{}, fs::hardware_preset("h200")))) ==
        fs::Problem{}.seqlen);
}

TEST_CASE("bridge: a varlen batch reaches the kernels as AttentionConfig::varlen with its sequences' lengths, and "
          "its launches are the model's kernels, forward and backward") {
  fs::Problem p;
  p.batch = 4, p.heads = 8, p.kv_heads = 2, p.seqlen = 1024, p.headdim = 64, p.causal = true;
  p.key_lengths = {std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{1, 17, 1000, 513}), "lengths"};
  for (fs::Pass pass : {fs::Pass::fwd, fs::Pass::bwd, fs::Pass::fwdbwd})
    for (bool varlen : {false, true}) {
      p.pass = pass, p.varlen = varlen;
      if (!varlen) p.causal = false;  // padded key lengths below N take no causal
      const fs::Config c = fs::make_config(fs::Algo::flash2, p, fs::hardware_preset("h200"), std::nullopt,
                                           {fs::TilingSource::kernel});
      INFO(fs::to_string(pass) << " varlen=" << varlen);
      const fk::AttentionConfig k = fp::kernel_config(c);
      CHECK(k.varlen == varlen);
      CHECK(k.key_lengths == *p.key_lengths.values);
      CHECK(k.seqlen == 1024);
      CHECK(fk::keys_of(k) == 1024);
      CHECK(launched_kinds(c) == model_kinds(c));
      p.causal = true;
    }
}

TEST_CASE("bridge: every kernel launch maps to a kernel kind of its own algorithm and pass") {
  for (fk::Algo a : {fk::Algo::standard, fk::Algo::flash1, fk::Algo::flash2})
    for (fk::Pass pass : {fk::Pass::fwd, fk::Pass::bwd}) {
      fk::AttentionConfig c;
      c.algo = a;
      c.mask = a == fk::Algo::standard;
      c.dropout = a == fk::Algo::standard ? 0.5 : 0.0;
      for (fk::Launch l : fk::launch_sequence(c, pass)) {
        INFO(fk::to_string(l));
        CHECK(fs::to_string(fp::to_sim(l)) == fk::to_string(l));  // one spelling on both sides
        CHECK(fs::algo_of(fp::to_sim(l)) == fp::to_sim(a));
        CHECK(fs::pass_of(fp::to_sim(l)) == fp::to_sim(pass));
      }
    }
  // flash2 over a block mask launches the block-sparse instances, the model's blocksparse kernels.
  for (fk::Pass pass : {fk::Pass::fwd, fk::Pass::bwd}) {
    fk::AttentionConfig c;
    c.block_mask = fk::TokenBlockMask{128, 1, {1}};
    const std::vector<fk::Launch> launches = fk::launch_sequence(c, pass);
    CHECK(launches.size() == (pass == fk::Pass::fwd ? 1u : 3u));
    for (fk::Launch l : launches) {
      INFO(fk::to_string(l));
      CHECK(fs::to_string(fp::to_sim(l)) == fk::to_string(l));
      CHECK(fs::algo_of(fp::to_sim(l)) == fs::Algo::blocksparse);
      CHECK(fs::pass_of(fp::to_sim(l)) == fp::to_sim(pass));
    }
  }
}

TEST_CASE("bridge: kernel families convert both ways, the forward's family reaches the kernels, and a measured "
          "row carries the family its entry ran, the backward's for a backward") {
  for (fk::MmaKind k : {fk::MmaKind::mma_sync, fk::MmaKind::wgmma, fk::MmaKind::wgmma_ws}) {
    CHECK(fp::to_kernels(fp::to_sim(k)) == k);
    CHECK(fs::to_string(fp::to_sim(k)) == fk::to_string(k));  // one spelling on both sides
  }
  fs::Problem p;
  p.seqlen = 1000, p.headdim = 128, p.pass = fs::Pass::fwd;
  const fs::Hardware hw = fs::hardware_preset("h200");
  fs::Config c = fs::make_config(fs::Algo::flash2, p, hw, std::nullopt, {fs::TilingSource::kernel});
  // Unset: the kernels run the entry the model resolves (left to them, or named for them).
  const std::optional<fk::MmaKind> unasked = fp::kernel_config(c).kernel;
  REQUIRE(fs::forward_kernel_impl(c).has_value());
  CHECK((!unasked || *unasked == fp::to_kernels(*fs::forward_kernel_impl(c))));
  // At d = 128 the default forward's tiling (128x128) is also the wgmma kernel's: the family
  // reaches the kernels, which would otherwise run the tiling's first (wgmma).
  CHECK(fs::forward_kernel_impl(c) == fs::MmaKind::wgmma_ws);
  CHECK(unasked == fk::MmaKind::wgmma_ws);
  c.kernel_impl = fs::MmaKind::wgmma;
  CHECK(fp::kernel_config(c).kernel == fk::MmaKind::wgmma);
  fk::KernelEntry forward;
  forward.algo = fk::Algo::flash2, forward.pass = fk::Pass::fwd, forward.headdim = 128;
  forward.block_r = 128, forward.block_c = 128, forward.mma = fk::MmaKind::wgmma;
  CHECK(fp::measured_row(c, &forward).kernel_impl == fs::MmaKind::wgmma);
  CHECK(fp::measured_row(c, nullptr).kernel_impl == fs::MmaKind::wgmma);  // the model's resolution
  // A backward alone: the row names the backward's entry, the one it times (the forward the
  // kernels ran first is the catalog's default forward at d = 128, its tiling what the kernels get).
  p.pass = fs::Pass::bwd;
  const fs::Config bwd = fs::make_config(fs::Algo::flash2, p, hw, std::nullopt, {fs::TilingSource::kernel});
  const fs::BuiltKernel* first = fs::default_kernel(bwd, fs::Pass::fwd);
  REQUIRE(first != nullptr);
  fk::KernelEntry backward;
  backward.algo = fk::Algo::flash2, backward.pass = fk::Pass::bwd, backward.headdim = 128;
  backward.block_r = 64, backward.block_c = 128;
  backward.mma = fk::MmaKind::mma_sync;
  CHECK(fp::measured_row(bwd, &backward).kernel_impl == fs::MmaKind::mma_sync);
  backward.mma = fk::MmaKind::wgmma;
  CHECK(fp::measured_row(bwd, &backward).kernel_impl == fs::MmaKind::wgmma);
  CHECK(fp::measured_row(bwd, nullptr).kernel_impl == fs::row_kernel_impl(bwd));  // the model's resolution
  CHECK(fs::row_kernel_impl(bwd) == fs::MmaKind::wgmma);  // the dense default backward at d = 128
  CHECK(fs::Tiling{fp::kernel_config(bwd).block_r, fp::kernel_config(bwd).block_c} == first->tiling);
}
