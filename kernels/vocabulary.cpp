// The kernels' vocabulary spelled for messages (as flashio::sim spells it). Pure C++.
#include <stdexcept>

#include "kernels/attention.h"

namespace flashio::kernels {

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
  }
  throw std::logic_error("kernels::DType out of range");
}

std::string to_string(Algo algo) {
  switch (algo) {
    case Algo::standard: return "standard";
    case Algo::flash1: return "flash1";
    case Algo::flash2: return "flash2";
  }
  throw std::logic_error("kernels::Algo out of range");
}

std::string to_string(Pass pass) {
  switch (pass) {
    case Pass::fwd: return "fwd";
    case Pass::bwd: return "bwd";
    case Pass::fwdbwd: return "fwdbwd";
  }
  throw std::logic_error("kernels::Pass out of range");
}

std::string to_string(Launch launch) {
  switch (launch) {
    case Launch::gemm_qk: return "gemm_qk";
    case Launch::mask: return "mask";
    case Launch::softmax: return "softmax";
    case Launch::dropout: return "dropout";
    case Launch::gemm_pv: return "gemm_pv";
    case Launch::gemm_dv: return "gemm_dv";
    case Launch::gemm_dp: return "gemm_dp";
    case Launch::dropout_bwd: return "dropout_bwd";
    case Launch::rowsum_do_o: return "rowsum_do_o";
    case Launch::softmax_bwd: return "softmax_bwd";
    case Launch::gemm_dq: return "gemm_dq";
    case Launch::gemm_dk: return "gemm_dk";
    case Launch::flash1_fwd: return "flash1_fwd";
    case Launch::flash1_bwd: return "flash1_bwd";
    case Launch::flash2_fwd: return "flash2_fwd";
    case Launch::flash2_fwd_combine: return "flash2_fwd_combine";
    case Launch::flash2_bwd_preprocess: return "flash2_bwd_preprocess";
    case Launch::flash2_bwd: return "flash2_bwd";
    case Launch::flash2_bwd_convert_dq: return "flash2_bwd_convert_dq";
    case Launch::blocksparse_fwd: return "blocksparse_fwd";
    case Launch::blocksparse_bwd_preprocess: return "blocksparse_bwd_preprocess";
    case Launch::blocksparse_bwd: return "blocksparse_bwd";
    case Launch::blocksparse_bwd_convert_dq: return "blocksparse_bwd_convert_dq";
  }
  throw std::logic_error("kernels::Launch out of range");
}

std::string to_string(MmaKind mma) {
  switch (mma) {
    case MmaKind::mma_sync: return "mma_sync";
    case MmaKind::wgmma: return "wgmma";
    case MmaKind::wgmma_ws: return "wgmma_ws";
  }
  throw std::logic_error("kernels::MmaKind out of range");
}

// K/V heads and keys: the configuration's, or (0) the query side's.
int64_t kv_heads_of(const AttentionConfig& config) { return config.kv_heads != 0 ? config.kv_heads : config.heads; }
int64_t keys_of(const AttentionConfig& config) { return config.seqlen_k != 0 ? config.seqlen_k : config.seqlen; }

}  // namespace flashio::kernels
