// Tensor maps for TMA copies (kernels/tma.cuh), made on the host by the driver's
// cuTensorMapEncodeTiled, which is reached through the runtime's driver entry point so that
// flashio does not link libcuda itself.
#pragma once
#include <cstdint>

#include "kernels/attention.h"

namespace flashio::kernels {

namespace tma {
// The three-dimensional tensor maps the forward reads and writes (Q, K, V, O), passed by value
// as a __grid_constant__ kernel parameter (a tensor map must live in parameter, constant or
// global memory, 64-byte aligned). The 128 bytes are a CUtensorMap's (cuda.h), kept opaque here
// so that including this header needs no driver header.
struct alignas(64) Map {
  uint64_t opaque[16];
};
struct ForwardMaps {
  Map q, k, v, o;
};
}  // namespace tma

// A map of `heads` matrices of `rows` × `cols` 16-bit elements (row-major, contiguous, matrix
// after matrix), copied in boxes of 64 columns (128 bytes: the 128-byte swizzle's width) ×
// box_rows rows × one matrix, swizzled into wgmma's 128-byte atoms; rows and columns outside the
// matrix read as zeros and are not written. cols a multiple of 64, box_rows ≤ 256.
// Throws std::runtime_error naming the failing call.
tma::Map make_tensor_map(const void* base, DType dtype, int64_t heads, int64_t rows, int64_t cols, int box_rows);
// The same for fp32 matrices, in boxes of 32 columns (128 bytes) × box_rows: the backward's
// dq_accum, which TMA reduce-adds into. cols a multiple of 32.
tma::Map make_fp32_tensor_map(const float* base, int64_t heads, int64_t rows, int64_t cols, int box_rows);

}  // namespace flashio::kernels
