// The tensors an attention pass moves, and the type each is stored in (docs/architecture.md,
// "Vocabulary", storage types). Every tensor is laid out per (batch, head) as rows × cols,
// row-major, (batch, head) outermost: the query-side tensors have H heads and Nq rows, K, V, dK,
// dV have Hkv heads and Nk rows (docs/shapes.md), so the rows of a group's g query heads follow
// each other in memory.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/problem.h"

namespace flashio::sim {

enum class Tensor : int {
  Q, K, V, O, dO, dQ, dK, dV,   // inputs and outputs, element type, Nq × d (K, V, dK, dV: Nk × d)
  S, P, P_drop, dP, dS,         // standard's materialised Nq × Nk matrices, element type
  stat_l, stat_m,               // flash1's row sum ℓ and row max m, fp32, Nq × 1
  lse,                          // flash2's log-sum-exp L = m + log ℓ, fp32, Nq × 1
  delta,                        // D = rowsum(dO ∘ O), fp32, Nq × 1
  o_accum,                      // flash1's running output; split-KV (Config::splits): each split's
                                // output, normalised by its own ℓ; fp32, Nq × d (per split)
  dq_accum,                     // dQ accumulator, fp32, Nq × d (flash1 RMW, flash2 atomics)
  lse_accum,                    // split-KV: each split's log-sum-exp, fp32, Nq × 1 per split
  block_table,                  // a paged KV cache's page of each sequence's keys (sim/paged_kv.h),
                                // int32, one row of ⌈Nk / P⌉ per batch element
  count
};
constexpr int kTensorCount = static_cast<int>(Tensor::count);

std::string to_string(Tensor tensor);

struct TensorShape {
  int64_t rows = 0;  // per (batch, head); in a varlen batch the most a head may have, N (head b·heads + h has n_b: RowLayout)
  int64_t cols = 0;
  int64_t element_bytes = 0;
  int64_t heads = 0;  // per batch element: H, or Hkv for K, V, dK, dV
  // Copies of the (B, heads, rows, cols) array, outermost: the splits of split-KV's partial
  // results (o_accum, lse_accum: [S][B][H][Nq][·], so split s of global head bh is head
  // s·B·H + bh); 1 for every other tensor.
  int64_t copies = 1;
  // A varlen batch's packed tensors (Problem::varlen; docs/shapes.md, "Variable-length batches"):
  // T = Σ n_b, one head's rows summed over the sequences, in place of B · rows; 0: B · rows.
  int64_t packed_rows = 0;
  // Rows of the whole tensor, copies · heads · (packed_rows, or B · rows); throws CountOverflow
  // (sim/checked.h) past 2^63 − 1.
  int64_t total_rows(int64_t batch) const;
  // The whole tensor's elements, copies · heads · (packed_rows, or B · rows) · cols, and its bytes,
  // those · element_bytes (saturating at kMaxCount).
  int64_t total_elements(int64_t batch) const;
  int64_t total_bytes(int64_t batch) const;
};
// What sizes tensors beyond the problem: split-KV's count (Config::splits), which sizes the
// partial results, and a paged KV cache's page size (Config::page_size; 0 = contiguous), which
// sizes the block table. K and V keep their logical shape (Nk × d per K/V head); where their
// pages lie is the L2 model's address layout (sim/cache_replay.h).
struct TensorLayout {
  int64_t splits = 1;
  int64_t page_size = 0;
};
TensorShape tensor_shape(Tensor tensor, const Problem& problem, const TensorLayout& layout = {});
// The bytes of one element of the tensor as stored (tensor_shape's element_bytes, without the rest
// of the shape): what the counts of a transfer's rows × cols multiply by.
int64_t tensor_element_bytes(Tensor tensor, const Problem& problem);

// Where each head's rows lie in a tensor's matrix of all its rows, the heads one after another
// ((batch, head) outermost): head bh's first row is bh · rows, but in a varlen batch's packed
// tensors (TensorShape::packed_rows) heads · cu_b + (bh mod heads) · n_b, with b = bh / heads,
// cu_b = n_0 + … + n_{b−1}, and the head has n_b rows (docs/shapes.md, "Variable-length batches").
// The one rule execute's memory and the L2 model's addresses place rows by.
class RowLayout {
 public:
  explicit RowLayout(const Problem& problem);
  int64_t first_row(const TensorShape& shape, int64_t bh) const;
  int64_t head_rows(const TensorShape& shape, int64_t bh) const;

 private:
  std::shared_ptr<const std::vector<int64_t>> offsets_;  // cu_0 … cu_B; null: no packed tensors
};
// The name of the tensor's storage type: the problem's dtype, fp32 (statistics, accumulators,
// partials) or int32 (the block table).
std::string storage_type_name(Tensor tensor, const Problem& problem);
// Whether the tensor has a head per K/V head (K, V, dK, dV) rather than per query head.
bool is_kv_tensor(Tensor tensor);

// Which tensors are inputs or outputs of the pass (not "extra memory", Theorem 1).
bool is_input_or_output(Tensor tensor, Pass pass);

}  // namespace flashio::sim
