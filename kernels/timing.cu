// The one timer (docs/kernels.md, "Timing"): CUDA events around each run, warm-up runs first,
// the median of the timed runs, and a write of a buffer ≥ 2× the L2 before every run so that
// no run finds its inputs in the L2 (shared/KERNELS.md, "How they are tested and timed").
#include <algorithm>
#include <stdexcept>

#include "kernels/attention.h"
#include "kernels/launch.h"

namespace flashio::kernels {

namespace {

// One flush buffer per process, sized from the current device's L2.
struct FlushBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  FlushBuffer() {
    int device = 0, l2_bytes = 0;
    FLASHIO_CUDA_CHECK(cudaGetDevice(&device));
    FLASHIO_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    bytes = std::max<size_t>(2 * static_cast<size_t>(l2_bytes), 64u << 20);
    FLASHIO_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  }
};

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    FLASHIO_CUDA_CHECK(cudaEventCreate(&start));
    FLASHIO_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

}  // namespace

Timing time_pass(AttentionRun& run, Pass pass, const TimingOptions& options) {
  if (options.repeats < 10) throw std::invalid_argument("repeats: the median needs at least 10 runs");
  static FlushBuffer flush;
  const cudaStream_t stream = options.stream;
  if (pass == Pass::bwd) run.enqueue(Pass::fwd, stream);  // the backward reads O and the statistics
  for (int w = 0; w < options.warmup; ++w) run.enqueue(pass, stream);
  std::vector<EventPair> events(static_cast<size_t>(options.repeats));
  for (EventPair& e : events) {
    FLASHIO_CUDA_CHECK(cudaMemsetAsync(flush.ptr, 0, flush.bytes, stream));
    FLASHIO_CUDA_CHECK(cudaEventRecord(e.start, stream));
    run.enqueue(pass, stream);
    FLASHIO_CUDA_CHECK(cudaEventRecord(e.stop, stream));
  }
  FLASHIO_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (EventPair& e : events) {
    float t = 0.f;
    FLASHIO_CUDA_CHECK(cudaEventElapsedTime(&t, e.start, e.stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  Timing timing;
  timing.time_ms = ms[ms.size() / 2];
  timing.min_ms = ms.front();
  timing.max_ms = ms.back();
  timing.repeats = options.repeats;
  return timing;
}

}  // namespace flashio::kernels
