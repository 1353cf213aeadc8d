#include "profiler/driver_api.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <string>

#include "profiler/profiler_error.h"

namespace flashio::profiler {

void* driver_symbol(const char* symbol) {
  static std::mutex mutex;
  static std::map<std::string, void*> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(symbol);
  if (it != cache.end()) return it->second;
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &fn, CUDART_VERSION, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || fn == nullptr)
    throw ProfilerError(ErrorKind::no_gpu, std::string("the CUDA driver has no ") + symbol +
                                               " (no driver, or one older than CUDA " +
                                               std::to_string(CUDART_VERSION / 1000) + ")");
  cache[symbol] = fn;
  return fn;
}

}  // namespace flashio::profiler
