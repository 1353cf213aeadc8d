// The time model (docs/time_model.md): how long each kernel of a configuration runs on a GPU,
// from the kernel's schedule (what every thread block loads, stores and computes, tile step by
// tile step), the static facts of the built kernel (sim/kernel_catalog.h: threads, shared
// memory, stages, matrix instruction; occupancy measured where known) and the GPU's calibrated
// rates (sim/calibration.h, measured by `flashio calibrate`). Nothing in it is fitted to the
// measured times of the kernels it predicts: every rate is a microbenchmark's, every count the
// schedule's.
//
// The roofline (sim/roofline.h) stays as the paper's model; `--time roofline` picks it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config.h"
#include "sim/counts.h"
#include "sim/kernel_kind.h"
#include "sim/schedule.h"

namespace flashio::sim {

enum class TimeMethod { model, roofline };
std::string to_string(TimeMethod method);
std::optional<TimeMethod> parse_time_method(std::string_view text);

// What bounds a kernel's time (the `bound_by` of `flashio tune`): the pipe or cost whose term
// is the largest in its thread blocks' time, or the fixed costs of the launch.
// issue: the schedulers' issue slots (docs/time_model.md, "Issue slots").
enum class Pipe { dram, l2, atomics, tensor, smem, exp, fp32, issue, sync, latency, launch };
std::string to_string(Pipe pipe);

struct KernelTime {
  KernelKind kind = KernelKind::flash2_fwd;
  double time_ms = 0;
  Pipe bound_by = Pipe::launch;
  int64_t blocks_per_sm = 0;  // resident blocks per SM (occupancy)
  int64_t waves = 0;          // ⌈grid / (SMs × blocks_per_sm)⌉
  // The whole kernel's work on each pipe at the rates of its occupancy, in ms: what the block
  // times are made of (not additive: overlapped terms run side by side).
  double dram_ms = 0, l2_ms = 0, atomics_ms = 0, tensor_ms = 0, smem_ms = 0, exp_ms = 0, fp32_ms = 0, issue_ms = 0;
  double sync_ms = 0, latency_ms = 0, launch_ms = 0;
};

struct PassTime {
  std::vector<KernelTime> kernels;  // in launch order, as the schedule's kernels
  double time_ms = 0;               // their sum (kernels run one after another)
};

// The calibration figures the model needs for this configuration that `hw` lacks (empty when
// it has them all), by key ("dram_read_bytes_per_s").
std::vector<std::string> missing_calibration(const Config& config);

// Throws InvalidInput (Field::hardware) naming the first missing figure.
void require_calibration(const Config& config);
// The same for the hardware itself, checked on a small flash2 forward (the figures every tiled
// kernel needs), before a sweep: empty / no throw when the hardware carries them.
std::vector<std::string> missing_calibration(const Hardware& hw);
void require_calibration(const Hardware& hw);

// Bytes that reach DRAM when the L2 model is not run (`--count formula`, walk, execute): every
// tensor the kernel touches is read (written) once, at most its io; the L2 is assumed to catch
// every re-read (docs/time_model.md, "Without the L2 model").
int64_t estimated_dram_bytes(const Config& config, const KernelSchedule& kernel, const Counts& kernel_counts);

// The model's time of every kernel. `dram_bytes` holds each kernel's bytes that reach DRAM
// (read + written; the L2 model's, or estimated_dram_bytes), one per schedule kernel. Throws
// InvalidInput when the hardware lacks a figure the model needs (require_calibration).
PassTime model_time(const Config& config, const std::vector<KernelSchedule>& kernels,
                    std::span<const int64_t> dram_read_bytes, std::span<const int64_t> dram_write_bytes);

// The time of one hand-made kernel, for tests and for the model's own pieces: a grid of
// identical blocks, each with `work` per block, `blocks_per_sm` resident.
struct BlockWork {
  int64_t read_bytes = 0, write_bytes = 0, atomic_bytes = 0;
  Flops flops;
  int64_t tile_steps = 0;       // tile steps (compute steps with tensor work): barriers, latency
  int64_t step_read_bytes = 0;  // bytes one tile step loads (bytes in flight per block)
  int64_t first_step_read_bytes = 0;  // bytes read before the first tile step computes (its own and the block's tiles)
  int64_t dependent_load_rounds = 0;  // round trips to memory its steps wait for in turn (sim/kernel_catalog.h)
  int64_t dependent_read_bytes = 0;   // the bytes those round trips bring
  // Integer instructions beside the FLOPs (fused dropout's keep decisions, sim/flops_model.h), on
  // the fp32 pipe with the other FLOPs (docs/time_model.md, "Fused dropout").
  int64_t integer_ops = 0;
};

}  // namespace flashio::sim
