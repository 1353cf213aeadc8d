#include "sim/calibration.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "sim/trim.h"

namespace flashio::sim {

RateCurve::RateCurve(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
  if (points_.empty()) throw std::invalid_argument("a curve needs at least one x:value point");
  for (size_t i = 0; i < points_.size(); ++i) {
    const auto [x, v] = points_[i];
    if (!std::isfinite(x) || !(x > 0) || !std::isfinite(v) || !(v > 0))
      throw std::invalid_argument("every x and value must be finite and > 0");
    if (i > 0 && !(x > points_[i - 1].first)) throw std::invalid_argument("x must increase from point to point");
  }
}

double RateCurve::at(double x) const {
  if (points_.empty()) return 0;
  if (!(x > points_.front().first)) return points_.front().second;
  if (!(x < points_.back().first)) return points_.back().second;
  size_t i = 1;
  while (points_[i].first < x) ++i;
  const auto [x0, v0] = points_[i - 1];
  const auto [x1, v1] = points_[i];
  const double t = std::log(x / x0) / std::log(x1 / x0);
  return v0 + t * (v1 - v0);
}

std::string exact_decimal(double value) {
  char text[64];
  const auto r = std::to_chars(text, text + sizeof text, value);
  return std::string(text, r.ptr);
}

std::string RateCurve::text() const {
  std::string out;
  for (const auto& [x, v] : points_) out += (out.empty() ? "" : ", ") + exact_decimal(x) + ":" + exact_decimal(v);
  return out;
}

namespace {

// A positive decimal number, nothing else (no inf, nan or hexadecimal floats).
double parse_decimal(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.empty() || t.find_first_not_of("0123456789.eE+-") != std::string_view::npos)
    throw std::invalid_argument("'" + std::string(t) + "' is not a decimal number");
  double v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size())
    throw std::invalid_argument("'" + std::string(t) + "' is not a decimal number");
  return v;
}

}  // namespace

RateCurve RateCurve::parse(const std::string& text) {
  std::vector<std::pair<double, double>> points;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view point = trim(std::string_view(text).substr(at, comma - at));
    const size_t colon = point.find(':');
    if (colon == std::string_view::npos)
      throw std::invalid_argument("'" + std::string(point) + "' is not an x:value point");
    points.emplace_back(parse_decimal(point.substr(0, colon)), parse_decimal(point.substr(colon + 1)));
    at = comma + 1;
  }
  return RateCurve(std::move(points));
}

const std::vector<CalibrationField>& calibration_fields() {
  using C = Calibration;
  static const std::vector<CalibrationField> fields = {
      {"sm_clock_hz", &C::sm_clock_hz},
      {"dram_read_bytes_per_s", nullptr, &C::dram_read_bytes_per_s},
      {"dram_write_bytes_per_s", nullptr, &C::dram_write_bytes_per_s},
      {"dram_copy_bytes_per_s", nullptr, &C::dram_copy_bytes_per_s},
      {"l2_hit_bytes_per_s", nullptr, &C::l2_hit_bytes_per_s},
      {"l2_near_hit_bytes_per_s", &C::l2_near_hit_bytes_per_s},
      {"l2_far_hit_bytes_per_s", &C::l2_far_hit_bytes_per_s},
      {"mma_sync_fp16_flops_per_s", nullptr, &C::mma_sync_fp16_flops_per_s},
      {"mma_sync_bf16_flops_per_s", nullptr, &C::mma_sync_bf16_flops_per_s},
      {"wgmma_n64_fp16_flops_per_s", nullptr, &C::wgmma_n64_fp16_flops_per_s},
      {"wgmma_n128_fp16_flops_per_s", nullptr, &C::wgmma_n128_fp16_flops_per_s},
      {"wgmma_n256_fp16_flops_per_s", nullptr, &C::wgmma_n256_fp16_flops_per_s},
      {"wgmma_n64_bf16_flops_per_s", nullptr, &C::wgmma_n64_bf16_flops_per_s},
      {"wgmma_n128_bf16_flops_per_s", nullptr, &C::wgmma_n128_bf16_flops_per_s},
      {"wgmma_n256_bf16_flops_per_s", nullptr, &C::wgmma_n256_bf16_flops_per_s},
      {"wgmma_waited_n64_fp16_flops_per_s", nullptr, &C::wgmma_waited_n64_fp16_flops_per_s},
      {"wgmma_waited_n128_fp16_flops_per_s", nullptr, &C::wgmma_waited_n128_fp16_flops_per_s},
      {"wgmma_waited_n256_fp16_flops_per_s", nullptr, &C::wgmma_waited_n256_fp16_flops_per_s},
      {"wgmma_waited_n64_bf16_flops_per_s", nullptr, &C::wgmma_waited_n64_bf16_flops_per_s},
      {"wgmma_waited_n128_bf16_flops_per_s", nullptr, &C::wgmma_waited_n128_bf16_flops_per_s},
      {"wgmma_waited_n256_bf16_flops_per_s", nullptr, &C::wgmma_waited_n256_bf16_flops_per_s},
      {"exp2_per_s", &C::exp2_per_s},
      {"fma_flops_per_s", &C::fma_flops_per_s},
      {"integer_ops_per_s", &C::integer_ops_per_s},
      {"shuffle_per_s", &C::shuffle_per_s},
      {"smem_bytes_per_s", &C::smem_bytes_per_s},
      {"tensor_exp_corun_ratio", &C::tensor_exp_corun_ratio},
      {"tensor_softmax_corun_ratio", &C::tensor_softmax_corun_ratio},
      {"atomic_f32_per_s", &C::atomic_f32_per_s},
      {"cp_async_latency_ns", &C::cp_async_latency_ns},
      {"tma_latency_ns", &C::tma_latency_ns},
      {"barrier_ns", nullptr, &C::barrier_ns},
      {"kernel_overhead_us", &C::kernel_overhead_us},
      {"wave_overhead_us", &C::wave_overhead_us},
  };
  return fields;
}

}  // namespace flashio::sim
