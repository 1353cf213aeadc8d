// The warp-specialised forward loads whole TMA boxes (sim/kernel_catalog.h, loads_whole_boxes):
// a tile's rows past the matrix arrive as zeros and count as moved (io), but no memory holds them.
// The closed form, the walk and execute count them alike; the L2 model replays the matrix's rows
// only, so its DRAM bytes are those of the same schedule without the boxes.
#include <catch2/catch.hpp>

#include "sim/execute.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/simulate.h"

using namespace flashio::sim;

namespace {

Config forward_on(MmaKind family, int64_t d, Tiling tiling, int64_t n, bool causal, int64_t heads = 2,
                  int64_t kv_heads = 2) {
  Problem p;
  p.batch = 1, p.heads = heads, p.kv_heads = kv_heads, p.seqlen = n, p.headdim = d, p.causal = causal;
  p.pass = Pass::fwd;
  return make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt,
                     {TilingSource::rule, tiling.block_r, tiling.block_c, family});
}

Counts forward_counts(const std::vector<KernelCounts>& kernels) {
  REQUIRE(kernels.size() == 1);
  return kernels.front().counts;
}

}  // namespace

TEST_CASE("the warp-specialised forward counts whole TMA boxes: Tr·Br rows of Q and Bc a visited tile of K and V, "
          "in the closed form, the walk and execute alike, and the wgmma kernel of the same tiling the matrix's rows") {
  struct Shape {
    int64_t d;
    Tiling tiling;
  };
  for (const Shape s : {Shape{64, {192, 128}}, Shape{128, {128, 128}}})
    for (int64_t n : {97, 300, 384})
      for (bool causal : {false, true})
        for (int64_t kv_heads : {4, 2}) {  // one head's rows, and a group's stacked rows (gqa_pack)
          CAPTURE(s.d, n, causal, kv_heads);
          const Config ws = forward_on(MmaKind::wgmma_ws, s.d, s.tiling, n, causal, 4, kv_heads);
          const BuiltKernel* built = built_kernel(ws, Pass::fwd, ws.tiling);
          REQUIRE(built != nullptr);
          REQUIRE(loads_whole_boxes(*built));
          const Counts formula = forward_counts(closed_form_counts(ws));
          CHECK(forward_counts(walk_counts(ws)) == formula);
          CHECK(execute(ws, 3).kernels.front().counts == formula);
          // By hand: the grid's rows (a group's g·N when stacked) in tiles of Br; each row tile's
          // visited key tiles, Bc rows each, whatever Nk's last tile holds.
          const int64_t group_rows = ws.gqa_pack ? n * (4 / kv_heads) : n, grid_heads = ws.gqa_pack ? kv_heads : 4;
          const int64_t tr = (group_rows + s.tiling.block_r - 1) / s.tiling.block_r;
          const TileVisits v = tile_visits(ws, ws.gqa_pack);
          const int64_t row_bytes = s.d * 2;
          CHECK(formula.of(Tensor::Q).read_bytes == grid_heads * tr * s.tiling.block_r * row_bytes);
          CHECK(formula.of(Tensor::K).read_bytes == grid_heads * v.tiles() * s.tiling.block_c * row_bytes);
          CHECK(formula.of(Tensor::V).read_bytes == formula.of(Tensor::K).read_bytes);
          CHECK(formula.of(Tensor::O).write_bytes == 4 * n * row_bytes);  // a box's rows past N are not stored
        }
  // d = 128, 128x128 is built on wgmma too: cp.async of the matrix's rows, no zeros counted.
  const Config plain = forward_on(MmaKind::wgmma, 128, {128, 128}, 300, false);
  REQUIRE_FALSE(loads_whole_boxes(*built_kernel(plain, Pass::fwd, plain.tiling)));
  CHECK(forward_counts(closed_form_counts(plain)).of(Tensor::Q).read_bytes == 2 * 300 * 256);
  const Config ws = forward_on(MmaKind::wgmma_ws, 128, {128, 128}, 300, false);
  CHECK(forward_counts(closed_form_counts(ws)).of(Tensor::Q).read_bytes == 2 * 384 * 256);
  CHECK(forward_counts(closed_form_counts(ws)).of(Tensor::K).read_bytes ==
        2 * 3 * 3 * 128 * 256);  // 3 row tiles × 3 key tiles × 128 rows, the last 84 rows zeros
}

TEST_CASE("the L2 model counts a box's zero rows as io but reads no memory for them: the warp-specialised and "
          "the wgmma forward of one tiling (non-causal: the same order) reach DRAM with the same bytes") {
  for (int64_t n : {300, 1000}) {
    CAPTURE(n);
    const Config ws = forward_on(MmaKind::wgmma_ws, 128, {128, 128}, n, false, 8, 8);
    const Config plain = forward_on(MmaKind::wgmma, 128, {128, 128}, n, false, 8, 8);
    const SimResult a = simulate(ws, CountMethod::cache), b = simulate(plain, CountMethod::cache);
    CHECK(a.total == simulate(ws, CountMethod::formula).total);  // io: whole boxes in the replay too
    CHECK(a.total.io_read_bytes() > b.total.io_read_bytes());
    CHECK(a.total_dram.read_bytes == b.total_dram.read_bytes);
    CHECK(a.total_dram.write_bytes == b.total_dram.write_bytes);
  }
}
