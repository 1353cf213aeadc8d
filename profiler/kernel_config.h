// The kernels' view of a configuration: sim::Config → kernels::AttentionConfig, in one place for
// `flashio profile` and `flashio bench`. kernels/ knows nothing of sim/; the names convert
// through their shared spellings ("fp16", "flash2").
#pragma once
#include "kernels/attention.h"
#include "sim/config.h"
#include "sim/row.h"

namespace flashio::profiler {

// explicit_tiling: use config.tiling (the user gave --block-r/--block-c); otherwise 0 × 0, the
// kernels' default (fastest measured) tiling. Throws std::invalid_argument for an algorithm or
// element type the kernels do not have.
kernels::AttentionConfig kernel_config(const sim::Config& config, bool explicit_tiling);

// A source=measured row with the configuration's key columns and the tiling the kernels really
// ran for `pass` (the backward's for bwd, the forward's otherwise).
sim::Row measured_row(const sim::Config& config, const kernels::AttentionRun& run,
                      kernels::Pass pass);

}  // namespace flashio::profiler
