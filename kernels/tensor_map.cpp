// Tensor maps (kernels/tensor_map.h): the driver's encoder, found once through the runtime.
#include "kernels/tensor_map.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace flashio::kernels {

static_assert(sizeof(tma::Map) == sizeof(CUtensorMap) && alignof(tma::Map) >= 64, "a tensor map is 128 bytes");

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult status{};
    const cudaError_t rc =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &found, 12000, cudaEnableDefault, &status);
    if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess || found == nullptr)
      throw std::runtime_error(std::string("CUDA error: the driver's cuTensorMapEncodeTiled was not found (") +
                               cudaGetErrorString(rc) + "); TMA kernels need a driver of CUDA 12.0 or later");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(found);
  }();
  return fn;
}

}  // namespace

namespace {
// heads matrices of rows × cols elements of element_bytes each, in boxes of box_cols × box_rows
// × 1 swizzled by 128 bytes (box_cols · element_bytes = 128).
tma::Map encode(CUtensorMapDataType type, int64_t element_bytes, const void* base, int64_t heads, int64_t rows,
                int64_t cols, int box_cols, int box_rows) {
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(heads)};
  const cuuint64_t strides[2] = {cuuint64_t(cols * element_bytes), cuuint64_t(rows * cols * element_bytes)};  // bytes, dims 1 and 2
  const cuuint32_t box[3] = {cuuint32_t(box_cols), cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map;
  const CUresult rc = encoder()(&map, type, 3, const_cast<void*>(base), dims, strides, box, element_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS)
    throw std::runtime_error("CUDA error: cuTensorMapEncodeTiled failed (" + std::to_string(int(rc)) + ") for " +
                             std::to_string(heads) + " x " + std::to_string(rows) + " x " + std::to_string(cols) +
                             ", box rows " + std::to_string(box_rows));
  tma::Map out;
  std::memcpy(&out, &map, sizeof map);
  return out;
}
}  // namespace

tma::Map make_tensor_map(const void* base, DType dtype, int64_t heads, int64_t rows, int64_t cols, int box_rows) {
  return encode(dtype == DType::fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base,
                heads, rows, cols, 64, box_rows);
}

tma::Map make_fp32_tensor_map(const float* base, int64_t heads, int64_t rows, int64_t cols, int box_rows) {
  return encode(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, base, heads, rows, cols, 32, box_rows);
}

}  // namespace flashio::kernels
