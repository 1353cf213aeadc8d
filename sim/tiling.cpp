#include "sim/tiling.h"

#include <algorithm>

#include "sim/errors.h"

namespace flashio::sim {

int64_t sram_elements(const Problem& problem, int64_t sram_bytes) {
  return sram_bytes / element_bytes(problem.dtype);
}

Tiling rule_tiling(Algo algo, const Problem& problem, int64_t sram_bytes) {
  const int64_t m = sram_elements(problem, sram_bytes);
  const int64_t d = problem.headdim;
  int64_t outer = ceil_div(m, 4 * d);
  Tiling t;
  auto make = [&](int64_t big) {
    const int64_t small = std::min(big, d);
    return algo == Algo::flash1 ? Tiling{small, big} : Tiling{big, small};
  };
  t = make(std::max<int64_t>(outer, 1));
  if (!tiling_fits(problem, t, sram_bytes)) t = make(std::max<int64_t>(m / (4 * d), 1));
  return t;
}

int64_t tile_footprint_elements(const Problem& problem, const Tiling& tiling) {
  return (2 * tiling.block_r + 2 * tiling.block_c) * problem.headdim;
}

bool tiling_fits(const Problem& problem, const Tiling& tiling, int64_t sram_bytes) {
  return tiling.block_r > 0 && tiling.block_c > 0 &&
         tile_footprint_elements(problem, tiling) <= sram_elements(problem, sram_bytes);
}

void validate_tiling(const Problem& problem, const Tiling& tiling, int64_t sram_bytes) {
  const int64_t m = sram_elements(problem, sram_bytes);
  if (m < problem.headdim)
    throw InvalidInput(Field::sram_bytes,
                       std::to_string(sram_bytes) + " B holds " + std::to_string(m) +
                           " elements, fewer than d = " + std::to_string(problem.headdim) +
                           "; Theorem 2 needs d <= M, allowed: at least " +
                           std::to_string(problem.headdim * element_bytes(problem.dtype)) + " B");
  if (tiling.block_r <= 0 || tiling.block_c <= 0)
    throw InvalidInput(tiling.block_r <= 0 ? Field::block_r : Field::block_c,
                       "must be a positive integer (got Br = " + std::to_string(tiling.block_r) +
                           ", Bc = " + std::to_string(tiling.block_c) + ")");
  if (!tiling_fits(problem, tiling, sram_bytes))
    throw InvalidInput(Field::tiling,
                       "Br = " + std::to_string(tiling.block_r) + ", Bc = " +
                           std::to_string(tiling.block_c) + " need (2*Br + 2*Bc)*d = " +
                           std::to_string(tile_footprint_elements(problem, tiling)) +
                           " elements, more than M = " + std::to_string(m) + " elements (" +
                           std::to_string(sram_bytes) + " B); allowed: tiles that fit in M");
}

}  // namespace flashio::sim
