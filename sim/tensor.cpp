#include "sim/tensor.h"

#include <algorithm>

#include "sim/checked.h"
#include "sim/paged_kv.h"

namespace flashio::sim {

std::string to_string(Tensor t) {
  static const std::array<const char*, kTensorCount> names = {
      "Q", "K", "V", "O", "dO", "dQ", "dK", "dV", "S", "P", "P_drop", "dP", "dS",
      "l", "m", "lse", "delta", "o_accum", "dq_accum", "lse_accum", "block_table"};
  return names[static_cast<int>(t)];
}

std::string storage_type_name(Tensor t, const Problem& p) {
  if (t == Tensor::block_table) return "int32";
  return tensor_element_bytes(t, p) == element_bytes(p.dtype) ? to_string(p.dtype) : "fp32";
}

int64_t tensor_element_bytes(Tensor t, const Problem& p) {
  switch (t) {
    case Tensor::Q: case Tensor::K: case Tensor::V: case Tensor::O: case Tensor::dO: case Tensor::dQ:
    case Tensor::dK: case Tensor::dV: case Tensor::S: case Tensor::P: case Tensor::P_drop: case Tensor::dP:
    case Tensor::dS:
      return element_bytes(p.dtype);
    case Tensor::stat_l: case Tensor::stat_m: case Tensor::lse: case Tensor::delta: case Tensor::o_accum:
    case Tensor::dq_accum: case Tensor::lse_accum: case Tensor::block_table:
      return 4;
    case Tensor::count: break;
  }
  return 0;
}

bool is_kv_tensor(Tensor t) { return t == Tensor::K || t == Tensor::V || t == Tensor::dK || t == Tensor::dV; }

int64_t TensorShape::total_rows(int64_t batch) const {
  return checked_mul(copies, heads, packed_rows > 0 ? packed_rows : checked_mul(batch, rows));
}

int64_t TensorShape::total_elements(int64_t batch) const {
  const int64_t per_head = packed_rows > 0 ? packed_rows : saturating_mul(std::max<int64_t>(batch, 0), rows);
  return saturating_mul(std::max<int64_t>(copies, 1), std::max<int64_t>(heads, 0), per_head, cols);
}

int64_t TensorShape::total_bytes(int64_t batch) const { return saturating_mul(total_elements(batch), element_bytes); }

TensorShape tensor_shape(Tensor t, const Problem& p, const TensorLayout& layout) {
  const int64_t splits = layout.splits;
  const int64_t nq = p.seqlen, nk = p.keys(), d = p.headdim, e = tensor_element_bytes(t, p);
  const int64_t h = p.heads, hkv = p.kv_heads_count();
  TensorShape s;
  switch (t) {
    case Tensor::K: case Tensor::V: case Tensor::dK: case Tensor::dV: s = {nk, d, e, hkv}; break;
    case Tensor::Q: case Tensor::O: case Tensor::dO: case Tensor::dQ: case Tensor::dq_accum: s = {nq, d, e, h}; break;
    case Tensor::S: case Tensor::P: case Tensor::P_drop: case Tensor::dP: case Tensor::dS: return {nq, nk, e, h};
    case Tensor::stat_l: case Tensor::stat_m: case Tensor::lse: case Tensor::delta: s = {nq, 1, e, h}; break;
    case Tensor::o_accum: s = {nq, d, e, h, std::max<int64_t>(splits, 1)}; break;
    case Tensor::lse_accum: s = {nq, 1, e, h, std::max<int64_t>(splits, 1)}; break;
    case Tensor::block_table: return {pages_per_sequence(nk, layout.page_size), 1, e, 1};
    case Tensor::count: return {};
  }
  // A varlen batch packs every tensor with a row per query or key (the N × Nk matrices of
  // standard and the block table are no part of it: flash2 alone, contiguous).
  if (p.varlen && !p.key_lengths.empty())
    for (const int64_t n : *p.key_lengths.values) s.packed_rows = saturating_add(s.packed_rows, n);
  return s;
}

RowLayout::RowLayout(const Problem& p) {
  if (!p.varlen || p.key_lengths.empty()) return;
  auto offsets = std::make_shared<std::vector<int64_t>>(1, 0);
  for (const int64_t n : *p.key_lengths.values) offsets->push_back(saturating_add(offsets->back(), n));
  offsets_ = std::move(offsets);
}

int64_t RowLayout::first_row(const TensorShape& s, int64_t bh) const {
  if (s.packed_rows == 0 || !offsets_) return bh * s.rows;
  const auto b = static_cast<size_t>(bh / s.heads);
  const int64_t cu = (*offsets_)[b], n = (*offsets_)[b + 1] - cu;
  return s.heads * cu + (bh % s.heads) * n;
}

int64_t RowLayout::head_rows(const TensorShape& s, int64_t bh) const {
  if (s.packed_rows == 0 || !offsets_) return s.rows;
  const auto b = static_cast<size_t>(bh / s.heads);
  return (*offsets_)[b + 1] - (*offsets_)[b];
}

bool is_input_or_output(Tensor t, Pass pass) {
  switch (t) {
    case Tensor::Q: case Tensor::K: case Tensor::V: return true;
    case Tensor::block_table: return true;  // a paged cache's table: the caller's, as K and V are
    case Tensor::O: return true;  // output of fwd, input of bwd
    case Tensor::dO: case Tensor::dQ: case Tensor::dK: case Tensor::dV: return has_backward(pass);
    default: return false;
  }
}

}  // namespace flashio::sim
