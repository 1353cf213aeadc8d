// Test helper: a configuration with an explicit Br × Bc tiling on the h200 preset's M.
#pragma once
#include "sim/config.h"
#include "sim/hardware.h"

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

}  // namespace flashio::sim::test
