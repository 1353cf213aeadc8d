// What AttentionRun::enqueue launches, per algorithm and pass (docs/schedules.md's order):
// standard's separate passes (mask, dropout only when asked for), flash1's one kernel per pass,
// flash2's forward (with split-KV, the split forward and its combine) and its three backward
// kernels, and over a block mask their block-sparse instances. Pure C++, no CUDA.
#include "kernels/attention.h"
#include "kernels/standard_layout.h"

namespace flashio::kernels {

std::vector<Launch> launch_sequence(const AttentionConfig& c, Pass pass) {
  const bool fwd = pass != Pass::bwd, bwd = pass != Pass::fwd;
  std::vector<Launch> out;
  switch (c.algo) {
    case Algo::standard: {
      const bool dropout = c.dropout > 0.0;
      if (fwd) {
        out.push_back(Launch::gemm_qk);
        if (c.mask) out.push_back(Launch::mask);
        out.push_back(Launch::softmax);
        if (dropout) out.push_back(Launch::dropout);
        out.push_back(Launch::gemm_pv);
      }
      if (bwd) {
        out.insert(out.end(), {Launch::gemm_dv, Launch::gemm_dp});
        if (dropout) out.push_back(Launch::dropout_bwd);
        out.insert(out.end(), {Launch::rowsum_do_o, Launch::softmax_bwd, Launch::gemm_dq, Launch::gemm_dk});
      }
      return out;
    }
    case Algo::flash1:
      if (fwd) out.push_back(Launch::flash1_fwd);
      if (bwd) out.push_back(Launch::flash1_bwd);
      return out;
    case Algo::flash2:
      if (!c.block_mask.empty()) {  // the block-sparse instances (kernels/block_sparse_tiles.h)
        if (fwd) out.push_back(Launch::blocksparse_fwd);
        if (bwd)
          out.insert(out.end(),
                     {Launch::blocksparse_bwd_preprocess, Launch::blocksparse_bwd, Launch::blocksparse_bwd_convert_dq});
        return out;
      }
      if (fwd) out.push_back(Launch::flash2_fwd);
      // Split-KV: the blocks of every split write partial results, which the combine merges
      // (docs/kernels.md, "Split-KV"); one split is the single forward kernel.
      if (fwd && c.splits > 1) out.push_back(Launch::flash2_fwd_combine);
      if (bwd) out.insert(out.end(), {Launch::flash2_bwd_preprocess, Launch::flash2_bwd, Launch::flash2_bwd_convert_dq});
      return out;
  }
  return out;
}

int library_calls(const AttentionConfig& c, Launch launch) {
  switch (launch) {
    case Launch::gemm_qk:
    case Launch::gemm_pv:
    case Launch::gemm_dv:
    case Launch::gemm_dp:
    case Launch::gemm_dq:
    case Launch::gemm_dk: return standard_gemm_calls(c.seqlen);
    default: return 1;
  }
}

}  // namespace flashio::kernels
