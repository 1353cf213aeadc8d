#include "profiler/kernel_bridge.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/block_mask.h"
#include "sim/kernel_choice.h"

namespace flashio::profiler {

kernels::DType to_kernels(sim::DType dtype) {
  switch (dtype) {
    case sim::DType::fp16: return kernels::DType::fp16;
    case sim::DType::bf16: return kernels::DType::bf16;
    case sim::DType::fp32: break;
  }
  throw std::invalid_argument("dtype: '" + sim::to_string(dtype) +
                              "' is not supported by the CUDA kernels (allowed: fp16, bf16)");
}

kernels::Algo to_kernels(sim::Algo algo) {
  switch (algo) {
    case sim::Algo::standard: return kernels::Algo::standard;
    case sim::Algo::flash1: return kernels::Algo::flash1;
    case sim::Algo::flash2:
    case sim::Algo::blocksparse: return kernels::Algo::flash2;  // blocksparse: flash2 over a block mask
  }
  throw std::logic_error("sim::Algo out of range");
}

kernels::Pass to_kernels(sim::Pass pass) {
  switch (pass) {
    case sim::Pass::fwd: return kernels::Pass::fwd;
    case sim::Pass::bwd: return kernels::Pass::bwd;
    case sim::Pass::fwdbwd: return kernels::Pass::fwdbwd;
  }
  throw std::logic_error("sim::Pass out of range");
}

sim::DType to_sim(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::fp16: return sim::DType::fp16;
    case kernels::DType::bf16: return sim::DType::bf16;
  }
  throw std::logic_error("kernels::DType out of range");
}

sim::Algo to_sim(kernels::Algo algo) {
  switch (algo) {
    case kernels::Algo::standard: return sim::Algo::standard;
    case kernels::Algo::flash1: return sim::Algo::flash1;
    case kernels::Algo::flash2: return sim::Algo::flash2;
  }
  throw std::logic_error("kernels::Algo out of range");
}

sim::Pass to_sim(kernels::Pass pass) {
  switch (pass) {
    case kernels::Pass::fwd: return sim::Pass::fwd;
    case kernels::Pass::bwd: return sim::Pass::bwd;
    case kernels::Pass::fwdbwd: return sim::Pass::fwdbwd;
  }
  throw std::logic_error("kernels::Pass out of range");
}

sim::MmaKind to_sim(kernels::MmaKind mma) {
  switch (mma) {
    case kernels::MmaKind::mma_sync: return sim::MmaKind::mma_sync;
    case kernels::MmaKind::wgmma: return sim::MmaKind::wgmma;
    case kernels::MmaKind::wgmma_ws: return sim::MmaKind::wgmma_ws;
  }
  throw std::logic_error("kernels::MmaKind out of range");
}

kernels::MmaKind to_kernels(sim::MmaKind mma) {
  switch (mma) {
    case sim::MmaKind::mma_sync: return kernels::MmaKind::mma_sync;
    case sim::MmaKind::wgmma: return kernels::MmaKind::wgmma;
    case sim::MmaKind::wgmma_ws: return kernels::MmaKind::wgmma_ws;
  }
  throw std::logic_error("sim::MmaKind out of range");
}

sim::KernelKind to_sim(kernels::Launch launch) {
  using L = kernels::Launch;
  using K = sim::KernelKind;
  switch (launch) {
    case L::gemm_qk: return K::gemm_qk;
    case L::mask: return K::mask;
    case L::softmax: return K::softmax;
    case L::dropout: return K::dropout;
    case L::gemm_pv: return K::gemm_pv;
    case L::gemm_dv: return K::gemm_dv;
    case L::gemm_dp: return K::gemm_dp;
    case L::dropout_bwd: return K::dropout_bwd;
    case L::rowsum_do_o: return K::rowsum_do_o;
    case L::softmax_bwd: return K::softmax_bwd;
    case L::gemm_dq: return K::gemm_dq;
    case L::gemm_dk: return K::gemm_dk;
    case L::flash1_fwd: return K::flash1_fwd;
    case L::flash1_bwd: return K::flash1_bwd;
    case L::flash2_fwd: return K::flash2_fwd;
    case L::flash2_fwd_combine: return K::flash2_fwd_combine;
    case L::flash2_bwd_preprocess: return K::flash2_bwd_preprocess;
    case L::flash2_bwd: return K::flash2_bwd;
    case L::flash2_bwd_convert_dq: return K::flash2_bwd_convert_dq;
    case L::blocksparse_fwd: return K::blocksparse_fwd;
    case L::blocksparse_bwd_preprocess: return K::blocksparse_bwd_preprocess;
    case L::blocksparse_bwd: return K::blocksparse_bwd;
    case L::blocksparse_bwd_convert_dq: return K::blocksparse_bwd_convert_dq;
  }
  throw std::logic_error("kernels::Launch out of range");
}

namespace {

// The catalog's default tiling of one pass (TilingSource::kernel; sim::default_kernel: the
// forward's family, the configuration's density).
sim::Tiling default_tiling(const sim::Config& c, sim::Pass pass) {
  const sim::Algo algo = sim::built_algo(c.algo);
  const sim::BuiltKernel* k = sim::default_kernel(c, pass);
  if (!k)
    throw std::invalid_argument("tiling: no " + sim::to_string(c.algo) + " " + sim::to_string(pass) +
                                " kernel is built for d=" + std::to_string(c.problem.headdim) + " " +
                                sim::to_string(c.problem.dtype) + " (built: " +
                                sim::built_tilings_text(algo, pass) + ")");
  return k->tiling;
}

}  // namespace

kernels::TokenBlockMask token_block_mask(const sim::Config& c) {
  const sim::BlockMask mask(c.block_mask, c.problem);
  kernels::TokenBlockMask out;
  out.block_tokens = mask.block_tokens();
  out.blocks = mask.blocks();
  out.bits.reserve(static_cast<size_t>(out.blocks * out.blocks));
  for (int64_t bi = 0; bi < out.blocks; ++bi)
    for (int64_t bj = 0; bj < out.blocks; ++bj) out.bits.push_back(mask.nonzero(bi, bj) ? 1 : 0);
  return out;
}

kernels::AttentionConfig kernel_config(const sim::Config& c) {
  // Grouped-query attention and Nq ≠ Nk have flash2 kernels only (docs/shapes.md); running the
  // square kernels of another algorithm would measure another problem.
  const bool flash2 = sim::built_algo(c.algo) == sim::Algo::flash2;
  if (!flash2 && c.problem.kv_heads_count() != c.problem.heads)
    throw std::invalid_argument("--kv-heads: only the flash2 kernels take fewer K/V heads than query heads (got algo " +
                                sim::to_string(c.algo) + "); allowed on the GPU: --algo flash2, or --kv-heads = --heads");
  if (!flash2 && c.problem.keys() != c.problem.seqlen)
    throw std::invalid_argument("--seqlen-k: only the flash2 kernels take a key count other than --seqlen (got algo " +
                                sim::to_string(c.algo) + "); allowed on the GPU: --algo flash2, or --seqlen-k = --seqlen");
  kernels::AttentionConfig k;
  k.batch = c.problem.batch;
  k.heads = c.problem.heads;
  k.seqlen = c.problem.seqlen;
  k.kv_heads = c.problem.kv_heads_count();
  k.seqlen_k = c.problem.keys();
  k.gqa_pack = c.gqa_pack;
  k.splits = c.splits;
  k.page_size = c.page_size;
  if (!c.problem.key_lengths.empty()) k.key_lengths = *c.problem.key_lengths.values;
  k.varlen = c.problem.varlen;  // the lengths are then the packed sequences' own (docs/shapes.md)
  k.headdim = c.problem.headdim;
  k.causal = c.problem.causal;
  k.window_left = c.problem.window_left;  // sim::kNoWindow is the kernels' −1
  k.window_right = c.problem.window_right;
  k.mask = c.problem.mask;
  k.dropout = c.problem.dropout;
  k.dtype = to_kernels(c.problem.dtype);
  k.algo = to_kernels(c.algo);
  if (c.algo == sim::Algo::blocksparse) k.block_mask = token_block_mask(c);
  if (c.algo == sim::Algo::standard) return k;
  // A backward runs after a forward (untimed for pass bwd): both tilings are chosen. The forward's
  // is sim::forward_tiling's, the rule a row's kernel_impl is resolved by.
  const std::optional<sim::Tiling> forward = sim::forward_tiling(c);
  // nullopt where no default forward is built: default_tiling refuses it, naming what is.
  const sim::Tiling fwd = forward ? *forward : default_tiling(c, sim::Pass::fwd);
  sim::Tiling bwd = c.bwd_tiling.value_or(c.tiling);
  if (c.tiling_source == sim::TilingSource::kernel) {
    bwd = default_tiling(c, sim::Pass::bwd);
  } else if (c.tiling_source == sim::TilingSource::best && !sim::has_backward(c.problem.pass)) {
    // The model's best built tiling of each pass the configuration runs (sim/tiling_advisor.h);
    // a forward alone carries the kernels' default backward.
    bwd = default_tiling(c, sim::Pass::bwd);
  }
  k.block_r = static_cast<int>(fwd.block_r);
  k.block_c = static_cast<int>(fwd.block_c);
  // The forward's family: the entry the model runs at that tiling (sim::built_kernel: the asked
  // family's, else the default kernel where the tiling is the default's, else the tiling's first),
  // so that model and GPU run the same kernel; an asked family with no entry goes to the kernels,
  // which refuse it as sim does.
  if (const sim::BuiltKernel* e = sim::built_kernel(c, sim::Pass::fwd, fwd)) k.kernel = to_kernels(e->mma);
  else if (c.kernel_impl) k.kernel = to_kernels(*c.kernel_impl);
  // The backward's family likewise (wgmma at the default tiling for dense problems, else the
  // tiling's first, mma_sync).
  if (const sim::BuiltKernel* e = sim::built_kernel(c, sim::Pass::bwd, bwd)) k.bwd_kernel = to_kernels(e->mma);
  // A backward tiling of its own only where it differs: the kernels then require it to be
  // built, while a forward-only tiling (128x128 at d = 128) may still run its forward.
  if (!(bwd == fwd)) {
    k.bwd_block_r = static_cast<int>(bwd.block_r);
    k.bwd_block_c = static_cast<int>(bwd.block_c);
  }
  // The block-sparse kernels visit whole tiles inside one mask block (kernels/block_sparse_tiles.h):
  // refused here, before any GPU work, as AttentionRun would.
  if (!k.block_mask.empty()) {
    std::vector<sim::Tiling> run{fwd};  // every pass runs the forward first
    if (sim::has_backward(c.problem.pass)) run.push_back(bwd);
    for (const sim::Tiling& t : run)
      if (const std::string problem =
              kernels::block_mask_tiling_problem(k.block_mask, k.seqlen, t.block_r, t.block_c, "--block-mask");
          !problem.empty())
        throw std::invalid_argument(problem);
  }
  return k;
}

sim::Row measured_row(const sim::Config& c, const kernels::KernelEntry* entry) {
  sim::Row row = sim::config_row(c, sim::RowSource::measured);
  if (entry) {
    row.block_r = entry->block_r;
    row.block_c = entry->block_c;
    // The family the kernels ran (the catalog's, which the model resolved, in a CUDA build:
    // tests/kernels/test_catalog.cpp): the timed pass's entry, the backward's for pass bwd
    // (sim::row_kernel_impl).
    row.kernel_impl = to_sim(entry->mma);
  }
  return row;
}

}  // namespace flashio::profiler
