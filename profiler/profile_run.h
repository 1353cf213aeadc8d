// Profiler::profile: run one configuration's kernels on the GPU and measure each with CUPTI
// (source=measured rows, per kernel and total; the same schema as the model's rows).
//
// Per kernel: the pass's steps before it and two L2 flushes (not profiled), then the kernel
// alone and a drain (the flush again) inside the range profiler, once per hardware pass (user
// replay); its time is the median of `repeats` CUDA event timings, each after the same
// preparation. The total row's time is the whole pass timed by the
// one timer (profiler/pass_timer.h, time_pass). docs/profiler.md has the details.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/kernel_catalog.h"
#include "sim/row.h"

namespace flashio::profiler {

struct ProfileOptions {
  int warmup = 3;
  int repeats = 10;            // per-kernel and whole-pass timings (median; >= 10)
  uint64_t seed = 1;           // inputs: N(0, 1) from the kernels' generator
};

// One CUPTI session, one flush buffer and one stream for many configurations (CUPTI's set-up
// is slow). Throws ProfilerError (no_gpu, insufficient_privileges, other_client,
// unsupported_device: the user's situation; cuda_failure otherwise).
class Profiler {
 public:
  Profiler();
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Rows for one configuration: one per kernel of the pass (fwdbwd: forward then backward
  // kernels), then kernel=total. The kernels run the configuration's tiling (config.tiling_source
  // kernel: the built kernels' defaults of each pass; profiler/kernel_bridge.h). Throws sim::InvalidInput for a configuration the kernels do
  // not support (one line naming what is built), ProfilerError for measurement failures.
  std::vector<sim::Row> profile(const sim::Config& config, const ProfileOptions& options);

  // What the user should know about the measurements (for the json context and the table's
  // notes): counters this chip does not have (their columns stay empty), how launches were
  // attributed to kernels, passes measured back to back.
  struct Note {
    enum class Kind { setup, counter_unavailable, split_gemm, back_to_back };
    Kind kind = Kind::setup;
    std::string text;
    bool operator==(const Note&) const = default;
  };
  std::vector<Note> notes() const;
  // The occupancy of every tiled kernel profiled so far, as the driver's occupancy calculator
  // gives it for the captured launch (registers, real shared memory, threads), in the format of
  // the model's committed occupancy data (sim/kernel_catalog.h, MeasuredOccupancy).
  std::vector<sim::MeasuredOccupancy> occupancy() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace flashio::profiler
