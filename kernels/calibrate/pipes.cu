// Pipe throughputs (docs/calibration.md, "Pipes"): ex2.approx, fp32 FMA, 32-bit integer
// hashing, shfl.sync and ldmatrix.x4, every SM full of 256-thread blocks, 8 independent chains
// per thread.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/calibrate/common.cuh"
#include "kernels/calibrate/exp2_chains.cuh"
#include "kernels/mma_tile.cuh"

namespace flashio::kernels::calibrate {
namespace {

using detail::DeviceArray;

constexpr int kThreads = 256;
constexpr int kChains = 8;
static_assert(kChains == detail::kExp2Chains, "one chain count for every pipe benchmark");

// 8 chains y ← 2^(−y) per thread (kernels/calibrate/exp2_chains.cuh).
__global__ void __launch_bounds__(kThreads) exp2_kernel(int iterations, double* checksum) {
  detail::add_block_sum(checksum, static_cast<double>(detail::exp2_chains(iterations)));
}

// y ← y·a + b_j (a = 0.75 and b_j = 0.25·(j + 1) passed at run time): chain j converges to
// b_j / (1 − a) = j + 1.
__global__ void __launch_bounds__(kThreads) fma_kernel(int iterations, float a, float b, double* checksum) {
  float y[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) y[j] = 0.f;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) y[j] = fmaf(y[j], a, b * (j + 1));
  }
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kChains; ++j) sum += y[j];
  detail::add_block_sum(checksum, static_cast<double>(sum));
}

// One step of an integer chain: a 32-bit finaliser of xor-shifts and multiplies (MurmurHash3's
// fmix32), the mix of instructions a counter-based random draw is made of. kIntegerOpsPerStep
// machine instructions: three shifts (SHF), three xors (LOP3) and two multiplies (IMAD), as
// ptxas emits them for sm_90a (docs/calibration.md, "Pipes", shows how that was read).
constexpr int kIntegerOpsPerStep = 8;
__host__ __device__ inline uint32_t integer_step(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// Chain j of lane l: h ← integer_step(h) from h = seed + 8·l + j, the seed passed at run time.
// The lanes of a warp differ, so no chain is uniform (a value the same in every thread goes to
// the uniform datapath, another pipe); the warps are alike, so the host checks the sum from one
// warp's chains.
__global__ void __launch_bounds__(kThreads) integer_kernel(int iterations, uint32_t seed, unsigned long long* checksum) {
  uint32_t h[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) h[j] = seed + (threadIdx.x % 32) * kChains + j;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) h[j] = integer_step(h[j]);
  }
  unsigned long long sum = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j) sum += h[j];
  detail::add_block_sum(checksum, sum);
}

// v ← the value of lane (lane XOR m), m = 1 … 16 changing every iteration: a permutation of
// each chain's values among the warp's lanes, so the warp's sum stays what it started as.
__global__ void __launch_bounds__(kThreads) shuffle_kernel(int iterations, unsigned long long* checksum) {
  const uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t v[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) v[j] = thread * kChains + j;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
    const int m = (i & 15) + 1;
#pragma unroll
    for (int j = 0; j < kChains; ++j) v[j] = __shfl_xor_sync(0xffffffffu, v[j], m);
  }
  unsigned long long sum = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j) sum += v[j];
  detail::add_block_sum(checksum, sum);
}

// The 32-bit word at (row, word) of the ldmatrix tile: random bits.
__host__ __device__ inline uint32_t tile_word(int row, int word) {
  return static_cast<uint32_t>(random::mix64(uint64_t(row) * 32 + word));
}

// A 64 × 64 16-bit tile, swizzled as the kernels' tiles are (tile::swz: conflict-free
// ldmatrix), read as its 16 fragments of 16 × 16 by ldmatrix.x4 every iteration (16 × 512 B
// per warp), their words summed (each warp's 16 loads cover the tile once).
__global__ void __launch_bounds__(kThreads) ldmatrix_kernel(int iterations, unsigned int* checksum) {
  __shared__ alignas(128) uint16_t tile16[64 * 64];
  uint32_t* words = reinterpret_cast<uint32_t*>(tile16);
  for (int e = threadIdx.x; e < 64 * 32; e += blockDim.x) {
    const int row = e / 32, word = e % 32;
    words[tile::swz<64>(row, 2 * word) / 2] = tile_word(row, word);
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  uint32_t addr[16];
#pragma unroll
  for (int f = 0; f < 16; ++f)
    addr[f] = tile::frag_addr<64>(tile16, (f / 4) * 16 + (lane & 15), ((f % 4) * 16) >> 3, lane >> 4, lane);
  uint32_t sum = 0;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int f = 0; f < 16; ++f) {
      uint32_t r[4];
      tile::ldmatrix_x4(r, addr[f]);
      sum += (r[0] + r[1]) + (r[2] + r[3]);
    }
  }
  detail::add_block_sum(checksum, sum);
}

template <typename Kernel>
int full_grid(Kernel kernel) {
  return detail::resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), kThreads, 0) * detail::sm_count();
}

class PipeBench : public Bench {
 public:
  enum class Kind { exp2, fma, integer, shuffle, ldmatrix };
  static constexpr uint32_t kIntegerSeed = 0x9e3779b9u;
  PipeBench(Kind kind, int iterations) : kind_(kind), iterations_(iterations), real_(1), integer_(1), word_(1) {
    grid_ = kind == Kind::exp2 ? full_grid(&exp2_kernel)
            : kind == Kind::fma ? full_grid(&fma_kernel)
            : kind == Kind::integer ? full_grid(&integer_kernel)
            : kind == Kind::shuffle ? full_grid(&shuffle_kernel)
                                    : full_grid(&ldmatrix_kernel);
  }
  void enqueue(cudaStream_t stream) override {
    switch (kind_) {
      case Kind::exp2: exp2_kernel<<<grid_, kThreads, 0, stream>>>(iterations_, real_.get()); break;
      case Kind::fma: fma_kernel<<<grid_, kThreads, 0, stream>>>(iterations_, 0.75f, 0.25f, real_.get()); break;
      case Kind::integer: integer_kernel<<<grid_, kThreads, 0, stream>>>(iterations_, kIntegerSeed, integer_.get()); break;
      case Kind::shuffle: shuffle_kernel<<<grid_, kThreads, 0, stream>>>(iterations_, integer_.get()); break;
      case Kind::ldmatrix: ldmatrix_kernel<<<grid_, kThreads, 0, stream>>>(iterations_, word_.get()); break;
    }
    FLASHIO_LAUNCH_CHECK("pipe benchmark kernel");
    ++runs_;
  }
  double threads() const { return double(grid_) * kThreads; }
  double work() const override {
    const double per_thread = double(iterations_) * (kind_ == Kind::ldmatrix ? 16 : kChains);
    switch (kind_) {
      case Kind::exp2: return threads() * per_thread;
      case Kind::fma: return threads() * per_thread * 2;
      case Kind::integer: return threads() * per_thread * kIntegerOpsPerStep;
      case Kind::shuffle: return threads() * per_thread;
      case Kind::ldmatrix: return threads() / 32 * per_thread * 512;
    }
    return 0;
  }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    switch (kind_) {
      case Kind::exp2: {
        detail::check_checksum("exp2", real_.first(), threads() * detail::kExp2Chains * detail::exp2_fixed_point() * runs_,
                               1e-3);
        break;
      }
      case Kind::fma:
        // Σ_j (j + 1) = 36 once the chains have converged (64 iterations take 0.75^64 ≈ 1e-8).
        detail::check_checksum("fma", real_.first(), threads() * 36.0 * runs_, 1e-4);
        break;
      case Kind::integer: {
        // One warp's chains, stepped here as on the GPU; every warp's are the same.
        unsigned long long warp_sum = 0;
        for (uint32_t lane = 0; lane < 32; ++lane)
          for (int j = 0; j < kChains; ++j) {
            uint32_t h = kIntegerSeed + lane * kChains + static_cast<uint32_t>(j);
            for (int i = 0; i < iterations_; ++i) h = integer_step(h);
            warp_sum += h;
          }
        // Modulo 2^64, as the device's unsigned sums wrap.
        const unsigned long long want = warp_sum * static_cast<unsigned long long>(threads() / 32) *
                                        static_cast<unsigned long long>(runs_);
        if (integer_.first() != want)
          throw std::runtime_error("integer: checksum " + std::to_string(integer_.first()) + ", expected " +
                                   std::to_string(want));
        break;
      }
      case Kind::shuffle: {
        // Σ over every thread and chain of thread · 8 + j: the values 0 … 8·threads − 1.
        const double n = threads() * kChains;
        detail::check_checksum("shuffle", double(integer_.first()), n * (n - 1) / 2 * runs_, 0);
        break;
      }
      case Kind::ldmatrix: {
        uint32_t tile_sum = 0;
        for (int row = 0; row < 64; ++row)
          for (int word = 0; word < 32; ++word) tile_sum += tile_word(row, word);
        const uint32_t want = tile_sum * static_cast<uint32_t>(iterations_) *
                              static_cast<uint32_t>(threads() / 32) * static_cast<uint32_t>(runs_);
        detail::check_checksum("ldmatrix", word_.first(), want, 0);
        break;
      }
    }
  }

 private:
  Kind kind_;
  int iterations_;
  DeviceArray<double> real_;
  DeviceArray<unsigned long long> integer_;
  DeviceArray<unsigned int> word_;
  int grid_ = 0;
  int64_t runs_ = 0;
};

}  // namespace

std::unique_ptr<Bench> exp2_bench(int iterations) { return std::make_unique<PipeBench>(PipeBench::Kind::exp2, iterations); }
std::unique_ptr<Bench> fma_bench(int iterations) { return std::make_unique<PipeBench>(PipeBench::Kind::fma, iterations); }
std::unique_ptr<Bench> integer_bench(int iterations) {
  return std::make_unique<PipeBench>(PipeBench::Kind::integer, iterations);
}
std::unique_ptr<Bench> shuffle_bench(int iterations) {
  return std::make_unique<PipeBench>(PipeBench::Kind::shuffle, iterations);
}
std::unique_ptr<Bench> ldmatrix_bench(int iterations) {
  return std::make_unique<PipeBench>(PipeBench::Kind::ldmatrix, iterations);
}

}  // namespace flashio::kernels::calibrate
