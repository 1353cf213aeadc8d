#include "profiler/kernel_config.h"

namespace flashio::profiler {

kernels::AttentionConfig kernel_config(const sim::Config& c, bool explicit_tiling) {
  kernels::AttentionConfig k;
  k.batch = c.problem.batch;
  k.heads = c.problem.heads;
  k.seqlen = c.problem.seqlen;
  k.headdim = c.problem.headdim;
  k.causal = c.problem.causal;
  k.mask = c.problem.mask;
  k.dropout = c.problem.dropout;
  k.dtype = kernels::parse_dtype(sim::to_string(c.problem.dtype));
  k.algo = kernels::parse_algo(sim::to_string(c.algo));
  if (explicit_tiling && c.algo != sim::Algo::standard) {
    k.block_r = static_cast<int>(c.tiling.block_r);
    k.block_c = static_cast<int>(c.tiling.block_c);
  }
  return k;
}

sim::Row measured_row(const sim::Config& c, const kernels::AttentionRun& run, kernels::Pass pass) {
  sim::Row row = sim::config_row(c, "measured");
  const kernels::KernelEntry* entry =
      pass == kernels::Pass::bwd ? run.backward_entry() : run.forward_entry();
  if (entry) {
    row.block_r = entry->block_r;
    row.block_c = entry->block_c;
  }
  return row;
}

}  // namespace flashio::profiler
