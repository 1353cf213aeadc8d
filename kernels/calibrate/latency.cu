// Latencies and fixed costs (docs/calibration.md, "Latencies", "Fixed costs"): pointer chases
// with cp.async and with TMA, __syncthreads, kernel launches and waves of empty blocks.
#include <cuda.h>  // CUtensorMap and cuTensorMapEncodeTiled's declaration (the call goes through driver_symbol)

#include <numeric>
#include <random>
#include <string>

#include "kernels/calibrate/common.cuh"
#include "kernels/mma_tile.cuh"

namespace flashio::kernels::calibrate {
namespace {

using detail::DeviceArray;

constexpr int kLineBytes = 128;
constexpr int kLineWords = kLineBytes / 4;

__global__ void chase_scatter_kernel(uint32_t* words, const uint32_t* next, uint32_t lines) {
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += gridDim.x * blockDim.x)
    words[size_t(l) * kLineWords] = next[l];
}

// A single random cycle through every 128-byte line of the buffer (Sattolo's shuffle): the
// first word of line l holds the line that follows it, so each load's address is the previous
// load's value and no two steps of a run share a line.
class ChaseBuffer {
 public:
  explicit ChaseBuffer(int64_t buffer_bytes)
      : lines_(static_cast<uint32_t>(buffer_bytes / kLineBytes)), words_(size_t(lines_) * kLineWords), position_(1) {
    if (lines_ < 2) throw std::invalid_argument("pointer chase: the buffer must hold at least two 128-byte lines");
    next_.resize(lines_);
    std::vector<uint32_t> order(lines_);
    std::iota(order.begin(), order.end(), 0u);
    std::mt19937_64 rng(0x1a7e2c);
    for (uint32_t i = lines_ - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<uint32_t>(0, i - 1)(rng)]);
    for (uint32_t i = 0; i < lines_; ++i) next_[order[i]] = order[(i + 1) % lines_];
    DeviceArray<uint32_t> next(lines_);
    FLASHIO_CUDA_CHECK(cudaMemcpy(next.get(), next_.data(), lines_ * sizeof(uint32_t), cudaMemcpyHostToDevice));
    chase_scatter_kernel<<<1024, 256>>>(words_.get(), next.get(), lines_);
    FLASHIO_LAUNCH_CHECK("chase scatter");
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
  }
  uint32_t* words() const { return words_.get(); }
  uint32_t* position() const { return position_.get(); }  // where the next run starts (line 0 first)
  uint32_t lines() const { return lines_; }
  // Throws unless the chase stopped where `steps` steps from line 0 lead.
  void check(const std::string& what, int64_t steps) const {
    uint32_t at = 0;
    for (int64_t s = 0; s < steps; ++s) at = next_[at];
    detail::check_checksum(what + " (the line the chase stopped at)", position_.first(), at, 0);
  }

 private:
  uint32_t lines_;
  std::vector<uint32_t> next_;
  DeviceArray<uint32_t> words_;
  DeviceArray<uint32_t> position_;
};

// One thread: cp.async 16 B of the line into shared memory, wait for it, read the next line.
__global__ void cp_async_chase_kernel(const uint32_t* words, uint32_t* position, int steps) {
  __shared__ alignas(16) uint32_t slot[4];
  uint32_t at = *position;
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
    tile::cp_async_16(slot, words + size_t(at) * kLineWords);
    tile::cp_async_commit();
    tile::cp_async_wait<0>();
    asm volatile("" ::: "memory");  // the read below after the wait
    at = *reinterpret_cast<volatile uint32_t*>(slot);
  }
  *position = at;
}

// One thread: a TMA load of the line (box 32 words × 1 row of the 2D map) into shared memory,
// completing on an mbarrier (expect_tx of the box's 128 bytes), wait for the barrier's phase to
// flip, read the next line.
__global__ void tma_chase_kernel(const __grid_constant__ CUtensorMap map, uint32_t* position, int steps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ alignas(128) uint32_t line[kLineWords];
  __shared__ alignas(8) uint64_t barrier;
  const uint32_t bar = tile::smem_addr(&barrier), dst = tile::smem_addr(line);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  uint32_t at = *position, phase = 0;
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kLineBytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(dst), "l"(reinterpret_cast<uint64_t>(&map)), "r"(0), "r"(at), "r"(bar)
        : "memory");
    uint32_t done = 0;
    do {
      asm volatile(
          "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.b32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(bar), "r"(phase)
          : "memory");
    } while (!done);
    phase ^= 1;
    at = *reinterpret_cast<volatile uint32_t*>(line);
  }
  *position = at;
#endif
}

class ChaseBench : public Bench {
 public:
  ChaseBench(int64_t buffer_bytes, int steps, DriverSymbol driver_symbol) : chase_(buffer_bytes), steps_(steps) {
    if (!driver_symbol) return;  // cp.async
    tma_ = true;
    const auto encode = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(driver_symbol("cuTensorMapEncodeTiled"));
    const cuuint64_t dims[2] = {kLineWords, chase_.lines()};
    const cuuint64_t strides[1] = {kLineBytes};
    const cuuint32_t box[2] = {kLineWords, 1};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = encode(&map_, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, chase_.words(), dims, strides, box,
                              element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      throw std::runtime_error("TMA chase: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")");
  }
  void enqueue(cudaStream_t stream) override {
    if (tma_) {
      tma_chase_kernel<<<1, 1, 0, stream>>>(map_, chase_.position(), steps_);
    } else {
      cp_async_chase_kernel<<<1, 1, 0, stream>>>(chase_.words(), chase_.position(), steps_);
    }
    FLASHIO_LAUNCH_CHECK("chase kernel");
    ++runs_;
  }
  double work() const override { return steps_; }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    chase_.check(tma_ ? "TMA chase" : "cp.async chase", runs_ * steps_);
  }

 private:
  ChaseBuffer chase_;
  int steps_;
  bool tma_ = false;
  CUtensorMap map_{};
  int64_t runs_ = 0;
};

// `iterations` __syncthreads per block; each thread counts them into the checksum.
__global__ void barrier_kernel(int iterations, unsigned long long* checksum) {
  unsigned long long count = 0;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
    __syncthreads();
    ++count;
  }
  detail::add_block_sum(checksum, count);
}

class BarrierBench : public Bench {
 public:
  BarrierBench(int threads, int iterations) : threads_(threads), iterations_(iterations), checksum_(1) {
    smem_bytes_ = detail::smem_for_blocks_per_sm(reinterpret_cast<const void*>(&barrier_kernel), threads, 1, 0,
                                                 "barrier benchmark");
    grid_ = detail::sm_count();
  }
  void enqueue(cudaStream_t stream) override {
    barrier_kernel<<<grid_, threads_, smem_bytes_, stream>>>(iterations_, checksum_.get());
    FLASHIO_LAUNCH_CHECK("barrier_kernel");
    ++runs_;
  }
  double work() const override { return iterations_; }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    detail::check_checksum("barrier", double(checksum_.first()), double(grid_) * threads_ * iterations_ * runs_, 0);
  }

 private:
  int threads_, iterations_;
  DeviceArray<unsigned long long> checksum_;
  int smem_bytes_ = 0, grid_ = 0;
  int64_t runs_ = 0;
};

// Counts the blocks that ran: all a launch of an empty kernel does.
__global__ void count_blocks_kernel(unsigned long long* count) {
  if (threadIdx.x == 0) atomicAdd(count, 1ull);
}

// Holds the stream for `ns` nanoseconds, so that the host has queued the launches that follow
// before the GPU reaches them.
__global__ void hold_kernel(unsigned long long ns) {
  const unsigned long long t0 = detail::global_timer_ns();
  while (detail::global_timer_ns() - t0 < ns) {
  }
}

class LaunchBench : public Bench {
 public:
  // waves = 0: `launches` launches of one 32-thread block; otherwise one launch of `waves`
  // waves of 128-thread blocks, one per SM at a time.
  LaunchBench(int launches, int waves) : launches_(launches), waves_(waves), count_(1) {
    if (waves_ > 0)
      smem_bytes_ = detail::smem_for_blocks_per_sm(reinterpret_cast<const void*>(&count_blocks_kernel), 128, 1, 0,
                                                   "wave benchmark");
  }
  void enqueue(cudaStream_t stream) override {
    if (waves_ > 0) {
      count_blocks_kernel<<<waves_ * detail::sm_count(), 128, smem_bytes_, stream>>>(count_.get());
      blocks_ += int64_t(waves_) * detail::sm_count();
    } else {
      for (int i = 0; i < launches_; ++i) count_blocks_kernel<<<1, 32, 0, stream>>>(count_.get());
      blocks_ += launches_;
    }
    FLASHIO_LAUNCH_CHECK("count_blocks_kernel");
  }
  void prepare(cudaStream_t stream) override {
    // A host queues a launch in a few µs: 20 µs a launch is time to spare.
    if (waves_ == 0) {
      hold_kernel<<<1, 1, 0, stream>>>(20000ull * launches_);
      FLASHIO_LAUNCH_CHECK("hold_kernel");
    }
  }
  double work() const override { return waves_ > 0 ? waves_ : launches_; }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    detail::check_checksum(waves_ > 0 ? "waves" : "launches", double(count_.first()), double(blocks_), 0);
  }

 private:
  int launches_, waves_;
  DeviceArray<unsigned long long> count_;
  int smem_bytes_ = 0;
  int64_t blocks_ = 0;
};

}  // namespace

std::unique_ptr<Bench> cp_async_chase_bench(int64_t buffer_bytes, int steps) {
  return std::make_unique<ChaseBench>(buffer_bytes, steps, nullptr);
}
std::unique_ptr<Bench> tma_chase_bench(int64_t buffer_bytes, int steps, DriverSymbol driver_symbol) {
  if (!driver_symbol) throw std::invalid_argument("TMA chase: no driver symbol lookup given");
  return std::make_unique<ChaseBench>(buffer_bytes, steps, driver_symbol);
}
std::unique_ptr<Bench> barrier_bench(int threads_per_block, int iterations) {
  return std::make_unique<BarrierBench>(threads_per_block, iterations);
}
std::unique_ptr<Bench> launch_bench(int launches) { return std::make_unique<LaunchBench>(launches, 0); }
std::unique_ptr<Bench> wave_bench(int waves) { return std::make_unique<LaunchBench>(0, waves); }

}  // namespace flashio::kernels::calibrate
