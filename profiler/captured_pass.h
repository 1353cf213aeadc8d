// CapturedPass: the kernels one pass enqueues, captured into a CUDA graph without running them,
// so that the profiler can launch them one at a time with an L2 flush before each (the kernels'
// own enqueue() launches a whole pass at once). Works for our kernels and cuBLAS's alike.
// Host code only; includes no CUDA header.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

typedef struct CUstream_st* cudaStream_t;  // as in <driver_types.h> (and kernels/attention.h)

namespace flashio::profiler {

class CapturedPass {
 public:
  // Captures everything `enqueue(stream)` puts on the stream. Throws ProfilerError
  // (cuda_failure) when the capture fails or holds a node it cannot replay (host callbacks,
  // events, child graphs).
  explicit CapturedPass(const std::function<void(cudaStream_t)>& enqueue);
  ~CapturedPass();
  CapturedPass(const CapturedPass&) = delete;
  CapturedPass& operator=(const CapturedPass&) = delete;

  size_t kernel_count() const;
  // The device function name of kernel k (mangled), to tell cuBLAS's kernels from ours.
  std::string kernel_function(size_t k) const;
  // Runs every step that comes before kernel k, earlier kernels included, so that kernel k
  // starts from the state the whole pass would leave it. Needed before every launch of k, not
  // only the first: cuBLAS's persistent sm_90 GEMMs claim tiles from a counter that an earlier
  // step resets, and launched again without it one did almost nothing (on the H200: 13 MB read
  // where the same launch in its pass read 101 MB).
  void run_prefix(size_t k, cudaStream_t stream);
  // Kernel k's launch shape and how many of its blocks one SM holds at once (the driver's
  // occupancy calculator: registers, shared memory and threads).
  struct LaunchShape {
    long long blocks = 0;
    int threads_per_block = 0;
    int dynamic_smem_bytes = 0;
    int blocks_per_sm = 0;
  };
  LaunchShape launch_shape(size_t k) const;
  // Launches kernel k alone, with its captured grid, block, shared memory, arguments and
  // cluster shape.
  void launch_kernel(size_t k, cudaStream_t stream);
  // Runs the non-kernel steps after the last kernel.
  void run_remaining_steps(cudaStream_t stream);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace flashio::profiler
