// Tile steps (sim/tile_steps.h): grouping the schedule into one step per visited tile must keep
// every byte and FLOP of the walk (so each kernel's tally after its last step, times B·H, is the
// closed form's count), compute each visited tile of S exactly once in the algorithm's loop
// order, and put the reads and writes around each tile where docs/schedules.md says they are.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/tile_steps.h"
#include "tiled_config.h"

using namespace flashio::sim;

namespace {

struct Shape {
  int64_t n, d, br, bc;
};
// Ragged N (10, 97) with Br ≠ Bc both ways, and one tile wider than N.
const Shape kShapes[] = {{10, 4, 3, 4}, {10, 8, 4, 3}, {97, 40, 16, 5}, {97, 40, 5, 16},
                         {97, 8, 128, 7}};

Config make(Algo algo, Pass pass, const Shape& s, bool causal) {
  return test::tiled_config(algo, pass, 2, 3, s.n, s.d, s.br, s.bc, causal);
}

// The configurations every property below is checked on: both tiled algorithms and block-sparse
// (banded and a random mask that leaves some row tiles empty), each pass, causal and not.
std::vector<Config> tiled_configs() {
  std::vector<Config> out;
  for (const Shape& s : kShapes)
    for (bool causal : {false, true})
      for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) {
        for (Algo algo : {Algo::flash1, Algo::flash2}) out.push_back(make(algo, pass, s, causal));
        for (const char* mask : {"banded:1", "random:0.3:7"}) {
          Config c = make(Algo::blocksparse, pass, s, causal);
          c.block_mask.text = mask;
          out.push_back(c);
        }
      }
  return out;
}

std::string describe_config(const Config& c) {
  return to_string(c.algo) + " " + to_string(c.problem.pass) + " N=" +
         std::to_string(c.problem.seqlen) + " d=" + std::to_string(c.problem.headdim) +
         " Br=" + std::to_string(c.tiling.block_r) + " Bc=" + std::to_string(c.tiling.block_c) +
         (c.problem.causal ? " causal" : "") +
         (c.block_mask.text.empty() ? "" : " mask " + c.block_mask.text);
}

// Adds up one kernel's steps the way the walk adds up its transfers and computes.
Counts step_counts(const KernelSteps& k) {
  Counts c;
  for (const TileStep& s : k.steps) {
    for (const TileMove& m : s.moves) c.add_transfer(m.transfer.tensor, m.transfer.dir, m.bytes);
    c.flops += s.flops();
  }
  return c;
}

void check_tallies(const Config& c) {
  INFO(describe_config(c));
  const std::vector<KernelSteps> steps = tile_steps(c);
  const std::vector<KernelCounts> closed = closed_form_counts(c);
  const std::vector<KernelCounts> walk = walk_counts(c);
  REQUIRE(steps.size() == closed.size());
  REQUIRE(steps.size() == walk.size());
  const int64_t heads = c.problem.batch_heads();
  for (size_t k = 0; k < steps.size(); ++k) {
    INFO("kernel " << k);
    const KernelSteps& ks = steps[k];
    CHECK(ks.schedule.heads == heads);
    // The tally after the last step is the closed form's count for one head.
    CHECK(ks.read_bytes * heads == closed[k].counts.io_read_bytes());
    CHECK(ks.write_bytes * heads == closed[k].counts.io_write_bytes());
    REQUIRE(!ks.steps.empty());
    CHECK(ks.steps.back().read_bytes == ks.read_bytes);
    CHECK(ks.steps.back().write_bytes == ks.write_bytes);
    // Tensor by tensor and FLOP by FLOP, the steps hold exactly what the walk counts.
    const Counts counted = step_counts(ks).scaled(heads);
    INFO("walk:  " << describe(walk[k].counts) << "\nsteps: " << describe(counted));
    CHECK(counted == walk[k].counts);
    // Each step's tallies grow by exactly its own moves' bytes, and no step is empty.
    int64_t read = 0, write = 0, block = 0;
    for (const TileStep& s : ks.steps) {
      CHECK((!s.moves.empty() || !s.computes.empty()));
      CHECK(s.moves_before_compute <= s.moves.size());
      CHECK(s.thread_block >= block);  // blocks in launch order
      block = s.thread_block;
      for (const TileMove& m : s.moves) (m.transfer.dir == Dir::read ? read : write) += m.bytes;
      CHECK(s.read_bytes == read);
      CHECK(s.write_bytes == write);
    }
  }
}

// The tiles of S the steps compute, in order, over all kernels of the pass.
std::vector<std::pair<int64_t, int64_t>> computed_tiles(const std::vector<KernelSteps>& kernels) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const KernelSteps& k : kernels)
    for (const TileStep& s : k.steps)
      if (s.computes_tile()) out.emplace_back(s.i, s.j);
  return out;
}

}  // namespace

TEST_CASE("each kernel's tile steps hold the walk's transfers and FLOPs, and the tally after "
          "the last step times B·H is the closed form's count (N = 10, 97, Br ≠ Bc, causal, "
          "flash1, flash2, blocksparse, fwd, bwd, fwdbwd)",
          "[tile_steps]") {
  for (const Config& c : tiled_configs()) check_tallies(c);
}

TEST_CASE("standard attention's kernels step with the same tallies (no S tiles)",
          "[tile_steps]") {
  for (const Shape& s : kShapes)
    for (bool causal : {false, true}) {
      const Config c = make(Algo::standard, Pass::fwdbwd, s, causal);
      check_tallies(c);
      CHECK(computed_tiles(tile_steps(c)).empty());
    }
}

TEST_CASE("each visited tile of S is computed by one step, in the loop order: forward flash1 "
          "K/V outside, flash2 and blocksparse Q outside, backward K/V outside",
          "[tile_steps]") {
  for (const Config& c : tiled_configs()) {
    if (c.problem.pass == Pass::fwdbwd) continue;  // both orders in one list: fwd and bwd cover it
    INFO(describe_config(c));
    const TileFilter filter(c);
    const TileGrid& g = filter.grid();
    const bool k_v_outside = c.algo == Algo::flash1 || c.problem.pass == Pass::bwd;
    std::vector<std::pair<int64_t, int64_t>> expected;
    const int64_t outer = k_v_outside ? g.tc : g.tr, inner = k_v_outside ? g.tr : g.tc;
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        const int64_t i = k_v_outside ? b : a, j = k_v_outside ? a : b;
        if (filter.visits(i, j)) expected.emplace_back(i, j);
      }
    CHECK(computed_tiles(tile_steps(c)) == expected);
  }
}

TEST_CASE("the forward steps place their reads and writes as docs/schedules.md says: flash2 "
          "reads Q_i in row tile i's first step and writes O_i, lse_i in its last, flash1 reads "
          "K_j, V_j in column j's first step and writes O_i at row tile i's last tile",
          "[tile_steps]") {
  for (const Shape& shape : kShapes)
    for (bool causal : {false, true})
      for (Algo algo : {Algo::flash1, Algo::flash2}) {
        const Config c = make(algo, Pass::fwd, shape, causal);
        INFO(describe_config(c));
        const std::vector<KernelSteps> kernels = tile_steps(c);
        REQUIRE(kernels.size() == 1);
        const std::vector<TileStep>& steps = kernels.front().steps;
        const TileFilter filter(c);
        const TileGrid& g = filter.grid();
        // Every forward step computes a tile, and reads before it and writes after it.
        for (const TileStep& s : steps) {
          CHECK(s.computes_tile());
          for (size_t k = 0; k < s.moves.size(); ++k)
            CHECK((s.moves[k].transfer.dir == Dir::read) == (k < s.moves_before_compute));
        }
        auto has = [](const TileStep& s, Tensor t, Dir dir, int64_t tile) {
          for (const TileMove& m : s.moves)
            if (m.transfer.tensor == t && m.transfer.dir == dir && m.tile == tile) return true;
          return false;
        };
        for (size_t k = 0; k < steps.size(); ++k) {
          const TileStep& s = steps[k];
          int64_t first_j = -1, last_j = -1;
          for (int64_t j = 0; j < g.tc; ++j)
            if (filter.visits(s.i, j)) {
              if (first_j < 0) first_j = j;
              last_j = j;
            }
          int64_t first_i = -1;
          for (int64_t i = g.tr - 1; i >= 0; --i)
            if (filter.visits(i, s.j)) first_i = i;
          CHECK(has(s, Tensor::O, Dir::write, s.i) == (s.j == last_j));
          if (algo == Algo::flash2) {
            CHECK(has(s, Tensor::Q, Dir::read, s.i) == (s.j == first_j));
            CHECK(has(s, Tensor::K, Dir::read, s.j));
            CHECK(has(s, Tensor::lse, Dir::write, s.i) == (s.j == last_j));
          } else {
            CHECK(has(s, Tensor::K, Dir::read, s.j) == (s.i == first_i));
            CHECK(has(s, Tensor::V, Dir::read, s.j) == (s.i == first_i));
            CHECK(has(s, Tensor::Q, Dir::read, s.i));
            CHECK(has(s, Tensor::o_accum, Dir::read, s.i) == (s.j != first_j));
            CHECK(has(s, Tensor::o_accum, Dir::write, s.i) == (s.j != last_j));
          }
        }
      }
}
