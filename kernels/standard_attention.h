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
#include "kernels/standard_layout.h"

namespace flashio::kernels {

struct StandardParams {
  int batch = 0, heads = 0, seqlen = 0, headdim = 0;
  DType dtype = DType::fp16;
  bool causal = false;
  int window_left = -1, window_right = -1;  // a sliding window's sides (AttentionConfig); −1: none
  bool mask = false;
  double dropout = 0.0;  // p: the rule rounds it to a multiple of 2^-16 (kernels/dropout_keep.h)
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

// Launch the kernels of each pass in docs/schedules.md's order; each launch is appended to `launched`.
void enqueue_standard_fwd(const StandardParams& p, cublasHandle_t cublas, cudaStream_t stream,
                          std::vector<Launch>* launched);
void enqueue_standard_bwd(const StandardParams& p, cublasHandle_t cublas, cudaStream_t stream,
                          std::vector<Launch>* launched);

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line);
#define FLASHIO_CUBLAS_CHECK(call) ::flashio::kernels::check_cublas((call), #call, __FILE__, __LINE__)

}  // namespace flashio::kernels
