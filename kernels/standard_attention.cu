// Standard attention (the paper's baseline, Section 2.2 and Algorithm 0; backward as in
// Appendix B.2), each step a kernel that reads its inputs from HBM and writes its N × N result
// back. Shapes per (b, h): Q, K, V, O, dO (N × d); S, P, dP, dS (N × N), all row-major.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "kernels/cublas_library.h"
#include "kernels/dropout_keep.h"
#include "kernels/launch.h"
#include "kernels/mma_tile.cuh"
#include "kernels/random.cuh"
#include "kernels/standard_attention.h"

namespace flashio::kernels {

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS error: ") + what + " failed at " + file + ":" +
                             std::to_string(line) + ": " + cublas_library().status_string(status));
  }
}

namespace {

constexpr int kRowThreads = 256;

template <typename T>
using E = tile::Elem<T>;

// A row's running (max, sum of 2^(y − max)) merged with another's, as Algorithm 1 lines 9–10
// merge a tile's statistics into the running ones (in base 2: y = x·log2 e). A part with no
// finite entry is (−inf, 0); 2^(−inf) = 0, and a max of −inf is taken as 0 in the exponent so
// that two empty parts stay empty instead of NaN.
__device__ __forceinline__ void merge_max_sum(float& m, float& l, float m2, float l2) {
  const float mx = fmaxf(m, m2);
  const float base = mx == -INFINITY ? 0.f : mx;
  l = l * tile::exp2_approx(m - base) + l2 * tile::exp2_approx(m2 - base);
  m = mx;
}

// A warp's (max, sum) from its lanes', by butterfly shuffles: every lane ends with the warp's.
__device__ __forceinline__ void warp_reduce_max_sum(float& m, float& l) {
  for (int off = 16; off > 0; off /= 2) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off), l2 = __shfl_xor_sync(0xffffffffu, l, off);
    merge_max_sum(m, l, m2, l2);
  }
}

// The block's (max, sum) from every thread's: each warp's by shuffles; with more than one warp,
// the warps' through shared memory, which every warp then reduces by shuffles again (so all
// threads hold the same figures).
__device__ void block_reduce_max_sum(float& m, float& l) {
  warp_reduce_max_sum(m, l);
  const int warps = blockDim.x / 32;
  if (warps == 1) return;
  __shared__ float warp_m[32], warp_l[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_m[warp] = m, warp_l[warp] = l;
  __syncthreads();
  m = lane < warps ? warp_m[lane] : -INFINITY;
  l = lane < warps ? warp_l[lane] : 0.f;
  warp_reduce_max_sum(m, l);
}

// Key-padding mask (the paper's benchmark masks padded keys): keys ≥ len_b get −inf, with
// len_b = N − ⌊b·N / (2B)⌋, so no mask tensor is read.
template <typename T>
__global__ void __launch_bounds__(kRowThreads) mask_kernel(T* s, int n, int64_t ld, int heads, int batch) {
  const int64_t row = blockIdx.x;
  const int b = static_cast<int>(row / (int64_t(n) * heads));
  const int len = n - static_cast<int>(int64_t(b) * n / (2 * batch));
  T* srow = s + row * ld;
  for (int c = threadIdx.x; c < n; c += kRowThreads) {
    const T x = srow[c];
    srow[c] = c < len ? x : E<T>::from_float(-INFINITY);
  }
}

// P = softmax(S) along the row (the scale is already in S); keys the query does not see get P = 0:
// the visible keys are query − left … query + right (causal: right = 0; no window: both N).
// One row per block, a pass over N² that memory bounds: standard_softmax_threads(N) threads
// (32 elements each, whole warps), each loading its kSoftmaxChunks 16-byte chunks at once (the
// whole row in flight), keeping them in registers, reducing its (max, sum) and then the block's
// once, and writing P in 16-byte chunks. A first version with 256 threads per row at any N was
// bound by instruction issue at N = 1024 (ncu on the H200: 92 % issue, 2.17 ms for B=32 H=16),
// its per-row reductions outweighing the row's 4 elements a thread; so was the one before it
// (three passes through shared memory, 1.24 ms). Rows start every ld elements (a multiple of 8,
// so chunks are aligned); a chunk at or past N is neither loaded nor stored, and the columns of
// the last chunk past N are written as 0.
template <typename T>
__global__ void __launch_bounds__(1024, 1) softmax_kernel(const T* s, T* p, int n, int64_t ld, int left, int right) {
  constexpr int kPer = 8;  // elements per 16-byte chunk
  const int64_t row = blockIdx.x;
  const int query = static_cast<int>(static_cast<uint32_t>(blockIdx.x) % static_cast<uint32_t>(n));
  const int first = query - left, last = query + right;  // keys first … last take part
  const T* srow = s + row * ld;
  const int stride = blockDim.x * kPer;
  uint4 chunk[kSoftmaxChunks];
#pragma unroll
  for (int k = 0; k < kSoftmaxChunks; ++k) {
    const int c0 = k * stride + int(threadIdx.x) * kPer;
    chunk[k] = c0 < n ? *reinterpret_cast<const uint4*>(srow + c0) : make_uint4(0u, 0u, 0u, 0u);
  }
  // Base 2 (y = x·log2 e) and no branches: keys outside first … last are −inf, whose 2^(y − m) is 0.
  float y[kSoftmaxChunks][kPer];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kSoftmaxChunks; ++k) {
    const int c0 = k * stride + int(threadIdx.x) * kPer;
    const T* x = reinterpret_cast<const T*>(&chunk[k]);
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      y[k][e] = c0 + e >= first && c0 + e <= last && c0 + e < n ? E<T>::to_float(x[e]) * tile::kLog2e : -INFINITY;
      m = fmaxf(m, y[k][e]);
    }
  }
  const float base = m == -INFINITY ? 0.f : m;
  float l = 0.f;
#pragma unroll
  for (int k = 0; k < kSoftmaxChunks; ++k)
#pragma unroll
    for (int e = 0; e < kPer; ++e) l += tile::exp2_approx(y[k][e] - base);
  block_reduce_max_sum(m, l);
  const float inv = 1.f / l;
  T* prow = p + row * ld;
#pragma unroll
  for (int k = 0; k < kSoftmaxChunks; ++k) {
    const int c0 = k * stride + int(threadIdx.x) * kPer;
    if (c0 >= n) continue;
    uint4 out;
    uint32_t* packed = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
    for (int e = 0; e < kPer; e += 2)
      packed[e / 2] = E<T>::pack(tile::exp2_approx(y[k][e] - m) * inv, tile::exp2_approx(y[k][e + 1] - m) * inv);
    *reinterpret_cast<uint4*>(prow + c0) = out;
  }
}

// Dropout keeps element c of row `row` (query row % Nq of head row / Nq) by the rule every kernel
// and the model share (kernels/dropout_keep.h), and scales what it keeps by 1 / (1 − p); the
// backward regenerates the same decisions instead of storing a mask.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    dropout_kernel(const T* in, T* out, int n, int64_t ld, int nq, uint32_t threshold, float keep_scale, uint64_t seed) {
  const int64_t row = blockIdx.x;
  const uint32_t row_key = dropout::row_key(seed, row / nq, row % nq);
  for (int c = threadIdx.x; c < n; c += kRowThreads) {
    const float x = E<T>::to_float(in[row * ld + c]);
    out[row * ld + c] = E<T>::from_float(dropout::keeps(dropout::pair_draw(row_key, c), c, threshold) ? x * keep_scale : 0.f);
  }
}

// delta = rowsum(dO ∘ O) for 128 rows per block. The block's rows of O (and of dO) are one
// contiguous span of rows·d elements, so consecutive threads read consecutive 16-byte chunks of
// it and every sector fetched is used whole. (A first version gave each thread a row and read
// it 16 B at a time: the 32 threads of a warp touched 32 sectors for 16 B each, and the H200
// measured io 1.5× and dram 2× the two tensors, against the model's once.)
template <typename T>
__global__ void __launch_bounds__(128) rowsum_do_o_kernel(const T* dout, const T* o, float* delta, int n, int d,
                                                          int stats_stride) {
  __shared__ float row_sum[128];
  row_sum[threadIdx.x] = 0.f;
  __syncthreads();
  const int64_t bh = blockIdx.y;
  const int row0 = blockIdx.x * 128;
  const int rows = min(128, n - row0);
  const int chunks_per_row = d / 8;  // d is a multiple of 8: 16-byte chunks
  const int64_t base = (bh * n + row0) * d;
  for (int k = threadIdx.x; k < rows * chunks_per_row; k += 128) {
    const uint4 ov = *reinterpret_cast<const uint4*>(o + base + int64_t(k) * 8);
    const uint4 dv = *reinterpret_cast<const uint4*>(dout + base + int64_t(k) * 8);
    const T* oe = reinterpret_cast<const T*>(&ov);
    const T* de = reinterpret_cast<const T*>(&dv);
    float partial = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) partial += E<T>::to_float(oe[e]) * E<T>::to_float(de[e]);
    atomicAdd(&row_sum[k / chunks_per_row], partial);
  }
  __syncthreads();
  if (threadIdx.x < rows) delta[bh * stats_stride + row0 + threadIdx.x] = row_sum[threadIdx.x];
}

// dS = P ∘ (dP − delta) (Appendix B.2, eq. for dS), written over S. The row in 16-byte chunks,
// kSoftmaxBwdChunksInFlight of them of P and of dP loaded per thread before any is used, so a
// block has 2 × 256 × 16 × 4 = 32 KiB in flight (a DRAM-bound pass needs that many bytes
// waiting: the scalar loop before it, one element of each input at a time, moved 2.5 TB/s at
// B=6 H=12 N=3000 on the H200; docs/kernels.md). Rows start every ld elements (a multiple of 64,
// so chunks are aligned); the last chunk's columns past N lie in the row's padding: they are
// read and written (dS there is never read: the GEMMs stop at N).
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    softmax_bwd_kernel(const T* p, const T* dp, const float* delta, T* ds, int n, int64_t ld, int stats_stride) {
  constexpr int kPer = 8;  // elements per 16-byte chunk
  static_assert(sizeof(T) * kPer == 16, "softmax_bwd's chunks are 16 bytes of a 2-byte type");
  constexpr int kU = kSoftmaxBwdChunksInFlight;
  const int64_t row = blockIdx.x;
  const int64_t bh = row / n;
  const float d = delta[bh * stats_stride + row % n];
  const uint4* prow = reinterpret_cast<const uint4*>(p + row * ld);
  const uint4* dprow = reinterpret_cast<const uint4*>(dp + row * ld);
  uint4* dsrow = reinterpret_cast<uint4*>(ds + row * ld);
  const int chunks = (n + kPer - 1) / kPer;
  for (int c0 = threadIdx.x; c0 < chunks; c0 += kRowThreads * kU) {
    uint4 pc[kU], dpc[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int c = c0 + u * kRowThreads;
      if (c < chunks) pc[u] = prow[c], dpc[u] = dprow[c];
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int c = c0 + u * kRowThreads;
      if (c >= chunks) continue;
      const T* pv = reinterpret_cast<const T*>(&pc[u]);
      const T* dpv = reinterpret_cast<const T*>(&dpc[u]);
      uint4 out;
      T* o = reinterpret_cast<T*>(&out);
#pragma unroll
      for (int e = 0; e < kPer; ++e) o[e] = E<T>::from_float(E<T>::to_float(pv[e]) * (E<T>::to_float(dpv[e]) - d));
      dsrow[c] = out;
    }
  }
}

template <typename T>
void softmax_launch(const StandardParams& p, int64_t rows, cudaStream_t stream) {
  const int n = p.seqlen;
  softmax_kernel<T><<<rows, standard_softmax_threads(n), 0, stream>>>(static_cast<const T*>(p.s), static_cast<T*>(p.p),
                                                                     n, standard_row_stride(n), p.window_left < 0 ? n : p.window_left,
                                                                     p.causal ? 0 : p.window_right < 0 ? n : p.window_right);
  FLASHIO_LAUNCH_CHECK("softmax");
}

cudaDataType_t cuda_type(DType dtype) { return dtype == DType::fp16 ? CUDA_R_16F : CUDA_R_16BF; }

// Row-major X (r × c) is column-major Xᵀ, so each product is written for cuBLAS transposed:
// C_rowmajor = A B  ⇔  Cᵀ = Bᵀ Aᵀ in column-major terms.
struct Gemm {
  cublasOperation_t ta, tb;
  int m, n, k;
  float alpha;
  const void* a;
  int lda;
  int64_t stride_a;
  const void* b;
  int ldb;
  int64_t stride_b;
  void* c;
  int ldc;
  int64_t stride_c;
};

void run_gemm(cublasHandle_t h, const StandardParams& p, const Gemm& g, float beta) {
  const cudaDataType_t t = cuda_type(p.dtype);
  FLASHIO_CUBLAS_CHECK(cublas_library().gemm_strided_batched_ex(
      h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, t, g.lda, g.stride_a, g.b, t, g.ldb, g.stride_b, &beta, g.c, t, g.ldc,
      g.stride_c, p.batch * p.heads, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Which of the cuBLAS dimensions is the keys': m (gemm_qk, gemm_dp: C's rows, A's columns),
// k (gemm_pv, gemm_dq: the inner one, B's rows and A's columns) or n (gemm_dv, gemm_dk: C's
// columns, B's rows). The keys from standard_gemm_main_keys(N) on run as a second GEMM on
// pointers moved to that key, a multiple of 8, so every moved pointer stays 16-byte aligned.
// Over k the second GEMM adds to the first's C (beta = 1).
enum class KeysIn { m, k, n };

template <typename V>  // V: void or const void
V* at_key(V* x, int64_t elements, DType dtype) {
  using Byte = std::conditional_t<std::is_const_v<V>, const char, char>;
  const int64_t bytes = dtype == DType::fp16 ? sizeof(__half) : sizeof(__nv_bfloat16);
  return static_cast<Byte*>(x) + elements * bytes;
}

void gemm(cublasHandle_t h, const StandardParams& p, KeysIn keys, Gemm g) {
  const int n = p.seqlen;
  const int main_keys = static_cast<int>(standard_gemm_main_keys(n));
  if (main_keys == n) {
    run_gemm(h, p, g, 0.f);
    return;
  }
  Gemm tail = g;
  switch (keys) {
    case KeysIn::m:
      g.m = main_keys;
      tail.m = n - main_keys;
      tail.a = at_key(g.a, int64_t(main_keys) * g.lda, p.dtype);  // op(A) = Aᵀ: A's columns are keys
      tail.c = at_key(g.c, main_keys, p.dtype);
      break;
    case KeysIn::k:
      g.k = main_keys;
      tail.k = n - main_keys;
      tail.a = at_key(g.a, int64_t(main_keys) * g.lda, p.dtype);
      tail.b = at_key(g.b, main_keys, p.dtype);
      break;
    case KeysIn::n:
      g.n = main_keys;
      tail.n = n - main_keys;
      tail.b = at_key(g.b, main_keys, p.dtype);  // op(B) = Bᵀ: B's rows are keys
      tail.c = at_key(g.c, int64_t(main_keys) * g.ldc, p.dtype);
      break;
  }
  run_gemm(h, p, g, 0.f);
  run_gemm(h, p, tail, keys == KeysIn::k ? 1.f : 0.f);
}

// cublasSetStream resets the handle's workspace to cuBLAS's own pool (cuBLAS documentation,
// cublasSetStream), so the workspace is set again after every stream change: without it cuBLAS
// allocates inside a captured pass (a memory-allocation graph node).
void bind_stream(cublasHandle_t h, const StandardParams& p, cudaStream_t stream) {
  FLASHIO_CUBLAS_CHECK(cublas_library().set_stream(h, stream));
  if (p.cublas_workspace) FLASHIO_CUBLAS_CHECK(cublas_library().set_workspace(h, p.cublas_workspace, p.cublas_workspace_bytes));
}

template <typename T>
void standard_fwd(const StandardParams& p, cublasHandle_t h, cudaStream_t stream, std::vector<Launch>* names) {
  const int n = p.seqlen, d = p.headdim;
  const int64_t nd = int64_t(n) * d, ld = standard_row_stride(n), nn = int64_t(n) * ld;
  const int64_t rows = int64_t(p.batch) * p.heads * n;
  bind_stream(h, p, stream);
  // gemm_qk: S = scale · Q Kᵀ  ⇔  Sᵀ = scale · K Qᵀ (col-major: op(A) = (Kᵀ)ᵀ, B = Qᵀ).
  gemm(h, p, KeysIn::m, {CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, p.scale, p.k, d, nd, p.q, d, nd, p.s, int(ld), nn});
  names->push_back(Launch::gemm_qk);
  if (p.mask) {
    mask_kernel<T><<<rows, kRowThreads, 0, stream>>>(static_cast<T*>(p.s), n, ld, p.heads, p.batch);
    FLASHIO_LAUNCH_CHECK("mask");
    names->push_back(Launch::mask);
  }
  softmax_launch<T>(p, rows, stream);
  names->push_back(Launch::softmax);
  const void* probs = p.p;
  if (p.dropout > 0.0) {
    dropout_kernel<T><<<rows, kRowThreads, 0, stream>>>(static_cast<const T*>(p.p), static_cast<T*>(p.p_drop), n, ld,
                                                        p.seqlen, dropout::threshold_of(p.dropout),
                                                        float(dropout::keep_scale(p.dropout)), p.dropout_seed);
    FLASHIO_LAUNCH_CHECK("dropout");
    names->push_back(Launch::dropout);
    probs = p.p_drop;
  }
  // gemm_pv: O = P V  ⇔  Oᵀ = Vᵀ Pᵀ.
  gemm(h, p, KeysIn::k, {CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, 1.f, p.v, d, nd, probs, int(ld), nn, p.o, d, nd});
  names->push_back(Launch::gemm_pv);
}

template <typename T>
void standard_bwd(const StandardParams& p, cublasHandle_t h, cudaStream_t stream, std::vector<Launch>* names) {
  const int n = p.seqlen, d = p.headdim;
  const int64_t nd = int64_t(n) * d, ld = standard_row_stride(n), nn = int64_t(n) * ld;
  const int64_t rows = int64_t(p.batch) * p.heads * n;
  bind_stream(h, p, stream);
  const void* probs = p.dropout > 0.0 ? p.p_drop : p.p;
  // gemm_dv: dV = Pᵀ dO  ⇔  dVᵀ = dOᵀ P.
  gemm(h, p, KeysIn::n, {CUBLAS_OP_N, CUBLAS_OP_T, d, n, n, 1.f, p.dout, d, nd, probs, int(ld), nn, p.dv, d, nd});
  names->push_back(Launch::gemm_dv);
  // gemm_dp: dP = dO Vᵀ  ⇔  dPᵀ = V dOᵀ.
  gemm(h, p, KeysIn::m, {CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, 1.f, p.v, d, nd, p.dout, d, nd, p.dp, int(ld), nn});
  names->push_back(Launch::gemm_dp);
  if (p.dropout > 0.0) {
    dropout_kernel<T><<<rows, kRowThreads, 0, stream>>>(static_cast<const T*>(p.dp), static_cast<T*>(p.dp), n, ld,
                                                        p.seqlen, dropout::threshold_of(p.dropout),
                                                        float(dropout::keep_scale(p.dropout)), p.dropout_seed);
    FLASHIO_LAUNCH_CHECK("dropout_bwd");
    names->push_back(Launch::dropout_bwd);
  }
  rowsum_do_o_kernel<T><<<dim3((n + 127) / 128, p.batch * p.heads), 128, 0, stream>>>(
      static_cast<const T*>(p.dout), static_cast<const T*>(p.o), p.delta, n, d, p.stats_stride);
  FLASHIO_LAUNCH_CHECK("rowsum_do_o");
  names->push_back(Launch::rowsum_do_o);
  softmax_bwd_kernel<T><<<rows, kRowThreads, 0, stream>>>(static_cast<const T*>(p.p), static_cast<const T*>(p.dp),
                                                          p.delta, static_cast<T*>(p.s), n, ld, p.stats_stride);
  FLASHIO_LAUNCH_CHECK("softmax_bwd");
  names->push_back(Launch::softmax_bwd);
  // gemm_dq: dQ = scale · dS K  ⇔  dQᵀ = scale · Kᵀ dSᵀ.
  gemm(h, p, KeysIn::k, {CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, p.scale, p.k, d, nd, p.s, int(ld), nn, p.dq, d, nd});
  names->push_back(Launch::gemm_dq);
  // gemm_dk: dK = scale · dSᵀ Q  ⇔  dKᵀ = scale · Qᵀ dS.
  gemm(h, p, KeysIn::n, {CUBLAS_OP_N, CUBLAS_OP_T, d, n, n, p.scale, p.q, d, nd, p.s, int(ld), nn, p.dk, d, nd});
  names->push_back(Launch::gemm_dk);
}

}  // namespace

void enqueue_standard_fwd(const StandardParams& p, cublasHandle_t cublas, cudaStream_t stream,
                          std::vector<Launch>* names) {
  if (p.dtype == DType::fp16) standard_fwd<__half>(p, cublas, stream, names);
  else standard_fwd<__nv_bfloat16>(p, cublas, stream, names);
}

void enqueue_standard_bwd(const StandardParams& p, cublasHandle_t cublas, cudaStream_t stream,
                          std::vector<Launch>* names) {
  if (p.dtype == DType::fp16) standard_bwd<__half>(p, cublas, stream, names);
  else standard_bwd<__nv_bfloat16>(p, cublas, stream, names);
}

}  // namespace flashio::kernels
