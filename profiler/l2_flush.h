// L2Flush: the one L2 flush of the profiler and of `flashio bench` (docs/profiler.md, "How one
// configuration is measured"). Host code only; includes no CUDA header.
#pragma once
#include <cstddef>

typedef struct CUstream_st* cudaStream_t;  // as in <driver_types.h> (and kernels/attention.h)

namespace flashio::profiler {

// Evicts everything from the L2 by reading a buffer of four times its size (reads leave clean
// lines, so the next kernel's misses cost no write-backs that are not its own), after the
// caller's dirty data has been written back. Owns the buffer. Throws ProfilerError
// (cuda_failure) when a CUDA call fails.
class L2Flush {
 public:
  L2Flush();  // sizes the buffer from the current device's L2 (4×, at least 256 MiB)
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  void enqueue(cudaStream_t stream);  // asynchronous
  size_t bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  void* sink_ = nullptr;
  size_t bytes_ = 0;
  int blocks_ = 0;  // grid of the flush kernel: 4 blocks per SM
};

// The first measurement a RangeProfiler makes in a process reads extra DRAM writes on the H200
// (+7 MB in a 256 MiB copy, +28 MB in a flash2 forward; docs/profiler.md); one measurement of
// the flush, thrown away, takes them. Call it before measuring anything.
class RangeProfiler;
void discard_first_measurement(RangeProfiler& ranges, L2Flush& flush, cudaStream_t stream);

}  // namespace flashio::profiler
