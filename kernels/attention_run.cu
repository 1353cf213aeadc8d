// AttentionRun: the device buffers of one configuration, random inputs, poisoned outputs, and
// the launch of each pass's kernels in docs/schedules.md's order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/attention.h"
#include "kernels/cublas_library.h"
#include "kernels/dropout_keep.h"
#include "kernels/launch.h"
#include "kernels/mma_tile.cuh"
#include "kernels/random.cuh"
#include "kernels/standard_attention.h"
#include "sim/paged_kv.h"

namespace flashio::kernels {

namespace {

// cuBLAS's workspace, ours so that cuBLAS allocates nothing inside a pass (a captured pass
// cannot replay an allocation). 32 MiB is cuBLAS's recommendation for Hopper; 256 MiB was chosen
// while the capture still failed, before the cause turned out to be cublasSetStream dropping the
// workspace (standard_attention.cu, bind_stream); a smaller size was not measured since.
constexpr size_t kCublasWorkspaceBytes = size_t(256) << 20;

// One cudaMalloc'd allocation, freed on destruction.
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  // A configuration too large for the GPU's memory is bad input, not a failure: one line naming
  // what was asked and what is free (std::invalid_argument, as every unsupported configuration).
  void allocate(size_t n) {
    bytes = n;
    if (n == 0) return;
    const cudaError_t e = cudaMalloc(&ptr, n);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the error so later calls do not see it
      size_t free_bytes = 0, total_bytes = 0;
      (void)cudaMemGetInfo(&free_bytes, &total_bytes);
      throw std::invalid_argument("device memory: the configuration needs a buffer of " + std::to_string(n) +
                                  " B and the GPU has " + std::to_string(free_bytes) + " B free of " +
                                  std::to_string(total_bytes) + " (fewer --batch, --heads or a shorter --seqlen)");
    }
    FLASHIO_CUDA_CHECK(e);
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);  // no throw from a destructor
  }
  float* f32() const { return static_cast<float*>(ptr); }
};

template <typename T>
__global__ void fill_normal_kernel(T* out, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = tile::Elem<T>::from_float(random::normal(seed, static_cast<uint64_t>(i)));
}

template <typename T>
__global__ void widen_kernel(const T* in, float* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = tile::Elem<T>::to_float(in[i]);
}

// Logical (B, Hkv, Nk, d) → the pages (pages, Hkv, P, d) through the block table (sim/paged_kv.h).
template <typename T>
__global__ void scatter_pages_kernel(const T* logical, T* pages, const int* table, int kv_heads, int keys, int d,
                                     int page_size, int pages_per_seq, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int c = int(i % d);
    const int key = int(i / d % keys);
    const int64_t bkv = i / (int64_t(d) * keys);
    const int b = int(bkv / kv_heads), kvh = int(bkv % kv_heads);
    const int64_t page = table[int64_t(b) * pages_per_seq + key / page_size];
    pages[((page * kv_heads + kvh) * page_size + key % page_size) * d + c] = logical[i];
  }
}

void fail(const std::string& message) { throw std::invalid_argument(message); }

int round_up(int x, int m) { return (x + m - 1) / m * m; }

}  // namespace

struct AttentionRun::State {
  AttentionConfig config;
  const FlashImpl* fwd = nullptr;
  const FlashImpl* bwd = nullptr;
  int stats_stride = 0;
  int64_t elements = 0;     // B·H·Nq·d: Q, O, dO, dQ (packed: H·T·d, T = Σ n_b)
  int64_t kv_elements = 0;  // B·Hkv·Nk·d: K, V, dK, dV (packed: Hkv·T·d)
  int64_t stats = 0;        // fp32 per query row: B·H·stats_stride (packed: H·T, no padding)
  int longest = 0;          // packed: the longest sequence, the grids' bound
  DeviceBuffer q, k, v, dout, o, dq, dk, dv;
  DeviceBuffer lse, row_sum, row_max, delta, o_accum, dq_accum;  // fp32
  DeviceBuffer lse_accum;  // fp32, flash2 with splits > 1 (o_accum then holds the splits' O)
  DeviceBuffer k_pages, v_pages, block_table;  // a paged KV cache (config.page_size > 0)
  DeviceBuffer seqlens_k;                      // int32, per-sequence key lengths (config.key_lengths)
  DeviceBuffer cu_seqlens;                     // int32, B + 1 cumulative lengths (config.varlen)
  // Block-sparse (config.block_mask): each pass's visited tiles (kernels/block_sparse_tiles.h),
  // int32 offsets then tiles in one allocation per pass.
  DeviceBuffer fwd_tile_lists, bwd_tile_lists;
  int64_t fwd_outer_tiles = 0, bwd_outer_tiles = 0;
  sim::PageTable pages;
  DeviceBuffer s, p, p_drop, dp;                                 // standard's N × N matrices
  DeviceBuffer cublas_workspace;  // given to cuBLAS so it allocates nothing while a pass runs
  cublasHandle_t cublas = nullptr;
  uint64_t seed = 0;
  bool inputs_filled = false, forward_done = false, backward_done = false;
  std::string bwd_missing;  // why there is no backward kernel for this configuration

  FlashParams flash_params() const {
    FlashParams p;
    p.batch = static_cast<int>(config.batch);
    p.heads = static_cast<int>(config.heads);
    p.seqlen = static_cast<int>(config.seqlen);
    p.kv_heads = static_cast<int>(kv_heads_of(config));
    p.seqlen_k = static_cast<int>(keys_of(config));
    p.causal_offset = p.seqlen_k - p.seqlen;
    p.group_rows = config.gqa_pack;
    p.stats_stride = stats_stride;
    p.causal = config.causal;
    // A window's right side is causal's test shifted by R; its left side the window instances'.
    if (config.window_right >= 0) {
      p.causal = true;
      p.causal_offset += static_cast<int>(config.window_right);
    }
    if (config.window_left >= 0) {
      p.window_left = true;
      p.window_lo = static_cast<int>(p.seqlen_k - p.seqlen - config.window_left);
    }
    p.scale = 1.f / std::sqrt(static_cast<float>(config.headdim));
    p.q = q.ptr, p.k = k.ptr, p.v = v.ptr, p.o = o.ptr;
    p.lse = lse.f32(), p.row_sum = row_sum.f32(), p.row_max = row_max.f32(), p.o_accum = o_accum.f32();
    p.splits = static_cast<int>(config.splits), p.lse_accum = lse_accum.f32();
    if (config.page_size > 0) {
      p.k = k_pages.ptr, p.v = v_pages.ptr;
      p.block_table = static_cast<const int*>(block_table.ptr);
      p.page_size = static_cast<int>(pages.page_size), p.pages_per_seq = static_cast<int>(pages.pages_per_sequence);
    }
    if (!config.key_lengths.empty()) p.seqlens_k = static_cast<const int*>(seqlens_k.ptr);
    if (config.varlen) {  // packed sequences (FlashParams::cu_seqlens): the grids span the longest
      p.cu_seqlens = static_cast<const int*>(cu_seqlens.ptr);
      p.seqlen = p.seqlen_k = longest;
      p.causal_offset = 0;
    }
    p.dout = dout.ptr, p.delta = delta.f32(), p.dq_accum = dq_accum.f32();
    p.dq = dq.ptr, p.dk = dk.ptr, p.dv = dv.ptr;
    if (fwd_tile_lists.ptr) {
      p.fwd_tile_offsets = static_cast<const int*>(fwd_tile_lists.ptr);
      p.fwd_tiles = p.fwd_tile_offsets + fwd_outer_tiles + 1;
    }
    if (bwd_tile_lists.ptr) {
      p.bwd_tile_offsets = static_cast<const int*>(bwd_tile_lists.ptr);
      p.bwd_tiles = p.bwd_tile_offsets + bwd_outer_tiles + 1;
    }
    if (config.dropout > 0.0) {  // fused dropout (kernels/dropout_keep.h)
      p.dropout_threshold = dropout::threshold_of(config.dropout);
      p.dropout_seed = dropout_seed();
      p.dropout_scale = static_cast<float>(dropout::keep_scale(config.dropout));
    }
    return p;
  }
  // The seed of dropout's decisions (AttentionRun::dropout_seed), from fill_inputs' seed.
  uint64_t dropout_seed() const { return random::mix64(seed ^ 0xd509u); }
  StandardParams standard_params() const {
    StandardParams p;
    p.batch = static_cast<int>(config.batch);
    p.heads = static_cast<int>(config.heads);
    p.seqlen = static_cast<int>(config.seqlen);
    p.headdim = static_cast<int>(config.headdim);
    p.dtype = config.dtype;
    p.causal = config.causal;
    p.window_left = static_cast<int>(config.window_left);
    p.window_right = static_cast<int>(config.window_right);
    p.mask = config.mask;
    p.dropout = config.dropout;
    p.dropout_seed = dropout_seed();
    p.scale = 1.f / std::sqrt(static_cast<float>(config.headdim));
    p.stats_stride = stats_stride;
    p.q = q.ptr, p.k = k.ptr, p.v = v.ptr, p.dout = dout.ptr, p.o = o.ptr;
    p.dq = dq.ptr, p.dk = dk.ptr, p.dv = dv.ptr;
    p.s = s.ptr, p.p = this->p.ptr, p.p_drop = p_drop.ptr, p.dp = dp.ptr, p.delta = delta.f32();
    p.cublas_workspace = cublas_workspace.ptr;
    p.cublas_workspace_bytes = cublas_workspace.bytes;
    return p;
  }
};

AttentionRun::AttentionRun(const AttentionConfig& config) : state_(new State) {
  try {
    State& st = *state_;
    st.config = config;
    const AttentionConfig& c = st.config;
    if (c.batch < 1 || c.batch > 65535) fail("batch: must be 1..65535 (got " + std::to_string(c.batch) + ")");
    if (c.heads < 1 || c.heads > 65535) fail("heads: must be 1..65535 (got " + std::to_string(c.heads) + ")");
    if (c.seqlen < 1 || c.seqlen > (1 << 24))
      fail("seqlen: must be 1..16777216 (got " + std::to_string(c.seqlen) + ")");
    if (c.dropout < 0.0 || c.dropout >= 1.0) fail("dropout: must be in [0, 1) (got " + std::to_string(c.dropout) + ")");
    const int64_t hkv = kv_heads_of(c), nk = keys_of(c);
    if (hkv < 1 || c.heads % hkv != 0)
      fail("kv_heads: must divide heads = " + std::to_string(c.heads) + " (got " + std::to_string(hkv) + ")");
    if (nk < 1 || nk > (1 << 24)) fail("seqlen_k: must be 1..16777216 (got " + std::to_string(nk) + ")");
    // flash1's and flash2's key-padding mask (--mask) is per-sequence key lengths, the built-in
    // len_b = Nk − ⌊b·Nk / (2B)⌋ standard's mask pass uses (docs/kernels.md, "Fused dropout and
    // key padding"), which their kernels skip and mask as any key lengths (B and Nk checked above).
    if (c.mask && c.algo != Algo::standard) {
      if (!c.key_lengths.empty()) fail("mask: the built-in padding lengths or key_lengths, not both");
      if (c.causal)
        fail("mask: causal aligns each sequence's last query with its last key, so flash1 and flash2 take the built-in "
             "padding lengths (below N) without causal");
      if (!c.block_mask.empty()) fail("mask: the block-sparse kernels take no key padding");
      for (int64_t b = 0; b < c.batch; ++b) st.config.key_lengths.push_back(nk - b * nk / (2 * c.batch));
    }
    if (c.causal && nk < c.seqlen)
      fail("seqlen_k: causal aligns bottom-right, so it needs seqlen_k >= seqlen = " + std::to_string(c.seqlen) +
           " (got " + std::to_string(nk) + ")");
    if (c.algo != Algo::flash2 && (hkv != c.heads || nk != c.seqlen))
      fail("kv_heads/seqlen_k: only flash2 kernels take fewer K/V heads or a different key count (got " +
           to_string(c.algo) + ")");
    if (c.splits < 1) fail("splits: must be ≥ 1 (got " + std::to_string(c.splits) + ")");
    if (c.splits > 1 && c.algo != Algo::flash2)
      fail("splits: only flash2 splits its forward (got " + to_string(c.algo) + ")");
    if (c.page_size < 0 || c.page_size % sim::kPageSizeMultiple != 0)
      fail("page_size: must be 0 or a positive multiple of 16 (got " + std::to_string(c.page_size) + ")");
    if (c.page_size > 0 && c.algo != Algo::flash2)
      fail("page_size: only flash2's forward reads a paged KV cache (got " + to_string(c.algo) + ")");
    if (c.page_size > 0 && c.batch * sim::pages_per_sequence(nk, c.page_size) > (int64_t(1) << 31) - 1)
      fail("page_size: B · ceil(Nk / P) pages must fit the block table's int32 entries");
    if (!c.key_lengths.empty()) {
      if (c.algo == Algo::standard)
        fail("key_lengths: per-sequence key lengths run in flash1 and flash2 (got standard; its --mask takes the "
             "built-in lengths)");
      if (static_cast<int64_t>(c.key_lengths.size()) != c.batch)
        fail("key_lengths: one per sequence, B = " + std::to_string(c.batch) + " (got " + std::to_string(c.key_lengths.size()) + ")");
      for (const int64_t len : c.key_lengths)
        if (len < 1 || len > nk || (c.causal && !c.varlen && len < c.seqlen))
          fail("key_lengths: each must be 1 to Nk = " + std::to_string(nk) + (c.causal ? " and at least Nq with causal" : "") +
               " (got " + std::to_string(len) + ")");
    }
    const bool windowed = c.window_left >= 0 || c.window_right >= 0;
    // Variable-length batches (docs/kernels.md, "Variable-length batches"): flash2's KV-cache
    // forward and kDropout backward instances over packed sequences of key_lengths' lengths.
    if (c.varlen) {
      if (c.algo != Algo::flash2) fail("varlen: only the flash2 kernels take packed sequences (got " + to_string(c.algo) + ")");
      if (c.key_lengths.empty()) fail("varlen: needs the sequences' lengths (key_lengths, one per sequence)");
      if (nk != c.seqlen) fail("varlen: each sequence has as many keys as queries; allowed: seqlen_k = seqlen (or 0)");
      if (c.mask || c.dropout > 0.0 || windowed || c.splits > 1 || c.page_size > 0 || !c.block_mask.empty())
        fail("varlen: not built with the padding mask, dropout, a window, splits, a paged cache or a block mask");
    }
    if (c.window_left < -1 || c.window_right < -1 || c.window_left > (1 << 24) || c.window_right > (1 << 24))
      fail("window: each side a number of keys 0..16777216, or -1 for none");
    if (windowed) {
      if (c.algo == Algo::flash1)
        fail("window: the flash1 kernels take no window (the model counts flash1 with one); allowed: flash2, standard");
      if (c.causal && c.window_right >= 0) fail("window: causal is window_right = 0; give one of them");
      if (nk < c.seqlen) fail("window: aligned bottom-right, so it needs seqlen_k >= seqlen");
      if (c.splits > 1 || c.page_size > 0 || !c.key_lengths.empty())
        fail("window: not built with splits, a paged cache or key lengths");
    }
    if (!c.block_mask.empty()) {
      if (c.algo != Algo::flash2) fail("block_mask: only the flash2 kernels run block-sparse (got " + to_string(c.algo) + ")");
      if (hkv != c.heads || nk != c.seqlen) fail("block_mask: the block-sparse kernels need kv_heads = heads and seqlen_k = seqlen");
      if (windowed || c.splits > 1 || c.page_size > 0 || !c.key_lengths.empty())
        fail("block_mask: not built with a window, splits, a paged cache or key lengths");
    }
    if (c.algo != Algo::standard && c.dropout > 0.0 &&
        (windowed || !c.block_mask.empty() || c.splits > 1 || c.page_size > 0))
      fail("dropout: the fused-dropout kernels are built without a window, a block mask, splits or a paged cache");
    if (c.algo == Algo::standard) {
      if (c.headdim < 8 || c.headdim % 8 != 0 || c.headdim > 1024)
        fail("headdim: standard needs a multiple of 8 in 8..1024 (got " + std::to_string(c.headdim) + ")");
      if (c.seqlen > kStandardMaxSeqlen)
        fail("seqlen: standard stages a row of S in shared memory, so N ≤ " + std::to_string(kStandardMaxSeqlen) +
             " (got " + std::to_string(c.seqlen) + ")");
    } else {
      if (c.headdim != 64 && c.headdim != 128)
        fail("headdim: " + to_string(c.algo) + " kernels are built for d = 64 and 128 (got " +
             std::to_string(c.headdim) + ")");
      st.fwd = &find_impl(c.algo, Pass::fwd, static_cast<int>(c.headdim), c.dtype, c.block_r, c.block_c, c.kernel,
                          runs_only_dense(c));
      // Split-KV partitions the forward's key tiles (docs/shapes.md, "Split-KV"): at most one
      // split per tile.
      const int64_t key_tiles = (nk + st.fwd->entry.block_c - 1) / st.fwd->entry.block_c;
      if (c.splits > key_tiles)
        fail("splits: at most the forward's key tiles ⌈Nk / Bc⌉ = " + std::to_string(key_tiles) + " (got " +
             std::to_string(c.splits) + ")");
      const bool own_bwd = c.bwd_block_r != 0 || c.bwd_block_c != 0;
      try {
        st.bwd = &find_impl(c.algo, Pass::bwd, static_cast<int>(c.headdim), c.dtype,
                            own_bwd ? c.bwd_block_r : c.block_r, own_bwd ? c.bwd_block_c : c.block_c, c.bwd_kernel,
                            runs_only_dense(c));
      } catch (const std::invalid_argument& e) {
        // A forward-only tiling (e.g. 128x128 at d = 128) may still run the forward; the
        // backward is refused when it is enqueued. An explicit backward tiling must exist.
        if (own_bwd) throw;
        st.bwd_missing = e.what();
      }
    }
    if (!c.block_mask.empty()) {  // each pass's visited tiles at its tiling
      auto upload = [&](const FlashImpl* impl, bool by_rows, DeviceBuffer& buffer, int64_t& outer) {
        if (!impl) return;
        const std::string problem = block_mask_tiling_problem(c.block_mask, c.seqlen, impl->entry.block_r, impl->entry.block_c);
        const bool own_bwd = c.bwd_block_r != 0 || c.bwd_block_c != 0;  // an explicit backward tiling must run
        if (!problem.empty() && (by_rows || own_bwd)) fail(problem);
        if (!problem.empty()) {  // the forward may still run; the backward is refused when enqueued
          st.bwd = nullptr;
          st.bwd_missing = problem;
          return;
        }
        const SparseTileLists lists = by_rows ? row_tile_lists(c.block_mask, c.seqlen, c.causal, impl->entry.block_r, impl->entry.block_c)
                                              : col_tile_lists(c.block_mask, c.seqlen, c.causal, impl->entry.block_r, impl->entry.block_c);
        std::vector<int32_t> packed(lists.offsets);
        packed.insert(packed.end(), lists.tiles.begin(), lists.tiles.end());
        outer = static_cast<int64_t>(lists.offsets.size()) - 1;
        buffer.allocate(packed.size() * sizeof(int32_t));
        FLASHIO_CUDA_CHECK(cudaMemcpy(buffer.ptr, packed.data(), packed.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
      };
      upload(st.fwd, true, st.fwd_tile_lists, st.fwd_outer_tiles);
      upload(st.bwd, false, st.bwd_tile_lists, st.bwd_outer_tiles);
    }
    st.stats_stride = round_up(static_cast<int>(c.seqlen), 32);
    st.elements = c.batch * c.heads * c.seqlen * c.headdim;
    st.kv_elements = c.batch * hkv * nk * c.headdim;
    st.stats = c.batch * c.heads * st.stats_stride;
    if (c.varlen) {
      int64_t total = 0;
      std::vector<int> cu(1, 0);
      for (const int64_t len : c.key_lengths) {
        total += len;
        if (total > (int64_t(1) << 31) - 1)
          fail("varlen: the sequences' offsets are int32, so Σ n_b ≤ 2147483647 (got more)");
        cu.push_back(static_cast<int>(total));
        st.longest = std::max(st.longest, static_cast<int>(len));
      }
      st.elements = c.heads * total * c.headdim;
      st.kv_elements = hkv * total * c.headdim;
      st.stats = c.heads * total;
      st.cu_seqlens.allocate(cu.size() * sizeof(int));
      FLASHIO_CUDA_CHECK(cudaMemcpy(st.cu_seqlens.ptr, cu.data(), cu.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    for (DeviceBuffer* b : {&st.q, &st.dout, &st.o, &st.dq}) b->allocate(static_cast<size_t>(st.elements) * 2);
    for (DeviceBuffer* b : {&st.k, &st.v, &st.dk, &st.dv}) b->allocate(static_cast<size_t>(st.kv_elements) * 2);
    if (c.page_size > 0) {  // the pages and the table (sim/paged_kv.h); filled with the inputs
      st.pages = sim::page_table(c.batch, nk, c.page_size);
      const size_t page_bytes = static_cast<size_t>(st.pages.pages * hkv * c.page_size * c.headdim) * 2;
      st.k_pages.allocate(page_bytes);
      st.v_pages.allocate(page_bytes);
      const std::vector<int64_t> entries = sim::block_table_entries(st.pages);
      const std::vector<int> table(entries.begin(), entries.end());  // int32 on the device
      st.block_table.allocate(table.size() * sizeof(int));
      FLASHIO_CUDA_CHECK(cudaMemcpy(st.block_table.ptr, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
      // Rows of a partial last page that no key fills are never read; zero them anyway.
      FLASHIO_CUDA_CHECK(cudaMemset(st.k_pages.ptr, 0, page_bytes));
      FLASHIO_CUDA_CHECK(cudaMemset(st.v_pages.ptr, 0, page_bytes));
    }
    if (!c.key_lengths.empty()) {
      const std::vector<int> lengths(c.key_lengths.begin(), c.key_lengths.end());
      st.seqlens_k.allocate(lengths.size() * sizeof(int));
      FLASHIO_CUDA_CHECK(cudaMemcpy(st.seqlens_k.ptr, lengths.data(), lengths.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    const size_t stats = static_cast<size_t>(st.stats) * 4;
    switch (c.algo) {
      case Algo::flash2:
        st.lse.allocate(stats);
        st.delta.allocate(stats);
        st.dq_accum.allocate(static_cast<size_t>(st.elements) * 4);
        if (c.splits > 1) {  // the splits' partial results: O_s [S][B][H][Nq][d], lse_s [S][B][H][Nq]
          st.o_accum.allocate(static_cast<size_t>(c.splits * st.elements) * 4);
          st.lse_accum.allocate(static_cast<size_t>(c.splits * c.batch * c.heads * c.seqlen) * 4);
        }
        break;
      case Algo::flash1:
        st.row_sum.allocate(stats);
        st.row_max.allocate(stats);
        st.o_accum.allocate(static_cast<size_t>(st.elements) * 4);
        st.dq_accum.allocate(static_cast<size_t>(st.elements) * 4);
        break;
      case Algo::standard: {
        const size_t nn = static_cast<size_t>(c.batch * c.heads) * c.seqlen * standard_row_stride(c.seqlen) * 2;
        st.s.allocate(nn);
        st.p.allocate(nn);
        st.dp.allocate(nn);
        if (c.dropout > 0.0) st.p_drop.allocate(nn);
        st.delta.allocate(stats);
        FLASHIO_CUBLAS_CHECK(cublas_library().create(&st.cublas));
        // A workspace of our own (StandardParams::cublas_workspace, set again with each stream).
        st.cublas_workspace.allocate(kCublasWorkspaceBytes);
        break;
      }
    }
  } catch (...) {
    delete state_;
    throw;
  }
}

AttentionRun::~AttentionRun() {
  if (state_->cublas) cublas_library().destroy(state_->cublas);
  delete state_;
}

const AttentionConfig& AttentionRun::config() const { return state_->config; }
uint64_t AttentionRun::dropout_seed() const { return state_->dropout_seed(); }
const KernelEntry* AttentionRun::forward_entry() const { return state_->fwd ? &state_->fwd->entry : nullptr; }
const KernelEntry* AttentionRun::backward_entry() const { return state_->bwd ? &state_->bwd->entry : nullptr; }

void AttentionRun::fill_inputs(uint64_t seed) {
  State& st = *state_;
  st.seed = seed;
  int tensor = 0;
  for (DeviceBuffer* b : {&st.q, &st.k, &st.v, &st.dout}) {
    const uint64_t tensor_seed = random::mix64(seed * 4 + tensor++);
    const int64_t count = static_cast<int64_t>(b->bytes / 2);
    if (st.config.dtype == DType::fp16)
      fill_normal_kernel<__half><<<1024, 256>>>(static_cast<__half*>(b->ptr), count, tensor_seed);
    else
      fill_normal_kernel<__nv_bfloat16><<<1024, 256>>>(static_cast<__nv_bfloat16*>(b->ptr), count, tensor_seed);
    FLASHIO_LAUNCH_CHECK("fill_normal");
  }
  if (st.config.page_size > 0) {
    const AttentionConfig& c = st.config;
    const int* table = static_cast<const int*>(st.block_table.ptr);
    const int hkv = static_cast<int>(kv_heads_of(c)), nk = static_cast<int>(keys_of(c)), d = static_cast<int>(c.headdim);
    const int p = static_cast<int>(c.page_size), pps = static_cast<int>(st.pages.pages_per_sequence);
    for (auto [from, to] : {std::pair{&st.k, &st.k_pages}, std::pair{&st.v, &st.v_pages}}) {
      if (c.dtype == DType::fp16)
        scatter_pages_kernel<__half><<<1024, 256>>>(static_cast<const __half*>(from->ptr), static_cast<__half*>(to->ptr),
                                                    table, hkv, nk, d, p, pps, st.kv_elements);
      else
        scatter_pages_kernel<__nv_bfloat16><<<1024, 256>>>(static_cast<const __nv_bfloat16*>(from->ptr),
                                                           static_cast<__nv_bfloat16*>(to->ptr), table, hkv, nk, d, p,
                                                           pps, st.kv_elements);
      FLASHIO_LAUNCH_CHECK("scatter_pages");
    }
  }
  FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
  st.inputs_filled = true;
  st.forward_done = st.backward_done = false;
}

void AttentionRun::poison_outputs(Pass pass) {
  State& st = *state_;
  // All-ones bits are NaN in fp16, bf16 and fp32.
  auto poison = [](DeviceBuffer& b) {
    if (b.ptr) FLASHIO_CUDA_CHECK(cudaMemset(b.ptr, 0xff, b.bytes));
  };
  if (pass != Pass::bwd) {
    for (DeviceBuffer* b :
         {&st.o, &st.lse, &st.row_sum, &st.row_max, &st.o_accum, &st.lse_accum, &st.s, &st.p, &st.p_drop})
      poison(*b);
    st.forward_done = false;
  }
  if (pass != Pass::fwd) {
    for (DeviceBuffer* b : {&st.dq, &st.dk, &st.dv, &st.delta, &st.dq_accum, &st.dp}) poison(*b);
    st.backward_done = false;
  }
  FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<Launch> AttentionRun::enqueue(Pass pass, cudaStream_t stream) {
  State& st = *state_;
  if (!st.inputs_filled) throw std::logic_error("AttentionRun::enqueue: call fill_inputs first");
  if (pass == Pass::bwd && !st.forward_done)
    throw std::logic_error("AttentionRun::enqueue(bwd): the backward needs a forward enqueued since fill_inputs");
  if (pass != Pass::fwd && st.config.algo != Algo::standard && !st.bwd) throw std::invalid_argument(st.bwd_missing);
  if (pass != Pass::fwd && st.config.page_size > 0)
    throw std::invalid_argument("page_size: a paged KV cache is read by the forward only; allowed with the backward: 0");
  const std::vector<Launch> expected = launch_sequence(st.config, pass);
  std::vector<Launch> launched;
  if (st.config.algo == Algo::standard) {
    const StandardParams p = st.standard_params();
    if (pass != Pass::bwd) enqueue_standard_fwd(p, st.cublas, stream, &launched);
    if (pass != Pass::fwd) enqueue_standard_bwd(p, st.cublas, stream, &launched);
  } else {
    const FlashParams p = st.flash_params();
    if (pass != Pass::bwd) st.fwd->launch(p, stream);
    if (pass != Pass::fwd) st.bwd->launch(p, stream);
    // Each FlashImpl launches its pass's kernels (flash2_bwd.cuh: three; flash2_fwd.cuh with
    // splits > 1: the split forward and its combine).
    launched = expected;
  }
  if (launched != expected)
    throw std::logic_error("AttentionRun::enqueue: launched other kernels than launch_sequence() says");
  if (pass != Pass::bwd) st.forward_done = true;
  if (pass != Pass::fwd) st.backward_done = true;
  return launched;
}

namespace {

std::vector<float> widen(const DeviceBuffer& b, DType dtype, int64_t count) {
  std::vector<float> host(static_cast<size_t>(count));
  float* tmp = nullptr;
  FLASHIO_CUDA_CHECK(cudaMalloc(&tmp, static_cast<size_t>(count) * 4));
  if (dtype == DType::fp16)
    widen_kernel<__half><<<1024, 256>>>(static_cast<const __half*>(b.ptr), tmp, count);
  else
    widen_kernel<__nv_bfloat16><<<1024, 256>>>(static_cast<const __nv_bfloat16*>(b.ptr), tmp, count);
  cudaError_t launch = cudaGetLastError();
  cudaError_t copy = launch == cudaSuccess ? cudaMemcpy(host.data(), tmp, host.size() * 4, cudaMemcpyDeviceToHost) : launch;
  cudaFree(tmp);
  FLASHIO_CUDA_CHECK(copy);
  return host;
}

// (B·H) rows of `stride` floats on the device → (B·H) × N on the host.
std::vector<float> unpad_stats(const DeviceBuffer& b, int64_t heads_total, int n, int stride) {
  std::vector<float> padded(static_cast<size_t>(heads_total * stride));
  FLASHIO_CUDA_CHECK(cudaMemcpy(padded.data(), b.ptr, padded.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<float> out(static_cast<size_t>(heads_total * n));
  for (int64_t bh = 0; bh < heads_total; ++bh)
    std::copy_n(padded.begin() + bh * stride, n, out.begin() + bh * n);
  return out;
}

}  // namespace

HostOutputs AttentionRun::copy_outputs() const {
  const State& st = *state_;
  FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
  HostOutputs out;
  const AttentionConfig& c = st.config;
  const int64_t bh = c.batch * c.heads;
  const int n = static_cast<int>(c.seqlen);
  if (st.forward_done) {
    out.o = widen(st.o, c.dtype, st.elements);
    if (c.algo == Algo::flash2)  // packed: H·T values without padding, as Q's rows
      out.lse = c.varlen ? unpad_stats(st.lse, 1, static_cast<int>(st.stats), static_cast<int>(st.stats))
                         : unpad_stats(st.lse, bh, n, st.stats_stride);
    if (c.algo == Algo::flash1) {
      const std::vector<float> l = unpad_stats(st.row_sum, bh, n, st.stats_stride);
      out.lse = unpad_stats(st.row_max, bh, n, st.stats_stride);
      for (size_t i = 0; i < out.lse.size(); ++i) out.lse[i] += std::log(l[i]);
    }
  }
  if (st.backward_done) {
    out.dq = widen(st.dq, c.dtype, st.elements);
    out.dk = widen(st.dk, c.dtype, st.kv_elements);
    out.dv = widen(st.dv, c.dtype, st.kv_elements);
  }
  return out;
}

HostInputs AttentionRun::copy_inputs() const {
  const State& st = *state_;
  FLASHIO_CUDA_CHECK(cudaDeviceSynchronize());
  HostInputs in;
  const DType t = st.config.dtype;
  in.q = widen(st.q, t, st.elements);
  in.k = widen(st.k, t, st.kv_elements);
  in.v = widen(st.v, t, st.kv_elements);
  in.dout = widen(st.dout, t, st.elements);
  return in;
}

bool gpu_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace flashio::kernels
