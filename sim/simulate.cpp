#include "sim/simulate.h"

#include <optional>

#include "sim/cache_replay.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/limits.h"
#include "sim/roofline.h"
#include "sim/schedule.h"
#include "sim/time_model.h"

namespace flashio::sim {

std::string to_string(CountMethod m) {
  switch (m) {
    case CountMethod::formula: return "formula";
    case CountMethod::walk: return "walk";
    case CountMethod::execute: return "execute";
    case CountMethod::cache: return "cache";
  }
  return "?";
}

int64_t extra_memory_bytes(const Config& config) {
  Counts touched;
  for (const auto& k : closed_form_counts(config)) touched += k.counts;
  return extra_memory_bytes(config, touched);
}

int64_t extra_memory_bytes(const Config& config, const Counts& touched) {
  // Every tensor the schedule touches that is neither an input nor an output of the pass is
  // memory the algorithm allocates in HBM: N² per matrix for standard, O(N) statistics (and
  // flash1's fp32 running output, flash2's fp32 dQ accumulator) for FlashAttention.
  int64_t bytes = 0;
  for (int t = 0; t < kTensorCount; ++t) {
    const Tensor tensor = static_cast<Tensor>(t);
    const auto& b = touched.of(tensor);
    if ((b.read_bytes == 0 && b.write_bytes == 0) || is_input_or_output(tensor, config.problem.pass))
      continue;
    const TensorShape s = tensor_shape(tensor, config.problem, tensor_layout(config));
    bytes = checked_add(bytes, checked_mul(s.total_rows(config.problem.batch), s.cols, s.element_bytes));
  }
  return bytes;
}

TimeMethod default_time_method(const Config& config) {
  return missing_calibration(config).empty() ? TimeMethod::model : TimeMethod::roofline;
}

SimResult simulate(const Config& config, CountMethod method, std::optional<TimeMethod> time) {
  validate(config);
  check_limits(config, method);  // before any work: 64-bit counts, the method's work (sim/limits.h)
  SimResult r;
  r.config = config;
  r.method = method;
  r.time_method = time.value_or(default_time_method(config));
  if (r.time_method == TimeMethod::model) require_calibration(config);  // before the counting
  switch (method) {
    case CountMethod::formula: r.kernels = closed_form_counts(config); break;
    case CountMethod::walk: r.kernels = walk_counts(config); break;
    case CountMethod::execute: r.kernels = execute(config).kernels; break;
    case CountMethod::cache: {
      const CacheResult cache = replay_cache(config);
      for (const auto& k : cache.kernels) {
        r.kernels.push_back({k.kind, k.counts, k.grid_blocks, k.threads_per_block, k.smem_bytes});
        r.kernel_dram.push_back({k.l2.dram_read_bytes, k.l2.dram_write_bytes});
        r.total_dram.read_bytes += k.l2.dram_read_bytes;
        r.total_dram.write_bytes += k.l2.dram_write_bytes;
      }
      break;
    }
  }
  for (const auto& k : r.kernels) r.total += k.counts;
  if (r.time_method == TimeMethod::model) {
    const std::vector<KernelSchedule> schedules = build_schedule(config);
    std::vector<int64_t> dram_read, dram_write;
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      if (!r.kernel_dram.empty()) {
        dram_read.push_back(r.kernel_dram[i].read_bytes);
        dram_write.push_back(r.kernel_dram[i].write_bytes);
      } else {
        // Without the L2 model: every touched tensor once (estimated_dram_bytes), split as the
        // kernel's io splits between reads and writes.
        const Counts& c = r.kernels[i].counts;
        const double io = static_cast<double>(c.io_read_bytes() + c.io_write_bytes());
        const double dram = static_cast<double>(estimated_dram_bytes(config, schedules[i], c));
        const double read_share = io > 0 ? static_cast<double>(c.io_read_bytes()) / io : 0;
        dram_read.push_back(static_cast<int64_t>(dram * read_share));
        dram_write.push_back(static_cast<int64_t>(dram * (1 - read_share)));
      }
    }
    const PassTime t = model_time(config, schedules, dram_read, dram_write);
    for (const KernelTime& k : t.kernels) {
      r.kernel_time_ms.push_back(k.time_ms);
      r.kernel_bound_by.push_back(k.bound_by);
    }
    r.time_ms = t.time_ms;
  } else {
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      // With the L2 model, the memory term of the roofline uses the bytes that reach DRAM.
      std::optional<double> dram;
      if (!r.kernel_dram.empty())
        dram = static_cast<double>(r.kernel_dram[i].read_bytes + r.kernel_dram[i].write_bytes);
      const double t = roofline_time(r.kernels[i].counts, config.hw, dram).time_ms;
      r.kernel_time_ms.push_back(t);
      r.time_ms += t;
    }
  }
  r.extra_memory_bytes = extra_memory_bytes(config, r.total);
  r.convention_flops = convention_flops(config);
  return r;
}

}  // namespace flashio::sim
