// A roofline time estimate per kernel: the slowest of moving its bytes at the HBM bandwidth,
// its tensor FLOPs at the tensor-core rate, and its exp and other FLOPs on the SFU and CUDA
// cores. Bytes are the io counts (the paper's model: every access goes to HBM) unless dram
// bytes are given (the L2 model's prediction).
#pragma once
#include <optional>

#include "sim/counts.h"
#include "sim/hardware.h"

namespace flashio::sim {

struct RooflineTime {
  double memory_ms = 0;
  double tensor_ms = 0;
  double cuda_core_ms = 0;  // exp on the SFU + other on the FP32 pipe, which run side by side
  double time_ms = 0;       // max of the three
};

RooflineTime roofline_time(const Counts& counts, const Hardware& hw,
                           std::optional<double> dram_bytes = std::nullopt);

}  // namespace flashio::sim
