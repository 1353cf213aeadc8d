// RangeProfiler: a small RAII wrapper over CUPTI's range profiler (cupti_range_profiler.h and
// cupti_profiler_host.h, CUDA 13): auto ranges (one range per kernel launch) with kernel replay,
// on the current device's primary context. Host code only; includes no CUDA header.
//
// Metrics that need more than one hardware pass are split into groups that each fit in one
// pass, and the caller's work is run once per group: no kernel is ever replayed by CUPTI, so
// every measured kernel sees the L2 state the caller prepared (a flush, docs/profiler.md).
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
  // Initialises CUPTI on the current CUDA device. Metrics this chip does not know are left out
  // (listed by unsupported()). Throws ProfilerError: no_gpu, insufficient_privileges,
  // other_client (ncu/nsys attached), unsupported_device (MIG, vGPU, cc < 7.0), cuda_failure.
  RangeProfiler(const std::vector<std::string>& metrics, size_t max_ranges);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  const std::vector<std::string>& metrics() const;      // measured, in the order asked
  const std::vector<std::string>& unsupported() const;  // asked for but unknown to the chip
  size_t groups() const;                                 // how many times measure() runs work
  std::string chip_name() const;

  // For each metric group: runs `prepare` (not profiled: e.g. the L2 flush), synchronises,
  // then runs `work` (which enqueues kernels) between Start and Stop. Returns one record per
  // kernel launch of one run, in launch order. Every run must launch the same kernels. Throws
  // ProfilerError on a CUPTI failure or when the runs launched different numbers of kernels.
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
