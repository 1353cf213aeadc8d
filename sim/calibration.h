// Calibration: the rates a kernel's time depends on, as `flashio calibrate` measures them on the
// GPU it runs on (docs/calibration.md has each microbenchmark's method). They live in the
// hardware description (sim/hardware.h) and its files, one `key = value` line each; the time
// model (sim/time_model.h) reads them, the roofline (sim/roofline.h) does not.
//
// Rates that depend on how much work is in flight are curves: `x:value` points, comma-separated,
// in increasing x ("4:2.1e14, 8:3.9e14, 16:4.4e14"). Between points a curve is linear in log x;
// beyond its ends it holds the end value (a rate never extrapolated past what was measured).
// Every rate is for the whole GPU (all SMs busy), per second.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flashio::sim {

class RateCurve {
 public:
  RateCurve() = default;
  // Throws std::invalid_argument (with a reason) unless there is at least one point, every x
  // and value is finite and > 0, and x increases strictly.
  explicit RateCurve(std::vector<std::pair<double, double>> points);
  double at(double x) const;
  const std::vector<std::pair<double, double>>& points() const { return points_; }
  // "4:2.1e+14, 8:3.9e+14": what the hardware file holds (reads back to the same curve).
  std::string text() const;
  // Parses text(); throws std::invalid_argument with a reason.
  static RateCurve parse(const std::string& text);

 private:
  std::vector<std::pair<double, double>> points_;
};

// What each figure is, and the key it has in a hardware file (the member's name).
struct Calibration {
  std::string calibrated;  // where and when: "NVIDIA H200, 2026-12-01, flashio calibrate (commit …)"

  std::optional<double> sm_clock_hz;  // the SMs' clock while the tensor benchmarks ran

  // DRAM bandwidth against bytes in flight per SM (resident blocks × bytes each has requested
  // and not yet received): streams over buffers far larger than the L2.
  std::optional<RateCurve> dram_read_bytes_per_s;
  std::optional<RateCurve> dram_write_bytes_per_s;
  std::optional<RateCurve> dram_copy_bytes_per_s;  // bytes read + written, x the bytes read in flight
  // L2 hit bandwidth against bytes in flight per SM (a buffer well inside the L2, read again
  // and again); near and far partition where the method could place the data.
  std::optional<RateCurve> l2_hit_bytes_per_s;
  std::optional<double> l2_near_hit_bytes_per_s;
  std::optional<double> l2_far_hit_bytes_per_s;

  // Tensor-core FLOP/s (2 per multiply-add), fp32 accumulation, against warps per SM
  // (mma.sync m16n8k16) or warpgroups per SM (wgmma m64nNk16, operands in shared memory).
  std::optional<RateCurve> mma_sync_fp16_flops_per_s;
  std::optional<RateCurve> mma_sync_bf16_flops_per_s;
  std::optional<RateCurve> wgmma_n64_fp16_flops_per_s;
  std::optional<RateCurve> wgmma_n128_fp16_flops_per_s;
  std::optional<RateCurve> wgmma_n256_fp16_flops_per_s;
  std::optional<RateCurve> wgmma_n64_bf16_flops_per_s;
  std::optional<RateCurve> wgmma_n128_bf16_flops_per_s;
  std::optional<RateCurve> wgmma_n256_bf16_flops_per_s;
  // The same, each warpgroup waiting for every GEMM of 4 instructions (64 × N × 64) before it
  // issues the next: what a warpgroup that waits for each product before its next phase reaches.
  std::optional<RateCurve> wgmma_waited_n64_fp16_flops_per_s;
  std::optional<RateCurve> wgmma_waited_n128_fp16_flops_per_s;
  std::optional<RateCurve> wgmma_waited_n256_fp16_flops_per_s;
  std::optional<RateCurve> wgmma_waited_n64_bf16_flops_per_s;
  std::optional<RateCurve> wgmma_waited_n128_bf16_flops_per_s;
  std::optional<RateCurve> wgmma_waited_n256_bf16_flops_per_s;

  std::optional<double> exp2_per_s;       // SFU ex2.approx results
  std::optional<double> fma_flops_per_s;  // fp32 FMA, 2 FLOPs each
  // 32-bit integer instructions (shifts, xors, multiplies: a hash's mix) per second, lane results
  std::optional<double> integer_ops_per_s;
  std::optional<double> shuffle_per_s;    // shfl.sync lane results
  std::optional<double> smem_bytes_per_s; // ldmatrix.x4 from shared memory into registers
  // Two warpgroups streaming wgmma beside one running ex2.approx, one block per SM, each side's
  // work alone taking as long as the other's: the time of both over the sum of the two alone
  // (0.5: the pipes overlap wholly; 1: one waits for the other).
  std::optional<double> tensor_exp_corun_ratio;
  // The same with a softmax's instructions per score on the third warpgroup (FFMA, ex2.approx,
  // FMNMX, FADD: its scaling, exponential, row maximum and row sum) instead of ex2.approx alone.
  std::optional<double> tensor_softmax_corun_ratio;
  std::optional<double> atomic_f32_per_s; // red.global.add.f32 to distinct addresses, into L2

  std::optional<double> cp_async_latency_ns;  // one cp.async of 16 B from DRAM until waited for
  std::optional<double> tma_latency_ns;       // one TMA tile load from DRAM until its barrier flips
  std::optional<RateCurve> barrier_ns;        // one __syncthreads, against threads per block
  std::optional<double> kernel_overhead_us;   // launch to launch of back-to-back empty kernels
  std::optional<double> wave_overhead_us;     // per wave of empty blocks filling every SM
};

// One figure of Calibration: its key (the member's name) and the member, a number or a curve.
struct CalibrationField {
  const char* key;
  std::optional<double> Calibration::*number = nullptr;
  std::optional<RateCurve> Calibration::*curve = nullptr;
};
// Every figure, in the order a hardware file lists them (`calibrated` is the text key besides).
const std::vector<CalibrationField>& calibration_fields();

// The shortest decimal that reads back to exactly `value` ("4.8e+12", "0.5").
std::string exact_decimal(double value);

}  // namespace flashio::sim
