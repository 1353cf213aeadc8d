// Problem: one attention call (docs/architecture.md, "Vocabulary"). Layout (B, H, N, d) contiguous.
#pragma once
#include <cstdint>
#include <string>

#include "sim/checked.h"
#include "sim/types.h"

namespace flashio::sim {

struct Problem {
  int64_t batch = 64;     // B
  int64_t heads = 16;     // H
  int64_t seqlen = 1024;  // N
  int64_t headdim = 64;   // d
  DType dtype = DType::fp16;
  bool causal = false;
  bool mask = false;      // standard only: a separate key-padding mask pass over S
  double dropout = 0.0;   // standard only: a separate dropout pass over P when > 0
  Pass pass = Pass::fwd;

  // B·H; throws CountOverflow (sim/checked.h) when it does not fit in 64 bits.
  int64_t batch_heads() const { return checked_mul(batch, heads); }
};

// Throws InvalidInput naming the field and what is allowed when the problem cannot exist.
void validate(const Problem& problem);

// The field's FLOP convention (docs/paper.md, "FLOP convention"): 4·B·H·N²·d forward, 2.5×
// that backward, 3.5× for fwdbwd, halved when causal. What TFLOP/s is computed from, for every algorithm.
double convention_flops(const Problem& problem);

}  // namespace flashio::sim
