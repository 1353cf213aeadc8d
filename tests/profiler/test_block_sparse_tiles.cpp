// The block-sparse kernels' tile lists (kernels/block_sparse_tiles.h), built from the bits the
// bridge gives them (profiler/kernel_bridge.h, kernel_config), are the model's visits
// (sim/schedule.h, TileFilter::visits) tile for tile: the kernels visit what the model counts.
// Needs neither CUDA nor a GPU.
#include <catch2/catch.hpp>

#include "kernels/block_sparse_tiles.h"
#include "profiler/kernel_bridge.h"
#include "sim/hardware.h"
#include "sim/schedule.h"

namespace fk = flashio::kernels;
namespace fs = flashio::sim;
namespace fp = flashio::profiler;

namespace {

fs::Config sparse_config(int64_t n, bool causal, const std::string& mask, int64_t br, int64_t bc) {
  fs::Problem p;
  p.batch = 2, p.heads = 3, p.seqlen = n, p.headdim = 64, p.causal = causal;
  fs::Config c = fs::make_config(fs::Algo::blocksparse, p, fs::hardware_preset("h200"), std::nullopt,
                                 {fs::TilingSource::rule, br, bc});
  c.block_mask = fs::BlockMaskSpec{mask};
  return c;
}

}  // namespace

TEST_CASE("block-sparse: the kernels' row and column tile lists are the model's visited tiles, in ascending order") {
  int checked = 0;
  for (int64_t n : {97, 128, 300, 1000, 1025})
    for (bool causal : {false, true})
      for (const std::string mask : {"", "banded:1", "random:0.3:7", "random:0.1:3@64", "banded:0@256"})
        for (auto [br, bc] : {std::pair<int64_t, int64_t>{64, 64}, {128, 64}, {32, 128}, {64, 32}}) {
          const fs::Config c = sparse_config(n, causal, mask, br, bc);
          const fk::TokenBlockMask bits = fp::token_block_mask(c);
          INFO("N " << n << " causal " << causal << " mask '" << mask << "' tiling " << br << "x" << bc);
          if (!fk::block_mask_tiling_problem(bits, n, br, bc).empty()) {
            // Refused by the bridge before any GPU work, naming the option.
            CHECK((bits.block_tokens % br != 0 || bits.block_tokens % bc != 0));
            CHECK_THROWS_WITH(fp::kernel_config(c), Catch::Matchers::StartsWith("--block-mask"));
            continue;
          }
          CHECK(fp::kernel_config(c).block_mask.bits == bits.bits);
          const fs::TileFilter filter(c);
          const fs::TileGrid& g = filter.grid();
          const fk::SparseTileLists rows = fk::row_tile_lists(bits, n, causal, br, bc);
          const fk::SparseTileLists cols = fk::col_tile_lists(bits, n, causal, br, bc);
          REQUIRE(rows.offsets.size() == static_cast<size_t>(g.tr + 1));
          REQUIRE(cols.offsets.size() == static_cast<size_t>(g.tc + 1));
          std::vector<int32_t> want_rows, want_cols;
          for (int64_t i = 0; i < g.tr; ++i)
            for (int64_t j = 0; j < g.tc; ++j)
              if (filter.visits(i, j)) want_rows.push_back(static_cast<int32_t>(j));
          for (int64_t j = 0; j < g.tc; ++j)
            for (int64_t i = 0; i < g.tr; ++i)
              if (filter.visits(i, j)) want_cols.push_back(static_cast<int32_t>(i));
          CHECK(rows.tiles == want_rows);
          CHECK(cols.tiles == want_cols);
          for (int64_t i = 0; i < g.tr; ++i) {
            int64_t count = 0;
            for (int64_t j = 0; j < g.tc; ++j) count += filter.visits(i, j) ? 1 : 0;
            CHECK(rows.offsets[i + 1] - rows.offsets[i] == count);
          }
          ++checked;
        }
  CHECK(checked > 150);
}

TEST_CASE("block-sparse: a mask whose blocks the tiling does not divide is refused naming T and the tiling") {
  const fs::Config c = sparse_config(1000, false, "banded:1@16", 64, 64);
  const fk::TokenBlockMask bits = fp::token_block_mask(c);
  const std::string problem = fk::block_mask_tiling_problem(bits, 1000, 64, 64);
  CHECK_THAT(problem, Catch::Matchers::StartsWith("block_mask") && Catch::Matchers::Contains("T = 16") &&
                          Catch::Matchers::Contains("64x64"));
  CHECK_THROWS_WITH(fk::row_tile_lists(bits, 1000, false, 64, 64), Catch::Matchers::Contains("T = 16"));
  // A mask of another N's shape.
  CHECK_THAT(fk::block_mask_tiling_problem(bits, 2000, 16, 16), Catch::Matchers::Contains("do not cover N = 2000"));
  CHECK(fk::block_mask_tiling_problem(bits, 1000, 16, 16).empty());
}
