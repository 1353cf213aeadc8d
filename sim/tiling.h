// Tiling: Br × Bc (docs/architecture.md, "Vocabulary"). M (sram) is given in bytes and converted to
// elements of the problem's type here, in one place, because the papers count elements.
#pragma once
#include <cstdint>

#include "sim/checked.h"
#include "sim/problem.h"

namespace flashio::sim {

struct Tiling {
  int64_t block_r = 0;  // Br: rows of Q (and O) per tile
  int64_t block_c = 0;  // Bc: rows of K and V per tile
  bool operator==(const Tiling&) const = default;
};

// M in elements of the problem's element type.
int64_t sram_elements(const Problem& problem, int64_t sram_bytes);

// The tiling the paper's rule chooses from M alone.
// flash1 (Algorithm 1, line 1): Bc = ⌈M/4d⌉, Br = min(Bc, d).
// flash2 and blocksparse (transposed): Br = ⌈M/4d⌉, Bc = min(Br, d), so the outer Q block grows
// with M and io falls as 1/M (Theorem 2). When 4d does not divide M and the two blocks come out
// (nearly) equal, the ceiling can overshoot M by up to 4d elements; then ⌊M/4d⌋ is used so that
// the rule's tiling always passes tiling_fits. standard ignores the tiling (returns flash2's).
Tiling rule_tiling(Algo algo, const Problem& problem, int64_t sram_bytes);

// The one fit rule: the Q, K, V and O tiles, (2·Br + 2·Bc)·d elements, fit in M (scores and
// probabilities live in registers). The footprint saturates at kMaxCount (sim/checked.h): a
// footprint beyond 64 bits fits in no M.
int64_t tile_footprint_elements(const Problem& problem, const Tiling& tiling);
bool tiling_fits(const Problem& problem, const Tiling& tiling, int64_t sram_bytes);

// Throws InvalidInput when M < d (Field::sram_bytes), Br or Bc <= 0 (Field::block_r, block_c),
// or the tiles do not fit in M (Field::tiling).
void validate_tiling(const Problem& problem, const Tiling& tiling, int64_t sram_bytes);

}  // namespace flashio::sim
