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
  if (c.sram_bytes <= 0) throw InvalidInput("--sram must be a positive size (e.g. 227KiB)");
  // standard attention has no tiles in SRAM: M and the tiling are carried in its rows only.
  if (c.algo != Algo::standard) validate_tiling(c.problem, c.tiling, c.sram_bytes);
  if (c.algo != Algo::standard && (c.problem.mask || c.problem.dropout > 0))
    throw InvalidInput("--mask and --dropout are separate passes of standard attention only; "
                       "use them with --algo standard");
  if (c.algo == Algo::blocksparse) validate_block_mask_spec(c.block_mask);
  else if (!c.block_mask.text.empty())
    throw InvalidInput("--block-mask applies to --algo blocksparse only");
}

}  // namespace flashio::sim
