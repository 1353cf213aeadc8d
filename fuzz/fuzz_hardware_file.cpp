// Hardware files (sim/hardware.h): any text is a Hardware or one InvalidInput; an accepted one
// drives the model (formula and the L2 model on a small problem) without a crash, only
// InvalidInput refusals.
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/config.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/simulate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = flashio::sim;
  const std::string path = flashio::fuzz::as_file(flashio::fuzz::text_of(data, size), "hw");
  try {
    const sim::Hardware hw = sim::load_hardware_file(path);
    sim::Problem p;
    p.batch = 1, p.heads = 2, p.seqlen = 97, p.headdim = 16, p.pass = sim::Pass::fwdbwd;
    for (sim::Algo a : {sim::Algo::standard, sim::Algo::flash2}) {
      try {
        const sim::Config c = sim::make_config(a, p, hw);
        sim::simulate(c, sim::CountMethod::formula);
        sim::simulate(c, sim::CountMethod::cache);
      } catch (const sim::InvalidInput&) {
      }
    }
  } catch (const sim::InvalidInput&) {
  }
  return 0;
}
