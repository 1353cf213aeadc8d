// The one timer (docs/profiler.md, "How one configuration is measured", step 5): used by
// `flashio profile` (per kernel and per pass) and by `flashio bench`. Every run, warm-up runs
// included, is preceded by an untimed preparation (an L2 flush, so no run starts with its
// inputs in the L2) and timed alone with CUDA events; the result is the median of the timed
// runs with their minimum and maximum. Host code only; includes no CUDA header.
#pragma once
#include <functional>
#include <vector>

#include "kernels/attention.h"

namespace flashio::profiler {

class L2Flush;

// The median needs this many timed runs (the CLIs' --repeats refuse fewer).
constexpr int kMinTimedRuns = 10;

struct Timing {
  double time_ms = 0.0;  // median: the middle run, or the mean of the two middle runs
  double min_ms = 0.0, max_ms = 0.0;
  int repeats = 0;  // timed runs
};

// Median (the mean of the two middle values for an even count), minimum and maximum of run
// times in ms. Throws std::invalid_argument for an empty list.
Timing summarize_times(std::vector<double> times_ms);

// Runs `prepare` then `run` on `stream` warmup + repeats times, back to back without waiting
// in between (so the host's launches stay ahead of the GPU), CUDA events around each `run`;
// returns summarize_times of the timed runs (the last `repeats`). Throws std::invalid_argument
// for repeats < kMinTimedRuns or warmup < 0, ProfilerError (cuda_failure) when a CUDA call
// fails; exceptions from `run` and `prepare` pass through.
Timing time_runs(const std::function<void(cudaStream_t)>& run,
                 const std::function<void(cudaStream_t)>& prepare, int warmup, int repeats,
                 cudaStream_t stream);

struct PassTimingOptions {
  int warmup = 3;
  int repeats = 20;
  cudaStream_t stream = nullptr;
};

// One pass of `run`'s kernels, timed by time_runs with `flush` before every run. For
// Pass::bwd a forward is enqueued once first (the backward reads O and the statistics) and
// only the backward is timed; Pass::fwdbwd times forward and backward together.
Timing time_pass(kernels::AttentionRun& run, kernels::Pass pass, L2Flush& flush,
                 const PassTimingOptions& options = {});

}  // namespace flashio::profiler
