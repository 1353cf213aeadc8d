// sim's catalog of built kernels (sim/kernel_catalog.h, plain C++ for builds without CUDA) is the
// compiled registry (kernels/registry.cpp), entry for entry: every static fact the model reads
// about a kernel is the kernel's own. Needs the CUDA build, not a GPU.
#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>

#include "kernels/attention.h"
#include "kernels/launch.h"  // find_impl, flash_impls: the kernels' own choice of an entry
#include "profiler/kernel_bridge.h"
#include "sim/kernel_catalog.h"

namespace fk = flashio::kernels;
namespace fs = flashio::sim;
namespace fp = flashio::profiler;

TEST_CASE("catalog: the same kernels as the compiled registry, in order, with the same threads, shared memory, stages, mma kind and dense_only") {
  const auto& registry = fk::registry();
  const auto catalog = fs::built_kernels();
  REQUIRE(catalog.size() == registry.size());
  for (size_t i = 0; i < registry.size(); ++i) {
    const fk::KernelEntry& k = registry[i];
    const fs::BuiltKernel& s = catalog[i];
    INFO(fk::to_string(k.algo) << " " << fk::to_string(k.pass) << " d=" << k.headdim << " "
                               << fk::to_string(k.dtype) << " " << k.block_r << "x" << k.block_c);
    CHECK(s.algo == fp::to_sim(k.algo));
    CHECK(s.pass == fp::to_sim(k.pass));
    CHECK(s.headdim == k.headdim);
    CHECK(s.dtype == fp::to_sim(k.dtype));
    CHECK(s.tiling == fs::Tiling{k.block_r, k.block_c});
    CHECK(s.threads == k.threads);
    CHECK(s.smem_bytes == k.smem_bytes);
    CHECK(s.stages == k.stages);
    CHECK(s.mma == fp::to_sim(k.mma));
    CHECK(s.dense_only == k.dense_only);
  }
}

TEST_CASE("catalog: the model picks the kernel the registry runs, for every tiling, family and density") {
  // sim::find_built (what sim/kernel_choice.h asks) against kernels::find_impl (what
  // AttentionRun runs), by position in their common order: the same entry, or both none.
  const auto catalog = fs::built_kernels();
  const auto& impls = fk::flash_impls();
  REQUIRE(catalog.size() == impls.size());
  int compared = 0;
  for (const fk::KernelEntry& k : fk::registry())
    for (std::optional<fk::MmaKind> family :
         {std::optional<fk::MmaKind>{}, std::optional{fk::MmaKind::mma_sync}, std::optional{fk::MmaKind::wgmma},
          std::optional{fk::MmaKind::wgmma_ws}})
      for (bool dense : {true, false}) {
        INFO(fk::to_string(k.algo) << " " << fk::to_string(k.pass) << " d=" << k.headdim << " "
                                   << fk::to_string(k.dtype) << " " << k.block_r << "x" << k.block_c << " family "
                                   << (family ? fk::to_string(*family) : "unset") << " dense " << dense);
        std::optional<fs::MmaKind> sim_family;
        if (family) sim_family = fp::to_sim(*family);
        const fs::BuiltKernel* s = fs::find_built(fp::to_sim(k.algo), fp::to_sim(k.pass), k.headdim,
                                                  fp::to_sim(k.dtype), {k.block_r, k.block_c}, sim_family, dense);
        const fk::FlashImpl* impl = nullptr;
        try {
          impl = &fk::find_impl(k.algo, k.pass, k.headdim, k.dtype, k.block_r, k.block_c, family, dense);
        } catch (const std::invalid_argument&) {
        }
        REQUIRE((s == nullptr) == (impl == nullptr));
        if (s) CHECK(s - catalog.data() == impl - impls.data());
        ++compared;
      }
  CHECK(compared == static_cast<int>(8 * fk::registry().size()));
}

TEST_CASE("catalog: its default tiling of every (algo, pass, d, dtype) is the kernels' default entry") {
  for (const fk::KernelEntry& k : fk::registry()) {
    const fk::KernelEntry& d = fk::default_entry(k.algo, k.pass, k.headdim, k.dtype);
    const fs::BuiltKernel* s = fs::default_built(fp::to_sim(k.algo), fp::to_sim(k.pass), k.headdim, fp::to_sim(k.dtype));
    REQUIRE(s != nullptr);
    CHECK(s->tiling == fs::Tiling{d.block_r, d.block_c});
  }
}
