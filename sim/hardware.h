// Hardware: the machine the model predicts for (docs/architecture.md, "Vocabulary"). Presets carry
// the source of every figure; a file of `key = value` lines (the field names below) loads others.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/calibration.h"

namespace flashio::sim {

struct Hardware {
  std::string name;
  int64_t sram_bytes = 0;          // shared memory one thread block may use: the default M
  int64_t smem_per_sm_bytes = 0;   // shared memory of one SM (occupancy)
  int64_t sm_count = 0;
  int64_t max_threads_per_sm = 2048;
  int64_t max_blocks_per_sm = 32;
  int64_t l2_bytes = 0;
  int64_t l2_line_bytes = 128;
  int64_t l2_sector_bytes = 32;
  int64_t l2_ways = 16;            // not published by NVIDIA; a modelling assumption
  int64_t l2_partitions = 1;       // L2 partitions, each caching for the SMs beside it
  double hbm_bytes_per_s = 0;      // peak DRAM bandwidth
  double tensor_flops_per_s = 0;   // dense fp16/bf16 tensor-core rate, fp32 accumulate
  double cuda_core_flops_per_s = 0;  // fp32 FMA pipe (an FMA counted as 2 FLOPs)
  double exp_per_s = 0;            // special-function unit: exp2 results per second
  // Measured rates for the time model (sim/calibration.h); the figures above are the
  // datasheet's, for the roofline.
  Calibration calibration;
};

// The preset names ("a100-40gb, h100-sxm, h200").
std::vector<std::string> hardware_preset_names();
bool is_hardware_preset(const std::string& name);
// Throws InvalidInput naming the allowed presets.
Hardware hardware_preset(const std::string& name);
// Reads `key = value` lines (# comments); keys are the field names above; `name` and every
// numeric field are required except the ones with defaults. The *_bytes keys take sizes as
// sim/byte_size.h parses them ("sram_bytes = 227KiB"). Throws InvalidInput (Field::hardware)
// naming the file and the line. The calibration keys (sim/calibration.h) are optional.
Hardware load_hardware_file(const std::string& path);
// The same from text (`name` names it in messages).
Hardware parse_hardware_text(const std::string& text, const std::string& name);
// A hardware file that reads back (parse_hardware_text) to `hw`: every field, sizes in bytes,
// numbers as the shortest decimal that reads back exactly, the calibration figures it has.
std::string hardware_file_text(const Hardware& hw);
// A preset name, or a path to a hardware file.
Hardware resolve_hardware(const std::string& name_or_path);

}  // namespace flashio::sim
