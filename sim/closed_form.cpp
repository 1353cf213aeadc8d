// Closed forms of every kernel's counts (docs/architecture.md, "Ways to count", 1). Each
// schedule writes its kernels' formulas beside their loop nests (KernelSchedule::head_counts in
// schedule_standard.cpp, schedule_flash1.cpp, schedule_flash2.cpp), so a kernel without a
// closed form cannot exist unnoticed; this file only scales them to all heads.
#include <stdexcept>

#include "sim/schedule.h"
#include "sim/simulate.h"

namespace flashio::sim {

std::vector<KernelCounts> closed_form_counts(const Config& config) {
  std::vector<KernelCounts> out;
  for (const KernelSchedule& s : build_schedule(config)) {
    if (!s.head_counts) throw std::logic_error("schedule of " + to_string(s.kind) + " has no closed form");
    out.push_back({s.kind, s.all_heads_counts(), s.grid_blocks(), s.threads_per_block,
                   s.smem_bytes});
  }
  return out;
}

}  // namespace flashio::sim
