#include "sim/kernel_kind.h"

#include <array>
#include <stdexcept>

namespace flashio::sim {
namespace {

constexpr std::array kAllKinds = {
    KernelKind::gemm_qk,         KernelKind::mask,
    KernelKind::softmax,         KernelKind::dropout,
    KernelKind::gemm_pv,         KernelKind::gemm_dv,
    KernelKind::gemm_dp,         KernelKind::dropout_bwd,
    KernelKind::rowsum_do_o,     KernelKind::softmax_bwd,
    KernelKind::gemm_dq,         KernelKind::gemm_dk,
    KernelKind::flash1_fwd,      KernelKind::flash1_bwd,
    KernelKind::flash2_fwd,      KernelKind::flash2_fwd_combine,
    KernelKind::flash2_bwd_preprocess,
    KernelKind::flash2_bwd,      KernelKind::flash2_bwd_convert_dq,
    KernelKind::blocksparse_fwd, KernelKind::blocksparse_bwd_preprocess,
    KernelKind::blocksparse_bwd, KernelKind::blocksparse_bwd_convert_dq,
};

}  // namespace

std::string to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::gemm_qk: return "gemm_qk";
    case KernelKind::mask: return "mask";
    case KernelKind::softmax: return "softmax";
    case KernelKind::dropout: return "dropout";
    case KernelKind::gemm_pv: return "gemm_pv";
    case KernelKind::gemm_dv: return "gemm_dv";
    case KernelKind::gemm_dp: return "gemm_dp";
    case KernelKind::dropout_bwd: return "dropout_bwd";
    case KernelKind::rowsum_do_o: return "rowsum_do_o";
    case KernelKind::softmax_bwd: return "softmax_bwd";
    case KernelKind::gemm_dq: return "gemm_dq";
    case KernelKind::gemm_dk: return "gemm_dk";
    case KernelKind::flash1_fwd: return "flash1_fwd";
    case KernelKind::flash1_bwd: return "flash1_bwd";
    case KernelKind::flash2_fwd: return "flash2_fwd";
    case KernelKind::flash2_fwd_combine: return "flash2_fwd_combine";
    case KernelKind::flash2_bwd_preprocess: return "flash2_bwd_preprocess";
    case KernelKind::flash2_bwd: return "flash2_bwd";
    case KernelKind::flash2_bwd_convert_dq: return "flash2_bwd_convert_dq";
    case KernelKind::blocksparse_fwd: return "blocksparse_fwd";
    case KernelKind::blocksparse_bwd_preprocess: return "blocksparse_bwd_preprocess";
    case KernelKind::blocksparse_bwd: return "blocksparse_bwd";
    case KernelKind::blocksparse_bwd_convert_dq: return "blocksparse_bwd_convert_dq";
  }
  throw std::logic_error("KernelKind out of range");
}

std::optional<KernelKind> parse_kernel_kind(std::string_view text) {
  for (KernelKind k : kAllKinds)
    if (to_string(k) == text) return k;
  return std::nullopt;
}

std::span<const KernelKind> all_kernel_kinds() { return kAllKinds; }

Algo algo_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::gemm_qk:
    case KernelKind::mask:
    case KernelKind::softmax:
    case KernelKind::dropout:
    case KernelKind::gemm_pv:
    case KernelKind::gemm_dv:
    case KernelKind::gemm_dp:
    case KernelKind::dropout_bwd:
    case KernelKind::rowsum_do_o:
    case KernelKind::softmax_bwd:
    case KernelKind::gemm_dq:
    case KernelKind::gemm_dk: return Algo::standard;
    case KernelKind::flash1_fwd:
    case KernelKind::flash1_bwd: return Algo::flash1;
    case KernelKind::flash2_fwd:
    case KernelKind::flash2_fwd_combine:
    case KernelKind::flash2_bwd_preprocess:
    case KernelKind::flash2_bwd:
    case KernelKind::flash2_bwd_convert_dq: return Algo::flash2;
    case KernelKind::blocksparse_fwd:
    case KernelKind::blocksparse_bwd_preprocess:
    case KernelKind::blocksparse_bwd:
    case KernelKind::blocksparse_bwd_convert_dq: return Algo::blocksparse;
  }
  throw std::logic_error("KernelKind out of range");
}

Pass pass_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::gemm_qk:
    case KernelKind::mask:
    case KernelKind::softmax:
    case KernelKind::dropout:
    case KernelKind::gemm_pv:
    case KernelKind::flash1_fwd:
    case KernelKind::flash2_fwd:
    case KernelKind::flash2_fwd_combine:
    case KernelKind::blocksparse_fwd: return Pass::fwd;
    case KernelKind::gemm_dv:
    case KernelKind::gemm_dp:
    case KernelKind::dropout_bwd:
    case KernelKind::rowsum_do_o:
    case KernelKind::softmax_bwd:
    case KernelKind::gemm_dq:
    case KernelKind::gemm_dk:
    case KernelKind::flash1_bwd:
    case KernelKind::flash2_bwd_preprocess:
    case KernelKind::flash2_bwd:
    case KernelKind::flash2_bwd_convert_dq:
    case KernelKind::blocksparse_bwd_preprocess:
    case KernelKind::blocksparse_bwd:
    case KernelKind::blocksparse_bwd_convert_dq: return Pass::bwd;
  }
  throw std::logic_error("KernelKind out of range");
}

KernelKind flash2_kind(Algo algo, Flash2Role role) {
  const bool sparse = algo == Algo::blocksparse;
  if (!sparse && algo != Algo::flash2) throw std::logic_error("flash2_kind: not a flash2-order algorithm");
  switch (role) {
    case Flash2Role::fwd: return sparse ? KernelKind::blocksparse_fwd : KernelKind::flash2_fwd;
    case Flash2Role::bwd_preprocess:
      return sparse ? KernelKind::blocksparse_bwd_preprocess : KernelKind::flash2_bwd_preprocess;
    case Flash2Role::bwd: return sparse ? KernelKind::blocksparse_bwd : KernelKind::flash2_bwd;
    case Flash2Role::bwd_convert_dq:
      return sparse ? KernelKind::blocksparse_bwd_convert_dq : KernelKind::flash2_bwd_convert_dq;
  }
  throw std::logic_error("Flash2Role out of range");
}

}  // namespace flashio::sim
