// main() of the GPU test program: without a usable GPU it exits with FLASHIO_SKIP_RETURN_CODE
// (77), which CTest reports as skipped, except when Catch2 is only asked to list the tests
// (catch_discover_tests does that at build time, on machines without a GPU).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--list", 0) == 0) listing = true;
  int devices = 0;
  if (!listing && (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)) {
    std::fprintf(stderr, "no CUDA GPU: GPU tests skipped\n");
    return FLASHIO_SKIP_RETURN_CODE;
  }
  return Catch::Session().run(argc, argv);
}
