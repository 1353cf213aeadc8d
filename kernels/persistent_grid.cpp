#include "kernels/persistent_grid.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <stdexcept>

#include "kernels/launch.h"

namespace flashio::kernels {
namespace {

constexpr int kMaxDevices = 64;
std::atomic<int> block_cap{0};  // cap_persistent_blocks's; 0: none

int current_device() {
  int device = 0;
  FLASHIO_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 0 || device >= kMaxDevices) throw std::runtime_error("CUDA device index beyond 63");
  return device;
}

}  // namespace

int sm_count() {
  static std::array<int, kMaxDevices> counts{};
  static std::mutex mutex;
  const int device = current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  if (counts[device] == 0)
    FLASHIO_CUDA_CHECK(cudaDeviceGetAttribute(&counts[device], cudaDevAttrMultiProcessorCount, device));
  return counts[device];
}

int persistent_blocks(long long items) {
  long long blocks = std::min<long long>(items, sm_count());
  if (const int cap = block_cap.load(); cap > 0) blocks = std::min<long long>(blocks, cap);
  return static_cast<int>(blocks);
}

void cap_persistent_blocks(int blocks) {
  if (blocks < 0) throw std::invalid_argument("cap_persistent_blocks: blocks must be >= 0 (0: no cap)");
  block_cap.store(blocks);
}

int* ws_work_counter() {
  static std::array<int*, kMaxDevices> counters{};
  static std::mutex mutex;
  const int device = current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  if (counters[device] == nullptr) FLASHIO_CUDA_CHECK(cudaMalloc(&counters[device], sizeof(int)));
  return counters[device];
}

}  // namespace flashio::kernels
