// cuBLAS, loaded when standard attention first runs on the GPU instead of when flashio starts.
// Linked in, libcublasLt's start-up cost every command about 0.08 s and 210 MB of resident
// memory on the development machine (a program that only links it and prints a line: 0.08 s,
// 218 MB; without: 0.00 s, 1 MB), which the model's commands (simulate, bound, tune, the
// L2 model's replays) never use. docs/kernels.md, "cuBLAS".
#pragma once
#include <cublas_v2.h>

namespace flashio::kernels {

// The cuBLAS entry points standard attention calls, resolved from libcublas.so.13.
struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                  int, const void*, const void*, cudaDataType, int, long long int,
                                                  const void*, cudaDataType, int, long long int, const void*, void*,
                                                  cudaDataType, int, long long int, int, cublasComputeType_t,
                                                  cublasGemmAlgo_t);
  GemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
};
// The header's declaration has this type (the header also has a C++ overload of the name, so
// decltype cannot name it; the cast picks the declaration and fails to compile if it differs).
static_assert(sizeof(static_cast<CublasLibrary::GemmStridedBatchedEx>(&cublasGemmStridedBatchedEx)) > 0);

// Loaded once, on first use (thread-safe). Throws std::runtime_error naming the library and
// the symbol when libcublas cannot be loaded (its directory must be on the loader's path, as
// LD_LIBRARY_PATH in docs/kernels.md).
const CublasLibrary& cublas_library();

}  // namespace flashio::kernels
