#include "sim/tiling.h"

#include <algorithm>

#include "sim/errors.h"

namespace flashio::sim {
namespace {
// A saturated product (sim/checked.h) as text.
std::string count_text(int64_t v) { return v == kMaxCount ? std::string("over 2^63") : std::to_string(v); }
}  // namespace

int64_t sram_elements(const Problem& problem, int64_t sram_bytes) {
  return sram_bytes / element_bytes(problem.dtype);
}

Tiling rule_tiling(Algo algo, const Problem& problem, int64_t sram_bytes) {
  const int64_t m = sram_elements(problem, sram_bytes);
  const int64_t d = problem.headdim;
  // 4d saturates: a d so large that 4d passes 2^63 gives the same quotients as any 4d > M.
  const int64_t four_d = saturating_mul(4, d);
  const int64_t outer = ceil_div(m, four_d);
  Tiling t;
  auto make = [&](int64_t big) {
    const int64_t small = std::min(big, d);
    return algo == Algo::flash1 ? Tiling{small, big} : Tiling{big, small};
  };
  t = make(std::max<int64_t>(outer, 1));
  if (!tiling_fits(problem, t, sram_bytes)) t = make(std::max<int64_t>(m / four_d, 1));
  return t;
}

int64_t tile_footprint_elements(const Problem& problem, const Tiling& tiling) {
  return saturating_mul(saturating_add(saturating_mul(2, tiling.block_r), saturating_mul(2, tiling.block_c)),
                        problem.headdim);
}

bool tiling_fits(const Problem& problem, const Tiling& tiling, int64_t sram_bytes) {
  return tiling.block_r > 0 && tiling.block_c > 0 &&
         tile_footprint_elements(problem, tiling) <= sram_elements(problem, sram_bytes);
}

void validate_tiling(const Problem& problem, const Tiling& tiling, int64_t sram_bytes) {
  const int64_t m = sram_elements(problem, sram_bytes);
  if (saturating_mul(problem.headdim, element_bytes(problem.dtype)) == kMaxCount)
    throw InvalidInput(Field::headdim, std::to_string(problem.headdim) +
                                           " elements of a row take more than 2^63 bytes, more than any M; "
                                           "Theorem 2 needs d <= M, allowed: d of fewer than 2^63 bytes");
  if (m < problem.headdim)
    throw InvalidInput(Field::sram_bytes,
                       std::to_string(sram_bytes) + " B holds " + std::to_string(m) +
                           " elements, fewer than d = " + std::to_string(problem.headdim) +
                           "; Theorem 2 needs d <= M, allowed: at least " +
                           std::to_string(problem.headdim * element_bytes(problem.dtype)) +
                           " B");
  if (tiling.block_r <= 0 || tiling.block_c <= 0)
    throw InvalidInput(tiling.block_r <= 0 ? Field::block_r : Field::block_c,
                       "must be a positive integer (got Br = " + std::to_string(tiling.block_r) +
                           ", Bc = " + std::to_string(tiling.block_c) + ")");
  if (!tiling_fits(problem, tiling, sram_bytes)) {
    throw InvalidInput(Field::tiling,
                       "Br = " + std::to_string(tiling.block_r) + ", Bc = " +
                           std::to_string(tiling.block_c) + " need (2*Br + 2*Bc)*d = " +
                           count_text(tile_footprint_elements(problem, tiling)) +
                           " elements, more than M = " + std::to_string(m) + " elements (" +
                           std::to_string(sram_bytes) + " B); allowed: tiles that fit in M");
  }
}

}  // namespace flashio::sim
