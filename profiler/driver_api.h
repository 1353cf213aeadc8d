// Driver API calls through the runtime's entry-point lookup, so that nothing of ours links
// libcuda.so.1: machines without a driver (CI, the development machines) can still load the
// test programs to list their tests. FLASHIO_DRIVER(cuGraphGetNodes)(args...) calls the
// driver's current version of the function the toolkit headers declare under that name.
#pragma once
#include <cuda.h>

namespace flashio::profiler {

// The driver's entry point for `symbol` (looked up once, then cached). Throws ProfilerError
// (no_gpu) when there is no driver or it lacks the symbol.
void* driver_symbol(const char* symbol);

}  // namespace flashio::profiler

// #fn is the name as written (cuGraphGetEdges); decltype(&fn) sees the header's macro mapping
// (cuGraphGetEdges_v2), whose signature is the one the lookup by this toolkit's version returns.
#define FLASHIO_DRIVER(fn) (reinterpret_cast<decltype(&fn)>(::flashio::profiler::driver_symbol(#fn)))
