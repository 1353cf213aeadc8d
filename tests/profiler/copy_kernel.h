// A copy kernel of known traffic for the profiler's GPU tests: reads `bytes` from src and
// writes `bytes` to dst with 16-byte accesses, each byte once (whole sectors).
#pragma once
#include <cstddef>

typedef struct CUstream_st* cudaStream_t;

namespace flashio::profiler::testing {
void enqueue_copy(const void* src, void* dst, size_t bytes, cudaStream_t stream);
// Reads `bytes` (a sum no one uses, kept alive by an unlikely store).
void enqueue_read(const void* src, size_t bytes, unsigned* sink, cudaStream_t stream);
// A persistent kernel that claims tiles from *counter (atomicAdd) until `tiles` are taken and
// sets claimed[t] = 1 for each: it depends on *counter being reset before it runs.
void enqueue_claim_tiles(unsigned* counter, unsigned* claimed, int tiles, cudaStream_t stream);
}  // namespace flashio::profiler::testing
