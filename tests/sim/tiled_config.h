// Test helpers: a configuration with an explicit Br × Bc tiling on the h200 preset's M, what
// sim::validate says of one, and the counts of a pass's kernels added up.
#pragma once
#include <string>

#include "sim/config.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/simulate.h"

namespace flashio::sim::test {

inline Config tiled_config(Algo algo, Pass pass, int64_t batch, int64_t heads, int64_t seqlen,
                           int64_t headdim, int64_t block_r, int64_t block_c, bool causal) {
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.seqlen = seqlen;
  p.headdim = headdim;
  p.causal = causal;
  p.pass = pass;
  Config c = make_config(algo, p, hardware_preset("h200"));
  c.tiling = {block_r, block_c};
  return c;
}

// The same with grouped-query attention and Nq != Nk (docs/shapes.md): kv_heads K/V heads,
// nk keys, gqa_pack as `pack`.
inline Config shaped_config(Algo algo, Pass pass, int64_t batch, int64_t heads, int64_t kv_heads, int64_t nq,
                            int64_t nk, int64_t d, int64_t br, int64_t bc, bool causal, bool pack) {
  Config c = tiled_config(algo, pass, batch, heads, nq, d, br, bc, causal);
  c.problem.kv_heads = kv_heads;
  c.problem.seqlen_k = nk;
  c.gqa_pack = pack;
  return c;
}

// What sim::validate says of `config`: "accepted", its message when it names `field`, or
// "another field: " and the message otherwise.
inline std::string refusal_of(const Config& config, Field field) {
  try {
    validate(config);
  } catch (const InvalidInput& e) {
    if (e.field() == field) return e.what();
    return std::string("another field: ") + e.what();
  }
  return "accepted";
}

// The counts of all the kernels of a pass (closed_form_counts, walk_counts, execute).
inline Counts total(const std::vector<KernelCounts>& kernels) {
  Counts t;
  for (const KernelCounts& k : kernels) t += k.counts;
  return t;
}

}  // namespace flashio::sim::test
