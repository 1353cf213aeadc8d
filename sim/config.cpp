#include "sim/config.h"

#include "sim/errors.h"

namespace flashio::sim {

Config make_config(Algo algo, const Problem& problem, const Hardware& hw) {
  Config c;
  c.algo = algo;
  c.problem = problem;
  c.hw = hw;
  c.sram_bytes = hw.sram_bytes;
  c.tiling = rule_tiling(algo, problem, c.sram_bytes);
  return c;
}

void validate(const Config& c) {
  validate(c.problem);
  if (c.sram_bytes <= 0)
    throw InvalidInput(Field::sram_bytes, "must be a positive size (got " +
                                              std::to_string(c.sram_bytes) + " B)");
  // standard attention has no tiles in SRAM: M and the tiling are carried in its rows only.
  if (c.algo != Algo::standard) validate_tiling(c.problem, c.tiling, c.sram_bytes);
  if (c.algo != Algo::standard && (c.problem.mask || c.problem.dropout > 0))
    throw InvalidInput(c.problem.mask ? Field::mask : Field::dropout,
                       "a separate pass of standard attention; allowed only with the standard "
                       "algorithm (not " + to_string(c.algo) + ")");
  if (c.algo == Algo::blocksparse) validate_block_mask_spec(c.block_mask);
  else if (!c.block_mask.text.empty())
    throw InvalidInput(Field::block_mask, "applies to the blocksparse algorithm only");
}

}  // namespace flashio::sim
