#include "sim/roofline.h"

#include <algorithm>

namespace flashio::sim {

RooflineTime roofline_time(const Counts& c, const Hardware& hw, std::optional<double> dram_bytes) {
  RooflineTime t;
  const double bytes = dram_bytes ? *dram_bytes
                                  : static_cast<double>(c.io_read_bytes() + c.io_write_bytes());
  t.memory_ms = bytes / hw.hbm_bytes_per_s * 1e3;
  t.tensor_ms = static_cast<double>(c.flops.tensor) / hw.tensor_flops_per_s * 1e3;
  t.cuda_core_ms = std::max(static_cast<double>(c.flops.exp) / hw.exp_per_s,
                            static_cast<double>(c.flops.other) / hw.cuda_core_flops_per_s) * 1e3;
  t.time_ms = std::max({t.memory_ms, t.tensor_ms, t.cuda_core_ms});
  return t;
}

}  // namespace flashio::sim
