// Memory benchmarks (docs/calibration.md, "DRAM", "L2 hits", "Atomics"): streams of
// independent 16-byte loads and stores against bytes in flight per SM, and L2 atomics.
#include <algorithm>
#include <string>

#include "kernels/calibrate/common.cuh"

namespace flashio::kernels::calibrate {
namespace {

using detail::DeviceArray;

constexpr int kStreamThreads = 128;
// Registers bound the bytes in flight: 16 blocks of 128 threads (2048, the most an SM holds)
// with 4 loads of 16 bytes each have 128 KiB outstanding, half the register file in load
// destinations; 32 registers a thread is what 16 blocks allow.
constexpr int kMaxBlocks = 16;
constexpr uint32_t kPatternStep = 2654435761u;  // word w of a stream buffer holds w · this (mod 2³²)

// Σ_{w < words} w · kPatternStep (mod 2³²): what reading `words` words from the start adds up to.
uint32_t pattern_sum(uint64_t words) {
  uint64_t a = words, b = words == 0 ? 0 : words - 1;
  if (a % 2 == 0) a /= 2; else b /= 2;  // one of n, n − 1 is even: n(n − 1)/2 without overflow
  return static_cast<uint32_t>(a) * static_cast<uint32_t>(b) * kPatternStep;
}

__device__ __forceinline__ uint4 pattern_unit(uint64_t unit) {
  const uint32_t w = static_cast<uint32_t>(unit * 4);
  return make_uint4(w * kPatternStep, (w + 1) * kPatternStep, (w + 2) * kPatternStep, (w + 3) * kPatternStep);
}

// Every thread runs `iterations` iterations; in each it has kLoads independent 16-byte accesses
// outstanding, at units base + j·128 of its block's chunk (each warp's 32 accesses one 512-byte
// run). The chunks step by the grid's span and wrap at the buffer's end (a power of two of
// units, so the wrap is a mask), so every thread stays busy whatever the buffer's size. Reads
// bypass L1 (ld.global.cg): a re-read must come from the L2 or DRAM.
template <Stream kKind, int kLoads>
__global__ void __launch_bounds__(kStreamThreads, kMaxBlocks)
    stream_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t unit_mask, int iterations,
                  unsigned int* checksum) {
  const uint64_t span = uint64_t(gridDim.x) * kStreamThreads * kLoads;
  uint64_t base = uint64_t(blockIdx.x) * kStreamThreads * kLoads + threadIdx.x;
  uint32_t sum = 0;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
    uint4 v[kLoads];
    if constexpr (kKind != Stream::write) {
#pragma unroll
      for (int j = 0; j < kLoads; ++j) v[j] = __ldcg(src + ((base + j * kStreamThreads) & unit_mask));
    }
    if constexpr (kKind == Stream::read) {
#pragma unroll
      for (int j = 0; j < kLoads; ++j) sum += v[j].x + v[j].y + v[j].z + v[j].w;
    } else {
#pragma unroll
      for (int j = 0; j < kLoads; ++j) {
        const uint64_t u = (base + j * kStreamThreads) & unit_mask;
        dst[u] = kKind == Stream::write ? pattern_unit(u) : v[j];
      }
    }
    base += span;
  }
  if constexpr (kKind == Stream::read) detail::add_block_sum(checksum, sum);
}

// The whole buffer once, summed: the check of what the write and copy streams left.
__global__ void sum_kernel(const uint4* __restrict__ src, uint64_t units, unsigned int* checksum) {
  uint32_t sum = 0;
  for (uint64_t u = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += uint64_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(src + u);
    sum += v.x + v.y + v.z + v.w;
  }
  detail::add_block_sum(checksum, sum);
}

__global__ void fill_pattern_kernel(uint4* dst, uint64_t units) {
  for (uint64_t u = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += uint64_t(gridDim.x) * blockDim.x)
    dst[u] = pattern_unit(u);
}

using StreamKernel = void (*)(const uint4*, uint4*, uint64_t, int, unsigned int*);

template <Stream kKind>
StreamKernel stream_kernel_for(int loads) {
  switch (loads) {
    case 1: return &stream_kernel<kKind, 1>;
    case 2: return &stream_kernel<kKind, 2>;
    case 4: return &stream_kernel<kKind, 4>;
  }
  throw std::invalid_argument("stream benchmark: loads per thread must be 1, 2 or 4 (got " + std::to_string(loads) +
                              ")");
}

std::string stream_name(Stream kind) {
  return kind == Stream::read ? "dram/l2 read" : kind == Stream::write ? "dram write" : "dram copy";
}

class StreamBench : public Bench {
 public:
  StreamBench(Stream kind, int blocks_per_sm, int loads, int64_t buffer_bytes, int passes)
      : kind_(kind), units_(static_cast<uint64_t>(buffer_bytes) / 16),
        src_(kind == Stream::write ? 1 : units_), dst_(kind == Stream::read ? 1 : units_), checksum_(1) {
    if (buffer_bytes < 16 || (units_ & (units_ - 1)) != 0)
      throw std::invalid_argument(stream_name(kind) + ": the buffer must be a power of two of 16-byte units");
    if (blocks_per_sm < 1 || blocks_per_sm > kMaxBlocks)
      throw std::invalid_argument(stream_name(kind) + ": 1 to " + std::to_string(kMaxBlocks) + " blocks per SM (got " +
                                  std::to_string(blocks_per_sm) + ")");
    kernel_ = kind == Stream::read    ? stream_kernel_for<Stream::read>(loads)
              : kind == Stream::write ? stream_kernel_for<Stream::write>(loads)
                                      : stream_kernel_for<Stream::copy>(loads);
    smem_bytes_ = detail::smem_for_blocks_per_sm(reinterpret_cast<const void*>(kernel_), kStreamThreads,
                                                 blocks_per_sm, 0, stream_name(kind));
    grid_ = blocks_per_sm * detail::sm_count();
    // Enough iterations that a run covers the buffer `passes` times.
    const uint64_t span = uint64_t(grid_) * kStreamThreads * loads;
    iterations_ = static_cast<int>(std::max<uint64_t>(1, (units_ * passes + span - 1) / span));
    units_per_run_ = span * iterations_;
    if (kind != Stream::write) {
      fill_pattern_kernel<<<1024, 256>>>(src_.get(), units_);
      FLASHIO_LAUNCH_CHECK("fill_pattern_kernel");
    }
  }

  void enqueue(cudaStream_t stream) override {
    kernel_<<<grid_, kStreamThreads, smem_bytes_, stream>>>(src_.get(), dst_.get(), units_ - 1, iterations_,
                                                            checksum_.get());
    FLASHIO_LAUNCH_CHECK("stream_kernel");
    ++runs_;
  }

  double work() const override {
    const double bytes = static_cast<double>(units_per_run_) * 16;
    return kind_ == Stream::copy ? 2 * bytes : bytes;
  }

  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    if (kind_ == Stream::read) {
      // A run reads units [0, units_per_run) modulo the buffer: whole passes and a remainder.
      const uint64_t whole = units_per_run_ / units_, rest = units_per_run_ % units_;
      const uint32_t per_run = static_cast<uint32_t>(whole) * pattern_sum(units_ * 4) + pattern_sum(rest * 4);
      detail::check_checksum(stream_name(kind_), checksum_.first(), static_cast<uint32_t>(per_run * runs_), 0);
      return;
    }
    if (runs_ == 0) return;
    // The destination holds the pattern everywhere (each run covers it at least once).
    FLASHIO_CUDA_CHECK(cudaMemset(checksum_.get(), 0, sizeof(unsigned int)));
    sum_kernel<<<1024, 256>>>(dst_.get(), units_, checksum_.get());
    FLASHIO_LAUNCH_CHECK("sum_kernel");
    detail::check_checksum(stream_name(kind_), checksum_.first(), pattern_sum(units_ * 4), 0);
  }

 private:
  Stream kind_;
  uint64_t units_;
  DeviceArray<uint4> src_, dst_;
  DeviceArray<unsigned int> checksum_;
  StreamKernel kernel_ = nullptr;
  int smem_bytes_ = 0, grid_ = 0, iterations_ = 0;
  uint64_t units_per_run_ = 0;
  int64_t runs_ = 0;
};

// red.global.add.f32 of 1.0 per thread and iteration: lane l of a warp adds to float
// (first + l) of one 128-byte line, and the lines step by the grid's thread count and wrap at
// the buffer's end (a power of two of floats).
__global__ void __launch_bounds__(256) atomic_kernel(float* buffer, uint64_t mask, int iterations) {
  const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
  uint64_t at = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll 4
  for (int i = 0; i < iterations; ++i) {
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(buffer + (at & mask)), "f"(1.0f) : "memory");
    at += threads;
  }
}

class AtomicBench : public Bench {
 public:
  AtomicBench(int64_t buffer_bytes, int iterations)
      : floats_(static_cast<uint64_t>(buffer_bytes) / 4), iterations_(iterations), buffer_(floats_) {
    if (floats_ < 32 || (floats_ & (floats_ - 1)) != 0)
      throw std::invalid_argument("atomics: the buffer must be a power of two of floats");
    grid_ = detail::resident_blocks_per_sm(reinterpret_cast<const void*>(&atomic_kernel), 256, 0) * detail::sm_count();
  }
  void enqueue(cudaStream_t stream) override {
    atomic_kernel<<<grid_, 256, 0, stream>>>(buffer_.get(), floats_ - 1, iterations_);
    FLASHIO_LAUNCH_CHECK("atomic_kernel");
    ++runs_;
  }
  double work() const override { return double(grid_) * 256 * iterations_; }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    // Every float holds a whole count below 2^24, so the sum of 1.0s is exact.
    double sum = 0;
    for (float v : buffer_.to_host()) sum += v;
    detail::check_checksum("atomics", sum, work() * runs_, 0);
  }

 private:
  uint64_t floats_;
  int iterations_;
  DeviceArray<float> buffer_;
  int grid_ = 0;
  int64_t runs_ = 0;
};

}  // namespace

int64_t stream_bytes_in_flight_per_sm(int blocks_per_sm, int loads_per_thread) {
  return int64_t(blocks_per_sm) * kStreamThreads * 16 * loads_per_thread;
}

std::unique_ptr<Bench> stream_bench(Stream kind, int blocks_per_sm, int loads_per_thread, int64_t buffer_bytes,
                                    int passes) {
  return std::make_unique<StreamBench>(kind, blocks_per_sm, loads_per_thread, buffer_bytes, passes);
}

std::unique_ptr<Bench> atomic_bench(int64_t buffer_bytes, int iterations) {
  return std::make_unique<AtomicBench>(buffer_bytes, iterations);
}

}  // namespace flashio::kernels::calibrate
