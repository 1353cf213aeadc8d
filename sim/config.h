// Config: one configuration the model (or a kernel) runs: algorithm, problem, hardware, M and
// tiling. The CLI sweeps produce lists of these; every row's key columns come from one.
#pragma once
#include <cstdint>
#include <string>

#include "sim/block_mask.h"
#include "sim/hardware.h"
#include "sim/problem.h"
#include "sim/tiling.h"

namespace flashio::sim {

struct Config {
  Algo algo = Algo::flash2;
  Problem problem;
  Hardware hw;             // hw.name is the `hw` key column
  int64_t sram_bytes = 0;  // M in bytes; the preset's hw.sram_bytes by default
  Tiling tiling;           // explicit, or rule_tiling(algo, problem, sram_bytes)
  BlockMaskSpec block_mask;  // blocksparse only
};

// A config with the defaults filled: M from the hardware, tiling from the paper's rule.
Config make_config(Algo algo, const Problem& problem, const Hardware& hw);

// Throws InvalidInput for a problem, M or tiling that cannot exist.
void validate(const Config& config);

}  // namespace flashio::sim
