#include "sim/simulate.h"

#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/roofline.h"

namespace flashio::sim {

std::string to_string(CountMethod m) {
  switch (m) {
    case CountMethod::formula: return "formula";
    case CountMethod::walk: return "walk";
    case CountMethod::execute: return "execute";
  }
  return "?";
}

int64_t extra_memory_bytes(const Config& config) {
  // Every tensor the schedule touches that is neither an input nor an output of the pass is
  // memory the algorithm allocates in HBM: N² per matrix for standard, O(N) statistics (and
  // flash1's fp32 running output, flash2's fp32 dQ accumulator) for FlashAttention.
  Counts touched;
  for (const auto& k : closed_form_counts(config)) touched += k.counts;
  int64_t bytes = 0;
  for (int t = 0; t < kTensorCount; ++t) {
    const Tensor tensor = static_cast<Tensor>(t);
    const auto& b = touched.of(tensor);
    if ((b.read_bytes == 0 && b.write_bytes == 0) || is_input_or_output(tensor, config.problem.pass))
      continue;
    const TensorShape s = tensor_shape(tensor, config.problem);
    bytes += s.rows * s.cols * s.element_bytes * config.problem.batch_heads();
  }
  return bytes;
}

SimResult simulate(const Config& config, CountMethod method) {
  validate(config);
  SimResult r;
  r.config = config;
  r.method = method;
  switch (method) {
    case CountMethod::formula: r.kernels = closed_form_counts(config); break;
    case CountMethod::walk: r.kernels = walk_counts(config); break;
    case CountMethod::execute: r.kernels = execute(config).kernels; break;
  }
  for (const auto& k : r.kernels) {
    r.total += k.counts;
    const double t = roofline_time(k.counts, config.hw).time_ms;
    r.kernel_time_ms.push_back(t);
    r.time_ms += t;
  }
  r.extra_memory_bytes = extra_memory_bytes(config);
  r.convention_flops = convention_flops(config.problem);
  return r;
}

}  // namespace flashio::sim
