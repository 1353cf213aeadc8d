#include "kernels/persistent_grid.h"

#include <cuda_runtime.h>

#include <array>
#include <mutex>

#include "kernels/launch.h"

namespace flashio::kernels {
namespace {

constexpr int kMaxDevices = 64;

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

int* ws_work_counter() {
  static std::array<int*, kMaxDevices> counters{};
  static std::mutex mutex;
  const int device = current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  if (counters[device] == nullptr) FLASHIO_CUDA_CHECK(cudaMalloc(&counters[device], sizeof(int)));
  return counters[device];
}

}  // namespace flashio::kernels
