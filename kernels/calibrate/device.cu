// The device's description and the helpers every benchmark shares (common.cuh).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/calibrate/common.cuh"

namespace flashio::kernels::calibrate {

Device current_device() {
  int id = 0;
  FLASHIO_CUDA_CHECK(cudaGetDevice(&id));
  cudaDeviceProp p{};
  FLASHIO_CUDA_CHECK(cudaGetDeviceProperties(&p, id));
  Device d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  d.smem_per_block_optin_bytes = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  d.smem_per_sm_bytes = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  return d;
}

namespace detail {

int sm_count() {
  int id = 0, count = 0;
  FLASHIO_CUDA_CHECK(cudaGetDevice(&id));
  FLASHIO_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, id));
  return count;
}

int resident_blocks_per_sm(const void* kernel, int threads, int smem_bytes) {
  int blocks = 0;
  FLASHIO_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem_bytes));
  return blocks;
}

int smem_for_blocks_per_sm(const void* kernel, int threads, int blocks_per_sm, int min_bytes,
                           const std::string& what) {
  int id = 0, optin = 0, per_sm = 0, reserved = 0;
  FLASHIO_CUDA_CHECK(cudaGetDevice(&id));
  FLASHIO_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, id));
  FLASHIO_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, id));
  FLASHIO_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, id));
  cudaFuncAttributes attributes{};
  FLASHIO_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  // A block's static and dynamic shared memory together may not pass the opt-in maximum.
  const int static_bytes = static_cast<int>(attributes.sharedSizeBytes);
  const int most = optin - static_bytes;
  FLASHIO_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  // All of an SM's unified L1/shared memory as shared memory, so that the launch has the
  // per_sm bytes the sizes below divide (with no preference the driver may pick a smaller
  // carveout, and fewer blocks would fit than the calculator said).
  FLASHIO_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                          cudaSharedmemCarveoutMaxShared));
  // Each block takes its shared memory plus what the driver reserves: per_sm / blocks_per_sm
  // of it leaves room for blocks_per_sm blocks and not one more; the loop steps up past the
  // allocation granularity when the calculator still finds room for more.
  int bytes = std::max(min_bytes, std::min(most, per_sm / blocks_per_sm - reserved - static_bytes));
  for (; bytes <= most; bytes += 128) {
    const int blocks = resident_blocks_per_sm(kernel, threads, bytes);
    if (blocks == blocks_per_sm) return bytes;
    if (blocks < blocks_per_sm) break;
  }
  std::ostringstream m;
  m << what << ": no dynamic shared memory size gives exactly " << blocks_per_sm << " resident blocks of "
    << threads << " threads per SM (" << resident_blocks_per_sm(kernel, threads, min_bytes) << " fit with "
    << min_bytes << " B)";
  throw std::invalid_argument(m.str());
}

std::vector<double> clock_samples_hz(const DeviceArray<ClockSample>& slots, int64_t runs) {
  const std::vector<ClockSample> all = slots.to_host();
  std::vector<double> hz;
  for (int64_t i = 0; i < std::min<int64_t>(runs, kClockSlots); ++i)
    if (all[i].ns > 0) hz.push_back(static_cast<double>(all[i].cycles) / (static_cast<double>(all[i].ns) * 1e-9));
  return hz;
}

void check_checksum(const std::string& what, double got, double want, double tolerance) {
  if (std::isfinite(got) && std::fabs(got - want) <= tolerance * std::fabs(want)) return;
  std::ostringstream m;
  m.precision(17);
  m << what << ": checksum " << got << ", expected " << want;
  if (tolerance > 0) m << " (within " << tolerance * 100 << " %)";
  m << "; the benchmark's work did not all happen as launched";
  throw std::runtime_error(m.str());
}

}  // namespace detail
}  // namespace flashio::kernels::calibrate
