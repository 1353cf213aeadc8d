// Internal to flashio_kernels: the paper's standard attention (its baseline), each step its own
// kernel with every N × N result materialised in HBM (docs/schedules.md, "standard").
// GEMMs run in cuBLAS (strided-batched, 16-bit inputs and outputs, fp32 accumulation); the
// row kernels are ours, one block per row of S (rowsum_do_o: one block per 128 rows).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention.h"

namespace flashio::kernels {

struct StandardParams {
  int batch = 0, heads = 0, seqlen = 0, headdim = 0;
  DType dtype = DType::fp16;
  bool causal = false;
  bool mask = false;
  float dropout = 0.f;
  uint64_t dropout_seed = 0;
  float scale = 0.f;
  int stats_stride = 0;  // floats per (b, h) in delta
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* dout = nullptr;
  void* o = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // The N × N matrices, rows standard_row_stride(N) elements apart.
  void* s = nullptr;       // S, and dS in the backward (S is dead by then)
  void* p = nullptr;       // P
  void* p_drop = nullptr;  // P after dropout (only with dropout > 0)
  void* dp = nullptr;      // dP
  float* delta = nullptr;  // rowsum(dO ∘ O)
  // cuBLAS's workspace, ours: with it cuBLAS allocates nothing while a pass runs, so the profiler
  // can capture a pass into a graph and replay its kernels one at a time.
  void* cublas_workspace = nullptr;
  size_t cublas_workspace_bytes = 0;
};

// Largest N the row kernels take (the softmax holds a row in its threads' registers).
constexpr int kStandardMaxSeqlen = 32768;

// Elements from one row of S, P, dP, dS to the next: N rounded up to a multiple of 64, so
// every row starts on a 128-byte line. With rows N elements apart, at N = 3000 (6,000-byte
// rows: a row's first and last 32-byte sectors shared with its neighbours) cuBLAS wrote S at
// half its rate (gemm_qk 0.69 ms against 0.35 at N = 1024's bytes per second, H200). Only the N
// columns of a row are read and written (the softmax's last 16-byte chunk stores zeros past N).
constexpr int64_t standard_row_stride(int64_t n) { return (n + 63) / 64 * 64; }

// The softmax's threads per row: 32 elements (kSoftmaxChunks 16-byte chunks) each, whole
// warps, 32 to 1,024 (N ≤ kStandardMaxSeqlen). sim's catalog has the same rule
// (sim::standard_softmax_threads; tests/kernels/test_catalog_resources.cpp compares them).
constexpr int kSoftmaxChunks = 4;
constexpr int standard_softmax_threads(int64_t n) {
  const int64_t threads = (n + 8 * kSoftmaxChunks - 1) / (8 * kSoftmaxChunks);
  return static_cast<int>(threads < 32 ? 32 : (threads + 31) / 32 * 32);
}
static_assert(standard_softmax_threads(kStandardMaxSeqlen) == 1024);

// Launch the kernels of each pass in docs/schedules.md's order; each launch is appended to `launched`.
void enqueue_standard_fwd(const StandardParams& p, cublasHandle_t cublas, cudaStream_t stream,
                          std::vector<Launch>* launched);
void enqueue_standard_bwd(const StandardParams& p, cublasHandle_t cublas, cudaStream_t stream,
                          std::vector<Launch>* launched);

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line);
#define FLASHIO_CUBLAS_CHECK(call) ::flashio::kernels::check_cublas((call), #call, __FILE__, __LINE__)

}  // namespace flashio::kernels
