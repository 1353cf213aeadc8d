// Tensor-core benchmarks (docs/calibration.md, "Tensor cores"): chains of mma.sync m16n8k16
// and of wgmma m64nNk16 on random operands, one block per SM with the asked-for warps or
// warpgroups, and the SM clock they ran at. The instructions and fragment loaders are the
// kernels' own (kernels/mma_tile.cuh, kernels/wgmma.cuh).
#include <string>

#include "kernels/calibrate/common.cuh"
#include "kernels/calibrate/exp2_chains.cuh"
#include "kernels/mma_tile.cuh"
#include "kernels/wgmma.cuh"

namespace flashio::kernels::calibrate {
namespace {

using detail::ClockSample;
using detail::DeviceArray;

constexpr uint64_t kSeedA = 0x5eed0a, kSeedB = 0x5eed0b;
constexpr int kMmaAccumulators = 8;  // independent chains per warp: enough to cover the mma latency

// The element as the tensor cores see it (rounded to T), on the host and the device.
template <typename T>
__host__ __device__ inline T to_elem(float x);
template <>
__host__ __device__ inline __half to_elem<__half>(float x) { return __float2half_rn(x); }
template <>
__host__ __device__ inline __nv_bfloat16 to_elem<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
inline double to_double(__half x) { return __half2float(x); }
inline double to_double(__nv_bfloat16 x) { return __bfloat162float(x); }

// Operand element (row, k) of a rows × 64 tile (k contiguous).
template <typename T>
__host__ __device__ inline T operand(uint64_t seed, int row, int k) {
  return to_elem<T>(detail::operand_value(seed, int64_t(row) * 64 + k));
}

// Σ_{k < k_count} (Σ_{m < a_rows} A[m][k]) · (Σ_{n < b_rows} B[n][k]) = Σ of every entry of A·Bᵀ.
template <typename T>
double product_sum(int a_rows, int b_rows, int k_count) {
  double total = 0;
  for (int k = 0; k < k_count; ++k) {
    double a = 0, b = 0;
    for (int m = 0; m < a_rows; ++m) a += to_double(operand<T>(kSeedA, m, k));
    for (int n = 0; n < b_rows; ++n) b += to_double(operand<T>(kSeedB, n, k));
    total += a * b;
  }
  return total;
}

__device__ __forceinline__ void record_clock(ClockSample* clocks, int slot, unsigned long long c0,
                                             unsigned long long t0) {
  const unsigned long long c1 = clock64(), t1 = detail::global_timer_ns();
  clocks[slot] = ClockSample{c1 - c0, t1 - t0};
}

// Every warp: A (16 × 16) and B (16 n × 16 k: two n-tiles) fragments loaded once with the
// kernels' ldmatrix loaders from swizzled tiles, then `iterations` × 8 mma.sync into 8
// independent accumulators (4 on each n-tile). The block's accumulators summed are its checksum.
template <typename T>
__global__ void __launch_bounds__(512, 1)
    mma_sync_kernel(int iterations, double* checksum, ClockSample* clocks, int slot) {
  extern __shared__ uint4 smem_raw[];
  T* sA = reinterpret_cast<T*>(smem_raw);
  T* sB = sA + 16 * 64;
  for (int e = threadIdx.x; e < 16 * 64; e += blockDim.x) {
    sA[tile::swz<64>(e / 64, e % 64)] = operand<T>(kSeedA, e / 64, e % 64);
    sB[tile::swz<64>(e / 64, e % 64)] = operand<T>(kSeedB, e / 64, e % 64);
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  uint32_t a[4], b[4];
  tile::load_a<64>(a, sA, 0, 0, lane);
  tile::load_b_nk<64>(b, sB, 0, 0, lane);
  float acc[kMmaAccumulators][4] = {};
  const bool timer = blockIdx.x == 0 && threadIdx.x == 0;
  unsigned long long c0 = 0, t0 = 0;
  if (timer) t0 = detail::global_timer_ns(), c0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaAccumulators; ++j) tile::mma_16816<T>(acc[j], a, b[2 * (j & 1)], b[2 * (j & 1) + 1]);
  }
  if (timer) record_clock(clocks, slot, c0, t0);
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kMmaAccumulators; ++j) sum += (acc[j][0] + acc[j][1]) + (acc[j][2] + acc[j][3]);
  detail::add_block_sum(checksum, static_cast<double>(sum));
}

// The wgmma benchmarks' operands: A (64 × 64) at the returned address and B (N × 64) after it,
// K-major in 128-byte-swizzled shared memory (1024-byte aligned), every thread of the block
// filling them, made visible to wgmma (the async proxy).
template <typename T, int N>
__device__ __forceinline__ T* wgmma_operands(uint4* smem_raw) {
  const uint32_t raw = tile::smem_addr(smem_raw);
  T* sA = reinterpret_cast<T*>(reinterpret_cast<char*>(smem_raw) + (((raw + 1023) & ~1023u) - raw));
  T* sB = sA + 64 * 64;
  for (int e = threadIdx.x; e < 64 * 64; e += blockDim.x) sA[wg::AtomSwizzled<64>::at(e / 64, e % 64)] = operand<T>(kSeedA, e / 64, e % 64);
  for (int e = threadIdx.x; e < N * 64; e += blockDim.x) sB[wg::AtomSwizzled<N>::at(e / 64, e % 64)] = operand<T>(kSeedB, e / 64, e % 64);
  wg::fence_proxy_async();  // the stores above, before wgmma reads them
  __syncthreads();
  return sA;
}

// One warpgroup: D (64 × N, fp32, zeroed here) += A (64 × 64) · Bᵀ (B: N × 64, after A) as 4
// wgmma m64nNk16 per iteration through the kernels' descriptors; one commit group per iteration,
// one left in flight while the next is issued (as a GEMM's main loop keeps the tensor cores fed),
// or, kWaited, each group waited for before the next is issued (as an attention kernel waits for
// S before its softmax: the GEMM's latency, not only its issue, in every iteration).
template <typename T, int N, bool kWaited>
__device__ __forceinline__ void wgmma_groups(const T* sA, int iterations, float (&d)[N / 2]) {
  constexpr uint32_t kAtomBytes = 1024;
  const T* sB = sA + 64 * 64;
  uint64_t a_desc[4], b_desc[4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    a_desc[kk] = wg::sw128_desc(sA + kk * 16, 16, kAtomBytes);
    b_desc[kk] = wg::sw128_desc(sB + kk * 16, 16, kAtomBytes);
  }
#pragma unroll
  for (int e = 0; e < N / 2; ++e) d[e] = 0.f;
  // Unrolled twice: with the loop kept rolled, ptxas cannot see that only wgmma touches the
  // accumulators between a commit and its wait, and serialises every wgmma (its advisory C7514).
#pragma unroll 2
  for (int i = 0; i < iterations; ++i) {
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wg::wgmma_ss<T, N>(d, a_desc[kk], b_desc[kk], 1);
    wg::commit();
    if constexpr (kWaited)
      wg::wait<0>();
    else
      wg::wait<1>();
  }
  wg::wait<0>();
}

template <int N>
__device__ __forceinline__ float sum_of(const float (&d)[N / 2]) {
  float sum = 0.f;
#pragma unroll
  for (int e = 0; e < N / 2; ++e) sum += d[e];
  return sum;
}

// Every warpgroup runs wgmma_groups on the same tiles.
template <typename T, int N, int kMaxWarpgroups, bool kWaited>
__global__ void __launch_bounds__(128 * kMaxWarpgroups, 1)
    wgmma_kernel(int iterations, double* checksum, ClockSample* clocks, int slot) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint4 smem_raw[];
  const T* sA = wgmma_operands<T, N>(smem_raw);
  float d[N / 2];
  const bool timer = blockIdx.x == 0 && threadIdx.x == 0;
  unsigned long long c0 = 0, t0 = 0;
  if (timer) t0 = detail::global_timer_ns(), c0 = clock64();
  wgmma_groups<T, N, kWaited>(sA, iterations, d);
  if (timer) record_clock(clocks, slot, c0, t0);
  detail::add_block_sum(checksum, static_cast<double>(sum_of<N>(d)));
#endif
}

// The tensor cores and the SFU at once (docs/calibration.md, "Tensor cores and the SFU
// together"): one block per SM of three warpgroups, as the warp-specialised forward's consumers
// are: warpgroups 0 and 1 stream wgmma m64n128k16 (wgmma_groups, one group in flight),
// warpgroup 2 runs the exp2 benchmark's chains (kernels/calibrate/exp2_chains.cuh), or with
// kSoftmax the softmax's instructions per score around each exponential (softmax_chains). Either
// side may be given no iterations, so that the same kernel times each side alone and both.
constexpr int kCorunN = 128;
constexpr int kCorunThreads = 384;
template <typename T, bool kSoftmax>
__global__ void __launch_bounds__(kCorunThreads, 1)
    corun_kernel(int mma_iterations, int exp_iterations, float scale, float shift, double* tensor_checksum,
                 double* exp_checksum, double* sums_checksum) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint4 smem_raw[];
  const T* sA = wgmma_operands<T, kCorunN>(smem_raw);
  float tensor_sum = 0.f, exp_sum = 0.f, sums = 0.f;
  if (threadIdx.x < 256) {  // warpgroups 0 and 1: the tensor side
    float d[kCorunN / 2];
    wgmma_groups<T, kCorunN, false>(sA, mma_iterations, d);
    tensor_sum = sum_of<kCorunN>(d);
  } else if (exp_iterations > 0) {  // warpgroup 2: the SFU side
    if constexpr (kSoftmax)
      detail::softmax_chains(exp_iterations, scale, shift, exp_sum, sums);
    else
      exp_sum = detail::exp2_chains(exp_iterations);
  }
  detail::add_block_sum(tensor_checksum, static_cast<double>(tensor_sum));
  __syncthreads();  // add_block_sum's shared partial sums, reused by the next sum
  detail::add_block_sum(exp_checksum, static_cast<double>(exp_sum));
  if constexpr (kSoftmax) {
    __syncthreads();
    detail::add_block_sum(sums_checksum, static_cast<double>(sums));
  }
#endif
}

// The checksum of fp32 sums of ~10⁴ positive products drifts by rounding: 2 % is far inside
// what one dropped iteration in a hundred would move it, and far outside the rounding.
constexpr double kTensorTolerance = 0.02;

using TensorKernel = void (*)(int, double*, ClockSample*, int);

class TensorBench : public Bench {
 public:
  // reports_clock: whether its clock samples count towards sm_clock_hz (the streaming benchmarks,
  // whose tensor cores are busy throughout; not the waited ones, idle between GEMMs).
  TensorBench(std::string name, TensorKernel kernel, int threads, int min_smem, int iterations, double flops_per_run,
              double checksum_per_run, bool reports_clock = true)
      : name_(std::move(name)), kernel_(kernel), threads_(threads), iterations_(iterations),
        flops_per_run_(flops_per_run), checksum_per_run_(checksum_per_run), reports_clock_(reports_clock),
        checksum_(1), clocks_(detail::kClockSlots) {
    smem_bytes_ = detail::smem_for_blocks_per_sm(reinterpret_cast<const void*>(kernel_), threads, 1, min_smem, name_);
    grid_ = detail::sm_count();
  }
  void enqueue(cudaStream_t stream) override {
    kernel_<<<grid_, threads_, smem_bytes_, stream>>>(iterations_, checksum_.get(), clocks_.get(),
                                                      static_cast<int>(runs_ % detail::kClockSlots));
    FLASHIO_LAUNCH_CHECK("tensor benchmark kernel");
    ++runs_;
  }
  double work() const override { return flops_per_run_ * grid_; }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    detail::check_checksum(name_, checksum_.first(), checksum_per_run_ * grid_ * runs_, kTensorTolerance);
  }
  std::vector<double> clock_samples_hz() override {
    if (!reports_clock_) return {};
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    return detail::clock_samples_hz(clocks_, runs_);
  }

 private:
  std::string name_;
  TensorKernel kernel_;
  int threads_, iterations_;
  double flops_per_run_, checksum_per_run_;  // per block (SM)
  bool reports_clock_;
  DeviceArray<double> checksum_;
  DeviceArray<ClockSample> clocks_;
  int smem_bytes_ = 0, grid_ = 0;
  int64_t runs_ = 0;
};

// One configuration of corun_kernel, fp16 (the kernels' softmax-beside-GEMM case): work() is 1
// (the figure is a ratio of times).
class CorunBench : public Bench {
  using T = __half;

 public:
  CorunBench(CorunSide side, int mma_iterations, int exp_iterations)
      : side_(side), mma_iterations_(mma_iterations), exp_iterations_(exp_iterations), tensor_checksum_(1),
        exp_checksum_(1), sums_checksum_(1) {
    smem_bytes_ = detail::smem_for_blocks_per_sm(kernel(), kCorunThreads, 1, (64 + kCorunN) * 64 * 2 + 1024,
                                                 "tensor and SFU co-run");
    grid_ = detail::sm_count();
  }
  void enqueue(cudaStream_t stream) override {
    // scale 1 and shift 0, unknown to the compiler: the softmax side's FFMA stays.
    const auto launch = [&](auto kernel) {
      kernel<<<grid_, kCorunThreads, smem_bytes_, stream>>>(mma_iterations_, exp_iterations_, 1.0f, 0.0f,
                                                            tensor_checksum_.get(), exp_checksum_.get(),
                                                            sums_checksum_.get());
    };
    if (side_ == CorunSide::softmax)
      launch(&corun_kernel<T, true>);
    else
      launch(&corun_kernel<T, false>);
    FLASHIO_LAUNCH_CHECK("tensor and SFU co-run kernel");
    ++runs_;
  }
  double work() const override { return 1; }
  void check() override {
    FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
    // Two warpgroups' accumulators: iterations × Σ of A·Bᵀ each (as wgmma_kernel).
    const double tensor = 2.0 * mma_iterations_ * product_sum<T>(64, kCorunN, 64) * grid_ * runs_;
    detail::check_checksum("co-run tensor side", tensor_checksum_.first(), tensor, kTensorTolerance);
    // 128 threads' chains, each at its fixed point (as the exp2 benchmark).
    const double chains = 128.0 * detail::kExp2Chains * grid_ * runs_;
    const double y_end = detail::exp2_fixed_point();
    if (exp_iterations_ > 0) {
      detail::check_checksum("co-run SFU side", exp_checksum_.first(), chains * y_end, 1e-3);
    } else {
      detail::check_checksum("co-run SFU side", exp_checksum_.first(), 0, 0);
    }
    if (side_ == CorunSide::softmax && exp_iterations_ > 0) {
      // Each chain's running sum is iterations × y* but for the steps before it settles (a
      // contraction by ln 2 · y* ≈ 0.44 a step from a start within 0.5 of y*: under 1 in all),
      // its maximum between y* and 1: the sum of both within 2 of iterations × y* + 1 per chain.
      const double want = chains * (exp_iterations_ * y_end + 1.0);
      detail::check_checksum("co-run softmax side's sums", sums_checksum_.first(), want, 2.0 * chains / want);
    }
  }

 private:
  const void* kernel() const {
    return side_ == CorunSide::softmax ? reinterpret_cast<const void*>(&corun_kernel<T, true>)
                                       : reinterpret_cast<const void*>(&corun_kernel<T, false>);
  }
  CorunSide side_;
  int mma_iterations_, exp_iterations_;
  DeviceArray<double> tensor_checksum_, exp_checksum_, sums_checksum_;
  int smem_bytes_ = 0, grid_ = 0;
  int64_t runs_ = 0;
};

template <typename T>
std::unique_ptr<Bench> make_mma_sync(const std::string& name, int warps, int iterations) {
  const double per_warp_instructions = double(iterations) * kMmaAccumulators;
  // Each warp's accumulators sum to iterations × 4 × (Σ of both n-tiles' products).
  const double per_warp_checksum = double(iterations) * (kMmaAccumulators / 2) * product_sum<T>(16, 16, 16);
  return std::make_unique<TensorBench>(name, &mma_sync_kernel<T>, 32 * warps, 2 * 16 * 64 * 2, iterations,
                                       warps * per_warp_instructions * 2 * 16 * 8 * 16, warps * per_warp_checksum);
}

template <typename T, int N, bool kWaited>
std::unique_ptr<Bench> make_wgmma(const std::string& name, int warpgroups, int iterations) {
  constexpr int kMax = N == 256 ? 3 : 4;
  const double per_wg_instructions = double(iterations) * 4;
  const double per_wg_checksum = double(iterations) * product_sum<T>(64, N, 64);
  return std::make_unique<TensorBench>(name, &wgmma_kernel<T, N, kMax, kWaited>, 128 * warpgroups, (64 + N) * 64 * 2 + 1024,
                                       iterations, warpgroups * per_wg_instructions * 2 * 64 * N * 16,
                                       warpgroups * per_wg_checksum, /*reports_clock=*/!kWaited);
}

}  // namespace

std::unique_ptr<Bench> mma_sync_bench(Elem elem, int warps_per_sm, int iterations) {
  if (warps_per_sm < 1 || warps_per_sm > 16)
    throw std::invalid_argument("mma.sync benchmark: 1 to 16 warps per SM (got " + std::to_string(warps_per_sm) + ")");
  const std::string name = std::string("mma.sync ") + (elem == Elem::fp16 ? "fp16" : "bf16");
  return elem == Elem::fp16 ? make_mma_sync<__half>(name, warps_per_sm, iterations)
                            : make_mma_sync<__nv_bfloat16>(name, warps_per_sm, iterations);
}

int max_wgmma_warpgroups_per_sm(int n) { return n == 256 ? 3 : 4; }

namespace {

template <bool kWaited>
std::unique_ptr<Bench> wgmma_bench_of(Elem elem, int n, int warpgroups_per_sm, int iterations) {
  if (n != 64 && n != 128 && n != 256)
    throw std::invalid_argument("wgmma benchmark: N is 64, 128 or 256 (got " + std::to_string(n) + ")");
  if (warpgroups_per_sm < 1 || warpgroups_per_sm > max_wgmma_warpgroups_per_sm(n))
    throw std::invalid_argument("wgmma benchmark: 1 to " + std::to_string(max_wgmma_warpgroups_per_sm(n)) +
                                " warpgroups per SM at N = " + std::to_string(n));
  const std::string name = std::string(kWaited ? "wgmma waited n" : "wgmma n") + std::to_string(n) +
                           (elem == Elem::fp16 ? " fp16" : " bf16");
  if (elem == Elem::fp16) {
    if (n == 64) return make_wgmma<__half, 64, kWaited>(name, warpgroups_per_sm, iterations);
    if (n == 128) return make_wgmma<__half, 128, kWaited>(name, warpgroups_per_sm, iterations);
    return make_wgmma<__half, 256, kWaited>(name, warpgroups_per_sm, iterations);
  }
  if (n == 64) return make_wgmma<__nv_bfloat16, 64, kWaited>(name, warpgroups_per_sm, iterations);
  if (n == 128) return make_wgmma<__nv_bfloat16, 128, kWaited>(name, warpgroups_per_sm, iterations);
  return make_wgmma<__nv_bfloat16, 256, kWaited>(name, warpgroups_per_sm, iterations);
}

}  // namespace

std::unique_ptr<Bench> wgmma_bench(Elem elem, int n, int warpgroups_per_sm, int iterations) {
  return wgmma_bench_of<false>(elem, n, warpgroups_per_sm, iterations);
}

std::unique_ptr<Bench> wgmma_waited_bench(Elem elem, int n, int warpgroups_per_sm, int iterations) {
  return wgmma_bench_of<true>(elem, n, warpgroups_per_sm, iterations);
}

std::unique_ptr<Bench> tensor_corun_bench(CorunSide side, int mma_iterations, int exp_iterations) {
  if (mma_iterations < 0 || exp_iterations < 0 || (exp_iterations > 0 && exp_iterations < 64))
    throw std::invalid_argument("co-run benchmark: iterations >= 0, and the SFU side's 0 or >= 64 (its chains' fixed point)");
  return std::make_unique<CorunBench>(side, mma_iterations, exp_iterations);
}

}  // namespace flashio::kernels::calibrate
