#include "sim/tensor.h"

namespace flashio::sim {

std::string to_string(Tensor t) {
  static const std::array<const char*, kTensorCount> names = {
      "Q", "K", "V", "O", "dO", "dQ", "dK", "dV", "S", "P", "P_drop", "dP", "dS",
      "l", "m", "lse", "delta", "o_accum", "dq_accum"};
  return names[static_cast<int>(t)];
}

TensorShape tensor_shape(Tensor t, const Problem& p) {
  const int64_t n = p.seqlen, d = p.headdim, e = element_bytes(p.dtype);
  switch (t) {
    case Tensor::Q: case Tensor::K: case Tensor::V: case Tensor::O:
    case Tensor::dO: case Tensor::dQ: case Tensor::dK: case Tensor::dV:
      return {n, d, e};
    case Tensor::S: case Tensor::P: case Tensor::P_drop: case Tensor::dP: case Tensor::dS:
      return {n, n, e};
    case Tensor::stat_l: case Tensor::stat_m: case Tensor::lse: case Tensor::delta:
      return {n, 1, 4};
    case Tensor::o_accum: case Tensor::dq_accum:
      return {n, d, 4};
    case Tensor::count: break;
  }
  return {};
}

bool is_input_or_output(Tensor t, Pass pass) {
  switch (t) {
    case Tensor::Q: case Tensor::K: case Tensor::V: return true;
    case Tensor::O: return true;  // output of fwd, input of bwd
    case Tensor::dO: case Tensor::dQ: case Tensor::dK: case Tensor::dV: return has_backward(pass);
    default: return false;
  }
}

}  // namespace flashio::sim
