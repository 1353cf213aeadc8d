#include "experiments/calibrated_hardware.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace flashio::cli {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One line without '#' (a hardware file's comment character) or line breaks.
std::string one_line(std::string text) {
  for (char& ch : text)
    if (ch == '#' || ch == '\n' || ch == '\r') ch = ' ';
  const size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

void require_rate(const std::string& key, double value) {
  if (!std::isfinite(value) || !(value > 0))
    throw std::invalid_argument("calibrate: " + key + " measured " + std::to_string(value) +
                                ", not a finite positive figure (its benchmark failed)");
}

}  // namespace

std::string nearest_preset(const std::string& device_name) {
  if (contains(device_name, "H200")) return "h200";
  if (contains(device_name, "H100")) return "h100-sxm";
  return "h200";
}

std::string calibration_stamp(const std::string& device_name, const std::string& date, const std::string& version) {
  return one_line(device_name) + ", " + date + ", flashio calibrate " + version;
}

sim::Hardware calibrated_hardware(const DeviceGeometry& device, const std::vector<MeasuredFigure>& measured,
                                  const std::string& stamp) {
  if (device.sm_count <= 0 || device.l2_bytes <= 0 || device.smem_per_block_bytes <= 0 ||
      device.smem_per_sm_bytes <= 0 || device.max_threads_per_sm <= 0 || device.max_blocks_per_sm <= 0)
    throw std::invalid_argument("calibrate: the device reported a geometry that is not positive");
  sim::Hardware hw = sim::hardware_preset(nearest_preset(device.name));
  const bool preset_geometry = hw.sm_count == device.sm_count && hw.l2_bytes == device.l2_bytes &&
                               hw.sram_bytes == device.smem_per_block_bytes &&
                               hw.smem_per_sm_bytes == device.smem_per_sm_bytes &&
                               hw.max_threads_per_sm == device.max_threads_per_sm &&
                               hw.max_blocks_per_sm == device.max_blocks_per_sm;
  if (!preset_geometry) {
    hw.name = one_line(device.name);
    if (hw.name.empty()) hw.name = "unnamed GPU";
    hw.sm_count = device.sm_count;
    hw.l2_bytes = device.l2_bytes;
    hw.sram_bytes = device.smem_per_block_bytes;
    hw.smem_per_sm_bytes = device.smem_per_sm_bytes;
    hw.max_threads_per_sm = device.max_threads_per_sm;
    hw.max_blocks_per_sm = device.max_blocks_per_sm;
  }
  hw.calibration = sim::Calibration{};
  hw.calibration.calibrated = one_line(stamp);

  std::set<std::string> seen;
  for (const MeasuredFigure& m : measured) {
    const auto& fields = sim::calibration_fields();
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const sim::CalibrationField& f) { return m.key == f.key; });
    if (field == fields.end()) throw std::invalid_argument("calibrate: '" + m.key + "' is not a calibration figure");
    if (!seen.insert(m.key).second) throw std::invalid_argument("calibrate: " + m.key + " measured twice");
    if (field->number) {
      if (!m.points.empty()) throw std::invalid_argument("calibrate: " + m.key + " is a number, not a curve");
      require_rate(m.key, m.value);
      hw.calibration.*(field->number) = m.value;
      continue;
    }
    if (m.points.empty()) throw std::invalid_argument("calibrate: " + m.key + " is a curve and has no points");
    for (const auto& [x, v] : m.points) require_rate(m.key, v);
    try {
      hw.calibration.*(field->curve) = sim::RateCurve(m.points);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("calibrate: " + m.key + ": " + e.what());
    }
  }
  return hw;
}

}  // namespace flashio::cli
