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
  return tensor_shape(t, p).element_bytes == element_bytes(p.dtype) ? to_string(p.dtype) : "fp32";
}

bool is_kv_tensor(Tensor t) { return t == Tensor::K || t == Tensor::V || t == Tensor::dK || t == Tensor::dV; }

int64_t TensorShape::total_bytes(int64_t batch) const {
  return saturating_mul(saturating_mul(std::max<int64_t>(copies, 1), std::max<int64_t>(batch, 0),
                                       std::max<int64_t>(heads, 0)),
                        saturating_mul(rows, cols, element_bytes));
}

TensorShape tensor_shape(Tensor t, const Problem& p, const TensorLayout& layout) {
  const int64_t splits = layout.splits;
  const int64_t nq = p.seqlen, nk = p.keys(), d = p.headdim, e = element_bytes(p.dtype);
  const int64_t h = p.heads, hkv = p.kv_heads_count();
  switch (t) {
    case Tensor::K: case Tensor::V: case Tensor::dK: case Tensor::dV:
      return {nk, d, e, hkv};
    case Tensor::Q: case Tensor::O: case Tensor::dO: case Tensor::dQ:
      return {nq, d, e, h};
    case Tensor::S: case Tensor::P: case Tensor::P_drop: case Tensor::dP: case Tensor::dS:
      return {nq, nk, e, h};
    case Tensor::stat_l: case Tensor::stat_m: case Tensor::lse: case Tensor::delta:
      return {nq, 1, 4, h};
    case Tensor::o_accum:
      return {nq, d, 4, h, std::max<int64_t>(splits, 1)};
    case Tensor::dq_accum:
      return {nq, d, 4, h};
    case Tensor::lse_accum:
      return {nq, 1, 4, h, std::max<int64_t>(splits, 1)};
    case Tensor::block_table:
      return {pages_per_sequence(nk, layout.page_size), 1, 4, 1};
    case Tensor::count: break;
  }
  return {};
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
