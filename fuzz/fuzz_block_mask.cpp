// Block-mask files (sim/block_mask.h): any text is a mask or one InvalidInput; an accepted mask
// is counted the same by the closed form and the walk (the model's own cross-check).
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/config.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/simulate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = flashio::sim;
  const std::string path = flashio::fuzz::as_file(flashio::fuzz::text_of(data, size), "mask");
  sim::Problem p;
  // N = 891: a mask of 7 × 7 blocks of 128 tokens (the last one 123), on 64 × 32 tiles.
  p.batch = 1, p.heads = 1, p.seqlen = 891, p.headdim = 16, p.pass = sim::Pass::fwdbwd;
  try {
    sim::Config c = sim::make_config(sim::Algo::blocksparse, p, sim::hardware_preset("h200"), std::nullopt,
                                     {sim::TilingSource::rule, 64, 32});
    c.block_mask = {path};
    const auto formula = sim::simulate(c, sim::CountMethod::formula);
    const auto walk = sim::simulate(c, sim::CountMethod::walk);
    if (!(formula.total == walk.total)) flashio::fuzz::violated("closed form and walk disagree on a mask");
  } catch (const sim::InvalidInput&) {
  }
  return 0;
}
