// What `flashio calibrate` writes, from what it measured (docs/calibration.md): the device's
// geometry, the datasheet figures of the nearest preset (the roofline's), and every figure
// measured, as a sim::Hardware that sim::hardware_file_text turns into a hardware file. Pure
// C++ (no CUDA), so that it is tested in every build.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/hardware.h"

namespace flashio::cli {

// The GPU calibrate ran on, as cudaGetDeviceProperties describes it.
struct DeviceGeometry {
  std::string name;  // "NVIDIA H200"
  int64_t sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t smem_per_block_bytes = 0;  // the opt-in maximum of one block: the hardware's sram_bytes
  int64_t smem_per_sm_bytes = 0;
  int64_t max_threads_per_sm = 0;
  int64_t max_blocks_per_sm = 0;
};

// One measured figure: `key` is a key of sim::calibration_fields(); a number has `value`, a
// curve its (x, value) points in increasing x.
struct MeasuredFigure {
  std::string key;
  double value = 0;
  std::vector<std::pair<double, double>> points;
};

// The preset whose datasheet figures (HBM bandwidth, tensor, CUDA-core and SFU rates, the L2's
// partitions and ways) the file keeps: "h200" for a device named H200, "h100-sxm" for an H100,
// "h200" otherwise (the GH100 die's, the only other sm_90 part).
std::string nearest_preset(const std::string& device_name);

// "NVIDIA H200, 2026-12-01, flashio calibrate 0.1.0": the `calibrated` line.
std::string calibration_stamp(const std::string& device_name, const std::string& date, const std::string& version);

// The hardware calibrate writes: nearest_preset(device.name); when the device's geometry is
// not the preset's (another device, a MIG slice), its name and geometry instead of the
// preset's; `stamp` as `calibrated`; every figure of `measured`. Throws std::invalid_argument
// naming the figure when a key is unknown or given twice, a number comes with points or a
// curve without, or a value is not finite and > 0 (a benchmark that failed), and when the
// geometry is not positive.
sim::Hardware calibrated_hardware(const DeviceGeometry& device, const std::vector<MeasuredFigure>& measured,
                                  const std::string& stamp);

}  // namespace flashio::cli
