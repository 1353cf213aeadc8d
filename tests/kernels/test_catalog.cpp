// sim's catalog of built kernels (sim/kernel_catalog.h, plain C++ for builds without CUDA) is the
// compiled registry (kernels/registry.cpp), entry for entry: every static fact the model reads
// about a kernel is the kernel's own. Needs the CUDA build, not a GPU.
#include <catch2/catch.hpp>

#include "kernels/attention.h"
#include "profiler/kernel_bridge.h"
#include "sim/kernel_catalog.h"

namespace fk = flashio::kernels;
namespace fs = flashio::sim;
namespace fp = flashio::profiler;

TEST_CASE("catalog: the same kernels as the compiled registry, in order, with the same threads, shared memory, stages and mma kind") {
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
  }
}

TEST_CASE("catalog: its default tiling of every (algo, pass, d, dtype) is the kernels' default entry") {
  for (const fk::KernelEntry& k : fk::registry()) {
    const fk::KernelEntry& d = fk::default_entry(k.algo, k.pass, k.headdim, k.dtype);
    const fs::BuiltKernel* s = fs::default_built(fp::to_sim(k.algo), fp::to_sim(k.pass), k.headdim, fp::to_sim(k.dtype));
    REQUIRE(s != nullptr);
    CHECK(s->tiling == fs::Tiling{d.block_r, d.block_c});
  }
}
