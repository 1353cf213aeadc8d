#include "profiler/pass_timer.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "profiler/l2_flush.h"
#include "profiler/profiler_error.h"

namespace flashio::profiler {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw ProfilerError(ErrorKind::cuda_failure, std::string(what) + ": " + cudaGetErrorString(e));
}

// One start/stop pair per run, so that every run can be enqueued before the first is read.
class EventPairs {
 public:
  explicit EventPairs(size_t count) : events_(2 * count, nullptr) {
    for (cudaEvent_t& e : events_) {
      const cudaError_t r = cudaEventCreate(&e);
      if (r != cudaSuccess) {
        e = nullptr;
        destroy();
        check(r, "cudaEventCreate");
      }
    }
  }
  ~EventPairs() { destroy(); }
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
  cudaEvent_t start(size_t i) const { return events_[2 * i]; }
  cudaEvent_t stop(size_t i) const { return events_[2 * i + 1]; }

 private:
  void destroy() {
    for (cudaEvent_t& e : events_)
      if (e != nullptr) cudaEventDestroy(e), e = nullptr;
  }
  std::vector<cudaEvent_t> events_;
};

}  // namespace

Timing summarize_times(std::vector<double> ms) {
  if (ms.empty()) throw std::invalid_argument("summarize_times: no run times");
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  Timing t;
  t.time_ms = n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.repeats = static_cast<int>(n);
  return t;
}

Timing time_runs(const std::function<void(cudaStream_t)>& run,
                 const std::function<void(cudaStream_t)>& prepare, int warmup, int repeats,
                 cudaStream_t stream) {
  if (repeats < kMinTimedRuns)
    throw std::invalid_argument("repeats: the median needs at least " + std::to_string(kMinTimedRuns) +
                                " timed runs (got " + std::to_string(repeats) + ")");
  if (warmup < 0) throw std::invalid_argument("warmup: must be >= 0 (got " + std::to_string(warmup) + ")");
  const EventPairs events(static_cast<size_t>(repeats));
  for (int i = 0; i < warmup + repeats; ++i) {
    if (prepare) prepare(stream);
    const int timed = i - warmup;
    if (timed >= 0) check(cudaEventRecord(events.start(timed), stream), "cudaEventRecord");
    run(stream);
    if (timed >= 0) check(cudaEventRecord(events.stop(timed), stream), "cudaEventRecord");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (timed runs)");
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    float t = 0.f;
    check(cudaEventElapsedTime(&t, events.start(i), events.stop(i)), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  return summarize_times(std::move(ms));
}

Timing time_pass(kernels::AttentionRun& run, kernels::Pass pass, L2Flush& flush,
                 const PassTimingOptions& options) {
  if (pass == kernels::Pass::bwd) run.enqueue(kernels::Pass::fwd, options.stream);
  return time_runs([&](cudaStream_t s) { run.enqueue(pass, s); },
                   [&](cudaStream_t s) { flush.enqueue(s); }, options.warmup, options.repeats,
                   options.stream);
}

}  // namespace flashio::profiler
