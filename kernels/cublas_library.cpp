#include "kernels/cublas_library.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace flashio::kernels {

namespace {

// The soname of the CUDA 13 toolkit's cuBLAS, the one the headers describe.
constexpr const char* kCublasSoname = "libcublas.so.13";

template <typename F>
void resolve(void* handle, const char* symbol, F& out) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr)
    throw std::runtime_error(std::string(kCublasSoname) + " has no " + symbol + " (a cuBLAS of another version?)");
  out = reinterpret_cast<F>(address);
}

CublasLibrary load() {
  void* handle = dlopen(kCublasSoname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("cannot load cuBLAS (") + kCublasSoname +
                             "), which standard attention's GEMMs need: " + (why ? why : "not found") +
                             "; put the CUDA toolkit's library directory on LD_LIBRARY_PATH");
  }
  // Kept loaded for the process's life: handles and streams bound to it outlive any one run.
  CublasLibrary lib;
  resolve(handle, "cublasCreate_v2", lib.create);
  resolve(handle, "cublasDestroy_v2", lib.destroy);
  resolve(handle, "cublasSetStream_v2", lib.set_stream);
  resolve(handle, "cublasSetWorkspace_v2", lib.set_workspace);
  resolve(handle, "cublasGetStatusString", lib.status_string);
  resolve(handle, "cublasGemmStridedBatchedEx", lib.gemm_strided_batched_ex);
  return lib;
}

}  // namespace

const CublasLibrary& cublas_library() {
  static const CublasLibrary lib = load();
  return lib;
}

}  // namespace flashio::kernels
