// Catch2 main for the kernel tests. A GPU test program run without a GPU exits with
// FLASHIO_SKIP_RETURN_CODE (77) so CTest reports it skipped, not passed; listing test names
// (what catch_discover_tests does at build time) works without a GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

#include "kernels/attention.h"

int main(int argc, char** argv) {
#if FLASHIO_TEST_NEEDS_GPU
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
  if (!listing && !flashio::kernels::gpu_available()) {
    std::fprintf(stderr, "no CUDA device: GPU tests skipped\n");
    return FLASHIO_SKIP_RETURN_CODE;
  }
#endif
  return Catch::Session().run(argc, argv);
}
