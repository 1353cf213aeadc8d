#include "sim/types.h"

namespace flashio::sim {

int64_t element_bytes(DType dtype) {
  switch (dtype) {
    case DType::fp16: return 2;
    case DType::bf16: return 2;
    case DType::fp32: return 4;
  }
  return 0;
}

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp32: return "fp32";
  }
  return "?";
}

std::string to_string(Pass pass) {
  switch (pass) {
    case Pass::fwd: return "fwd";
    case Pass::bwd: return "bwd";
    case Pass::fwdbwd: return "fwdbwd";
  }
  return "?";
}

std::string to_string(Algo algo) {
  switch (algo) {
    case Algo::standard: return "standard";
    case Algo::flash1: return "flash1";
    case Algo::flash2: return "flash2";
    case Algo::blocksparse: return "blocksparse";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view t) {
  if (t == "fp16") return DType::fp16;
  if (t == "bf16") return DType::bf16;
  if (t == "fp32") return DType::fp32;
  return std::nullopt;
}

std::optional<Pass> parse_pass(std::string_view t) {
  if (t == "fwd") return Pass::fwd;
  if (t == "bwd") return Pass::bwd;
  if (t == "fwdbwd") return Pass::fwdbwd;
  return std::nullopt;
}

std::optional<Algo> parse_algo(std::string_view t) {
  if (t == "standard") return Algo::standard;
  if (t == "flash1") return Algo::flash1;
  if (t == "flash2") return Algo::flash2;
  if (t == "blocksparse") return Algo::blocksparse;
  return std::nullopt;
}

std::string allowed_dtypes() { return "fp16, bf16, fp32"; }
std::string allowed_passes() { return "fwd, bwd, fwdbwd"; }
std::string allowed_algos() { return "standard, flash1, flash2, blocksparse"; }

bool has_forward(Pass pass) { return pass == Pass::fwd || pass == Pass::fwdbwd; }
bool has_backward(Pass pass) { return pass == Pass::bwd || pass == Pass::fwdbwd; }

}  // namespace flashio::sim
