// kernels/cublas_library.h: cuBLAS is opened at first use, not linked. Where the toolkit's
// libcublas.so.13 is on the loader's path (the development machine, CI, the GPU machine) every
// entry point standard attention calls resolves; where it is not, the one error names the
// library and LD_LIBRARY_PATH. Needs no GPU: loading the library and finding its symbols runs
// none of it.
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "kernels/cublas_library.h"

namespace fk = flashio::kernels;

TEST_CASE("cuBLAS loads at first use with every entry point standard attention calls, or its one error "
          "names the library and the loader's path") {
  // Whether the loader can find the library at all, asked of dlopen itself.
  void* probe = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
  if (probe == nullptr) {
    INFO("libcublas.so.13 is not on the loader's path here: " << dlerror());
    try {
      (void)fk::cublas_library();
      FAIL("cublas_library() returned without the library");
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      CHECK(what.find("libcublas.so.13") != std::string::npos);
      CHECK(what.find("LD_LIBRARY_PATH") != std::string::npos);
    }
    return;
  }
  dlclose(probe);
  const fk::CublasLibrary& lib = fk::cublas_library();
  CHECK(lib.create != nullptr);
  CHECK(lib.destroy != nullptr);
  CHECK(lib.set_stream != nullptr);
  CHECK(lib.set_workspace != nullptr);
  CHECK(lib.gemm_strided_batched_ex != nullptr);
  REQUIRE(lib.status_string != nullptr);
  // A call that needs no GPU: the library's own words for two statuses, not empty and not alike.
  const std::string ok = lib.status_string(CUBLAS_STATUS_SUCCESS);
  const std::string not_initialized = lib.status_string(CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(!ok.empty());
  CHECK(ok != not_initialized);
  CHECK(&fk::cublas_library() == &lib);  // loaded once
}
