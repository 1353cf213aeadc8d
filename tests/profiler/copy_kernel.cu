#include <cuda_runtime.h>

#include <stdexcept>

#include "tests/profiler/copy_kernel.h"

namespace flashio::profiler::testing {
namespace {

__global__ void copy16(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void read16(const uint4* __restrict__ src, size_t count, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = src[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

__global__ void claim_tiles(unsigned* counter, unsigned* claimed, unsigned tiles) {
  __shared__ unsigned tile;
  for (;;) {
    if (threadIdx.x == 0) tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned t = tile;
    __syncthreads();
    if (t >= tiles) return;
    if (threadIdx.x == 0) claimed[t] = 1;
  }
}

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void enqueue_copy(const void* src, void* dst, size_t bytes, cudaStream_t stream) {
  copy16<<<132 * 8, 256, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst),
                                      bytes / sizeof(uint4));
  check_launch("copy16");
}

void enqueue_read(const void* src, size_t bytes, unsigned* sink, cudaStream_t stream) {
  read16<<<132 * 8, 256, 0, stream>>>(static_cast<const uint4*>(src), bytes / sizeof(uint4), sink);
  check_launch("read16");
}

void enqueue_claim_tiles(unsigned* counter, unsigned* claimed, int tiles, cudaStream_t stream) {
  claim_tiles<<<132, 128, 0, stream>>>(counter, claimed, static_cast<unsigned>(tiles));
  check_launch("claim_tiles");
}

}  // namespace flashio::profiler::testing
