// RangeProfiler: a small RAII wrapper over CUPTI's range profiler (cupti_range_profiler.h and
// cupti_profiler_host.h, CUDA 13): auto ranges (one range per kernel launch) with user replay
// (measure() runs the work once per hardware pass), on the current device's primary context.
// Host code only; includes no CUDA header.
//
// All metrics go into one configuration. Where it needs several hardware passes, the caller's
// work runs once per pass (user replay) with its preparation (the L2 flush) before each, so that
// every pass starts from the same L2 state (docs/profiler.md: what was seen on the H200).
//
// Any number of RangeProfilers may live in one process, one after another or at the same time:
// they share one CUPTI session (initialised by the first, ended by the last), and their
// measurements take turns (docs/profiler.md, "Several profilers in one process").
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace flashio::profiler {

struct RangeRecord {
  std::string name;           // CUPTI's range name (the launch index in auto-range mode)
  std::vector<double> values;  // one per metric of RangeProfiler::metrics(), in that order
};

class RangeProfiler {
 public:
  // Joins the process's CUPTI session on the current CUDA device, starting it when no other
  // RangeProfiler is alive (one device at a time: another device's live session is refused
  // with cuda_failure). Metrics this chip does not know are left out (listed by
  // unsupported()). Throws ProfilerError: no_gpu, insufficient_privileges, other_client
  // (ncu/nsys attached), unsupported_device (MIG, vGPU, cc < 7.0), cuda_failure.
  RangeProfiler(const std::vector<std::string>& metrics, size_t max_ranges);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  const std::vector<std::string>& metrics() const;      // measured, in the order asked
  const std::vector<std::string>& unsupported() const;  // asked for but unknown to the chip
  size_t passes() const;                                 // hardware passes per kernel (replays)
  std::string chip_name() const;

  // For each hardware pass: runs `prepare` (not profiled: e.g. the L2 flush), synchronises,
  // then runs `work` (which enqueues kernels) between Start and Stop. Returns one record per
  // kernel launch of `work`, in launch order. `work` must launch the same kernels every time and
  // tolerate being run again (its kernels' counters, not their results, are what is read).
  // Throws ProfilerError on a CUPTI failure, std::logic_error when a measurement of any
  // RangeProfiler of the process is already running (called from `work`, or another thread).
  std::vector<RangeRecord> measure(const std::function<void()>& work,
                                   const std::function<void()>& prepare = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Checks, before any CUDA work, that a profiler can run here: a GPU is visible and no other
// CUPTI client (ncu, nsys) is injected. Throws ProfilerError.
void check_profiling_possible();

}  // namespace flashio::profiler
