// The standard path's layout rules (kernels/standard_attention.cu): how far apart the N × N
// matrices' rows are, how many threads the softmax gives a row, where the GEMMs split the keys.
// Constexpr and free of CUDA headers, so host-only code (launch_sequence.cpp, the tests) can
// use them; sim's catalog has the same rules (tests/kernels/test_catalog_resources.cpp compares).
#pragma once
#include <cstdint>

namespace flashio::kernels {

// Largest N the row kernels take (the softmax holds a row in its threads' registers).
constexpr int kStandardMaxSeqlen = 32768;

// Elements from one row of S, P, dP, dS to the next: N rounded up to a multiple of 64, so
// every row starts on a 128-byte line. With rows N elements apart, at N = 3000 (6,000-byte
// rows: a row's first and last 32-byte sectors shared with its neighbours) cuBLAS wrote S at
// half its rate (gemm_qk 0.69 ms against 0.35 at N = 1024's bytes per second, H200). Only the N
// columns of a row are read and written (the softmax's last 16-byte chunk stores zeros past N).
constexpr int64_t standard_row_stride(int64_t n) { return (n + 63) / 64 * 64; }

// Keys each cuBLAS GEMM runs over in its main call: N rounded down to a multiple of 8. The N × N
// operand of every GEMM has the keys as its contiguous dimension, and cuBLAS picks its Hopper
// kernels only when that dimension is a multiple of 8 elements; at N = 2999 it ran a Turing
// kernel loading one element at a time, 2-5× slower (experiments/results/h200_standard_kernels,
// "Which cuBLAS kernels"). The N mod 8 keys left run as a second, small GEMM (docs/kernels.md,
// "the GEMMs' key split"). sim's catalog has the same rule (sim::standard_gemm_main_keys).
constexpr int64_t standard_gemm_main_keys(int64_t n) { return n < 8 ? n : n / 8 * 8; }
// cuBLAS calls a GEMM makes: two when keys are left after the main call.
constexpr int standard_gemm_calls(int64_t n) { return standard_gemm_main_keys(n) < n ? 2 : 1; }

// 16-byte chunks of P and of dP each thread of softmax_bwd loads before it uses any (its block's
// 256 threads then have 32 KiB in flight). sim's catalog has the same figure
// (sim::kStandardSoftmaxBwdChunksInFlight; tests/kernels/test_catalog_resources.cpp compares).
constexpr int kSoftmaxBwdChunksInFlight = 4;

// The softmax's threads per row: 32 elements (kSoftmaxChunks 16-byte chunks) each, whole
// warps, 32 to 1,024 (N ≤ kStandardMaxSeqlen). sim's catalog has the same rule
// (sim::standard_softmax_threads; tests/kernels/test_catalog_resources.cpp compares them).
constexpr int kSoftmaxChunks = 4;
constexpr int standard_softmax_threads(int64_t n) {
  const int64_t threads = (n + 8 * kSoftmaxChunks - 1) / (8 * kSoftmaxChunks);
  return static_cast<int>(threads < 32 ? 32 : (threads + 31) / 32 * 32);
}
static_assert(standard_softmax_threads(kStandardMaxSeqlen) == 1024);

}  // namespace flashio::kernels
