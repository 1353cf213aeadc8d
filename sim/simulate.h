// simulate(): counts for one configuration, per kernel and in total, by one of the counting
// methods of docs/architecture.md ("Ways to count"): closed form, walk, execute or cache.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/counts.h"
#include "sim/kernel_kind.h"
#include "sim/time_model.h"

namespace flashio::sim {

// cache: the walk's io plus the L2 model's dram prediction (sim/cache_replay.h).
enum class CountMethod { formula, walk, execute, cache };
std::string to_string(CountMethod method);

struct KernelCounts {
  KernelKind kind = KernelKind::flash2_fwd;
  Counts counts;
  int64_t grid_blocks = 0;
  int64_t threads_per_block = 0;
  int64_t smem_bytes = 0;
  bool operator==(const KernelCounts&) const = default;
};

struct SimResult {
  Config config;
  CountMethod method = CountMethod::formula;
  std::vector<KernelCounts> kernels;
  Counts total;
  int64_t extra_memory_bytes = 0;  // HBM beyond inputs and outputs (Theorem 1)
  // Bytes that reach DRAM per kernel, predicted by the L2 model (method cache only).
  struct Dram {
    int64_t read_bytes = 0;
    int64_t write_bytes = 0;
  };
  std::vector<Dram> kernel_dram;       // empty unless method == cache
  Dram total_dram;
  TimeMethod time_method = TimeMethod::roofline;  // how kernel_time_ms was predicted
  std::vector<double> kernel_time_ms;  // per kernel: the time model's (sim/time_model.h) or the roofline's
  std::vector<Pipe> kernel_bound_by;   // per kernel, the time model's only
  double time_ms = 0;                  // sum over kernels
  double convention_flops = 0;         // sim/problem.h convention_flops
};

// Per-kernel counts by closed form (closed_form.cpp) and by walking the schedule (walk.cpp).
std::vector<KernelCounts> closed_form_counts(const Config& config);
std::vector<KernelCounts> walk_counts(const Config& config);

// Extra HBM memory the algorithm allocates beyond its inputs and outputs (Theorem 1).
int64_t extra_memory_bytes(const Config& config);
// The same from the counts of all its kernels (any method's: they agree), without counting again.
int64_t extra_memory_bytes(const Config& config, const Counts& touched);

// The time method when none is asked for: the time model where the hardware carries the
// calibration it needs (sim/time_model.h), the roofline otherwise.
TimeMethod default_time_method(const Config& config);

// Validates, checks the model's limits for the method (sim/limits.h: 64-bit counts, the work
// of walk and cache) before any work, counts by the method, adds the total, the extra memory
// and the time (`time`, default_time_method when not given; the model's memory term uses the
// L2 model's DRAM bytes under cache, estimated_dram_bytes otherwise). execute is limited to
// small shapes (sim/execute.h) and throws InvalidInput beyond them; the time model throws
// InvalidInput naming a calibration figure the hardware lacks.
SimResult simulate(const Config& config, CountMethod method, std::optional<TimeMethod> time = std::nullopt);

}  // namespace flashio::sim
