// The warp-specialised forward (kernels/flash2_fwd_ws.cuh) in the model: its consumer warpgroups
// compute only the key tiles their own 64 rows see (computing_slice_rows, sim/kernel_catalog.h),
// so a visited tile's FLOPs are its seeing slices' (the closed form, the walk and execute alike,
// and by hand below), while its transfers stay the whole tile's; and its grid is persistent
// (persistent_grid): one wave, whatever the row tiles.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/execute.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/time_model.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

Config forward_on(MmaKind family, int64_t d, Tiling tiling, int64_t n, bool causal, int64_t batch = 1) {
  return test::family_forward(family, d, tiling, batch, 2, 2, n, causal);
}
using test::only_kernel_counts;

// By hand: each 64-row slice of rows [64u, 64u + 63] ∩ [0, n) that holds rows computes key tiles
// 0 … its last (causal: the tile of its last row's key, the diagonal), 4·64·Bc·d tensor FLOPs each;
// slices past n compute nothing. Per head.
int64_t slice_tensor_flops(int64_t n, int64_t bc, int64_t d, bool causal) {
  const int64_t tc = (n + bc - 1) / bc;
  int64_t tiles = 0;
  for (int64_t row0 = 0; row0 < n; row0 += 64) {
    const int64_t last_row = std::min(row0 + 63, n - 1);
    tiles += causal ? std::min(tc - 1, last_row / bc) + 1 : tc;
  }
  return tiles * 4 * 64 * bc * d;
}

}  // namespace

TEST_CASE("the warp-specialised forward's warpgroups compute only the key tiles their own 64 rows see: tensor FLOPs "
          "by hand, the closed form = the walk = execute, transfers the whole tile's, and the wgmma kernel of the same "
          "tiling computes whole tiles") {
  struct Shape {
    int64_t d;
    Tiling tiling;
  };
  for (const Shape s : {Shape{64, {192, 128}}, Shape{128, {128, 128}}})
    for (int64_t n : {1, 97, 300, 1000})
      for (bool causal : {false, true}) {
        CAPTURE(s.d, s.tiling.block_r, n, causal);
        const Config ws = forward_on(MmaKind::wgmma_ws, s.d, s.tiling, n, causal);
        REQUIRE(computing_slice_rows(*built_kernel(ws, Pass::fwd, ws.tiling)) == 64);
        const Counts formula = only_kernel_counts(closed_form_counts(ws));
        CHECK(only_kernel_counts(walk_counts(ws)) == formula);
        CHECK(execute(ws, 5).kernels.front().counts == formula);
        CHECK(formula.flops.tensor == 2 * slice_tensor_flops(n, s.tiling.block_c, s.d, causal));
        // The same transfers as whole tiles: K and V of every tile some row of the tile sees.
        const TileVisits v = tile_visits(ws);
        CHECK(formula.of(Tensor::K).read_bytes == 2 * v.tiles() * s.tiling.block_c * s.d * 2);
      }
  // Causal at N = 1000, 192 × 128: whole tiles compute 32 (row tile, key tile) pairs of 192 rows
  // a head (96 of 64 rows); the slices, 16 of them with rows, compute 72.
  const Config ws = forward_on(MmaKind::wgmma_ws, 64, {192, 128}, 1000, true);
  CHECK(only_kernel_counts(closed_form_counts(ws)).flops.tensor == 2 * 72 * 4 * 64 * 128 * 64);
  const Config plain = forward_on(MmaKind::wgmma, 128, {128, 128}, 1000, true);
  REQUIRE(computing_slice_rows(*built_kernel(plain, Pass::fwd, plain.tiling)) == 0);
  CHECK(only_kernel_counts(closed_form_counts(plain)).flops.tensor ==
        2 * int64_t(tile_visits(plain).tiles()) * 4 * 128 * 128 * 128);
}

TEST_CASE("the warp-specialised forward's grid is persistent: one wave however many row tiles, where the wgmma "
          "kernel of the same tiling runs one block a row tile in waves of one block an SM") {
  const Config ws = forward_on(MmaKind::wgmma_ws, 128, {128, 128}, 4096, false, 16);  // 16·2·32 = 1024 row tiles
  const Config plain = forward_on(MmaKind::wgmma, 128, {128, 128}, 4096, false, 16);
  REQUIRE(persistent_grid(*built_kernel(ws, Pass::fwd, ws.tiling)));
  REQUIRE_FALSE(persistent_grid(*built_kernel(plain, Pass::fwd, plain.tiling)));
  const auto time_of = [](const Config& c) {
    const std::vector<KernelSchedule> kernels = build_schedule(c);
    const std::vector<KernelCounts> counts = closed_form_counts(c);
    std::vector<int64_t> dram, none;
    for (size_t k = 0; k < kernels.size(); ++k) {
      dram.push_back(estimated_dram_bytes(c, kernels[k], counts[k].counts));
      none.push_back(0);
    }
    return model_time(c, kernels, dram, none);
  };
  const PassTime a = time_of(ws), b = time_of(plain);
  REQUIRE(a.kernels.size() == 1);
  REQUIRE(b.kernels.size() == 1);
  CHECK(a.kernels[0].waves == 1);
  CHECK(b.kernels[0].waves == (1024 + 131) / 132);
}
