#include "profiler/metric_set.h"

#include <optional>

namespace flashio::profiler {

const std::vector<std::string>& profile_metrics() {
  static const std::vector<std::string> names = {
      metric::io_read,          metric::io_write,         metric::dram_read,
      metric::dram_write,       metric::l2_read_sectors,  metric::l2_write_sectors,
      metric::l2_atom_sectors,  metric::l2_red_sectors,   metric::hmma_inst,
      metric::gmma_inst,        metric::fma_inst,         metric::xu_inst,
      metric::duration_ns,      metric::local_store_bytes, metric::tensor_ops_fp16,
      metric::tensor_ops_bf16,  metric::tensor_ops_tf32};
  return names;
}

namespace {
std::optional<double> get(const MetricValues& v, const std::string& name) {
  const auto it = v.find(name);
  if (it == v.end() || it->second != it->second) return std::nullopt;  // absent or NaN
  return it->second;
}
}  // namespace

void fill_measured_values(sim::Row& row, const MetricValues& v, double time_ms) {
  row.io_read_bytes = get(v, metric::io_read);
  row.io_write_bytes = get(v, metric::io_write);
  if (const auto spill = get(v, metric::local_store_bytes); spill && row.io_write_bytes)
    row.io_write_bytes = *row.io_write_bytes - *spill;
  row.dram_read_bytes = get(v, metric::dram_read);
  row.dram_write_bytes = get(v, metric::dram_write);
  row.flops_tensor.reset();
  for (const std::string* ops : {&metric::tensor_ops_fp16, &metric::tensor_ops_bf16, &metric::tensor_ops_tf32})
    if (const auto x = get(v, *ops)) row.flops_tensor = row.flops_tensor.value_or(0.0) + *x;
  if (!row.flops_tensor) {
    // No ops counter: mma.sync instructions × 4096. A kernel that ran wgmma stays empty (its
    // FLOPs per instruction vary with the shape, and the HMMA counter includes it).
    const auto hmma = get(v, metric::hmma_inst);
    if (hmma && get(v, metric::gmma_inst).value_or(0.0) == 0) row.flops_tensor = *hmma * kFlopsPerHmma16816;
  }
  if (const auto xu = get(v, metric::xu_inst)) row.flops_exp = *xu * kThreadsPerWarp;
  else row.flops_exp.reset();
  if (const auto fma = get(v, metric::fma_inst)) row.flops_other = *fma * kThreadsPerWarp;
  else row.flops_other.reset();
  if (time_ms > 0) row.time_ms = time_ms;
  else row.time_ms.reset();
}

sim::Row total_row(const sim::Row& key, const std::vector<sim::Row>& kernel_rows, double time_ms) {
  sim::Row total = key;
  total.kernel.reset();  // kernel=total
  auto sum = [&](std::optional<double> sim::Row::*column) {
    std::optional<double> s = 0.0;
    for (const auto& r : kernel_rows) {
      if (!(r.*column)) return std::optional<double>{};
      *s += *(r.*column);
    }
    return kernel_rows.empty() ? std::optional<double>{} : s;
  };
  total.io_read_bytes = sum(&sim::Row::io_read_bytes);
  total.io_write_bytes = sum(&sim::Row::io_write_bytes);
  total.dram_read_bytes = sum(&sim::Row::dram_read_bytes);
  total.dram_write_bytes = sum(&sim::Row::dram_write_bytes);
  total.flops_tensor = sum(&sim::Row::flops_tensor);
  total.flops_exp = sum(&sim::Row::flops_exp);
  total.flops_other = sum(&sim::Row::flops_other);
  if (time_ms > 0) {
    total.time_ms = time_ms;
    if (total.flops) total.tflops = *total.flops / (time_ms * 1e-3) / 1e12;
  } else {
    total.time_ms.reset();
    total.tflops.reset();
  }
  return total;
}

}  // namespace flashio::profiler
