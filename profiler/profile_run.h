// profile_config: run one configuration's kernels on the GPU and measure each with CUPTI
// (source=measured rows, per kernel and total; the same schema as the model's rows).
//
// Per kernel: the L2 is flushed (not profiled), then the kernel runs alone between the range
// profiler's Start and Stop, once per metric group; its time is the median of `repeats` CUDA
// event timings, each after a flush. The total row's time is the whole pass timed by the
// one timer (profiler/pass_timer.h, time_pass). docs/profiler.md has the details.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/row.h"

namespace flashio::profiler {

struct ProfileOptions {
  int warmup = 3;
  int repeats = 10;            // per-kernel and whole-pass timings (median; >= 10)
  uint64_t seed = 1;           // inputs: N(0, 1) from the kernels' generator
  bool explicit_tiling = false;  // use config.tiling; otherwise the kernels' default tiling
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
  // kernels), then kernel=total. Throws sim::InvalidInput for a configuration the kernels do
  // not support (one line naming what is built), ProfilerError for measurement failures.
  std::vector<sim::Row> profile(const sim::Config& config, const ProfileOptions& options);

  // Counters asked for that this chip does not have (their columns stay empty), and notes on
  // how launches were attributed to kernels (for the json context and stderr).
  std::vector<std::string> notes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace flashio::profiler
