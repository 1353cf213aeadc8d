// Internal to flashio_calibrate: device buffers, the occupancy control every benchmark's launch
// shape relies on, the operand values the tensor benchmarks use, and the clock record.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/calibrate/calibrate.h"
#include "kernels/launch.h"
#include "kernels/random.cuh"

namespace flashio::kernels::calibrate::detail {

// A device array, freed on destruction.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) : count_(count) {
    FLASHIO_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(T)));
    FLASHIO_CUDA_CHECK(cudaMemset(data_, 0, count * sizeof(T)));
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }
  size_t count() const { return count_; }
  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    FLASHIO_CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T first() const {
    T value;
    FLASHIO_CUDA_CHECK(cudaMemcpy(&value, data_, sizeof(T), cudaMemcpyDeviceToHost));
    return value;
  }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

// The dynamic shared memory that lets exactly `blocks_per_sm` blocks of `threads` threads of
// `kernel` reside on an SM (at least `min_bytes`, what the kernel itself uses). A grid of
// blocks_per_sm × SMs blocks then puts blocks_per_sm on every SM: none can hold more, and all
// are resident at once. The occupancy calculator's answer is the truth; throws
// std::invalid_argument when no size gives exactly blocks_per_sm (registers or threads allow
// fewer).
int smem_for_blocks_per_sm(const void* kernel, int threads, int blocks_per_sm, int min_bytes,
                           const std::string& what);
// As many blocks of `threads` as fit on an SM with `smem_bytes` of dynamic shared memory.
int resident_blocks_per_sm(const void* kernel, int threads, int smem_bytes);
int sm_count();

// Tensor operands: uniform in [0.5, 1) (every product positive, so the checksum cannot cancel
// to nothing), a pure function of (seed, index), on the host as on the device.
__host__ __device__ __forceinline__ float operand_value(uint64_t seed, int64_t index) {
  return 0.5f + 0.5f * random::uniform01(seed, static_cast<uint64_t>(index));
}

// Block 0's clock64() cycles and %globaltimer nanoseconds over the timed loop of one run.
struct ClockSample {
  unsigned long long cycles, ns;
};
constexpr int kClockSlots = 256;

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Adds the block's sum of `value` (one per thread) to *total with one atomic per block: a
// checksum of one atomic per thread would queue ~10⁵ atomics on one address at the end of
// every run and lengthen it. Every thread of the block must call it.
template <typename T>
__device__ __forceinline__ void add_block_sum(T* total, T value) {
  __shared__ T warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    T sum = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w) sum += warp_sums[w];
    atomicAdd(total, sum);
  }
}

// The clock samples of the runs enqueued so far (the last kClockSlots), in Hz.
std::vector<double> clock_samples_hz(const DeviceArray<ClockSample>& slots, int64_t runs);

// std::runtime_error("<what>: checksum <got>, expected <want>") unless |got - want| ≤
// tolerance · |want| (tolerance 0: exactly equal).
void check_checksum(const std::string& what, double got, double want, double tolerance);

}  // namespace flashio::kernels::calibrate::detail
